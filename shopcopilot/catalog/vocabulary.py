"""The shared attribute vocabulary: canonical values, their synonyms, and finding them in text.

One data file (`data/vocabulary.json`) is read once per process. The attribute
extractor, the agent's message parser and the natural-language simulator all
look words up here, so "navy" from a shopper and "Navy" in a title both become
the canonical "blue".
"""

from __future__ import annotations

import json
import re
import string
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from itertools import accumulate, count, product, repeat
from operator import add, attrgetter
from pathlib import Path
from types import MappingProxyType
from typing import Any, NamedTuple

import ahocorasick

from ..terms import QUESTION_FOR, Attribute, Facet

VOCABULARY_PATH = Path(__file__).with_name("data") / "vocabulary.json"

# Each facet the vocabulary file defines -> its JSON table. Sizes hold three sub-tables.
_TABLES: dict[Facet, tuple[str, ...]] = {
    Facet.COLOR: ("colors",),
    Facet.MATERIAL: ("materials",),
    Facet.DEPARTMENT: ("departments",),
    Facet.SIZE: ("sizes", "letters"),
    Facet.FIT: ("sizes", "fits"),
    Facet.WIDTH: ("sizes", "widths"),
    Facet.CLOSURE: ("closures",),
    Facet.USE_CASE: ("use_cases",),
    Facet.STYLE: ("styles",),
}
FACETS: tuple[Facet, ...] = tuple(_TABLES)  # the facets found in text by this module

# Words: letters/digits with inner apostrophes ("women's"); '&' and '/' are kept
# as tokens so "hook & loop" and "3/4 sleeve" stay distinct phrases.
_TOKEN = re.compile(r"[^\W_]+(?:'[^\W_]+)*|[&/]")  # run on _fold()ed text

# Scanning costs mostly per call and per pattern pass, and a product has a dozen short texts,
# so the *_in_each functions scan them as one text joined by JOIN. No pattern here matches
# or crosses it, every lookaround sees it as a text's start or end (the measure pattern spells
# that out), and the phrase scan reads it as a word of its own, which is in no phrase, so no
# phrase spans two texts. A text that holds JOIN itself is scanned on its own.
JOIN = "\x00"

# The phrase scan runs an Aho-Corasick automaton (C code, one pass) over a canonical copy of
# the folded text, of the same length so that offsets carry over. In it a word keeps its ASCII
# letters and digits (any other letter or digit becomes "A", which no phrase holds); '&' and
# '/' stay, being words of their own; JOIN becomes "|"; an apostrophe inside a word becomes a
# space, which the automaton skips ("women's" reads as "womens"); every other character is a
# gap: the first of a run becomes "_" and the rest spaces. So consecutive words read as
# "word_word", and a phrase is registered between every pair of word edges ("_", "&", "/",
# "|"), which makes each hit a whole-word hit: what _TOKEN finds, word for word.
_GAP, _SKIPPED, _OTHER_LETTER = "_", " ", "A"  # no folded text holds ASCII upper case
_EDGES = "_&/|"


def _canonical_table(joined: bool) -> str:
    """str.translate's table for folded ASCII text: words and their edges kept, the rest gaps."""
    table = [_GAP] * 128
    for kept in string.ascii_lowercase + string.digits + "&/'" + _OTHER_LETTER:
        table[ord(kept)] = kept
    table[ord(JOIN)] = (
        "|" if joined else _GAP
    )  # a text alone reads JOIN as any gap (as _TOKEN does)
    return "".join(table)


_CANONICAL_TABLES = {joined: _canonical_table(joined) for joined in (False, True)}
_OTHER_WORD_CHARACTER = re.compile(
    r"[^\W_a-z0-9]"
)  # in folded text: the non-ASCII letters and digits
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
# Each starts with a literal, which re scans for in C: a leading lookbehind would try every
# position.
_INNER_APOSTROPHE = re.compile(r"'(?<=[a-z0-9A]')(?=[a-z0-9A])")
_RUN_TAIL = re.compile(r"_(?<=__)")

