"""References to shown products and critiques of them ("the second one", "cheaper than
that", "not the nike ones", "none of these").

Two pure steps. `read_shown_talk` reads the message alone into typed observations, each
with the span of text it came from: pointers (an ordinal, "these", "that one", a
description such as "the red one") and cues (cheaper, more like, too long, a rejection...).
`resolve` then puts them against the products the session last showed, which the agent
looked up and handed over as plain `Shown` data: which positions each pointer names, and
which critique each cue makes of them. The cue words live in data/critiques.json.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..catalog.vocabulary import Mention
from ..index.text import STOPWORDS, stem, tokens

DATA_FILE = Path(__file__).with_name("data") / "critiques.json"

# What a critique may be; "reject" and "positive" are cues that become one of these.
KINDS = (
    "pick",
    "more_like",
    "cheaper",
    "pricier",
    "shorter",
    "longer",
    "smaller",
    "bigger",
    "not_brand",
    "not_color",
    "not_material",
    "not_style",
    "none_of_these",
)
CUE_KINDS = (*KINDS, "reject", "positive", "contrast", "neutral")
# Critiques of the whole list when no product is pointed at ("something cheaper").
LIST_WIDE = frozenset({"cheaper", "pricier", "none_of_these"})
PRICE_MATCH = 0.02  # a number within 2% (or $1) of a shown price names that product


class CritiqueDataError(ValueError):
    """critiques.json is malformed; the message names the entry."""


Phrase = tuple[str, ...]


class PhraseTable:
    """Phrases (as word tuples) found in a word list, leftmost and longest first."""

    def __init__(self, phrases: Mapping[Phrase, str]) -> None:
        self._by_first: dict[str, list[tuple[Phrase, str]]] = {}
        for phrase, label in sorted(phrases.items(), key=lambda item: -len(item[0])):
            self._by_first.setdefault(phrase[0], []).append((phrase, label))

    def find(self, words: Sequence[str]) -> list[tuple[int, int, str]]:
        """(first word, past the last word, label) of each phrase, not overlapping."""
        found, i = [], 0
        while i < len(words):
            for phrase, label in self._by_first.get(words[i], ()):
                if tuple(words[i : i + len(phrase)]) == phrase:
                    found.append((i, i + len(phrase), label))
                    i += len(phrase)
                    break
            else:
                i += 1
        return found


@dataclass(frozen=True, slots=True)
class Cues:
    """critiques.json, validated."""

    ordinals: Mapping[str, int]
    counts: Mapping[str, int]
    number_marks: frozenset[str]
    referents: frozenset[str]
    not_referents: frozenset[str]
    pointers: PhraseTable  # "these", "that one", "the other one"
    cues: PhraseTable  # critique cues -> kind
    attribute_words: Mapping[str, str]  # word -> facet ("colour" -> color)
    question_openers: frozenset[str]
    price_words: Mapping[str, str]  # "cheapest" -> lowest
    length_words: Mapping[str, str]  # "maxi" -> long, "cropped" -> short
    length_styles: Mapping[str, tuple[str, ...]]
    size_words: Mapping[str, tuple[str, ...]]
    frame: Mapping[str, frozenset[str]]  # function words around pointers, by role


def load_cues(path: Path = DATA_FILE) -> Cues:
    raw = json.loads(path.read_text(encoding="utf-8"))
    pointers: dict[Phrase, str] = {}
    labels = (
        ("all", "all_shown"),
        ("this", "this_one"),
        ("other", "other_one"),
        ("them", "anaphora"),
        ("none", "not_pointers"),
    )
    for label, key in labels:
        for phrase in _phrases(raw, key):
            pointers[phrase] = label
    cues: dict[Phrase, str] = {}
    for kind, phrases in _table(raw, "cues").items():
        if kind not in CUE_KINDS:
            raise CritiqueDataError(f"{path}: unknown cue kind {kind!r}")
        for phrase in _words_of(phrases, f"cues.{kind}"):
            if cues.setdefault(phrase, kind) != kind:
                raise CritiqueDataError(f"{path}: cue {' '.join(phrase)!r} has two kinds")
            cues[phrase] = kind
    lengths = _table(raw, "lengths")
    return Cues(
        ordinals=_numbers(raw, "ordinals"),
        counts=_numbers(raw, "counts"),
        number_marks=frozenset(_words(raw, "number_marks")),
        referents=frozenset(_words(raw, "referents")),
        not_referents=frozenset(_words(raw, "not_referents")),
        pointers=PhraseTable(pointers),
        cues=PhraseTable(cues),
        attribute_words=_inverted(_table(raw, "attribute_words")),
        question_openers=frozenset(_words(raw, "question_openers")),
        price_words=_inverted(_table(raw, "price_words")),
        length_words=_inverted(lengths),
        length_styles={k: tuple(v) for k, v in _table(raw, "length_styles").items()},
        size_words={k: tuple(v) for k, v in _table(raw, "size_words").items()},
        frame=_frame(raw),
    )


FRAME_ROLES = (
    "determiners",
    "negators",
    "indefinite",
    "mark_leads",
    "budget_before",
    "price_before",
    "price_after",
    "fillers",
    "description_stop",
)


def _frame(raw: Mapping[str, Any]) -> dict[str, frozenset[str]]:
    table = {k: v for k, v in (raw.get("frame") or {}).items() if not k.startswith("_")}
    missing = set(FRAME_ROLES) - set(table)
    if missing:
        raise CritiqueDataError(f"{DATA_FILE}: frame lacks {', '.join(sorted(missing))}")
    return {role: frozenset(_words(table, role)) for role in FRAME_ROLES}


def _table(raw: Mapping[str, Any], key: str) -> dict[str, list[str]]:
    table = raw.get(key)
    if not isinstance(table, dict) or not all(
        isinstance(v, list) and all(isinstance(w, str) for w in v) for v in table.values()
    ):
        raise CritiqueDataError(f"{DATA_FILE}: {key} must map names to lists of phrases")
    return table


def _words(raw: Mapping[str, Any], key: str) -> list[str]:
    values = raw.get(key)
    if not isinstance(values, list) or not all(isinstance(v, str) and v for v in values):
        raise CritiqueDataError(f"{DATA_FILE}: {key} must be a list of words")
    return values


def _numbers(raw: Mapping[str, Any], key: str) -> dict[str, int]:
    table = raw.get(key)
    if not isinstance(table, dict) or not all(isinstance(v, int) for v in table.values()):
        raise CritiqueDataError(f"{DATA_FILE}: {key} must map words to whole numbers")
    return dict(table)


def _phrases(raw: Mapping[str, Any], key: str) -> list[Phrase]:
    return _words_of(_words(raw, key), key)


def _words_of(phrases: Iterable[str], where: str) -> list[Phrase]:
    out = []
    for phrase in phrases:
        words = tuple(word for word, _, _ in words_with_spans(phrase))
        if not words:
            raise CritiqueDataError(f"{DATA_FILE}: {where}: {phrase!r} has no words")
        out.append(words)
    return out


def _inverted(table: Mapping[str, list[str]]) -> dict[str, str]:
    return {phrase: name for name, phrases in table.items() for phrase in phrases}


# A word as a shopper types it: "#", "$13", "8.5", "2nd", "one's" (read as "one"), "isn't".
_WORD = re.compile(r"#|[$£€]?\d+(?:[.,]\d+)?(?![a-z0-9])|[a-z0-9]+(?:'[a-z]+)?")


def words_with_spans(text: str) -> list[tuple[str, int, int]]:
    """Lower-case words with their (start, end) in `text`; a possessive 's is dropped."""
    folded = text.lower().replace("’", "'")
    out = []
    for match in _WORD.finditer(folded):
        word = match.group()
        if word.endswith("'s"):
            word = word[:-2]
        out.append((word, match.start(), match.end()))
    return out


