"""The natural-protocol customer: a shopper who talks about attribute values in their own words.

The official customer pastes catalog strings. This one says "something in navy",
"under 40 bucks", "it's for hiking", "women's, size medium": every value comes from
the target's derived attributes (shopcopilot.catalog.attributes) and its category
path, worded through the templates and paraphrases of one data file
(data/natural_templates.json). It also makes typos, drops punctuation, chats,
rejects shown items, says "no preference" / "not sure" in varied words, and, in
intent-override sessions, first asks for a plausible WRONG value and later switches
to the true one.

It plugs into the runner through the Customer protocol (bench/customer.py). Every
message is kept in `transcript` with what it disclosed, so tests and reports can
check that each disclosed value is true of the target (or deliberately false
before an override, or absent from it in a rejection).
"""

from __future__ import annotations

import math
import os
import random
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any

from ..catalog.attributes import Attributes, derive
from ..catalog.product import Product, RecordError, product_from_record
from ..catalog.vocabulary import (
    canonical_department,
    find_measures,
    find_mentions,
    normalize_phrase,
)
from ..datafile import read_json_object
from .official import ALLOWED_ATTRIBUTES, override_turn_for
from .reactions import (
    ASPECTS,
    LIST_REASONS,
    Critique,
    Reaction,
    Seen,
    closest,
    critiques,
    list_reasons,
)
from .sessions_io import Session

TEMPLATES_PATH = Path(__file__).with_name("data") / "natural_templates.json"

# Which facts answer each official ask_attribute, most direct first.
ANSWERS: Mapping[str, tuple[str, ...]] = {
    "category": ("category", "department"),
    "material": ("material",),
    "color": ("color",),
    "size": ("size", "dimension"),
    "style": ("style", "department", "closure"),
    "brand": ("brand",),
    "budget": ("budget",),
    "feature": ("closure", "style", "dimension", "use_case"),
    "use_case": ("use_case",),
}
# "other" gets exactly one fact, in this order of what a shopper says first.
OTHER_ORDER = (
    "category",
    "department",
    "color",
    "material",
    "use_case",
    "style",
    "budget",
    "size",
    "closure",
    "dimension",
    "brand",
)
# A buying opening names the category plus one of these.
KEY_ATTRIBUTES = ("color", "material", "use_case", "style", "closure", "budget", "size")
OVERRIDABLE = ("color", "material", "category")
OVERRIDE_FALLBACKS = ("department", "budget")
LENGTH_UNITS = ("mm", "cm", "inch", "ft")
MAX_FACTS = {"material": 2, "use_case": 2, "style": 2, "dimension": 2}
MAX_BRAND_CHARS = 40

_WORD = re.compile(r"[a-z][a-z'’-]*")
_ALPHA_WORD = re.compile(r"[A-Za-z]+")
_TITLE_WORD = re.compile(r"[a-z]+")  # titles glue words with hyphens ("Hoodies-Pullover")
# "a" before a vowel sound: vowels, letter sizes said letter by letter (an XL, an M), 8/11/18.
_AN = re.compile(r"\b([Aa])(?= (?:[aeiouAEIOU]|X[LS]?\b|[FHLMNRSX]\b|8|11\b|18\b))")


class TemplateError(ValueError):
    """The natural templates file is malformed; the message names the file and the key."""


# ---- records
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Disclosure:
    """One value a message conveyed.

    stance: "want" (true of the target), "wrong" (the deliberate pre-override value,
    false of the target), "retract" (that wrong value, withdrawn by the override),
    "reject" (a value seen on a shown item and absent from the target).
    low/high bound a budget or a measure (the target's value lies within them).
    """

    attribute: str
    value: str
    stance: str = "want"
    low: float | None = None
    high: float | None = None


@dataclass(frozen=True, slots=True)
class CustomerMessage:
    turn: int
    intent: str  # opening, answer, no_preference, not_sure, nothing_more, nudge, override
    asked: (
        str | None
    )  # the ask_attribute this message replies to (None: opening, override, no question)
    text: str
    clean_text: str  # before typos, case and chat noise
    disclosures: tuple[Disclosure, ...]
    noise: tuple[str, ...]  # which noise kinds were applied: typo, lowercase, no_punctuation, chat
    reactions: tuple[Reaction, ...] = ()  # what it said about the shown products (reactions on)


@dataclass(frozen=True, slots=True, eq=False)  # identity: each fact is told once
class Fact:
    """A true statement about the target that the customer can make."""

    attribute: str
    value: str  # canonical value (or the category path segment)
    form: str = ""  # budget: under/range/around; dimension: up_to/about; material: mostly
    low: float | None = None
    high: float | None = None
    words: Mapping[str, str] = field(default_factory=dict)  # wording inputs fixed at creation

    def disclosure(self, stance: str = "want") -> Disclosure:
        return Disclosure(self.attribute, self.value, stance, self.low, self.high)


@dataclass(frozen=True, slots=True)
class NoiseSettings:
    typo_rate: float
    lowercase_rate: float
    drop_final_punctuation_rate: float
    chat_rate: float
    typo_min_word_length: int

    @classmethod
    def from_templates(cls, overrides: Mapping[str, float] | None = None) -> NoiseSettings:
        values = {**templates()["noise"], **(overrides or {})}
        return cls(
            typo_rate=float(values["typo_rate"]),
            lowercase_rate=float(values["lowercase_rate"]),
            drop_final_punctuation_rate=float(values["drop_final_punctuation_rate"]),
            chat_rate=float(values["chat_rate"]),
            typo_min_word_length=int(values["typo_min_word_length"]),
        )


# ---- the templates file
# ----------------------------------------------------------------------------

TEMPLATES_ENV = "SHOPCOPILOT_NATURAL_TEMPLATES"  # another phrasing file, e.g. a held-out one