# "sizes?(?![a-z])": the "s" of "sizes" is never read as a size S ("in euro sizes, want ...").
_SIZE_AFTER_WORD = re.compile(
    r"\b(?:us\s+)?sizes?(?![a-z])\s*[:#]?\s*(?P<first>\d{1,2}(?:\.5)?|"
    r"[a-z0-9]+)(?P<second>[- ][a-z]+)?(?!\w|\.\d)",
    re.IGNORECASE,
)
_WAIST_BY_INSEAM = re.compile(
    r"\b(?:w\s*)?(\d{2})\s*w?\s*[x×]\s*(?:l\s*)?(\d{2})\s*l?\b", re.IGNORECASE
)
_WAIST_BY_INSEAM_X = (
    "xX×"  # all that [x×] matches, case-insensitively (tests/test_vocabulary.py checks)
)
# In folded text (no ASCII capitals) every _WAIST_BY_INSEAM match holds "×", or this: where
# neither is, no part of the text can hold a match. Led by a literal, it is found by a fast scan.
_WAIST_CUE = re.compile(r"x\s*(?:l\s*)?\d")


class VocabularyError(ValueError):
    """The vocabulary file is malformed; the message names the file and the entry."""


Owners = tuple[tuple[Facet, str], ...]  # (facet, canonical value) of each table that lists a phrase


class Mention(NamedTuple):
    """One hit in text: its facet, its canonical value, and where it was found.

    A named tuple, not a dataclass: a product's attributes are read from about twenty
    of these, and a tuple is made in a third of the time.
    """

    facet: Facet
    value: str
    start: int
    end: int
    text: str

    @property
    def attribute(self) -> Attribute:
        """What the shopper state files it under (a closure is a feature)."""
        return QUESTION_FOR.get(self.facet, Attribute.FEATURE)

    @property
    def span(self) -> tuple[int, int]:
        return (self.start, self.end)


@dataclass(frozen=True, slots=True)
class Measure:
    """A quantity with a unit ("30 mm", "15 x 12 x 0.33 inches"): never money."""

    values: tuple[float, ...]
    unit: str
    text: str


@dataclass(frozen=True, slots=True)
class MeasureMatch:
    measure: Measure
    start: int
    end: int


@dataclass(frozen=True)
class Vocabulary:
    """The loaded tables plus the indexes built from them (read-only once built)."""

    tables: Mapping[str, Mapping[str, tuple[str, ...]]]  # facet -> canonical -> terms
    letter_order: tuple[str, ...]
    shoe_size_range: tuple[float, float]
    waist_size_range: tuple[int, int]
    department_accepts: Mapping[str, frozenset[str]]
    units: Mapping[str, tuple[str, ...]]
    phrases: (
        ahocorasick.Automaton
    )  # every phrase's canonical forms -> (length, ((facet, canonical), ...))
    lookup: Mapping[str, Mapping[str, str]]  # facet -> normalised word -> canonical
    measure_pattern: re.Pattern[str]
    joined_measure_pattern: re.Pattern[str]  # the same, for texts joined by JOIN
    unit_by_term: Mapping[str, str]

    def canonical(self, facet: str, word: str) -> str | None:
        """The canonical value of a whole word or phrase, or None when it is not in the table."""
        if facet not in self.lookup:
            raise KeyError(f"unknown vocabulary facet {facet!r}; known: {', '.join(FACETS)}")
        return self.lookup[facet].get(normalize_phrase(word))

    def values(self, facet: str) -> tuple[str, ...]:
        """The canonical values of one facet, in file order."""
        return tuple(self.tables[facet])


@lru_cache(maxsize=4096)  # derive() asks about the same few size words for every product
def normalize_phrase(text: str) -> str:
    """Lower-case words joined by single spaces, apostrophes dropped: the key every lookup uses."""
    return " ".join(token.replace("'", "") for token in _TOKEN.findall(_fold(text)))


@cache
def vocabulary() -> Vocabulary:
    """The project's vocabulary, loaded once."""
    return load_vocabulary(VOCABULARY_PATH)


def load_vocabulary(path: Path) -> Vocabulary:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise VocabularyError(f"{path}: cannot read vocabulary: {error}") from error
    tables: dict[str, Mapping[str, tuple[str, ...]]] = {
        facet: _read_table(raw, keys, path) for facet, keys in _TABLES.items()
    }
    sizes = _require(raw, ("sizes",), dict, path)
    units = {unit: tuple(terms) for unit, terms in _read_table(raw, ("units",), path).items()}
    phrases = _phrase_matcher(tables, path)
    lookup = _lookup(tables)
    accepts = _read_table(raw, ("department_accepts",), path)
    unit_by_term = {_unit_key(term): unit for unit, terms in units.items() for term in terms}
    return Vocabulary(
        tables=MappingProxyType(tables),
        letter_order=tuple(_require(sizes, ("letter_order",), list, path)),
        shoe_size_range=_pair(_require(sizes, ("shoe_size_range",), list, path)),
        waist_size_range=_pair(_require(sizes, ("waist_size_range",), list, path)),
        department_accepts=MappingProxyType({k: frozenset(v) for k, v in accepts.items()}),
        units=MappingProxyType(units),
        phrases=phrases,
        lookup=MappingProxyType(lookup),
        measure_pattern=_measure_pattern(unit_by_term, text_end="$"),
        joined_measure_pattern=_measure_pattern(unit_by_term, text_end=f"$|{JOIN}"),
        unit_by_term=MappingProxyType(unit_by_term),
    )


