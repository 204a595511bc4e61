"""Answers about products already shown, from their catalog records: the price, the rating,
the material, whether a colour, size or feature is listed, the cheapest or best rated, and
two or three side by side. Where the record does not say, the answer says so.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ..catalog.product import Product
from ..datafile import read_json_object
from ..state.questions import GENERIC, Question

MATERIAL_DETAILS = ("Material", "Fabric Type", "Outer Material", "Sole Material", "Metal Type")


@dataclass(frozen=True, slots=True)
class Answer:
    positions: tuple[int, ...]
    parent_asins: tuple[str, ...]
    fact: str
    text: str

    def to_dict(self) -> dict[str, object]:
        return {
            "positions": list(self.positions),
            "parent_asins": list(self.parent_asins),
            "fact": self.fact,
            "text": self.text,
        }


def answer(question: Question, shown: Sequence[Product], pointed: int | None) -> Answer:
    """The answer to `question` about `shown` (the list as the shopper saw it); `pointed`: the
    position "it" refers to, if any."""
    count = len(shown)
    positions = question.positions or ((pointed,) if question.pronoun and pointed else ())
    past = [p for p in positions if not 1 <= p <= count]
    if past:
        return Answer((), (), question.fact, _past_the_list(past[0], count))
    if question.fact in ("cheapest", "priciest", "best_rated"):
        return _extreme(question.fact, shown, positions or tuple(range(1, count + 1)))
    if question.fact in ("cheaper", "pricier", "compare"):
        chosen = positions if len(positions) >= 2 else tuple(range(1, min(count, 2) + 1))
        return _pair(question.fact, shown, chosen)
    if question.fact == "has" and question.every and not question.positions:
        return _which_have(shown, question.values)
    if not positions:
        return Answer((), (), question.fact, "Which one do you mean? Tell me its number, like #2.")
    position = positions[0]
    product = shown[position - 1]
    text = _ABOUT_ONE[question.fact](product, position, question.values)
    return Answer((position,), (product.parent_asin,), question.fact, text)


def _past_the_list(position: int, count: int) -> str:
    if not count:
        return "I haven't shown you anything yet. Tell me what you're looking for."
    return f"I showed {count} products, so there is no #{position}. Which one did you mean?"


def price_text(product: Product) -> str:
    return f"${product.price:.2f}" if product.price is not None else "no listed price"


def _price(product: Product, position: int, _values: tuple[str, ...]) -> str:
    if product.price is None:
        return f"The listing for #{position} doesn't say its price."
    return f"#{position} ({short(product)}) costs {price_text(product)}."


def _rating(product: Product, position: int, _values: tuple[str, ...]) -> str:
    return f"#{position} {_rating_text(product)}."


def _rating_text(product: Product) -> str:
    if product.average_rating is None:
        return "has no rating yet"
    count = f" from {product.rating_number:,} ratings" if product.rating_number else ""
    return f"is rated {product.average_rating:.1f} out of 5{count}"


def material(product: Product) -> str:
    for key in MATERIAL_DETAILS:
        if product.details.get(key):
            return product.details[key]
    for feature in product.features:
        if "%" in feature and len(feature) < 80:
            return feature
    # Listings often open their features with the material alone ("Faux Leather", "Oxford
    # Cloth"); a lining's or a sole's is not the product's.
    for feature in product.features[:3]:
        words = feature.lower().split()
        if len(words) <= MATERIAL_WORDS and not PARTS & set(words) and _names_a_material(words):
            return feature
    return ""


MATERIAL_WORDS = 3
PARTS = frozenset({"lining", "sole", "outsole", "insole"})  # a part's material, not the product's


def _names_a_material(words: list[str]) -> bool:
    return any(_a_material(" ".join(words[i:])) for i in range(len(words)))


def _material(product: Product, position: int, _values: tuple[str, ...]) -> str:
    made = material(product)
    if not made:
        return f"The listing for #{position} doesn't say what it is made of."
    return f"#{position} is made of {made}."


def _sizes(product: Product, position: int, _values: tuple[str, ...]) -> str:
    said = product.details.get("Size") or _sentence_with(product, ("size", "sizes"))
    if not said:
        return f"The listing for #{position} doesn't list its sizes."
    return f"About sizes, the listing for #{position} says: {said}"


def _colors(product: Product, position: int, _values: tuple[str, ...]) -> str:
    said = product.details.get("Color") or _sentence_with(product, ("color", "colors", "colour"))
    if said:
        return f"About colour, the listing for #{position} says: {said}"
    named = _colours_named(product.title)
    if named:
        return f"#{position} is {_join(named)}; the listing doesn't list other colours."
    return f"The listing for #{position} doesn't say which colours it comes in."


def _colours_named(title: str) -> list[str]:
    """The colours a title names ("..., Light Blue, 7.5": light blue), longest first."""
    from ..catalog.vocabulary import vocabulary  # local: loaded once, on a colour question
    from ..terms import Facet

    lowered, found = title.lower(), list[str]()
    terms = {t for c, ts in vocabulary().tables[Facet.COLOR].items() for t in (c, *ts)}
    for term in sorted(terms, key=len, reverse=True):
        said = re.search(rf"(?<![a-z]){re.escape(term)}(?![a-z])", lowered)
        if said and not any(term in other for other in found):
            found.append(term)
    return found


def _has(product: Product, position: int, values: tuple[str, ...]) -> str:
    made = material(product)
    if made and values and all(_a_material(v) for v in values):
        return _made_of(product, made, position, values)
    found: list[str] = []
    missing: list[str] = []
    for value in values:
        said = _said(product, value) or _said_otherwise(product, value)
        if said:
            found.append(said)
        else:
            missing.append(as_listed(value))
    parts = []
    if found:
        parts.append(f"Yes, the listing for #{position} says {_join(found)}.")
    if missing:
        lead = "It" if found else f"The listing for #{position}"
        parts.append(f"{lead} doesn't say {_join(missing)}, so I can't promise that.")
    return " ".join(parts) or f"The listing for #{position} doesn't say."


def which_have(shown: Sequence[Product], values: tuple[str, ...]) -> list[int]:
    """The places (from 1) of the products whose listing says every value."""
    return [n for n, product in enumerate(shown, 1) if _says_all(product, values)]


def _which_have(shown: Sequence[Product], values: tuple[str, ...]) -> Answer:
    """ "Which of these are leather?": the places whose listing says so."""
    yes = which_have(shown, values)
    asked = " or ".join(as_listed(v) for v in values)
    if not yes:
        text = f"None of these listings says {asked}."
    elif len(yes) == len(shown):
        text = f"All of them say {asked}."
    else:
        places = _join([f"#{n}" for n in yes], "and")
        text = f"{places} {'says' if len(yes) == 1 else 'say'} {asked}."
    return Answer(tuple(yes), tuple(shown[n - 1].parent_asin for n in yes), "has", text)


def _says_all(product: Product, values: tuple[str, ...]) -> bool:
    """Does the listing say every value (a material as its material: no faux leather)?"""
    made = material(product)
    if made and values and all(_a_material(v) for v in values):
        listed = set(re.findall(r"[a-z]+", made.lower()))
        asked = {w for v in values for w in re.findall(r"[a-z]+", v.lower()) if w not in GENERIC}
        return bool(asked) and asked <= listed and not listed & IMITATION
    return all(_said(product, v) or _said_otherwise(product, v) for v in values)


def _made_of(product: Product, made: str, position: int, values: tuple[str, ...]) -> str:
    """Is #N leather? The listing's material, said as listed: "faux leather" is no yes to
    "real leather"; a lace dress of polyester is lace all the same."""
    listed = set(re.findall(r"[a-z]+", made.lower()))
    asked = {w for v in values for w in re.findall(r"[a-z]+", v.lower()) if w not in GENERIC}
    if asked and asked <= listed and not listed & IMITATION:
        return f"Yes, #{position} is made of {made}."
    if not asked <= listed and (said := _said(product, " ".join(values))):
        return f"The listing for #{position} says {said}, and gives its material as {made}."
    asked_as = " or ".join(values)
    return f"No, #{position} isn't {asked_as}: going by its listing it is made of {made}."


IMITATION = frozenset({"faux", "vegan", "pu", "synthetic", "imitation", "artificial", "fake"})


def _a_material(value: str) -> bool:
    said = value.lower().removeprefix("real ").removeprefix("genuine ")
    return said in _material_terms()


@cache
def _material_terms() -> frozenset[str]:
    from ..catalog.vocabulary import vocabulary  # local: loaded once, on a material question
    from ..terms import Facet

    table = vocabulary().tables[Facet.MATERIAL]
    return frozenset(term for canonical, terms in table.items() for term in (canonical, *terms))


_ABOUT_ONE = {
    "price": _price,
    "rating": _rating,
    "material": _material,
    "sizes": _sizes,
    "colors": _colors,
    "has": _has,
}


def _extreme(fact: str, shown: Sequence[Product], among: tuple[int, ...]) -> Answer:
    if fact == "best_rated":
        rated = [p for p in among if shown[p - 1].average_rating is not None]
        if not rated:
            return Answer(among, _ids(shown, among), fact, "None of these has a rating yet.")
        best = max(
            rated, key=lambda p: (shown[p - 1].average_rating, shown[p - 1].rating_number or 0)
        )
        product = shown[best - 1]
        rating = _rating_text(product).removeprefix("is rated ")
        text = f"#{best} ({short(product)}) is the best rated: {rating}."
        return Answer((best,), (product.parent_asin,), fact, text)
    priced = [p for p in among if shown[p - 1].price is not None]
    if not priced:
        return Answer(among, _ids(shown, among), fact, "None of these lists a price.")
    pick = (min if fact == "cheapest" else max)(priced, key=lambda p: shown[p - 1].price or 0.0)
    product = shown[pick - 1]
    word = "cheapest" if fact == "cheapest" else "most expensive"
    text = f"#{pick} ({short(product)}) is the {word} at {price_text(product)}."
    return Answer((pick,), (product.parent_asin,), fact, text)


def _pair(fact: str, shown: Sequence[Product], chosen: tuple[int, ...]) -> Answer:
    products = [shown[p - 1] for p in chosen]
    lines = [f"#{p}: {side(shown[p - 1])}" for p in chosen]
    priced = [
        (prod.price, p) for prod, p in zip(products, chosen, strict=True) if prod.price is not None
    ]
    verdict = ""
    if len(priced) == len(chosen):
        low, high = min(priced), max(priced)
        if low[0] == high[0]:
            verdict = " They cost the same."
        else:
            verdict = f" #{low[1]} is cheaper, by ${high[0] - low[0]:.2f}."
            if fact == "pricier":
                verdict = f" #{high[1]} costs more, by ${high[0] - low[0]:.2f}."
    elif fact != "compare":
        unpriced = [f"#{p}" for prod, p in zip(products, chosen, strict=True) if prod.price is None]
        verdict = f" {_join(unpriced)} doesn't list a price, so I can't say which is cheaper."
    text = "Side by side: " + "; ".join(lines) + "." + verdict
    if fact != "compare" and len(priced) == len(chosen) == 2 and priced[0][0] != priced[1][0]:
        text = _which_of_two(fact, min(priced), max(priced))  # asked which, not for a table
    return Answer(chosen, tuple(p.parent_asin for p in products), fact, text)


def _which_of_two(fact: str, low: tuple[float, int], high: tuple[float, int]) -> str:
    """'#2 is cheaper: $14.99, against $34.99 for #3.'"""
    if fact == "pricier":
        return f"#{high[1]} costs more: ${high[0]:.2f}, against ${low[0]:.2f} for #{low[1]}."
    return f"#{low[1]} is cheaper: ${low[0]:.2f}, against ${high[0]:.2f} for #{high[1]}."


def side(product: Product) -> str:
    parts = [price_text(product)]
    made = material(product)
    if made:
        parts.append(made)
    color = product.details.get("Color")
    if color:
        parts.append(color)
    parts.append(_rating_text(product))
    return f"{short(product)}, " + ", ".join(parts)


def short(product: Product, words: int = 6) -> str:
    """The first words of a product's title, for a reply."""
    title = product.title.split()
    return " ".join(title[:words]) + ("…" if len(title) > words else "")


