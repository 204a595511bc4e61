"""Derived product attributes: what a product is, read from its messy text into canonical values.

`derive(product)` reads the title, features, categories and details once and
returns an `Attributes` record in the shared vocabulary (see vocabulary.py),
so the index, the reranker and the simulators compare like with like.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ..terms import Facet
from .product import Product
from .vocabulary import (
    JOIN,
    Measure,
    Mention,
    canonical_size,
    find_measures_in_each,
    find_mentions_in_each,
    letter_size_range,
    normalize_phrase,
    vocabulary,
)

TOP_CATEGORY = "clothing, shoes & jewelry"

# Detail keys in the order they are trusted, per attribute.
_DEPARTMENT_KEYS = ("Department", "Target Audience", "Suggested Users", "Gender")
_MATERIAL_KEYS = (
    "Material",
    "Fabric Type",
    "Material Type",
    "Outer Material",
    "Material Composition",
    "Outer Shell Material",
    "Metal Type",
    "Sole Material",
)
_COLOR_KEYS = ("Color", "Colour", "Color Name")
_CLOSURE_KEYS = ("Closure Type", "Closure")
_SIZE_KEYS = ("Size", "Size Name")
_STYLE_KEYS = ("Style", "Style Name")
_BRAND_KEYS = ("Brand", "Brand Name")
# Every detail field whose words are read (materials are listed apart: their percentages are read
# too).
_SCANNED_DETAIL_KEYS = (*_DEPARTMENT_KEYS, *_COLOR_KEYS, *_CLOSURE_KEYS, *_SIZE_KEYS, *_STYLE_KEYS)
# Package and shipping measures describe the box, not the product.
_SKIPPED_MEASURE_KEYS = re.compile(r"package|shipping|rank|date|model|upc|asin", re.IGNORECASE)

_PERCENT_MATERIAL = re.compile(r"(\d{1,3}(?:\.\d+)?)\s*%\s*([^\d%,;:()/]{2,40})")
_CLOSURE_WORD = re.compile(r"\bclosure\b", re.IGNORECASE)
_CLOSURE_FEATURE_MAX_CHARS = (
    60  # "Pull On closure": Amazon's short closure bullet, not marketing prose
)

_WHOLE_PRODUCT_CLOSURES = frozenset(
    {
        "pull on",
        "slip on",
        "lace up",
        "hook and loop",
        "lobster clasp",
        "spring ring clasp",
        "toggle",
        "box clasp",
        "lever back",
        "push back",
        "screw back",
        "clip on",
    }
)

_LETTER = r"(?:[Xx]{1,5}[SsLl]|[2-6][Xx][Ll]?|[Xx][Ll]|[SML])"
# In a range both ends are sizes, so the words ("Small-3XL", "S to X-Large") are safe too.
_RANGE_END = r"(?:(?:x{1,4}-?|[2-6]x-?)?(?:small|large)|medium|x{1,5}[sl]|[2-6]xl?|xl|[sml])"
# The lookahead repeats what a range starts with, so that most positions fail on one
# character test instead of the lookbehind and every alternative: 2x faster, same matches.
_LETTER_RANGE = re.compile(
    rf"(?=[2-6xslm])(?<![\w'’-])({_RANGE_END})\s*(?:-|–|~|to|through)\s*({_RANGE_END})(?![\w-])",
    re.IGNORECASE,
)
# What every range shows once case-folded: an end's last letter, the separator, the start
# of the other end. Case folding maps every character that the case-insensitive pattern
# takes for one of these letters to that letter (tests/test_attributes.py checks), and the
# check costs a fraction of the full pattern, which it spares most products.
_RANGE_CUE = re.compile(
    r"[lemsx]\s*(?:-|–|~|to|through)\s*(?:[2-6]?x|small|large|med|[sml](?![a-z]))"
)
_TITLE_END_LETTER = re.compile(rf"(?:^|[\s,(/-])({_LETTER})\)?\s*$")
_LETTER_TOKEN = re.compile(rf"(?<![\w-])({_LETTER})(?![\w-])")


class AttributesError(ValueError):
    """A stored attributes record that cannot be read back; the message names the field."""


@dataclass(frozen=True, slots=True)
class MaterialShare:
    name: str  # canonical material
    percent: float | None = None  # share of the fabric when the product states it


@dataclass(frozen=True, slots=True)
class Attributes:
    category_path: tuple[str, ...] = ()
    leaf: str = ""
    department: str | None = None
    materials: tuple[MaterialShare, ...] = ()
    colors: tuple[str, ...] = ()
    sizes: tuple[str, ...] = ()
    closure: str | None = None
    brand: str | None = None
    price: float | None = None
    dimensions: tuple[Measure, ...] = ()
    use_cases: tuple[str, ...] = ()
    styles: tuple[str, ...] = ()

    @property
    def material_names(self) -> tuple[str, ...]:
        return tuple(share.name for share in self.materials)

    def to_dict(self) -> dict[str, Any]:
        return {
            "category_path": list(self.category_path),
            "leaf": self.leaf,
            "department": self.department,
            "materials": [{"name": m.name, "percent": m.percent} for m in self.materials],
            "colors": list(self.colors),
            "sizes": list(self.sizes),
            "closure": self.closure,
            "brand": self.brand,
            "price": self.price,
            "dimensions": [
                {"values": list(d.values), "unit": d.unit, "text": d.text} for d in self.dimensions
            ],
            "use_cases": list(self.use_cases),
            "styles": list(self.styles),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Attributes:
        if not isinstance(data, Mapping):
            raise AttributesError(f"attributes must be a JSON object, got {type(data).__name__}")
        return cls(
            category_path=_strings(data, "category_path"),
            leaf=_optional_string(data, "leaf") or "",
            department=_optional_string(data, "department"),
            materials=tuple(_material(item) for item in _list(data, "materials")),
            colors=_strings(data, "colors"),
            sizes=_strings(data, "sizes"),
            closure=_optional_string(data, "closure"),
            brand=_optional_string(data, "brand"),
            price=_optional_number(data.get("price"), "price"),
            dimensions=tuple(_measure(item) for item in _list(data, "dimensions")),
            use_cases=_strings(data, "use_cases"),
            styles=_strings(data, "styles"),
        )

    def search_text(self) -> str:
        """The canonical values as one short text, for an extra BM25 field.

        A shopper's "navy" is parsed to "blue"; this text says "blue" for a
        product whose own words say "Navy", so the two meet in the index.
        """
        vocab = vocabulary()
        size_words = [
            s for s in self.sizes if s in vocab.tables[Facet.FIT] or s in vocab.tables[Facet.WIDTH]
        ]
        parts = [
            self.department or "",
            *self.material_names,
            *self.colors,
            self.closure or "",
            *self.use_cases,
            *self.styles,
            *size_words,
        ]
        return " ".join(_unique(p for p in parts if p))


def derive(product: Product) -> Attributes:
    """Read a product's canonical attributes (pure and fast: no I/O, precompiled patterns)."""
    details = product.details
    category_path = tuple(c for c in product.categories if c.strip().lower() != TOP_CATEGORY)
    material_texts = _detail_texts(details, _MATERIAL_KEYS)
    percents = _percent_phrases([*product.features, *material_texts])
    found = _Mentions(
        [
            product.title,
            *product.features,
            *category_path,
            *product.description,
            *material_texts,
            *(phrase for _, phrase in percents),
            *_detail_texts(details, _SCANNED_DETAIL_KEYS),
        ]
    )
    title_mentions = found(product.title)
    feature_mentions = [found(feature) for feature in product.features]
    category_mentions = [found(c) for c in category_path]
    return Attributes(
        category_path=category_path,
        leaf=category_path[-1] if category_path else "",
        department=_department(details, found, category_mentions, title_mentions),
        materials=_materials(material_texts, percents, found, title_mentions, feature_mentions),
        colors=_colors(product, found, title_mentions, feature_mentions),
        sizes=_sizes(product, found, title_mentions, feature_mentions),
        closure=_closure(product, found, feature_mentions, title_mentions),
        brand=_brand(product),
        price=product.price,
        dimensions=_dimensions(product),
        use_cases=_values(Facet.USE_CASE, title_mentions, *feature_mentions, *category_mentions),
        styles=_values(
            Facet.STYLE,
            title_mentions,
            *_detail_mentions(details, _STYLE_KEYS, found, Facet.STYLE),
            *feature_mentions,
        ),
    )