def _require(raw: object, keys: tuple[str, ...], kind: type, path: Path) -> Any:
    # Any: the node's JSON type is checked here, at run time, against `kind`.
    node = raw
    for key in keys:
        if not isinstance(node, dict) or key not in node:
            raise VocabularyError(f"{path}: missing table {'.'.join(keys)!r}")
        node = node[key]
    if not isinstance(node, kind):
        raise VocabularyError(f"{path}: {'.'.join(keys)!r} must be a JSON {kind.__name__}")
    return node


def _pair(values: list[Any]) -> tuple[Any, Any]:
    low, high = values
    return low, high


def _read_table(raw: object, keys: tuple[str, ...], path: Path) -> dict[str, tuple[str, ...]]:
    table = _require(raw, keys, dict, path)
    out: dict[str, tuple[str, ...]] = {}
    for canonical, terms in table.items():
        if not isinstance(terms, list) or not all(isinstance(t, str) and t.strip() for t in terms):
            raise VocabularyError(
                f"{path}: {'.'.join(keys)}.{canonical} must be a list of non-empty strings"
            )
        out[canonical] = tuple(terms)
    return out


def _phrase_matcher(
    tables: Mapping[str, Mapping[str, tuple[str, ...]]], path: Path
) -> ahocorasick.Automaton:
    """An automaton over every term, as it reads in canonical text between any two word edges."""
    owners_by_phrase: dict[str, dict[str, str]] = {}
    for facet, table in tables.items():
        for canonical, terms in table.items():
            for term in terms:
                key = normalize_phrase(term)
                if not key:
                    raise VocabularyError(f"{path}: {facet} term {term!r} has no words")
                owners = owners_by_phrase.setdefault(key, {})
                if owners.get(facet, canonical) != canonical:
                    raise VocabularyError(
                        f"{path}: {facet} term {term!r} means both {owners[facet]!r} "
                        f"and {canonical!r}"
                    )
                owners[facet] = canonical
    automaton = ahocorasick.Automaton()
    edge_pairs = list(product(_EDGES, repeat=2))
    for phrase, owners in owners_by_phrase.items():
        found = tuple(owners.items())
        for form in _canonical_forms(phrase.split(" ")):
            value = (
                len(form),
                found,
            )  # shared by the form's 16 keys: a tuple each made loading 2.5x slower
            for before, after in edge_pairs:
                automaton.add_word(f"{before}{form}{after}", value)
    automaton.make_automaton()
    return automaton


def _canonical_forms(words: list[str]) -> list[str]:
    """How the words read in canonical text: "_" between two words, none or "_" next to '&' or
    '/'."""
    forms = [words[0]]
    for before, word in zip(words, words[1:], strict=False):
        gaps = ("", _GAP) if before in "&/" or word in "&/" else (_GAP,)
        forms = [form + gap + word for form in forms for gap in gaps]
    return forms


def _lookup(tables: Mapping[str, Mapping[str, tuple[str, ...]]]) -> dict[str, Mapping[str, str]]:
    lookup: dict[str, Mapping[str, str]] = {}
    for facet, table in tables.items():
        words: dict[str, str] = {}
        for canonical, terms in table.items():
            for term in terms:
                words[normalize_phrase(term)] = canonical
        # A canonical name always looks itself up, even when it is too ambiguous to scan for
        # in running text ("S" as a size, "tie" as a closure).
        for canonical in table:
            words[normalize_phrase(canonical)] = canonical
        lookup[facet] = MappingProxyType(words)
    return lookup


_NUMBER = r"(?:\d+\s+\d+/\d+|\d+/\d+|\d*\.\d+|\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+)"
# _NUMBER once its first character is read: the same alternatives in the same order, less that
# character.
_NUMBER_AFTER_FIRST = (
    r"(?:(?<=\.)\d+|(?<=\d)(?:\d*\s+\d+/\d+|\d*/\d+|\d*\.\d+|\d{0,2}(?:,\d{3})+(?:\.\d+)?|\d*))"
)