CUES = load_cues()


def cue_words(path: Path = DATA_FILE) -> frozenset[str]:
    """Every word the cue file uses: the spelling fixer leaves them alone."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    found: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, str):
            found.update(tokens(value))
        elif isinstance(value, list):
            for item in value:
                walk(item)
        elif isinstance(value, dict):
            for key, item in value.items():
                if isinstance(item, int):
                    found.add(key)  # an ordinal
                elif not key.startswith("_"):
                    walk(item)

    walk({k: v for k, v in raw.items() if not k.startswith("_")})
    return frozenset(w for w in found if w.isalpha())


# -- reading the message alone --------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Pointer:
    """Words that point at shown products. kind: ordinal | all | this | other | description."""

    kind: str
    start: int
    end: int
    text: str
    ordinal: int = 0  # 1-based; -1 the last
    count: int = 1  # "the first two"
    words: tuple[str, ...] = ()  # a description's words, as said
    negated: bool = False  # "not the yellow one", "no light up ones"
    indefinite: bool = False  # "a nike one": a kind of product, unless it is a shown brand


@dataclass(frozen=True, slots=True)
class Cue:
    kind: str  # one of CUE_KINDS
    start: int
    end: int
    text: str


@dataclass(slots=True)
class ShownTalk:
    """What a message says about shown products, before it is put against them."""

    pointers: list[Pointer] = field(default_factory=list)
    cues: list[Cue] = field(default_factory=list)
    sentences: list[tuple[int, int]] = field(default_factory=list)  # (start, end) in the text
    questions: list[bool] = field(default_factory=list)  # per sentence: is it a question?
    numbers: list[tuple[float, int, int]] = field(default_factory=list)  # amounts said
    text: str = ""

    def __bool__(self) -> bool:
        return bool(self.pointers or self.cues)


_SENTENCE = re.compile(r"[^.!?;\n]+(?:[.!?;\n]+|$)")
_DETERMINERS = CUES.frame["determiners"]
_NEGATORS = CUES.frame["negators"]
# What may come before "no. 2" / "option 3" when it points at a product ("go with no. 2").
_MARK_LEADS = _DETERMINERS | CUES.frame["mark_leads"]
_INDEFINITE = CUES.frame["indefinite"]  # "had a champion one before": only a brand points
# Words before an amount that make it a budget ("under 40"), and around one that make it a price
# ("the $13 one", "at 68", "150 is steep").
_BUDGET_BEFORE = CUES.frame["budget_before"]
_PRICE_BEFORE = CUES.frame["price_before"]
_PRICE_AFTER = CUES.frame["price_after"]


def read_shown_talk(text: str) -> ShownTalk:
    talk = ShownTalk(text=text)
    spans = words_with_spans(text)
    words = [w for w, _, _ in spans]
    for match in _SENTENCE.finditer(text):
        if match.group().strip():
            talk.sentences.append((match.start(), match.end()))
            talk.questions.append(_is_question(match.group()))
    taken: set[int] = set()
    inside_cues: set[int] = set()  # "it" of "is nearly it" is the cue's, not a pointer
    for first, past, kind in CUES.cues.find(words):
        if kind == "neutral":  # "never mind the budget", "no clue": about nothing shown
            taken |= set(range(first, past))
        elif _said_of_someone(words, first):
            continue  # "these are way too big, he's tiny": the child is tiny, not the bags
        elif kind != "reject" or _rejects(words, first, past):
            start, end = spans[first][1], spans[past - 1][2]
            talk.cues.append(Cue(kind, start, end, text[start:end]))
            if past - first > 1:
                inside_cues |= set(range(first, past))
    for pointer, used in _ordinals(text, spans, words):
        talk.pointers.append(pointer)
        taken |= used
    for first, past, label in CUES.pointers.find(words):
        if label == "them" and past - first == 1 and first in inside_cues:
            continue
        if not taken & set(range(first, past)):
            if label != "none":
                talk.pointers.append(_pointer(label, text, spans, first, past))
            taken |= set(range(first, past))
    talk.pointers += _descriptions(text, spans, words, taken)
    talk.numbers = [
        (float(w.lstrip("$£€").replace(",", "")), s, e)
        for i, (w, s, e) in enumerate(spans)
        if _is_price(words, i)
    ]
    talk.pointers.sort(key=lambda p: p.start)
    return talk


# "he's" is read as "he": a pronoun right before the cue is its subject
_SOMEONE_IS = frozenset({"he", "she", "i'm", "hes", "shes", "im", "they're", "theyre"})
_SOMEONE = frozenset({"he", "she", "i", "they"})


def _said_of_someone(words: list[str], first: int) -> bool:
    """Does the cue describe a person ("he's tiny", "she is petite") rather than the products?"""
    before = words[max(0, first - 2) : first]
    return bool(before) and (
        before[-1] in _SOMEONE_IS
        or (len(before) == 2 and before[0] in _SOMEONE and before[1] in ("is", "am", "are"))
    )


def _is_question(sentence: str) -> bool:
    """Does the sentence ask something ("is the first one quick dry?", "looks great but is it
    over 40?"), rather than request with a question mark ("the lace one but in black?")?"""
    if not sentence.rstrip().endswith("?"):
        return False
    words = [w for w, _, _ in words_with_spans(sentence)]
    starts = [0] + [i + 1 for i, w in enumerate(words) if w in ("but", "and", "so")]
    return any(i < len(words) and words[i] in CUES.question_openers for i in starts)


def _rejects(words: list[str], first: int, past: int) -> bool:
    """A bare "too" rejects only with a word after it ("too shiny", not "fine too")."""
    return words[first:past] != ["too"] or past < len(words) and words[past].isalpha()


def _is_price(words: list[str], i: int) -> bool:
    """Is the amount at i a shown product's price ("the $13 one", "150 is steep", "at 68") rather
    than a budget ("under 40"), an age or a size?"""
    word = words[i]
    if not re.fullmatch(r"[$£€]?\d+(?:\.\d+)?", word):
        return False
    before = words[max(0, i - 2) : i]
    after = words[i + 1] if i + 1 < len(words) else ""
    if _BUDGET_BEFORE & set(before):
        return False  # "under 40", "around the $10 mark"
    if before[-1:] == ["the"]:
        return after in CUES.referents  # "the $13 one", not "the 35 dollar mark"
    return word[0] in "$£€" or bool(_PRICE_BEFORE & set(before[-1:])) or after in _PRICE_AFTER


def _pointer(
    kind: str, text: str, spans: list[tuple[str, int, int]], first: int, past: int, **extra: Any
) -> Pointer:
    start, end = spans[first][1], spans[past - 1][2]
    return Pointer(kind, start, end, text[start:end], **extra)


def _ordinals(
    text: str, spans: list[tuple[str, int, int]], words: list[str]
) -> Iterable[tuple[Pointer, set[int]]]:
    """ "the second one", "2nd", "#3", "no. 2", "the last two", "first one"."""
    # Words that open a sentence ("Around 55. Number 4 is close"): a mark needs no lead-in there.
    opening = {0} | {
        i
        for i in range(1, len(spans))
        if re.search(r"[.!?;\n]", text[spans[i - 1][2] : spans[i][1]])
    }
    for i, word in enumerate(words):
        number = None
        if word in CUES.number_marks and i + 1 < len(words) and words[i + 1].isdigit():
            if word != "#" and not (i in opening or words[i - 1] in _MARK_LEADS):
                continue  # "no 2 alike", "item 3 of the list" need a lead-in; "#3" does not
            number, first, past = int(words[i + 1]), i, i + 2
        elif word in CUES.ordinals and _points(words, i):
            number, first, past = CUES.ordinals[word], i, i + 1
        if number is None:
            continue
        count = 1
        if past < len(words) and words[past] in CUES.counts:
            count, past = CUES.counts[words[past]], past + 1
        if past < len(words) and words[past] in CUES.referents:
            past += 1
        if first > 0 and words[first - 1] in _DETERMINERS:
            first -= 1
        pointer = _pointer("ordinal", text, spans, first, past, ordinal=number, count=count)
        yield pointer, set(range(first, past))


_JOINS = frozenset({"and", "or", "vs", "&"})


def _points(words: list[str], i: int) -> bool:
    """Does the ordinal at i point at a product ("the first one", "2nd", "first, large"), rather
    than count something else ("her first birthday", "first time buying")?"""
    after = words[i + 1] if i + 1 < len(words) else ""
    if after in CUES.referents or after in CUES.counts:
        return True
    if after in CUES.not_referents:
        return False
    before = words[i - 1] if i else ""
    if before in _DETERMINERS or before == "#":
        return True
    if before in _JOINS and i >= 2 and words[i - 2] in CUES.ordinals:
        return True  # "the second and fourth"
    return len(words) <= 4  # a bare "ok 2nd", "first one, large": the ordinal is the message


def _descriptions(
    text: str, spans: list[tuple[str, int, int]], words: list[str], taken: set[int]
) -> list[Pointer]:
    """ "the red one", "the nike ones", "no light up ones", "the plaid dress": a determiner (or
    a negator) then a few words, or a few words then one/ones. Whether the words describe a shown
    product is decided against the products (`resolve`)."""
    out, used = [], set(taken)
    # Word i follows a comma or a full stop: a description never spans one.
    breaks = {
        i
        for i in range(1, len(spans))
        if re.search(r"[.,;:!?]", text[spans[i - 1][2] : spans[i][1]])
    }
    for i, word in enumerate(words):
        if i in used:
            continue
        if word in CUES.referents and i > 0:
            first = i
            while (
                first > 0
                and i - first < 4
                and first not in breaks
                and (words[first - 1] in ("and", "&") or not _stops(words[first - 1]))
            ):
                first -= 1
            lead = words[first - 1] if first else ""
            leads = _DETERMINERS | _NEGATORS | _INDEFINITE
            if first < i and lead in leads and not used & set(range(first, i)):
                said = tuple(words[first:i])
                out.append(
                    _pointer(
                        "description",
                        text,
                        spans,
                        first - 1,
                        i + 1,
                        words=said,
                        negated=lead in _NEGATORS,
                        indefinite=lead in _INDEFINITE,
                    )
                )
                used |= set(range(first - 1, i + 1))
        elif word in _DETERMINERS:
            past = i + 1
            while (
                past < len(words)
                and past - i <= 4
                and past not in breaks
                and (words[past] in ("and", "&") or not _stops(words[past]))
            ):
                past += 1
                if text[spans[past - 1][1] : spans[past - 1][2]].endswith(("'s", "’s")):
                    break  # "the suit's sorted": a clause about the suit follows
            if past > i + 1 and not used & set(range(i, past)):
                said = tuple(words[i + 1 : past])
                if past < len(words) and past not in breaks and words[past] in CUES.referents:
                    past += 1
                pointer = _pointer("description", text, spans, i, past, words=said)
                out.append(pointer)
                used |= set(range(i, past))
    return out


def _stops(word: str) -> bool:
    """Does the word end (or start) a description: a function word, a verb, a filler?"""
    return word in _FRAME_STOP


_FRAME_STOP = STOPWORDS | _DETERMINERS | _NEGATORS | CUES.frame["description_stop"]


# -- putting it against the shown products ----------------------------------------------------


@dataclass(frozen=True, slots=True)
class Shown:
    """One product the session showed last, as the agent looked it up (plain data)."""

    position: int  # 1-based, in the order shown
    parent_asin: str
    price: float | None = None
    brand: str | None = None
    colors: tuple[str, ...] = ()
    materials: tuple[str, ...] = ()
    styles: tuple[str, ...] = ()
    leaf: str = ""
    words: frozenset[str] = frozenset()  # stems of its title and brand
    title: str = ""  # as the index tokenised it; what the model resolver is told

    def to_dict(self) -> dict[str, Any]:
        return {
            "position": self.position,
            "parent_asin": self.parent_asin,
            "price": self.price,
            "brand": self.brand,
            "colors": list(self.colors),
            "materials": list(self.materials),
            "styles": list(self.styles),
            "leaf": self.leaf,
        }

    def values(self, facet: str) -> tuple[str, ...]:
        if facet == "brand":
            return (self.brand.lower(),) if self.brand else ()
        return {"color": self.colors, "material": self.materials, "style": self.styles}.get(
            facet, ()
        )


@dataclass(frozen=True, slots=True)
class Reference:
    """Shown products a message points at."""

    positions: tuple[int, ...]
    kind: str  # ordinal | all | this | other | description | value | price
    start: int
    end: int
    text: str
    facet: str | None = None  # what a description named: color, brand, material, style, length
    named: tuple[tuple[str, str], ...] = ()  # (facet, value) pairs the description named
    words: tuple[str, ...] = ()  # stems of the description that the products hold
    negated: bool = False  # said with a negator: "not the yellow one", "pink?? no"

    def to_dict(self) -> dict[str, Any]:
        return {
            "positions": list(self.positions),
            "kind": self.kind,
            "text": self.text,
            "span": [self.start, self.end],
        }


@dataclass(frozen=True, slots=True)
class Critique:
    """What the shopper said about the products at `positions`."""

    kind: str  # one of KINDS
    positions: tuple[int, ...]
    start: int
    end: int
    text: str
    named: tuple[tuple[str, str], ...] = ()  # values the critique names ("not the yellow one")
    words: tuple[str, ...] = ()  # description words it names ("the santa one")
    pointed: bool = True  # said of products pointed at, not of the whole list by default
    liked: bool = False  # said of a product the shopper also likes ("close but too expensive")

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "positions": list(self.positions),
            "text": self.text,
            "span": [self.start, self.end],
        }