class _Mentions:
    """The vocabulary mentions of every text of one product, found in one scan, looked up by
    text."""

    def __init__(self, texts: list[str]) -> None:
        unique = list(dict.fromkeys(texts))
        self._by_text = dict(zip(unique, find_mentions_in_each(unique), strict=True))

    def __call__(self, text: str, *facets: Facet) -> list[Mention]:
        """What `find_mentions(text, facets or None)` returns; the text must be one of those
        scanned."""
        mentions = self._by_text[text]
        if not facets:
            return mentions
        return [m for m in mentions if m.facet in facets]


def _detail_texts(details: Mapping[str, str], keys: Iterable[str]) -> list[str]:
    return [value for key in keys if (value := details.get(key))]


def _department(
    details: Mapping[str, str],
    found: _Mentions,
    category_mentions: list[list[Mention]],
    title_mentions: list[Mention],
) -> str | None:
    # Priority: the seller's department field, then where the catalog files it, then the title.
    sources = [
        *_detail_mentions(details, _DEPARTMENT_KEYS, found, Facet.DEPARTMENT),
        *category_mentions,
        title_mentions,
    ]
    for mentions in sources:
        found_here = _values(Facet.DEPARTMENT, mentions)
        if found_here:
            return _one_department(found_here)
    return None