@lru_cache(maxsize=1024)
def _unit_key(term: str) -> str:
    return re.sub(r"\s+", " ", term.lower().rstrip("."))


def _measure_pattern(unit_by_term: Mapping[str, str], text_end: str) -> re.Pattern[str]:
    alternatives = []
    for term in sorted(unit_by_term, key=len, reverse=True):
        escaped = re.escape(term).replace(r"\ ", r"\.?\s*")
        if term == "in":
            # Bare "in" is inches only where the sentence cannot go on ("5 in.", "5 in)"):
            # "2 in 1" is a count and "under 30 in blue" is a budget.
            alternatives.append(rf"in(?:\.|(?=\s*(?:[),;:/]|{text_end})))")
        elif term[-1].isalnum():
            alternatives.append(escaped + r"(?![a-z0-9])")
        else:
            alternatives.append(escaped)
    # A match starts with a number, so the pattern starts by reading its first character (a digit
    # or a point): re then skips in C to the next such character instead of trying the pattern at
    # every position. The lookbehind, of that character and the one before it, lets "21x16x5mm"
    # and '0.8"x0.6"' start after an 'x', but not inside a word or after a currency sign.
    chain = (
        rf"[\d.](?<![0-9.,A-WYZa-wyz_$£€].){_NUMBER_AFTER_FIRST}"
        rf"(?:\s*(?:x|×|\*|by|-|–|to)\s*{_NUMBER})*"
    )
    # The lookahead only repeats what follows it (a unit starts with its first character), so
    # that most positions fail on one character test instead of every unit.
    unit_starts = "".join(sorted({re.escape(term[0]) for term in unit_by_term}))
    return re.compile(
        rf"(?P<values>{chain})\s*-?\s*(?=[{unit_starts}])(?P<unit>{'|'.join(alternatives)})",
        re.IGNORECASE,
    )


def _parse_number(text: str) -> float:
    text = text.replace(",", "")
    if " " in text:
        whole, part = text.split()
        return int(whole) + _parse_number(part)
    if "/" in text:
        numerator, denominator = text.split("/")
        return int(numerator) / int(denominator) if int(denominator) else float(numerator)
    return float(text)


_NUMBER_RE = re.compile(_NUMBER)


def find_measures(text: str) -> list[MeasureMatch]:
    """Every number-with-unit phrase in the text, in order (so parsers never mistake them for
    prices)."""
    return _measures(text, vocabulary().measure_pattern)


def find_measures_in_each(texts: Sequence[str]) -> list[list[MeasureMatch]]:
    """`[find_measures(text) for text in texts]`, found in one pass over the texts joined."""
    joined = _joined(texts)
    if joined is None:
        return [find_measures(text) for text in texts]
    per_text: list[list[MeasureMatch]] = [[] for _ in texts]
    offsets = _offsets(texts)
    for match in _measures(joined, vocabulary().joined_measure_pattern):
        which = bisect_right(offsets, match.start) - 1
        offset = offsets[which]
        per_text[which].append(
            MeasureMatch(match.measure, match.start - offset, match.end - offset)
        )
    return per_text


def _measures(text: str, pattern: re.Pattern[str]) -> list[MeasureMatch]:
    unit_by_term = vocabulary().unit_by_term
    matches = []
    for match in pattern.finditer(text):
        unit = unit_by_term.get(_unit_key(match.group("unit")))
        if unit is None:
            continue
        values = tuple(_parse_number(n) for n in _NUMBER_RE.findall(match.group("values")))
        matches.append(
            MeasureMatch(Measure(values, unit, match.group(0).strip()), match.start(), match.end())
        )
    return matches


def find_mentions(text: str, facets: Iterable[str] | None = None) -> list[Mention]:
    """All vocabulary mentions, leftmost-longest on whole words, case-insensitive.

    A phrase listed under several facets (e.g. "sterling silver": a material
    and a color) yields one mention per facet. `facets` restricts the
    result; the longest-match choice still sees the whole vocabulary, so "wide
    leg" stays a style and is not read as the width "wide".
    """
    (mentions,) = _mentions(text, _fold(text), [0], joined=False)
    if facets is None:
        return mentions
    wanted = frozenset(facets)
    return [m for m in mentions if m.facet in wanted]


def find_mentions_in_each(texts: Sequence[str]) -> list[list[Mention]]:
    """`[find_mentions(text) for text in texts]`, found in one pass over the texts joined."""
    joined = _joined(texts)
    if joined is None:
        return [find_mentions(text) for text in texts]
    return _mentions(joined, _fold_joined(joined, texts), _offsets(texts), joined=True)