@dataclass(slots=True)
class Reading:
    references: list[Reference] = field(default_factory=list)
    critiques: list[Critique] = field(default_factory=list)

    def positions(self) -> list[int]:
        return sorted({p for r in self.references for p in r.positions})


def resolve(
    talk: ShownTalk,
    shown: Sequence[Shown],
    text: str,
    mentions: Sequence[Mention] = (),
    negated: Sequence[Mention] = (),
    budget_amounts: Iterable[float] = (),
    said: Sequence[Mention] = (),
    recent: Sequence[Shown] = (),
    negated_words: Sequence[str] = (),
) -> Reading:
    """`talk` against the products shown last: `mentions` are the values the message names
    (`negated` the ones it turns down of the products), `budget_amounts` the numbers it states
    as a budget, `said` every value it names (default: `mentions` and `negated`), `recent` the
    products the shopper pointed at last, in an earlier message ("that brand" speaks of them;
    one no longer in the list is at position 0), `negated_words` the words it turns down that no
    vocabulary table lists ("no flip flops": "flops")."""
    said = said or [*mentions, *negated]
    reading = Reading()
    if not shown or not talk and not negated and not mentions and not negated_words:
        return reading
    references = _references(talk, shown, text, said, budget_amounts, recent)
    references += _value_references(shown, negated, talk, references, rejected=True)
    references += _value_references(shown, mentions, talk, references, rejected=False)
    if talk.pointers:  # said beside a pointer; alone "no sneakers" is a change of mind
        references += _word_references(shown, negated_words, text, references)
    references.sort(key=lambda r: r.start)
    reading.references = references
    reading.critiques = _critiques(talk, shown, references, said)
    return reading