def _ids(shown: Sequence[Product], positions: tuple[int, ...]) -> tuple[str, ...]:
    return tuple(shown[p - 1].parent_asin for p in positions)


def _text(product: Product) -> str:
    return " ; ".join([product.title, *product.details.values(), *product.features]).lower()


def _said(product: Product, value: str) -> str:
    """The listing's own words for what a yes/no question asks about ("machine washable":
    "machine wash"), or '' when it does not say. A number must be there as written ("10.5"); a
    word matches a word sharing its start ("wick": "wicking"); words that name no property
    ("real leather": leather) are left out."""
    words = [w for w in re.findall(r"[a-z0-9.]+", value.lower()) if w not in GENERIC] or [value]
    # A sentence's full stop is no part of its last word ("4 handy pockets."); "10.5" keeps its.
    listing = [t.rstrip(".") for t in re.findall(r"[a-z0-9.]+", _text(product))]
    said = []
    for word in words:
        hit = next((t for t in listing if _same_word(word, t)), None)
        if hit is None:
            return ""
        said.append(hit)
    return " ".join(dict.fromkeys(said))


def _said_otherwise(product: Product, value: str) -> str:
    """The listing's words for the thing asked about, said as listings say it ("multipack":
    "pack of 3"), or ''."""
    text = " ".join(t.rstrip(".") for t in re.findall(r"[a-z0-9.]+", _text(product)))
    for word in re.findall(r"[a-z]+", value.lower()):
        for other in LISTING_WORDS.get(word, ()):
            if re.search(rf"(?<![a-z]){re.escape(other)}", text):
                return other
    return ""