def _fold_joined(joined: str, texts: Sequence[str]) -> str:
    """`JOIN.join(map(_fold, texts))`, in one call when no character's lower case is longer.

    Lower case reads a capital sigma's neighbours, but JOIN stops that as a text's ends do.
    """
    folded = joined.lower()
    if len(folded) != len(joined):
        return JOIN.join(map(_fold, texts))
    return folded.replace("’", "'")


def _joined(texts: Sequence[str]) -> str | None:
    """The texts joined by JOIN; None when there are none or one of them holds JOIN itself."""
    joined = JOIN.join(texts)
    return joined if texts and joined.count(JOIN) == len(texts) - 1 else None


def _offsets(texts: Sequence[str]) -> list[int]:
    """Where each text starts in the texts joined by JOIN: the lengths before it, plus one JOIN
    each."""
    return list(map(add, accumulate(map(len, texts[:-1]), initial=0), count()))


_ASCII_DIGITS = "0123456789"


def _may_hold_digit(text: str) -> bool:
    """False only when the text surely has no digit (checked fast, with substring searches, on ASCII
    text)."""
    return not text.isascii() or any(map(text.__contains__, _ASCII_DIGITS))


_BY_SPAN = attrgetter("start", "end")
# Makes a Mention from a tuple of its fields in C, skipping the named tuple's Python-level __new__.
_new_mention = tuple.__new__


def _mentions(text: str, folded: str, starts: list[int], joined: bool) -> list[list[Mention]]:
    """The mentions in each of the texts that `text` holds from `starts` on, spans within each."""
    vocab = vocabulary()
    per_text: list[list[Mention]] = [[] for _ in starts]
    size_forms = _size_mentions(folded, joined, vocab)
    sized = set()
    for start, end, value in size_forms:
        index = bisect_right(starts, start) - 1
        offset = starts[index]
        per_text[index].append(
            Mention(Facet.SIZE, value, start - offset, end - offset, text[start:end])
        )
        sized.add(index)
    for start, end, owners in _phrases(_canonical(folded, joined), vocab.phrases):
        index = bisect_right(starts, start) - 1
        offset, phrase = starts[index], text[start:end]
        for facet, canonical in owners:
            if facet == Facet.SIZE and any(s <= start and end <= e for s, e, _ in size_forms):
                continue  # already read with its "size" prefix
            per_text[index].append(
                _new_mention(Mention, (facet, canonical, start - offset, end - offset, phrase))
            )
    # Phrases come in order, after the size forms: only texts with those need sorting
    # (stably, so a size form stays first on a tie).
    for index in sized:
        per_text[index].sort(key=_BY_SPAN)
    return per_text


def _canonical(folded: str, joined: bool) -> str:
    """The folded text as the phrase automaton reads it (see _EDGES), with a gap added at each
    end."""
    if not folded.isascii():
        folded = _NON_ASCII.sub(_GAP, _OTHER_WORD_CHARACTER.sub(_OTHER_LETTER, folded))
    canonical = folded.translate(_CANONICAL_TABLES[joined])
    if "'" in canonical:
        canonical = _INNER_APOSTROPHE.sub(_SKIPPED, canonical).replace("'", _GAP)
    return f"{_GAP}{_RUN_TAIL.sub(_SKIPPED, canonical)}{_GAP}"


def _phrases(canonical: str, automaton: ahocorasick.Automaton) -> list[tuple[int, int, Owners]]:
    """(start, end, owners) of each leftmost-longest phrase, in order, in the folded text's
    offsets."""
    taken: list[tuple[int, int, Owners]] = []
    # Hits come in order of their end, the longest first among those ending together.
    for edge, (length, owners) in automaton.iter(canonical, ignore_white_space=True):
        # The hit's `length` characters end just before the edge, past any skipped ones among them.
        start = edge - length
        skipped = canonical.count(_SKIPPED, start, edge)
        while edge - start - skipped != length:
            start = edge - length - skipped
            skipped = canonical.count(_SKIPPED, start, edge)
        start, end = start - 1, edge - 1  # the canonical text has one more character in front
        if taken and start < taken[-1][1]:
            # It overlaps phrases taken so far: it replaces those starting at or after it (they lie
            # inside it, being no longer), unless it starts inside one that starts before it.
            keep = len(taken)
            while keep and taken[keep - 1][0] >= start:
                keep -= 1
            if keep and taken[keep - 1][1] > start:
                continue
            del taken[keep:]
        taken.append((start, end, owners))
    return taken