def _references(
    talk: ShownTalk,
    shown: Sequence[Shown],
    text: str,
    mentions: Sequence[Mention],
    budget_amounts: Iterable[float],
    recent: Sequence[Shown] = (),
) -> list[Reference]:
    count, out = len(shown), list[Reference]()
    for pointer in talk.pointers:
        positions: tuple[int, ...] = ()
        facet: str | None = None
        named: tuple[tuple[str, str], ...] = ()
        words: tuple[str, ...] = ()
        if pointer.kind == "ordinal":
            positions = _ordinal_positions(pointer, count)
        elif pointer.kind == "all":
            positions = tuple(range(1, count + 1))
        elif pointer.kind == "this":
            earlier = [r for r in out if r.end <= pointer.start]
            facet = _attribute_named(pointer)
            positions = earlier[-1].positions if earlier else _before(recent, facet)
        elif pointer.kind == "them":  # back to what was just named, else the whole list
            earlier = [r for r in out if r.end <= pointer.start]
            if earlier:
                positions = earlier[-1].positions
            elif pointer.text.lower().replace("’", "'").split("'")[0] != "it":
                positions = tuple(range(1, count + 1))
        elif pointer.kind == "other":
            earlier = [r for r in out if r.end <= pointer.start]
            rest = [p for p in range(1, count + 1) if not earlier or p not in earlier[-1].positions]
            positions = tuple(rest[:1])
        else:
            inside = [m for m in mentions if pointer.start <= m.start < pointer.end]
            pointed = pointer.text.lower().rstrip("'s").split()[-1] in CUES.referents
            positions, facet, named, words = _described(pointer.words, inside, shown, pointed)
            if pointer.indefinite and facet != "brand":
                positions = ()
        if positions:
            out.append(
                Reference(
                    positions,
                    pointer.kind,
                    pointer.start,
                    pointer.end,
                    pointer.text,
                    facet,
                    named,
                    words,
                    pointer.negated,
                )
            )
    budget = set(budget_amounts)
    for amount, start, end in talk.numbers:
        if any(r.start <= start < r.end for r in out):
            continue
        if amount in budget and not _price_framed(text, start, end):
            continue  # "$40" as a budget; "thats 29", "at 68", "150 is steep" name a product
        priced = [s for s in shown if _same_price(s.price, amount)]
        if priced:
            closest = min(abs((s.price or 0.0) - amount) for s in priced)
            positions = tuple(
                s.position for s in priced if abs((s.price or 0.0) - amount) == closest
            )
            out.append(Reference(positions, "price", start, end, text[start:end]))
    return _narrowed(out, text)