def as_listed(value: str) -> str:
    """The thing asked about, with what a listing would call it: "wick sweat (moisture
    wicking)", so the shopper knows what was looked for."""
    other = next(
        (LISTING_WORDS[w][0] for w in re.findall(r"[a-z]+", value.lower()) if w in LISTING_WORDS),
        None,
    )
    return f"{value} ({other})" if other and other not in value.lower() else value


def _listing_words(path: Path) -> dict[str, tuple[str, ...]]:
    raw = read_json_object(path, ValueError, "listing words")
    table = {k: v for k, v in raw.items() if not k.startswith("_")}
    for key, words in table.items():
        if (
            " " in key
            or not isinstance(words, list)
            or not all(isinstance(w, str) and w.strip() for w in words)
        ):
            raise ValueError(f"{path}: {key!r}: one word, to a list of words or phrases")
    return {k: tuple(w.lower() for w in v) for k, v in table.items()}


LISTING_WORDS = _listing_words(Path(__file__).with_name("data") / "listing_words.json")


def _same_word(asked: str, listed: str) -> bool:
    """The same word, or one with an ending added ("wick": "wicking", "washable": "wash"); not
    another word that starts alike ("waterproof" is not "water")."""
    if asked == listed or any(c.isdigit() for c in asked):
        return asked == listed.rstrip(".")
    short, long = sorted((asked, listed), key=len)
    return len(short) >= 4 and long.startswith(short) and long[len(short) :] in ENDINGS


ENDINGS = frozenset({"s", "es", "ing", "able", "ible", "ed", "er", "y"})


def _sentence_with(product: Product, words: tuple[str, ...]) -> str:
    for feature in product.features:
        lowered = feature.lower()
        if any(re.search(rf"\b{w}\b", lowered) for w in words):
            return feature if len(feature) <= 160 else feature[:157] + "…"
    return ""


def _join(values: Sequence[str], last: str = "or") -> str:
    values = list(values)
    return values[0] if len(values) == 1 else ", ".join(values[:-1]) + f" {last} " + values[-1]