def _one_department(found: tuple[str, ...]) -> str:
    # "Men Women" in one field means the product is made for both.
    if "men" in found and "women" in found:
        return "unisex"
    return found[0]


def _percent_phrases(texts: list[str]) -> list[tuple[float, str]]:
    """("65% Polyester, 35% Cotton") -> [(65.0, "Polyester"), (35.0, "Cotton")]: maybe a material
    each."""
    return [
        (float(match.group(1)), match.group(2))
        for text in texts
        if "%" in text
        for match in _PERCENT_MATERIAL.finditer(text)
    ]


def _materials(
    material_texts: list[str],
    percents: list[tuple[float, str]],
    found: _Mentions,
    title_mentions: list[Mention],
    feature_mentions: list[list[Mention]],
) -> tuple[MaterialShare, ...]:
    percent_by_name: dict[str, float] = {}
    order: list[str] = []
    for percent, phrase in percents:
        names = found(phrase, Facet.MATERIAL)
        if names and 0 < percent <= 100:
            percent_by_name.setdefault(names[0].value, percent)
            order.append(names[0].value)
    for text in material_texts:
        order.extend(m.value for m in found(text, Facet.MATERIAL))
    order.extend(_values(Facet.MATERIAL, title_mentions, *feature_mentions))
    return tuple(MaterialShare(name, percent_by_name.get(name)) for name in _unique(order))


def _colors(
    product: Product,
    found: _Mentions,
    title_mentions: list[Mention],
    feature_mentions: list[list[Mention]],
) -> tuple[str, ...]:
    detail_colors = _detail_mentions(product.details, _COLOR_KEYS, found, Facet.COLOR)
    own = _values(Facet.COLOR, title_mentions, *detail_colors, *feature_mentions)
    if own:
        return own
    # The description only when nothing else names one: it lists the other colours the product
    # comes in and the colours of its parts ("a brown boot with a white sole").
    return _values(Facet.COLOR, *(found(text, Facet.COLOR) for text in product.description))


def _sizes(
    product: Product,
    found: _Mentions,
    title_mentions: list[Mention],
    feature_mentions: list[list[Mention]],
) -> tuple[str, ...]:
    sizes: list[str] = []
    for text in _detail_texts(product.details, _SIZE_KEYS):
        if whole := canonical_size(text):  # a size field of just "6" or "XL"
            sizes.append(whole)
        sizes.extend(v for m in _LETTER_TOKEN.finditer(text) if (v := canonical_size(m.group(1))))
        sizes.extend(m.value for m in found(text, Facet.SIZE, Facet.FIT, Facet.WIDTH))
    sizes.extend(_range_sizes([product.title, *product.features]))
    if (last := _title_end_letter(product.title)) and (value := canonical_size(last.group(1))):
        sizes.append(value)  # "... Blouse T-Shirt L": listings name the variant's size last
    # Bare "large", "wide", "tall" say little in prose ("large pockets", "wide waistband"):
    # the title may use fit and width words, but size words need a clear form anywhere.
    sizes.extend(m.value for m in title_mentions if m.facet in _SIZE_FACETS and _title_size(m))
    sizes.extend(
        m.value
        for mentions in feature_mentions
        for m in mentions
        if m.facet in _SIZE_FACETS and (_is_clear_size(m) or _is_phrase(m))
    )
    return _unique(sizes)


_SIZE_WORDS = frozenset({"small", "medium", "large"})
_SIZE_FACETS = frozenset({Facet.SIZE, Facet.FIT, Facet.WIDTH})


def _title_end_letter(title: str) -> re.Match[str] | None:
    # A match ends in at most 8 characters (a separator, "XXXXXL", ")") and then whitespace:
    # searching from there skips the rest of the title.
    return _TITLE_END_LETTER.search(title, max(0, len(title.rstrip()) - 8))


def _title_size(mention: Mention) -> bool:
    return mention.facet in (Facet.FIT, Facet.WIDTH) or _is_clear_size(mention)


def _is_clear_size(mention: Mention) -> bool:
    """A letter size that is not an everyday adjective, or one introduced by the word "size"."""
    if mention.facet != Facet.SIZE:
        return False
    return (
        mention.text.lower().startswith("size") or normalize_phrase(mention.text) not in _SIZE_WORDS
    )


def _is_phrase(mention: Mention) -> bool:
    return mention.facet in (Facet.FIT, Facet.WIDTH) and " " in normalize_phrase(mention.text)