def _narrowed(references: list[Reference], text: str) -> list[Reference]:
    """A price said right after a description picks among what it describes ("the keyocean one
    thats 29"): one reference."""
    out: list[Reference] = []
    for reference in sorted(references, key=lambda r: r.start):
        previous = out[-1] if out else None
        if (
            reference.kind == "price"
            and previous is not None
            and previous.kind == "description"
            and len(words_with_spans(text[previous.end : reference.start])) <= 2
            and set(reference.positions) < set(previous.positions)
        ):
            out[-1] = replace(previous, positions=reference.positions, end=reference.end)
            continue
        if (
            reference.kind == "price"
            and previous is not None
            and set(previous.positions) <= set(reference.positions)
            and not re.search(r"[.!?;]", text[previous.end : reference.start])
        ):
            continue  # "the first one is nearly it, just too pricey at $20.99": its own price
        out.append(reference)
    return out


def said_as_a_price(talk: ShownTalk, amount: float) -> bool:
    """Does the message say the amount as a product's price ("too pricey at $26.99", "the
    keyocean one thats 29", "150 is steep"), not as a budget ("somewhere near $25")?"""
    return any(
        said == amount and _price_framed(talk.text, start, end) for said, start, end in talk.numbers
    )


def _price_framed(text: str, start: int, end: int) -> bool:
    before = words_with_spans(text[:start])[-1:]
    after = words_with_spans(text[end:])[:1]
    return bool(
        before and before[0][0] in _PRICE_BEFORE - {"for"} or after and after[0][0] in _PRICE_AFTER
    )