# Every key the customer reads; a file missing one fails at load time, naming it.
_REQUIRED: Mapping[str, tuple[str, ...]] = {
    "noise": (
        "typo_rate",
        "lowercase_rate",
        "drop_final_punctuation_rate",
        "chat_rate",
        "typo_min_word_length",
    ),
    "behaviour": (
        "reject_rate",
        "volunteer_rate",
        "say_shade_rate",
        "say_department_in_opening_rate",
        "rejection_scan_depth",
        "rejectable_styles",
        "reaction_rate",
        "reaction_nudge_rate",
        "reaction_scan_depth",
        "pick_rate",
        "plain_pick_rate",
    ),
    "chat": ("prefixes", "suffixes"),
    "openings": ("buying", "browsing", "browsing_for", "intent_override", "category_only"),
    "facts": (
        "color",
        "material",
        "material_mostly",
        "department",
        "department_for",
        "size_letter",
        "size_number",
        "size_fit",
        "size_with_department",
        "budget_under",
        "budget_range",
        "budget_around",
        "use_case",
        "brand",
        "closure",
        "style",
        "category",
        "dimension_noun_up_to",
        "dimension_noun_about",
        "dimension_adjective_up_to",
        "dimension_adjective_about",
    ),
    "replies": ("no_preference", "not_sure", "nothing_more", "not_quite", "not_quite_with_fact"),
    "rejections": ("color", "material", "closure", "style", "category"),
    "overrides": ("attribute", "category", "restate"),
    "reactions": (
        "ordinals",
        "pointer",
        "pointer_only",
        "pointer_last",
        "pick",
        *(f"pick_{aspect}" for aspect in ASPECTS),
        *(f"reject_list_{reason}" for reason in LIST_REASONS),
    ),
    "values": (
        "department_adjective",
        "department_for",
        "size_words",
        "size_fit",
        "color_words",
        "closure",
        "use_case",
        "style",
        "units",
        "dimension_nouns",
        "dimension_adjectives",
    ),
    "wrong_values": ("color", "material", "department"),
    "category": (
        "skip_segments",
        "aliases",
        "modifiers",
        "generic_nouns",
        "nouns",
        "groups",
        "qualifier_segments",
        "synonyms",
        "neighbours",
    ),
}
_TEMPLATE_LISTS = ("openings", "facts", "replies", "rejections", "overrides", "reactions")


def templates_path() -> Path:
    override = os.environ.get(TEMPLATES_ENV)
    return Path(override) if override else TEMPLATES_PATH


def templates() -> dict[str, Any]:
    """The phrasing data, read and checked once per process (per file)."""
    return _cached_templates(templates_path())


@cache
def _cached_templates(path: Path) -> dict[str, Any]:
    return load_templates(path)


def load_templates(path: Path) -> dict[str, Any]:
    data = read_json_object(path, TemplateError, "templates")
    for section, keys in _REQUIRED.items():
        if not isinstance(data.get(section), dict):
            raise TemplateError(f"{path}: missing section {section!r}")
        missing = [key for key in keys if key not in data[section]]
        if missing:
            raise TemplateError(f"{path}: {section} lacks {', '.join(missing)}")
    for section in _TEMPLATE_LISTS:
        for key, variants in data[section].items():
            if (
                not isinstance(variants, list)
                or not variants
                or not all(isinstance(v, str) and v for v in variants)
            ):
                raise TemplateError(f"{path}: {section}.{key} must be a non-empty list of strings")
    return data


# ---- category wording
# ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CategoryVocabulary:
    """How shoppers name catalog categories (the "category" section of the templates file)."""

    skip: frozenset[
        str
    ]  # path segments that name no kind of product ("Clothing", "Novelty & More")
    aliases: Mapping[
        str, str
    ]  # segment -> what a shopper calls it ("Loafers & Slip-Ons" -> "loafers")
    modifiers: frozenset[str]  # segments that qualify a noun above them ("Hoop" -> "hoop earrings")
    generic: frozenset[str]  # bare nouns that need their parent ("Sets" under "Bikinis")
    nouns: frozenset[str]  # product nouns, plural
    groups: Mapping[str, str]  # department-level segments -> a vague name ("Jewelry" -> "jewelry")
    qualifiers: Mapping[str, str]  # sport segments that qualify a leaf ("Yoga" -> "yoga leggings")
    synonyms: Mapping[str, tuple[str, ...]]
    neighbours: Mapping[str, tuple[str, ...]]  # plausible wrong categories for an override


def category_vocabulary() -> CategoryVocabulary:
    return _cached_category_vocabulary(templates_path())


@cache
def _cached_category_vocabulary(path: Path) -> CategoryVocabulary:
    raw = _cached_templates(path)["category"]
    return CategoryVocabulary(
        skip=frozenset(raw["skip_segments"]),
        aliases=raw["aliases"],
        modifiers=frozenset(raw["modifiers"]),
        generic=frozenset(raw["generic_nouns"]),
        nouns=frozenset(raw["nouns"]),
        groups=raw["groups"],
        qualifiers=raw["qualifier_segments"],
        synonyms={name: tuple(options) for name, options in raw["synonyms"].items()},
        neighbours={name: tuple(options) for name, options in raw["neighbours"].items()},
    )


@dataclass(frozen=True, slots=True)
class CategoryWords:
    """How a shopper names the target's category: specifically, and vaguely (for browsing)."""

    specific: str  # "hoop earrings", "road running shoes"
    specific_value: str  # the category path segment (or title word) it comes from
    coarse: str  # "jewelry", "shoes"
    coarse_value: str
    head: str  # the product noun, for picking a neighbouring category ("earrings")


def describe_category(attrs: Attributes, title: str) -> CategoryWords | None:
    """The category in a shopper's words, from the category path (else a product noun in the
    title)."""
    vocab = category_vocabulary()
    path = [s for s in attrs.category_path if s.strip()]
    usable = [s for s in path if _usable_segment(s, vocab)]
    nouns = [(s, phrase) for s in usable if (phrase := _noun_phrase(s, vocab))]
    if not nouns:
        return _title_category(title, vocab)
    noun_segment, noun = nouns[-1]
    leaf = usable[-1]
    if noun_segment == leaf:
        specific, value = _qualified(noun, leaf, path, vocab), leaf
    elif leaf.lower() in vocab.modifiers:
        modifier = vocab.aliases.get(leaf.lower(), leaf.lower())
        specific, value = (noun if noun.endswith(modifier) else f"{modifier} {noun}"), leaf
    else:
        specific, value = noun, noun_segment
    coarse_value, coarse = nouns[0] if len(nouns) > 1 else _group(path, vocab) or (value, specific)
    return CategoryWords(specific, value, coarse, coarse_value, noun.split()[-1])


def _usable_segment(segment: str, vocab: CategoryVocabulary) -> bool:
    lowered = segment.strip().lower()
    if lowered in vocab.skip or any(ch.isdigit() for ch in lowered):
        return False
    return canonical_department(segment) is None  # "Women", "Baby Girls": a department, not a kind