def _range_sizes(texts: list[str]) -> list[str]:
    """Every letter size inside a stated range: "S-5XL", "sizes Small to X-Large".

    One pass over the texts joined: a range cannot cross JOIN, which the pattern's
    lookarounds see as a text's start or end.
    """
    sizes: list[str] = []
    joined = JOIN.join(texts)
    if not _RANGE_CUE.search(joined.casefold()):
        return sizes
    for match in _LETTER_RANGE.finditer(joined):
        sizes.extend(letter_size_range(match.group(1), match.group(2)))
    return sizes


def _closure(
    product: Product,
    found: _Mentions,
    feature_mentions: list[list[Mention]],
    title_mentions: list[Mention],
) -> str | None:
    for text in _detail_texts(product.details, _CLOSURE_KEYS):
        closures = _values(Facet.CLOSURE, found(text, Facet.CLOSURE))
        if closures:
            return closures[0]
    for feature, mentions in zip(product.features, feature_mentions, strict=True):
        if (
            len(feature) <= _CLOSURE_FEATURE_MAX_CHARS
            and "closure"
            in feature.casefold()  # fast, and true of every feature the pattern matches
            and (word := _CLOSURE_WORD.search(feature))
        ):
            # "Zipper fly with button closure": the closure is the one named just before the word
            # (or the phrase that contains it, "Elastic closure").
            named = [m for m in mentions if m.facet == Facet.CLOSURE and m.start <= word.start()]
            if named:
                return named[-1].value
    closures = _values(Facet.CLOSURE, title_mentions)
    if closures:
        return closures[0]
    # Marketing prose names pocket zippers and cuff buttons too; only closures that
    # describe the whole product are trusted there.
    closures = _values(Facet.CLOSURE, *feature_mentions)
    return next((value for value in closures if value in _WHOLE_PRODUCT_CLOSURES), None)


def _brand(product: Product) -> str | None:
    # The store name is what shoppers say ("Disney"), more often than the legal manufacturer.
    for key in _BRAND_KEYS:
        if value := product.details.get(key, "").strip():
            return value
    return product.store.strip() or product.details.get("Manufacturer", "").strip() or None


def _dimensions(product: Product) -> tuple[Measure, ...]:
    texts = [product.title, *product.features]
    texts += [v for k, v in product.details.items() if not _skipped_measure_key(k)]
    seen: set[tuple[tuple[float, ...], str]] = set()
    measures = []
    for matches in find_measures_in_each(texts):
        for match in matches:
            key = (match.measure.values, match.measure.unit)
            if key not in seen:
                seen.add(key)
                measures.append(match.measure)
    return tuple(measures)


@lru_cache(maxsize=4096)
def _skipped_measure_key(key: str) -> bool:
    return _SKIPPED_MEASURE_KEYS.search(key) is not None  # catalogs repeat the same few keys


def _detail_mentions(
    details: Mapping[str, str], keys: Iterable[str], found: _Mentions, facet: Facet
) -> list[list[Mention]]:
    return [found(text, facet) for text in _detail_texts(details, keys)]


def _values(facet: Facet, *mention_lists: list[Mention]) -> tuple[str, ...]:
    return _unique([m.value for mentions in mention_lists for m in mentions if m.facet == facet])


def _unique(values: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(values))


def _list(data: Mapping[str, Any], field: str) -> list[Any]:
    value = data.get(field) or []
    if not isinstance(value, list):
        raise AttributesError(
            f"attributes field {field!r} must be a list, got {type(value).__name__}"
        )
    return value


def _strings(data: Mapping[str, Any], field: str) -> tuple[str, ...]:
    items = _list(data, field)
    if not all(isinstance(item, str) for item in items):
        raise AttributesError(f"attributes field {field!r} must hold only strings")
    return tuple(items)


def _optional_string(data: Mapping[str, Any], field: str) -> str | None:
    value = data.get(field)
    if value is not None and not isinstance(value, str):
        raise AttributesError(f"attributes field {field!r} must be a string or null")
    return value


def _optional_number(value: Any, field: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise AttributesError(f"attributes field {field!r} must be a number or null")
    return float(value)


def _material(item: Any) -> MaterialShare:
    if not isinstance(item, Mapping) or not isinstance(item.get("name"), str):
        raise AttributesError(f"attributes 'materials' entries need a string 'name', got {item!r}")
    return MaterialShare(item["name"], _optional_number(item.get("percent"), "materials.percent"))


def _measure(item: Any) -> Measure:
    if not isinstance(item, Mapping) or not isinstance(item.get("unit"), str):
        raise AttributesError(f"attributes 'dimensions' entries need a string 'unit', got {item!r}")
    values = item.get("values")
    if not isinstance(values, list) or not all(isinstance(v, (int, float)) for v in values):
        raise AttributesError(
            f"attributes 'dimensions' values must be a list of numbers, got {values!r}"
        )
    return Measure(tuple(float(v) for v in values), item["unit"], str(item.get("text", "")))