def _fold(text: str) -> str:
    """Lower case with one apostrophe, keeping every offset so spans index the original text."""
    folded = text.lower()
    if len(folded) != len(text):  # a few characters lower-case to two ("İ"); keep those as they are
        folded = "".join(c.lower() if len(c.lower()) == 1 else c for c in text)
    return folded.replace("’", "'")


def _size_mentions(folded: str, joined: bool, vocab: Vocabulary) -> list[tuple[int, int, str]]:
    """Sizes that need context to be safe ("size 9", "size M", "32W x 30L"), as (start, end, size).

    Each pattern only runs on the texts that can hold its match, found with substring
    searches: a regex pass costs far more per character.
    """
    found = []
    for part_start, part_end in _parts_containing(folded, ("size",), joined):
        for match in _SIZE_AFTER_WORD.finditer(folded, part_start, part_end):
            end = match.end()
            value = (
                canonical_size(folded[match.start("first") : end])
                if match.group("second")
                else None
            )
            if value is None:  # "size 9 wide": the second word is not part of the size
                value, end = canonical_size(match.group("first")), match.end("first")
            if value is not None:
                found.append((match.start(), end, value))
    if "×" not in folded and not _WAIST_CUE.search(folded):
        return found
    low, high = vocab.waist_size_range
    for part_start, part_end in _parts_containing(folded, _WAIST_BY_INSEAM_X, joined):
        if not _may_hold_digit(folded[part_start:part_end]):
            continue
        for match in _WAIST_BY_INSEAM.finditer(folded, part_start, part_end):
            waist, inseam = int(match.group(1)), int(match.group(2))
            if low <= waist <= high and 20 <= inseam <= 40:
                start, end = match.span()
                found.append((start, end, f"{waist}x{inseam}"))
    return found


def _parts_containing(text: str, needles: Sequence[str], joined: bool) -> Iterator[tuple[int, int]]:
    """(start, end) of each text, of the texts joined (else of the one text), that holds one of the
    needles.

    A pattern run on one text alone (as `pattern.finditer(text, start, end)`) finds what it
    finds there in the texts joined: its lookarounds see the text's ends just as they see JOIN.
    """
    if not joined:
        if _first_of(text, needles, 0) >= 0:
            yield 0, len(text)
        return
    at = _first_of(text, needles, 0)
    while at >= 0:
        start = text.rfind(JOIN, 0, at) + 1
        end = text.find(JOIN, at)
        if end < 0:
            end = len(text)
        yield start, end
        at = _first_of(text, needles, end)


def _first_of(text: str, needles: Sequence[str], start: int) -> int:
    """Where the first of the needles occurs from `start` on; -1 for none."""
    return min((at for at in map(text.find, needles, repeat(start)) if at >= 0), default=-1)


@lru_cache(maxsize=4096)  # the build asks about the same few words for every product
def canonical_size(word: str) -> str | None:
    """A letter size ("xl" -> "XL", "xxl" -> "2XL", "m" -> "M"), or a numeric shoe/waist size as
    text."""
    vocab = vocabulary()
    letter = vocab.canonical(Facet.SIZE, word)
    if letter is not None:
        return letter
    text = word.strip()
    try:
        number = float(text)
    except ValueError:
        return None
    low, high = vocab.shoe_size_range
    waist_low, waist_high = vocab.waist_size_range
    if (low <= number <= high and number * 2 == int(number * 2)) or (
        waist_low <= number <= waist_high and number == int(number)
    ):
        return f"{number:g}"
    return None


def letter_size_range(first: str, last: str) -> tuple[str, ...]:
    """All letter sizes from first to last inclusive ("S", "5XL" -> S, M, L, ..., 5XL); empty if
    unknown."""
    order = vocabulary().letter_order
    low, high = canonical_size(first), canonical_size(last)
    if low not in order or high not in order:
        return ()
    i, j = order.index(low), order.index(high)
    return order[min(i, j) : max(i, j) + 1]


def accepted_departments(wanted: str) -> frozenset[str]:
    """Product departments that suit a shopper asking for `wanted` (women -> women, unisex)."""
    canonical = canonical_department(wanted) or wanted
    return vocabulary().department_accepts.get(canonical, frozenset({canonical}))


def canonical_department(word: str) -> str | None:
    return vocabulary().canonical(Facet.DEPARTMENT, word)