def _noun_phrase(segment: str, vocab: CategoryVocabulary) -> str | None:
    """The product noun a segment names ("Tops, Tees & Blouses" -> "tops"), or None for a
    modifier."""
    lowered = segment.strip().lower()
    if lowered in vocab.modifiers:
        return None
    name = vocab.aliases.get(lowered) or _without_department_words(lowered)
    for part in re.split(r",|&|:| and ", name):
        words = _WORD.findall(part)
        last_noun = max(
            (i for i, w in enumerate(words) if _plural_noun(w, vocab.nouns)), default=None
        )
        if last_noun is not None:
            words[last_noun] = _plural_noun(words[last_noun], vocab.nouns) or words[last_noun]
            return " ".join(words[: last_noun + 1])
    return None


def _plural_noun(word: str, nouns: frozenset[str]) -> str | None:
    for form in (word, word + "s", word + "es"):
        if form in nouns:
            return form
    return None


def _without_department_words(text: str) -> str:
    return " ".join(w for w in text.split() if canonical_department(w) is None)


def _qualified(noun: str, leaf: str, path: list[str], vocab: CategoryVocabulary) -> str:
    """A bare leaf noun made specific: "sets" under "Bikinis" -> "bikini sets"; sport segments
    prefix it."""
    position = path.index(leaf)
    if (
        leaf.lower() in vocab.generic
        and position > 0
        and canonical_department(path[position - 1]) is None
    ):
        parent = vocab.aliases.get(path[position - 1].lower(), path[position - 1].lower())
        parent_word = re.split(r",|&", parent)[0].strip()
        if parent_word not in ("clothing", ""):
            return f"{_singular(parent_word)} {noun}"
    for segment in path[:position]:
        qualifier = vocab.qualifiers.get(segment.lower())
        if qualifier and qualifier not in noun:
            return f"{qualifier} {noun}"
    return noun


def _singular(phrase: str) -> str:
    head, _, last = phrase.rpartition(" ")
    for ending, replacement in (
        ("ies", "y"),
        ("sses", "ss"),
        ("shes", "sh"),
        ("ches", "ch"),
        ("s", ""),
    ):
        if last.endswith(ending) and len(last) > len(ending) + 1:
            last = last[: -len(ending)] + replacement
            break
    return f"{head} {last}".strip()


def _occurs(noun: str, text: str) -> bool:
    """Whether a plural noun, or any plausible singular of it, occurs in the text."""
    forms = {noun, noun.removesuffix("s"), _singular(noun)}
    if noun.endswith("es"):
        forms.add(noun[:-2])
    return any(form and form in text for form in forms)


def _group(path: list[str], vocab: CategoryVocabulary) -> tuple[str, str] | None:
    """(segment, vague name) of the department-level group: "Shoes" -> "shoes", "Clothing" ->
    "clothes"."""
    for segment in path:
        if segment.lower() in vocab.groups:
            return segment, vocab.groups[segment.lower()]
    for segment in path:
        if "clothing" in segment.lower():
            return segment, vocab.groups["_default"]
    return None


def _title_category(title: str, vocab: CategoryVocabulary) -> CategoryWords | None:
    for word in reversed(_TITLE_WORD.findall(title.lower())):
        if plural := _plural_noun(word, vocab.nouns):
            return CategoryWords(plural, word, plural, word, plural)
    return None


# ---- facts: what is true of the target
# -------------------------------------------------------------


def build_facts(
    product: Product, attrs: Attributes, category: CategoryWords | None, rng: random.Random
) -> dict[str, list[Fact]]:
    """Every statement the customer may make, grouped by attribute, most telling first."""
    facts: dict[str, list[Fact]] = {
        "category": [Fact("category", category.specific_value)] if category else [],
        "department": [Fact("department", attrs.department)] if attrs.department else [],
        "color": _color_facts(product, attrs),
        "material": _material_facts(attrs),
        "size": _size_facts(attrs, rng),
        "budget": [_budget_fact(attrs.price, rng)] if attrs.price and attrs.price > 0 else [],
        "use_case": [Fact("use_case", u) for u in attrs.use_cases],
        "style": [Fact("style", s) for s in attrs.styles],
        "closure": [Fact("closure", attrs.closure)]
        if attrs.closure and attrs.closure != "no closure"
        else [],
        "brand": [Fact("brand", attrs.brand)]
        if attrs.brand and len(attrs.brand) <= MAX_BRAND_CHARS
        else [],
        "dimension": _dimension_facts(product, rng),
    }
    return {name: items[: MAX_FACTS.get(name, 1)] for name, items in facts.items()}


def _color_facts(product: Product, attrs: Attributes) -> list[Fact]:
    if not attrs.colors:
        return []
    base = attrs.colors[0]
    # A shade ("navy") may be said only when the product's own words use it.
    own_words = " ".join([product.title, product.details.get("Color", ""), *product.features])
    shades = sorted(
        {
            normalize_phrase(m.text)
            for m in find_mentions(own_words, ("color",))
            if m.value == base and normalize_phrase(m.text) != base
        }
    )
    return [Fact("color", base, words={"shade": shades[0]} if shades else {})]


def _material_facts(attrs: Attributes) -> list[Fact]:
    shares = sorted(attrs.materials, key=lambda share: -(share.percent or 0.0))
    facts = []
    for share in shares:
        mostly = share.percent is not None and 50 <= share.percent < 100 and len(shares) > 1
        facts.append(Fact("material", share.name, form="mostly" if mostly else ""))
    return facts


def _size_facts(attrs: Attributes, rng: random.Random) -> list[Fact]:
    if not attrs.sizes:
        return []
    fits = templates()["values"]["size_fit"]
    exact = [s for s in attrs.sizes if s not in fits]
    chosen = rng.choice(exact) if exact else attrs.sizes[0]
    return [Fact("size", chosen)]


def _budget_fact(price: float, rng: random.Random) -> Fact:
    """A limit, a range or an "around" that the target's price satisfies."""
    step = 5 if price < 60 else 10 if price < 200 else 50
    form = rng.choice(("under", "under", "range", "around"))
    if form == "range":
        low = math.floor(price * 0.7 / step) * step
        high = math.ceil(price * 1.15 / step) * step
        if 0 < low < price <= high:
            return Fact("budget", f"{low}-{high}", "range", float(low), float(high))
    if form == "around":
        mid = max(step, round(price / step) * step)
        near_low, near_high = mid * 0.8, mid * 1.2
        if near_low <= price <= near_high:
            return Fact("budget", f"around {mid}", "around", near_low, near_high, {"mid": str(mid)})
    high = math.ceil(price / step) * step
    if high <= price:
        high += step  # "under 40" must hold for a price of exactly 40
    return Fact("budget", f"under {high}", "under", 0.0, float(high))