def _attribute_named(pointer: Pointer) -> str | None:
    """ "that brand", "this colour": the kind of value the pointer speaks of."""
    last = pointer.text.lower().split()[-1]
    facet = CUES.attribute_words.get(last)
    return facet if facet in ("brand", "color", "material", "style") else None


def _before(recent: Sequence[Shown], facet: str | None) -> tuple[int, ...]:
    """What "that one" / "that brand" points at with nothing named before it in the message:
    "that brand" the product spoken of last (position 0 when it is no longer listed), "that
    one" the first one."""
    if not facet or not recent:
        return (1,)
    return tuple(s.position for s in recent if s.position > 0) or (0,)


def _ordinal_positions(pointer: Pointer, count: int) -> tuple[int, ...]:
    first = count - pointer.count + 1 if pointer.ordinal == -1 else pointer.ordinal
    positions = tuple(range(first, first + pointer.count))
    return positions if positions and positions[0] >= 1 and positions[-1] <= count else ()


def _same_price(price: float | None, amount: float) -> bool:
    return price is not None and abs(price - amount) <= max(1.0, PRICE_MATCH * price)


def _described(
    said: tuple[str, ...], mentions: Sequence[Mention], shown: Sequence[Shown], pointed: bool
) -> tuple[tuple[int, ...], str | None, tuple[tuple[str, str], ...], tuple[str, ...]]:
    """Which products the words describe (those matching most of them), what kind of value they
    named, the values, and the words the products hold."""
    if not said:
        return (), None, (), ()
    extreme = [CUES.price_words[w] for w in said if w in CUES.price_words]
    prices = [s.price for s in shown if s.price is not None]
    if extreme and prices:
        best = min(prices) if extreme[0] == "lowest" else max(prices)
        return tuple(s.position for s in shown if s.price == best), None, (), ()
    values = [(m.facet.value, m.value) for m in mentions if m.facet.value != "size"]
    stems = {stem(t) for t in tokens(" ".join(said)) if t not in STOPWORDS}
    scores = []
    for product in shown:
        score = sum(1 for facet, value in values if value in product.values(facet))
        score += len(stems & product.words) + len(stems & _brand_stems(product))
        scores.append(score)
    best_score = max(scores)
    chosen = [s for s, score in zip(shown, scores, strict=True) if score == best_score]
    if not best_score or len(chosen) == len(shown) > 1:
        return (), None, (), ()  # nothing, or nothing that tells the products apart
    held = tuple(sorted(stems.intersection(*(s.words | _brand_stems(s) for s in chosen))))
    answers = [(f, v) for f, v in values if f != "brand"]
    if not pointed and answers and not set(held) - _value_stems(answers):
        return (), None, (), ()  # "the women's kind" answers a question, it points at nothing
    facet = _named_facet(said, values)
    if facet is None and held and all(_brand_stems(s) >= set(held) for s in chosen):
        facet = "brand"
        values = [("brand", v) for s in chosen for v in s.values("brand")]
    return tuple(s.position for s in chosen), facet, tuple(values), held


def _value_stems(values: Sequence[tuple[str, str]]) -> set[str]:
    return {stem(t) for _, value in values for t in tokens(value)}


def _brand_stems(product: Shown) -> set[str]:
    return {stem(t) for t in tokens(product.brand or "") if t not in STOPWORDS}


def _named_facet(said: Sequence[str], values: Sequence[tuple[str, str]]) -> str | None:
    if any(w in CUES.length_words for w in said):
        return "length"
    for wanted in ("brand", "color", "material", "style"):
        if any(facet == wanted for facet, _ in values):
            return wanted
    return None


def _value_references(
    shown: Sequence[Shown],
    mentions: Sequence[Mention],
    talk: ShownTalk,
    found: list[Reference],
    rejected: bool,
) -> list[Reference]:
    """A value said outright that some shown products have: a brand ("wrangler."), or any value
    the shopper turns down ("pink?? no", "she never wears silver")."""
    out = []
    for mention in mentions:
        facet = mention.facet.value
        if any(r.start <= mention.start < r.end for r in found):
            continue
        if facet not in ("brand", "color", "material", "style"):
            continue
        turned_down = rejected or _cue_near(talk, mention.start, mention.end, "reject")
        if facet != "brand" and not turned_down:
            continue
        if facet == "brand" and not turned_down and not _alone(talk, mention):
            continue  # "something from asics" asks for a brand, "wrangler." picks one
        have = tuple(s.position for s in shown if mention.value.lower() in s.values(facet))
        if have and (len(have) < len(shown) or turned_down):
            named = ((facet, mention.value),)
            out.append(
                Reference(
                    have,
                    "value",
                    mention.start,
                    mention.end,
                    mention.text,
                    facet,
                    named,
                    negated=turned_down,
                )
            )
    return out


def _word_references(
    shown: Sequence[Shown], negated_words: Sequence[str], text: str, found: list[Reference]
) -> list[Reference]:
    """A kind of product turned down that some shown products are ("no flip flops. more like #2"):
    those products, turned down."""
    out = []
    for word in negated_words:
        at = re.search(rf"\b{re.escape(word)}\b", text, re.IGNORECASE)
        if at is None or any(r.start <= at.start() < r.end for r in found):
            continue
        have = tuple(s.position for s in shown if {stem(w) for w in word.split()} <= s.words)
        if have:
            out.append(Reference(have, "value", at.start(), at.end(), at.group(), negated=True))
    return out