def _dimension_facts(product: Product, rng: random.Random) -> list[Fact]:
    """Single measures in the features that a shopper would name ("a heel of about 1 inch")."""
    nouns: Mapping[str, str] = templates()["values"]["dimension_nouns"]
    facts: list[Fact] = []
    for feature in product.features:
        for match in find_measures(feature):
            measure = match.measure
            if (
                len(measure.values) != 1
                or measure.unit not in LENGTH_UNITS
                or measure.values[0] <= 0
            ):
                continue
            noun = _nearby_noun(feature, match.start, match.end, nouns)
            if noun:
                facts.append(_measure_fact(measure.values[0], measure.unit, noun, rng))
    return facts


def _nearby_noun(text: str, start: int, end: int, nouns: Mapping[str, str]) -> str | None:
    before = _WORD.findall(text[max(0, start - 40) : start].lower())[-4:]
    after = _WORD.findall(text[end : end + 20].lower())[:2]
    for word in [*reversed(before), *after]:
        if word in nouns:
            return word
    return None


def _measure_fact(value: float, unit: str, noun: str, rng: random.Random) -> Fact:
    """The measure as "<number> <unit>" (what derive() reads too), said as a limit or an
    approximation."""
    text = f"{_number(value)} {unit}"
    if rng.random() < 0.5:
        bound = math.ceil(value) if value >= 1 else math.ceil(value * 4) / 4
        return Fact(
            "dimension",
            text,
            "up_to",
            0.0,
            float(bound),
            {"number": _number(bound), "unit": unit, "noun": noun},
        )
    return Fact(
        "dimension",
        text,
        "about",
        value * 0.9,
        value * 1.1,
        {"number": _number(round(value, 1)), "unit": unit, "noun": noun},
    )


def _number(value: float) -> str:
    return f"{value:g}"


_MM_PER_UNIT = {"mm": 1.0, "cm": 10.0, "inch": 25.4, "ft": 304.8}


def _measures_mm(product: Product, nouns: Mapping[str, str]) -> dict[str, float]:
    """The first single length-like measure of each noun in the features, in millimetres."""
    found: dict[str, float] = {}
    for feature in product.features:
        for match in find_measures(feature):
            measure = match.measure
            if len(measure.values) != 1 or measure.unit not in _MM_PER_UNIT:
                continue
            noun = _nearby_noun(feature, match.start, match.end, nouns)
            if noun and noun not in found and measure.values[0] > 0:
                found[noun] = measure.values[0] * _MM_PER_UNIT[measure.unit]
    return found


# ---- the customer
# ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Override:
    """The intent_override plan: a plausible wrong value said first, the true fact at the switch."""

    attribute: str
    said: str  # the wrong value as the shopper names it ("black", "men's", "around $80")
    wrong: Disclosure  # stance "wrong": false of the target
    true: Fact


class NaturalCustomer:
    """One simulated shopper for one session (the Customer protocol of bench/customer.py).

    `lookup` (asin -> Product) lets the shopper see shown items it can reject; without
    it, recommendation dicts that carry their own catalog fields (at least a title) are
    read directly. With `reactions` the shopper also reacts to what it is shown: it
    points at the shown product closest to its target, maybe with a true critique of it,
    or turns the whole list down with a true reason (protocol "natural-reactive"). Off,
    not one random draw or word differs from the plain protocol.
    """

    def __init__(
        self,
        session: Session,
        product: Product,
        seed: int = 0,
        *,
        noise: NoiseSettings | None = None,
        lookup: Callable[[str], Product | None] | None = None,
        reactions: bool = False,
    ) -> None:
        self.session = session
        self.product = product
        self.rng = random.Random(f"{seed}:{session.sample_id}")
        self.noise = noise or NoiseSettings.from_templates()
        self.lookup = lookup
        self.reactions = reactions
        self.reacted: set[tuple[str, str]] = set()  # (asin or "", aspect): said once each
        self.text = templates()
        self.behaviour: Mapping[str, float] = self.text["behaviour"]
        self.attrs = derive(product)
        self.category = describe_category(self.attrs, product.title)
        self.facts = build_facts(product, self.attrs, self.category, self.rng)
        self.told: set[Fact] = set()
        self.rejected: set[tuple[str, str, str]] = set()
        self.boundary_used = False
        self.override_sent = False
        self.transcript: list[CustomerMessage] = []
        self._own_text = _own_text(
            product
        )  # lower-cased: a wrong or rejected noun must not occur in it
        self._target_mentions = _mentioned_values(self._own_text, self.attrs)
        self._override = (
            self._plan_override() if session.scenario_type == "intent_override" else None
        )

    def transcript_records(self) -> list[dict[str, Any]]:
        """The transcript as JSON-ready dicts (message, intent, what it disclosed), for reports."""
        return [asdict(message) for message in self.transcript]

    # -- the Customer protocol --

    def first_message(self) -> str:
        scenario = self.session.scenario_type
        if scenario == "buying":
            return self._emit(1, "opening", *self._buying_opening())
        if scenario == "intent_override":
            return self._emit(1, "opening", *self._override_opening())
        return self._emit(1, "opening", *self._browsing_opening())

    def reply(self, response: Mapping[str, Any], turn: int) -> str:
        ask = response.get("ask_attribute") if isinstance(response, Mapping) else None
        ask = ask if isinstance(ask, str) else None
        if ask is not None and ask not in ALLOWED_ATTRIBUTES:
            ask = "other"
        next_turn = turn + 1
        if self.session.scenario_type == "boundary" and not self.boundary_used and ask is not None:
            self.boundary_used = True
            text = self._pick("replies", "no_preference", attribute=_spoken(ask))
            return self._emit(next_turn, "no_preference", text, (), ask)
        if self.reactions and (reacted := self._reactive_reply(response, ask, next_turn)):
            return reacted
        if ask is None:
            return self._emit(next_turn, *self._nudge(response))
        intent, text, disclosures = self._answer(ask)
        rejection = (
            self._rejection(response) if self.rng.random() < self.behaviour["reject_rate"] else None
        )
        if rejection:
            text, disclosures = (
                f"{_sentence(text)} {_sentence(rejection[0])}",
                (*disclosures, rejection[1]),
            )
        return self._emit(next_turn, intent, text, disclosures, ask)

    def override_turn(self) -> int | None:
        if self.session.scenario_type != "intent_override":
            return None
        return override_turn_for(self.session.sample_id, self.session.scenario_type)

    def override_message(self) -> str:
        turn = self.override_turn() or 0
        override = self._override
        self.override_sent = True
        if override is None:  # nothing plausible to correct: restate one true fact instead
            _, text, disclosures = self._answer_other()
            return self._emit(
                turn, "override", self._pick("overrides", "restate", fact=text), disclosures
            )
        self.told.add(override.true)
        kind = "category" if override.attribute == "category" else "attribute"
        text = self._pick(
            "overrides", kind, old=override.said, new=self._value_words(override.true)
        )
        wrong = override.wrong
        retract = Disclosure(wrong.attribute, wrong.value, "retract", wrong.low, wrong.high)
        return self._emit(turn, "override", text, (retract, override.true.disclosure()))

    # -- openings --

    def _buying_opening(self) -> tuple[str, tuple[Disclosure, ...]]:
        category_text, disclosures = self._category_phrase()
        key = [f for name in KEY_ATTRIBUTES for f in self.facts[name][:1]]
        if not key:
            return self._pick("openings", "category_only", category=category_text), disclosures
        fact = self.rng.choice(key)
        self.told.add(fact)
        clause = self._clause(fact)
        text = self._pick(
            "openings",
            "buying",
            category=category_text,
            fact=clause,
            fact_sentence=_sentence(clause),
        )
        return text, (*disclosures, fact.disclosure())

    def _browsing_opening(self) -> tuple[str, tuple[Disclosure, ...]]:
        if self.category is None:
            return self._pick("openings", "browsing", coarse="clothes"), ()
        coarse = Disclosure("category", self.category.coarse_value)
        department = self._fact("department")
        if department and self.rng.random() < 0.5:
            self.told.add(department)
            recipient = self.rng.choice(self.text["values"]["department_for"][department.value])
            text = self._pick(
                "openings", "browsing_for", coarse=self.category.coarse, recipient=recipient
            )
            return text, (coarse, department.disclosure())
        return self._pick("openings", "browsing", coarse=self.category.coarse), (coarse,)

    def _override_opening(self) -> tuple[str, tuple[Disclosure, ...]]:
        override = self._override
        if override is None:
            return self._buying_opening()
        if override.attribute == "category":
            department = self._department_words()
            text = self._pick("openings", "category_only", category=f"{department}{override.said}")
            told = self._department_told(department)
            return text, (*told, override.wrong)
        if override.attribute == "department":
            category_text, disclosures = self._category_phrase(department=override.said + " ")
            return self._pick("openings", "category_only", category=category_text), (
                *disclosures,
                override.wrong,
            )
        category_text, disclosures = self._category_phrase()
        clause = self._wrong_clause(override)
        text = self._pick(
            "openings",
            "intent_override",
            category=category_text,
            fact=clause,
            fact_sentence=_sentence(clause),
        )
        return text, (*disclosures, override.wrong)

    def _plan_override(self) -> Override | None:
        """Prefer a wrong color, material or category; else a wrong department or budget."""
        for group in (OVERRIDABLE, OVERRIDE_FALLBACKS):
            options = [o for attribute in group if (o := self._wrong_value(attribute)) is not None]
            if options:
                return self.rng.choice(options)
        return None

    def _wrong_value(self, attribute: str) -> Override | None:
        """A plausible neighbouring value that is false of the target."""
        true = self._fact(attribute)
        if true is None:
            return None
        if attribute == "category":
            return self._wrong_category(true)
        if attribute == "budget":
            assert true.high is not None and self.attrs.price is not None
            mid = (
                math.ceil(self.attrs.price * 2 / 5) * 5
            )  # twice the price: "around" it can never hold
            said = f"around ${mid}"
            return Override(
                "budget", said, Disclosure("budget", said, "wrong", mid * 0.8, mid * 1.2), true
            )
        table = self.text["wrong_values"][attribute]
        fallback = table.get("_fallback", [])
        for value in [*table.get(true.value, []), *self.rng.sample(fallback, len(fallback))]:
            if (attribute, value) not in self._target_mentions and value != true.value:
                said = self._adjective(value) if attribute == "department" else value
                return Override(attribute, said, Disclosure(attribute, value, "wrong"), true)
        return None

    def _wrong_category(self, true: Fact) -> Override | None:
        assert self.category is not None
        neighbours = category_vocabulary().neighbours
        options = neighbours.get(self.category.specific) or neighbours.get(self.category.head) or ()
        for noun in [*options, *neighbours["_fallback"]]:
            if not _occurs(noun, self._own_text):
                return Override("category", noun, Disclosure("category", noun, "wrong"), true)
        return None

    def _wrong_clause(self, override: Override) -> str:
        """The wrong value said as a fact clause (the shopper believes it until the switch)."""
        if override.attribute == "budget":
            return self._pick("facts", "budget_around", mid=override.said.removeprefix("around $"))
        if override.attribute == "department":
            return self._pick("facts", "department", value=override.said)
        return self._pick("facts", override.attribute, value=override.said)

    # -- replies --

    def _answer(self, ask: str) -> tuple[str, str, tuple[Disclosure, ...]]:
        if ask == "other":
            return self._answer_other()
        names = ANSWERS[ask]
        pending = self._override if self._override and not self.override_sent else None
        fresh = [f for name in names for f in self._untold(name)]
        if pending and (
            pending.attribute == names[0] or (not fresh and pending.attribute in names)
        ):
            # Before the switch the shopper still believes the wrong value.
            return "answer", self._wrong_clause(pending), (pending.wrong,)
        if not fresh:
            known = any(self.facts[name] for name in names)
            intent = "nothing_more" if known else "not_sure"
            return intent, self._pick("replies", intent, attribute=_spoken(ask)), ()
        fact = fresh[0]
        self.told.add(fact)
        if (
            fact.attribute == "size"
            and (department := self._untold_first("department"))
            and self.rng.random() < 0.5
        ):
            self.told.add(department)
            text = self._pick(
                "facts",
                "size_with_department",
                department=self._value_words(department),
                size=self._size_words(fact),
            )
            return "answer", text, (department.disclosure(), fact.disclosure())
        return "answer", self._clause(fact), (fact.disclosure(),)

    def _answer_other(self) -> tuple[str, str, tuple[Disclosure, ...]]:
        fresh = [f for name in OTHER_ORDER for f in self._untold(name)]
        if not fresh:
            return (
                "nothing_more",
                self._pick("replies", "nothing_more", attribute=_spoken("other")),
                (),
            )
        fact = self.rng.choice(fresh[:3])  # one fact only; a little variety in which
        self.told.add(fact)
        return "answer", self._clause(fact), (fact.disclosure(),)

    def _nudge(self, response: Mapping[str, Any]) -> tuple[str, str, tuple[Disclosure, ...]]:
        """No question asked: reject something shown, volunteer one fact, or just say no."""
        rejection = self._rejection(response)
        if rejection:
            return "nudge", rejection[0], (rejection[1],)
        fresh = [f for name in OTHER_ORDER for f in self._untold(name)]
        if fresh and self.rng.random() < self.behaviour["volunteer_rate"]:
            fact = fresh[0]
            self.told.add(fact)
            text = self._pick(
                "replies", "not_quite_with_fact", fact_sentence=_sentence(self._clause(fact))
            )
            return "nudge", text, (fact.disclosure(),)
        return "nudge", self._pick("replies", "not_quite"), ()

    def _rejection(self, response: Mapping[str, Any]) -> tuple[str, Disclosure] | None:
        """Reject a value seen on a shown non-target item and absent from the target."""
        candidates = [c for c in self._shown_values(response) if c not in self.rejected]
        if not candidates:
            return None
        attribute, value, said = self.rng.choice(candidates)
        self.rejected.add((attribute, value, said))
        return self._pick("rejections", attribute, value=said), Disclosure(
            attribute, value, "reject"
        )

    def _shown_values(self, response: Mapping[str, Any]) -> list[tuple[str, str, str]]:
        recommendations = response.get("recommendations")
        if not isinstance(recommendations, Sequence) or isinstance(recommendations, str):
            return []
        depth = int(self.behaviour["rejection_scan_depth"])
        values: list[tuple[str, str, str]] = []
        for item in recommendations[:depth]:
            shown = self._shown_product(item)
            if shown is not None and shown.parent_asin != self.product.parent_asin:
                values.extend(v for v in self._rejectable(shown) if v not in values)
        return values

    def _shown_product(self, item: Any) -> Product | None:
        asin = item.get("parent_asin") if isinstance(item, Mapping) else item
        if not isinstance(asin, str) or not asin.strip():
            return None
        if self.lookup is not None:
            return self.lookup(asin.strip())
        if isinstance(item, Mapping) and item.get("title"):
            try:
                return product_from_record(dict(item))
            except RecordError:
                return None
        return None

    def _rejectable(self, shown: Product) -> list[tuple[str, str, str]]:
        attrs = derive(shown)
        found = [("color", c, c) for c in attrs.colors[:2]]
        found += [("material", m, m) for m in attrs.material_names[:2]]
        found += (
            [("closure", attrs.closure, attrs.closure)]
            if attrs.closure and attrs.closure != "no closure"
            else []
        )
        rejectable_styles = self.text["behaviour"]["rejectable_styles"]
        found += [
            ("style", s, self._value_words(Fact("style", s)))
            for s in attrs.styles
            if s in rejectable_styles
        ][:2]
        values = [(a, v, said) for a, v, said in found if (a, v) not in self._target_mentions]
        category = describe_category(attrs, shown.title)
        if (
            category
            and self.category
            and category.head != self.category.head
            and not _occurs(category.head, self._own_text)
        ):
            values.append(("category", category.head, category.specific))
        return values

    # -- reactions to the products shown --

    def _reactive_reply(
        self, response: Mapping[str, Any], ask: str | None, next_turn: int
    ) -> str | None:
        """A reply that reacts to the list shown, alone or after the answer to the question;
        None leaves the turn to the plain protocol."""
        if self.session.scenario_type == "intent_override" and not self.override_sent:
            return None  # before the switch the shopper is still after the wrong thing
        listed, everything = self._seen_list(response)
        depth = int(self.behaviour["reaction_scan_depth"])
        shown = [s for s in listed if s.position <= depth]
        if not shown:
            return None
        message = response.get("message")
        # A question that is about no attribute asks about the list: the shopper always answers.
        invited = ask is None and isinstance(message, str) and "?" in message
        rate = self.behaviour["reaction_nudge_rate" if ask is None else "reaction_rate"]
        if not invited and self.rng.random() >= rate:
            return None
        # "None of these" speaks of the whole list: only when the shopper could read all of it.
        whole = listed if everything else []
        said = self._reaction(shown, whole, len(self._recommendations(response)))
        if said is None:
            return None
        text, disclosures, reaction = said
        reaction = replace(reaction, text=_sentence(text))
        if ask is None:
            return self._emit(next_turn, "reaction", text, disclosures, reactions=(reaction,))
        intent, answer, told = self._answer(ask)
        return self._emit(
            next_turn,
            intent,
            f"{_sentence(answer)} {_sentence(text)}",
            (*told, *disclosures),
            ask,
            reactions=(reaction,),
        )

    def _reaction(
        self, shown: list[Seen], whole: list[Seen], listed: int
    ) -> tuple[str, tuple[Disclosure, ...], Reaction] | None:
        """Point at the closest of the top products (with a critique when one is true), or turn
        the list down for a reason true of the target and of no product in `whole`."""
        target = self._seen_target()
        pick = closest(target, shown)
        reasons = [r for r in list_reasons(target, whole, self._budget_bounds()) if self._fact(r)]
        reasons = [r for r in reasons if ("", r) not in self.reacted]
        if pick is not None and (not reasons or self.rng.random() < self.behaviour["pick_rate"]):
            said = self._pick_reaction(target, pick, listed)
            if said is not None:
                return said
        return self._reject_list(reasons[0]) if reasons else None

    def _pick_reaction(
        self, target: Seen, pick: Seen, listed: int
    ) -> tuple[str, tuple[Disclosure, ...], Reaction] | None:
        options = [c for c in critiques(target, pick) if (pick.asin, c.aspect) not in self.reacted]
        plain = (pick.asin, "") not in self.reacted
        if not options and not plain:
            return None  # said all there is about it already
        critique: Critique | None = None
        if options and (not plain or self.rng.random() >= self.behaviour["plain_pick_rate"]):
            # Nearly every shown product is another brand; the shopper mentions it less often.
            weights = [0.3 if c.aspect == "brand" else 1.0 for c in options]
            critique = self.rng.choices(options, weights)[0]
        aspect = critique.aspect if critique else ""
        self.reacted.add((pick.asin, aspect))
        which = self._pointer_words(pick.position, listed)
        if critique is None:
            text = self._pick("reactions", "pick", which=which)
            return text, (), Reaction("pick", pick.position, pick.asin)
        wanted = self._wanted_fact(critique.aspect)
        template = self._reaction_template(f"pick_{aspect}", with_wanted=wanted is not None)
        wanted_words = self._value_words(wanted) if wanted else ""
        text = template.format(which=which, shown=critique.shown, wanted=wanted_words)
        disclosures: tuple[Disclosure, ...] = ()
        if wanted is not None and "{wanted}" in template:
            self.told.add(wanted)
            disclosures = (wanted.disclosure(),)
        reaction = Reaction(
            "pick",
            pick.position,
            pick.asin,
            aspect,
            critique.shown,
            wanted.value if wanted and disclosures else "",
        )
        return text, disclosures, reaction

    def _reject_list(self, reason: str) -> tuple[str, tuple[Disclosure, ...], Reaction]:
        fact = self._fact(reason)
        assert fact is not None  # reasons are kept only for the target's facts
        self.told.add(fact)
        self.reacted.add(("", reason))
        text = self._pick(
            "reactions",
            f"reject_list_{reason}",
            value=self._value_words(fact),
            fact_sentence=_sentence(self._clause(fact)),
        )
        return text, (fact.disclosure(),), Reaction("reject_list", 0, "", reason, "", fact.value)

    def _wanted_fact(self, aspect: str) -> Fact | None:
        """The target's own value a critique may name ("I want it in navy"), if it has one."""
        return self._fact(aspect) if aspect in ("brand", "color", "material") else None

    def _reaction_template(self, key: str, with_wanted: bool) -> str:
        options = self.text["reactions"][key]
        usable = [t for t in options if with_wanted or "{wanted}" not in t] or options
        return str(self.rng.choice(usable))

    def _pointer_words(self, position: int, listed: int) -> str:
        """How the shopper points at a position: "the second one", "#2", "that one"."""
        reactions = self.text["reactions"]
        if listed == 1:
            return self._pick("reactions", "pointer_only")
        if position == listed and self.rng.random() < 0.3:
            return self._pick("reactions", "pointer_last")
        ordinals = reactions["ordinals"]
        ordinal = ordinals[position - 1] if position <= len(ordinals) else f"#{position}"
        return self._pick("reactions", "pointer", ordinal=ordinal, number=str(position))

    def _budget_bounds(self) -> tuple[float, float] | None:
        fact = self._fact("budget")
        return (fact.low or 0.0, fact.high) if fact and fact.high else None

    def _recommendations(self, response: Mapping[str, Any]) -> Sequence[Any]:
        recommendations = response.get("recommendations")
        if not isinstance(recommendations, Sequence) or isinstance(recommendations, str):
            return ()
        return recommendations

    def _seen_list(self, response: Mapping[str, Any]) -> tuple[list[Seen], bool]:
        """The list as the shopper sees it, the target left out, and whether it could read every
        item (an id it cannot look up is a product it has not seen)."""
        seen, everything = [], True
        for position, item in enumerate(self._recommendations(response), start=1):
            shown = self._shown_product(item)
            if shown is None:
                everything = False
            elif shown.parent_asin != self.product.parent_asin:
                seen.append(self._seen(shown, position))
        return seen, everything

    def _seen_target(self) -> Seen:
        return self._seen(self.product, 0, self.attrs, self.category)

    def _seen(
        self,
        product: Product,
        position: int,
        attrs: Attributes | None = None,
        category: CategoryWords | None = None,
    ) -> Seen:
        attrs = attrs or derive(product)
        category = category or describe_category(attrs, product.title)
        return Seen(
            position=position,
            asin=product.parent_asin,
            head=category.head if category else "",
            leaf=attrs.leaf,
            path=frozenset(segment.lower() for segment in attrs.category_path),
            department=attrs.department,
            price=attrs.price,
            brand=attrs.brand,
            colors=frozenset(attrs.colors),
            materials=frozenset(attrs.material_names),
            styles=frozenset(attrs.styles),
            words=frozenset(_TITLE_WORD.findall(product.title.lower())),
            measures=_measures_mm(product, self.text["values"]["dimension_nouns"]),
        )

    # -- wording --

    def _category_phrase(self, department: str | None = None) -> tuple[str, tuple[Disclosure, ...]]:
        """The specific category as said in an opening, maybe with the department ("women's hoop
        earrings").

        `department` replaces the target's own department words (the wrong one of an override).
        """
        fact = self._fact("category")
        if self.category is None or fact is None:
            return department or "something", ()
        self.told.add(fact)
        told: tuple[Disclosure, ...] = ()
        if department is None:
            department = self._department_words()
            told = self._department_told(department)
        return f"{department}{self._category_synonym(self.category.specific)}", (
            *told,
            fact.disclosure(),
        )

    def _department_words(self) -> str:
        """An adjective ("women's ") for the opening, or "" (and the department stays untold)."""
        department = self._fact("department")
        if (
            department is None
            or self.rng.random() >= self.behaviour["say_department_in_opening_rate"]
        ):
            return ""
        self.told.add(department)
        return self._adjective(department.value) + " "

    def _department_told(self, words: str) -> tuple[Disclosure, ...]:
        """The department's disclosure if `words` (from `_department_words`) said it, else ()."""
        if not words:
            return ()
        fact = self._fact("department")
        assert fact is not None  # _department_words says words only for a department fact
        return (fact.disclosure(),)

    def _adjective(self, department: str) -> str:
        return self.rng.choice(self.text["values"]["department_adjective"][department])

    def _category_synonym(self, name: str) -> str:
        options = category_vocabulary().synonyms.get(name)
        return self.rng.choice(options) if options else name

    def _value_words(self, fact: Fact) -> str:
        """The value alone, as the shopper names it ("navy", "leather", "hoop earrings")."""
        values = self.text["values"]
        if fact.attribute == "color":
            shade = fact.words.get("shade")
            if shade and self.rng.random() < self.behaviour["say_shade_rate"]:
                return shade
            return self.rng.choice(values["color_words"].get(fact.value, [fact.value]))
        if fact.attribute == "category":
            assert self.category is not None
            return self._category_synonym(self.category.specific)
        if fact.attribute == "department":
            return self._adjective(fact.value)
        if fact.attribute == "budget":
            return _budget_words(fact)
        if fact.attribute in ("closure", "use_case", "style"):
            return self.rng.choice(values[fact.attribute].get(fact.value, [fact.value]))
        return fact.value

    def _clause(self, fact: Fact) -> str:
        """A short clause stating one fact ("something in navy", "under 40 bucks")."""
        if fact.attribute == "budget":
            return self._pick(
                "facts",
                f"budget_{fact.form}",
                low=_number(fact.low or 0),
                high=_number(fact.high or 0),
                mid=fact.words.get("mid", ""),
            )
        if fact.attribute == "dimension":
            return self._dimension_clause(fact)
        if fact.attribute == "size":
            return self._size_clause(fact)
        if fact.attribute == "department" and self.rng.random() < 0.5:
            recipient = self.rng.choice(self.text["values"]["department_for"][fact.value])
            return self._pick("facts", "department_for", value=recipient)
        key = "material_mostly" if fact.form == "mostly" else fact.attribute
        return self._pick("facts", key, value=self._value_words(fact))

    def _size_clause(self, fact: Fact) -> str:
        values = self.text["values"]
        if fact.value in values["size_words"]:
            return self._pick(
                "facts", "size_letter", value=self.rng.choice(values["size_words"][fact.value])
            )
        if fact.value in values["size_fit"]:
            return self._pick(
                "facts", "size_fit", value=self.rng.choice(values["size_fit"][fact.value])
            )
        return self._pick("facts", "size_number", value=fact.value)

    def _size_words(self, fact: Fact) -> str:
        """The size alone ("medium", "size 8", "plus size"), to pair with a department."""
        values = self.text["values"]
        for table in ("size_words", "size_fit"):
            if fact.value in values[table]:
                return self.rng.choice(values[table][fact.value])
        return f"size {fact.value}"

    def _dimension_clause(self, fact: Fact) -> str:
        noun = fact.words["noun"]
        unit = self.rng.choice(self.text["values"]["units"][fact.words["unit"]])
        if fact.words["number"] == "1":
            unit = unit.removesuffix("es") if unit.endswith("ches") else unit.removesuffix("s")
        adjective = self.text["values"]["dimension_nouns"][noun]
        kind = "adjective" if adjective in self.text["values"]["dimension_adjectives"] else "noun"
        return self._pick(
            "facts",
            f"dimension_{kind}_{fact.form}",
            number=fact.words["number"],
            unit=unit,
            noun=noun,
            adjective=adjective,
        )

    def _pick(self, section: str, key: str, **slots: str) -> str:
        return self.rng.choice(self.text[section][key]).format(**slots)

    # -- state helpers --

    def _fact(self, attribute: str) -> Fact | None:
        items = self.facts.get(attribute) or []
        return items[0] if items else None

    def _untold(self, attribute: str) -> list[Fact]:
        if self._override and not self.override_sent and attribute == self._override.attribute:
            return []  # the true value is kept for the override message
        return [f for f in self.facts.get(attribute, []) if f not in self.told]

    def _untold_first(self, attribute: str) -> Fact | None:
        untold = self._untold(attribute)
        return untold[0] if untold else None

    # -- output --

    def _emit(
        self,
        turn: int,
        intent: str,
        text: str,
        disclosures: tuple[Disclosure, ...],
        asked: str | None = None,
        reactions: tuple[Reaction, ...] = (),
    ) -> str:
        clean = _sentence(text)
        if self._leaks(clean):
            # Never hand the agent the target's id or exact title, whatever the wording produced.
            clean, disclosures, intent = _sentence(self._pick("replies", "not_quite")), (), "nudge"
            reactions = ()
        noisy, noise = self._add_noise(clean)
        self.transcript.append(
            CustomerMessage(
                turn, intent, asked, noisy, clean, tuple(disclosures), noise, tuple(reactions)
            )
        )
        return noisy

    def _leaks(self, text: str) -> bool:
        lowered = text.lower()
        return (
            self.product.parent_asin.lower() in lowered
            or self.product.title.strip().lower() in lowered
        )

    def _add_noise(self, text: str) -> tuple[str, tuple[str, ...]]:
        applied: list[str] = []
        if self.rng.random() < self.noise.typo_rate:
            text, changed = _typo(text, self.rng, self.noise.typo_min_word_length)
            if changed:
                applied.append("typo")
        if self.rng.random() < self.noise.chat_rate:
            chat = self.text["chat"]
            if self.rng.random() < 0.5:
                prefix = self.rng.choice(chat["prefixes"])
                joiner = " " if prefix[-1] in "!?.," else ", "
                text = f"{prefix}{joiner}{text[0].lower()}{text[1:]}"
            else:
                text = f"{text} {self.rng.choice(chat['suffixes'])}"
            applied.append("chat")
        if self.rng.random() < self.noise.lowercase_rate:
            text = text.lower()
            applied.append("lowercase")
        if self.rng.random() < self.noise.drop_final_punctuation_rate and text[-1] in ".!?":
            text = text.rstrip(".!?")
            applied.append("no_punctuation")
        return text, tuple(applied)