def _alone(talk: ShownTalk, mention: Mention) -> bool:
    """Is the value all its sentence says, give or take an "ok" or a "please" ("wrangler.")?"""
    sentence = _sentence_of(talk, mention.start)
    if sentence < 0:
        return False
    start, end = talk.sentences[sentence]
    around = talk.text[start : mention.start] + " " + talk.text[mention.end : end]
    return all(w in _FILLERS for w, _, _ in words_with_spans(around))


_FILLERS = CUES.frame["fillers"]


def _cue_near(talk: ShownTalk, start: int, end: int, kind: str) -> bool:
    """Is a `kind` cue right before the words ("never wears silver") or right after them
    ("pink?? no", "denim isn't really office-y")? Further off it is about something else
    ("spandex. no nylon")."""
    for cue in talk.cues:
        if cue.kind != kind or cue.text.lower() in _CONCEDING:
            continue  # "cotton though": a wish, conceded; "the first one's a trail shoe though"
        after = talk.text[end : cue.start]
        # "waterproof too, ...": as well; "pink? too bright" says too much of something
        also = cue.text.lower() == "too" and not talk.text[cue.end :].lstrip()[:1].isalpha()
        if cue.start >= end and not after.strip(" ?!,") and _closes(talk.text, cue) and not also:
            return True  # "pink?? no", "denim isn't really office-y"
        between = talk.text[cue.end : start]
        # A word may sit between ("not in pink"), a comma may not: "no prints, solid only".
        if cue.end <= start and len(words_with_spans(between)) <= 1 and "," not in between:
            return True
    return False


_CONCEDING = frozenset({"though"})  # rejects a product pointed at, never a value said


def _closes(text: str, cue: Cue) -> bool:
    """A bare "no" after a value closes its clause ("gold no."); before another word it negates
    that word instead ("rubber not leather")."""
    if cue.text.lower() not in _NEGATORS:
        return True
    rest = text[cue.end :].lstrip()
    return not rest or not rest[0].isalnum()


def _sentence_of(talk: ShownTalk, offset: int) -> int:
    for i, (start, end) in enumerate(talk.sentences):
        if start <= offset < end:
            return i
    return -1


def _negates_a_value(
    talk: ShownTalk, cue: Cue, mentions: Sequence[Mention], references: list[Reference]
) -> bool:
    following = [m for m in mentions if m.start >= cue.end]
    if not following:
        return False
    first = min(following, key=lambda m: m.start)
    close = len(words_with_spans(talk.text[cue.end : first.start])) <= 1
    pointed = any(r.start <= first.start < r.end for r in references)
    return close and not pointed


def _before_a_rejected_value(talk: ShownTalk, cue: Cue, references: list[Reference]) -> bool:
    """Is the cue right before a value it turns down ("rather not get Nike")?"""
    return any(
        r.kind == "value"
        and r.negated
        and r.start >= cue.end
        and len(words_with_spans(talk.text[cue.end : r.start])) <= 1
        for r in references
    )


def _critiques(
    talk: ShownTalk,
    shown: Sequence[Shown],
    references: list[Reference],
    mentions: Sequence[Mention] = (),
) -> list[Critique]:
    """Each cue attached to the reference it is about; a reference no cue speaks of is a pick."""
    attached: dict[int, list[Cue]] = {i: [] for i in range(len(references))}
    loose: list[Cue] = []
    described = [(p.start, p.end) for p in talk.pointers if p.kind == "description"]
    described += [(r.start, r.end) for r in references if r.kind in _DESCRIBING]
    described += [(r.start, r.end) for r in references if r.kind == "ordinal"]  # "No. 2"
    for cue in talk.cues:
        if any(start <= cue.start < end for start, end in described):
            continue  # "the cheaper one" describes, it does not critique
        if cue.kind == "reject" and _negates_a_value(talk, cue, mentions, references):
            continue  # "..., not white": about a colour, not about the products named before
        if cue.kind == "reject" and _before_a_rejected_value(talk, cue, references):
            continue  # "#1 looks right, just not Nike": the turned-down brand says it all
        target = _target(talk, references, cue)
        if target is None:
            loose.append(cue)
        else:
            attached[target].append(cue)
    out: list[Critique] = []
    liked: set[int] = set()
    for i, reference in enumerate(references):
        out += _kinds(talk, reference, attached[i])
        if _liked(talk, reference, attached[i]):
            liked |= set(reference.positions)
    # "#1 looks right, just not Nike": liked, and the change said of it through its brand
    changed = {p for c in out if c.kind in CHANGES for p in c.positions}
    out = [
        replace(c, kind="more_like")
        if c.kind == "pick" and set(c.positions) <= liked & changed
        else c
        for c in out
    ]
    everything = tuple(s.position for s in shown)
    # "the ck one is too pricey" with no shown product called ck: said of one we cannot tell,
    # so not of the whole list either (the critique is kept, it changes nothing).
    unknown = {
        _sentence_of(talk, p.start)
        for p in talk.pointers
        if p.kind == "description"
        and p.text.lower().rstrip("'s").split()[-1] in CUES.referents
        and not any(r.start <= p.start < r.end for r in references)
    }
    for cue in loose:
        if cue.kind in LIST_WIDE:
            of = () if _sentence_of(talk, cue.start) in unknown else everything
            out.append(Critique(cue.kind, of, cue.start, cue.end, cue.text, pointed=False))
        elif cue.kind in ("shorter", "longer") and not references:
            # "not capri, full length pls": said of the products of that length, else of all
            of = _of_length([c for c in loose if c.kind == cue.kind], shown) or everything
            out.append(Critique(cue.kind, of, cue.start, cue.end, cue.text, pointed=False))
    return _merged(out)