# ---- small text helpers
# ----------------------------------------------------------------------------


def _sentence(text: str) -> str:
    """Capitalised, single-spaced, ending in punctuation, with "an" before vowel sounds."""
    text = _AN.sub(lambda m: m.group(1) + "n", " ".join(text.split()))
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text if text[-1] in ".!?" else text + "."


def _budget_words(fact: Fact) -> str:
    if fact.form == "range":
        return f"${_number(fact.low or 0)}-{_number(fact.high or 0)}"
    if fact.form == "around":
        return f"around ${fact.words['mid']}"
    return f"under ${_number(fact.high or 0)}"


def _spoken(ask: str) -> str:
    return {"use_case": "occasion", "other": "details", "feature": "features"}.get(ask, ask)


def _typo(text: str, rng: random.Random, min_length: int) -> tuple[str, bool]:
    """Swap two neighbouring letters or drop one inside one content word."""
    words = [m for m in _ALPHA_WORD.finditer(text) if len(m.group(0)) >= min_length]
    if not words:
        return text, False
    match = rng.choice(words)
    word = match.group(0)
    i = rng.randrange(1, len(word) - 2)
    if rng.random() < 0.5 and word[i] != word[i + 1]:
        typo = word[:i] + word[i + 1] + word[i] + word[i + 2 :]
    else:
        typo = word[:i] + word[i + 1 :]
    return text[: match.start()] + typo + text[match.end() :], True


def _own_text(product: Product) -> str:
    parts = [
        product.title,
        *product.features,
        *product.description,
        *product.categories,
        *(f"{k} {v}" for k, v in product.details.items()),
    ]
    return " . ".join(parts).lower()


def _mentioned_values(own_text: str, attrs: Attributes) -> set[tuple[str, str]]:
    """Every (attribute, canonical value) the product's text mentions anywhere, or its attributes
    hold."""
    found: set[tuple[str, str]] = {(m.facet, m.value) for m in find_mentions(own_text)}
    found.update(("color", c) for c in attrs.colors)
    found.update(("material", m) for m in attrs.material_names)
    found.update(("style", s) for s in attrs.styles)
    if attrs.closure:
        found.add(("closure", attrs.closure))
    return found