def _of_length(cues: list[Cue], shown: Sequence[Shown]) -> tuple[int, ...]:
    """The shown products length cues name by a length word ("not capri": the cropped ones)."""
    said = [w for cue in cues for w in tokens(cue.text) if w in CUES.length_words]
    styles = {style for w in said for style in CUES.length_styles.get(w, ())}
    stems = {stem(w) for w in said}
    return tuple(s.position for s in shown if styles & set(s.styles) or stems & s.words)


_DESCRIBING = frozenset({"description", "price", "value"})


def _target(talk: ShownTalk, references: list[Reference], cue: Cue) -> int | None:
    """The reference a cue speaks of: the nearest one before it in its sentence, else after it
    in its sentence, else the last one said before it."""
    within = [
        i
        for i, r in enumerate(references)
        if r.start <= cue.start < r.end or cue.start < r.start < cue.end
    ]
    if within:  # "none of these" is both the products and what is said of them; "more like them"
        return within[0]
    sentence = _sentence_of(talk, cue.start)
    before = [i for i, r in enumerate(references) if r.end <= cue.start]
    same = [i for i in before if _sentence_of(talk, references[i].start) == sentence]
    if same:
        return same[-1]
    after = [
        i
        for i, r in enumerate(references)
        if r.start >= cue.end and _sentence_of(talk, r.start) == sentence
    ]
    if after:
        return after[0]
    return before[-1] if before else None


def _kinds(talk: ShownTalk, reference: Reference, cues: list[Cue]) -> list[Critique]:
    """The critiques the cues attached to one reference make."""
    made: list[Critique] = []
    positions = reference.positions
    question = talk.questions[_sentence_of(talk, reference.start)] if talk.sentences else False
    if reference.negated:
        cues = [Cue("reject", reference.start, reference.end, reference.text), *cues]
    kinds = [c.kind for c in cues]
    for cue in cues:
        kind = cue.kind
        if kind == "reject":
            kind = _rejection_kind(talk, reference)
        elif kind == "contrast":
            if "positive" not in kinds or question or "reject" in kinds:
                continue
            kind = "more_like"
        elif kind in ("positive", "neutral"):
            continue
        made.append(
            Critique(
                kind, positions, cue.start, cue.end, cue.text, reference.named, reference.words
            )
        )
    liked = _liked(talk, reference, cues)
    if liked and not question and not {c.kind for c in made} & {"more_like", "none_of_these"}:
        sentence = _sentence_of(talk, liked.start)
        if any(c.kind in CHANGES and _sentence_of(talk, c.start) == sentence for c in made):
            # "#2 is close but too expensive", "the second one but cheaper": liked, with a change
            made.insert(0, Critique("more_like", positions, liked.start, liked.end, liked.text))
    if made or question or reference.kind in ("all", "them"):
        return made  # "do any of these come in gold?", "make it 8.5": no pick
    return [Critique("pick", positions, reference.start, reference.end, reference.text)]


# What a shopper may want changed of a product they like.
CHANGES = frozenset(KINDS) - {"pick", "more_like", "none_of_these"}


def _liked(talk: ShownTalk, reference: Reference, cues: list[Cue]) -> Cue | None:
    """The cue that says the shopper likes the product: a positive word ("is nearly it", "I like
    #2"), or a "but" right after the pointer ("the second one but cheaper")."""
    for cue in cues:
        if cue.kind == "positive":
            return cue
        if cue.kind == "contrast" and not words_with_spans(talk.text[reference.end : cue.start]):
            return cue
    return None


def _rejection_kind(talk: ShownTalk, reference: Reference) -> str:
    if reference.facet == "length":
        said = tokens(reference.text)
        return "longer" if any(CUES.length_words.get(w) == "short" for w in said) else "shorter"
    if reference.facet in ("brand", "color", "material"):
        return f"not_{reference.facet}"
    sentence = _sentence_of(talk, reference.start)
    start, end = talk.sentences[sentence] if sentence >= 0 else (0, 0)
    for word, _, _ in words_with_spans(talk.text[start:end]):
        named = CUES.attribute_words.get(word)
        if named in ("color", "brand", "material"):
            return f"not_{named}"
    return "not_style"


def _merged(critiques: list[Critique]) -> list[Critique]:
    """One critique per kind and products; a pick gives way to anything else said of them."""
    out: dict[tuple[str, tuple[int, ...]], Critique] = {}
    for critique in critiques:
        out.setdefault((critique.kind, critique.positions), critique)
    # "those are all kinda girly. none of these": a rejection of the whole list, no more
    dismissed = {p for (kind, positions) in out if kind == "none_of_these" for p in positions}
    out = {
        key: c
        for key, c in out.items()
        if not (key[0].startswith("not_") and set(key[1]) <= dismissed)
    }
    spoken = {p for (kind, positions) in out if kind != "pick" for p in positions}
    return [
        c for (kind, positions), c in out.items() if kind != "pick" or not set(positions) <= spoken
    ]
