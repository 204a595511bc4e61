"""The shared attribute vocabulary: canonical values, their synonyms, and finding them in text.

One data file (`data/vocabulary.json`) is read once per process. The attribute
extractor, the agent's message parser and the natural-language simulator all
look words up here, so "navy" from a shopper and "Navy" in a title both become
the canonical "blue".
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

VOCABULARY_PATH = Path(__file__).with_name("data") / "vocabulary.json"

# Mention attribute -> the JSON table that defines it. Sizes hold three sub-tables.
_TABLES: dict[str, tuple[str, ...]] = {
    "color": ("colors",),
    "material": ("materials",),
    "department": ("departments",),
    "size": ("sizes", "letters"),
    "fit": ("sizes", "fits"),
    "width": ("sizes", "widths"),
    "closure": ("closures",),
    "use_case": ("use_cases",),
    "style": ("styles",),
}
ATTRIBUTES: tuple[str, ...] = tuple(_TABLES)

# Which official `ask_attribute` name each vocabulary attribute answers.
OFFICIAL_ATTRIBUTE: Mapping[str, str] = MappingProxyType(
    {
        "color": "color",
        "material": "material",
        "department": "category",
        "size": "size",
        "fit": "size",
        "width": "size",
        "closure": "feature",
        "use_case": "use_case",
        "style": "style",
    }
)

# Words: letters/digits with inner apostrophes ("women's"); '&' and '/' are kept
# as tokens so "hook & loop" and "3/4 sleeve" stay distinct phrases.
_TOKEN = re.compile(r"[^\W_]+(?:'[^\W_]+)*|[&/]")  # run on _fold()ed text
_OWNERS = ""  # trie key for "a phrase ends here"; never a word, since words are non-empty

_SIZE_AFTER_WORD = re.compile(
    r"\b(?:us\s+)?sizes?\s*[:#]?\s*(?P<first>\d{1,2}(?:\.5)?|[a-z0-9]+)(?P<second>[- ][a-z]+)?(?![\w.])",
    re.IGNORECASE,
)
_WAIST_BY_INSEAM = re.compile(r"\b(?:w\s*)?(\d{2})\s*w?\s*[x×]\s*(?:l\s*)?(\d{2})\s*l?\b", re.IGNORECASE)


class VocabularyError(ValueError):
    """The vocabulary file is malformed; the message names the file and the entry."""


@dataclass(frozen=True, slots=True)
class Mention:
    """One vocabulary hit: what it is, its canonical value, and where it was found."""

    attribute: str
    value: str
    start: int
    end: int
    text: str

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

    tables: Mapping[str, Mapping[str, tuple[str, ...]]]  # attribute -> canonical -> terms
    letter_order: tuple[str, ...]
    shoe_size_range: tuple[float, float]
    waist_size_range: tuple[int, int]
    department_accepts: Mapping[str, frozenset[str]]
    units: Mapping[str, tuple[str, ...]]
    phrase_trie: dict[str, Any]  # word -> deeper words; _OWNERS -> ((attribute, canonical), ...)
    lookup: Mapping[str, Mapping[str, str]]  # attribute -> normalised word -> canonical
    measure_pattern: re.Pattern[str]
    unit_by_term: Mapping[str, str]

    def canonical(self, attribute: str, word: str) -> str | None:
        """The canonical value of a whole word or phrase, or None when it is not in the table."""
        if attribute not in self.lookup:
            raise KeyError(f"unknown vocabulary attribute {attribute!r}; known: {', '.join(ATTRIBUTES)}")
        return self.lookup[attribute].get(normalize_phrase(word))

    def values(self, attribute: str) -> tuple[str, ...]:
        """The canonical values of one attribute, in file order."""
        return tuple(self.tables[attribute])


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
    tables = {attribute: _read_table(raw, keys, path) for attribute, keys in _TABLES.items()}
    sizes = _require(raw, ("sizes",), dict, path)
    units = {unit: tuple(terms) for unit, terms in _read_table(raw, ("units",), path).items()}
    phrase_trie = _phrase_trie(tables, path)
    lookup = _lookup(tables)
    accepts = _read_table(raw, ("department_accepts",), path)
    unit_by_term = {_unit_key(term): unit for unit, terms in units.items() for term in terms}
    return Vocabulary(
        tables=MappingProxyType(tables),
        letter_order=tuple(_require(sizes, ("letter_order",), list, path)),
        shoe_size_range=tuple(_require(sizes, ("shoe_size_range",), list, path)),
        waist_size_range=tuple(_require(sizes, ("waist_size_range",), list, path)),
        department_accepts=MappingProxyType({k: frozenset(v) for k, v in accepts.items()}),
        units=MappingProxyType(units),
        phrase_trie=phrase_trie,
        lookup=MappingProxyType(lookup),
        measure_pattern=_measure_pattern(unit_by_term),
        unit_by_term=MappingProxyType(unit_by_term),
    )


def _require(raw: object, keys: tuple[str, ...], kind: type, path: Path) -> object:
    node = raw
    for key in keys:
        if not isinstance(node, dict) or key not in node:
            raise VocabularyError(f"{path}: missing table {'.'.join(keys)!r}")
        node = node[key]
    if not isinstance(node, kind):
        raise VocabularyError(f"{path}: {'.'.join(keys)!r} must be a JSON {kind.__name__}")
    return node


def _read_table(raw: object, keys: tuple[str, ...], path: Path) -> dict[str, tuple[str, ...]]:
    table = _require(raw, keys, dict, path)
    out: dict[str, tuple[str, ...]] = {}
    for canonical, terms in table.items():
        if not isinstance(terms, list) or not all(isinstance(t, str) and t.strip() for t in terms):
            raise VocabularyError(f"{path}: {'.'.join(keys)}.{canonical} must be a list of non-empty strings")
        out[canonical] = tuple(terms)
    return out


def _phrase_trie(tables: dict[str, dict[str, tuple[str, ...]]], path: Path) -> dict[str, Any]:
    """A word trie over every term, so scanning text costs one dict step per word."""
    owners_by_phrase: dict[str, dict[str, str]] = {}
    for attribute, table in tables.items():
        for canonical, terms in table.items():
            for term in terms:
                key = normalize_phrase(term)
                if not key:
                    raise VocabularyError(f"{path}: {attribute} term {term!r} has no words")
                owners = owners_by_phrase.setdefault(key, {})
                if owners.get(attribute, canonical) != canonical:
                    raise VocabularyError(
                        f"{path}: {attribute} term {term!r} means both {owners[attribute]!r} and {canonical!r}"
                    )
                owners[attribute] = canonical
    trie: dict[str, Any] = {}
    for phrase, owners in owners_by_phrase.items():
        node = trie
        for word in phrase.split(" "):
            node = node.setdefault(word, {})
        node[_OWNERS] = tuple(owners.items())
    return trie


def _lookup(tables: dict[str, dict[str, tuple[str, ...]]]) -> dict[str, dict[str, str]]:
    lookup: dict[str, dict[str, str]] = {}
    for attribute, table in tables.items():
        words: dict[str, str] = {}
        for canonical, terms in table.items():
            for term in terms:
                words[normalize_phrase(term)] = canonical
        # A canonical name always looks itself up, even when it is too ambiguous to scan for
        # in running text ("S" as a size, "tie" as a closure).
        for canonical in table:
            words[normalize_phrase(canonical)] = canonical
        lookup[attribute] = MappingProxyType(words)
    return lookup


_NUMBER = r"(?:\d+\s+\d+/\d+|\d+/\d+|\d*\.\d+|\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+)"


def _unit_key(term: str) -> str:
    return re.sub(r"\s+", " ", term.lower().rstrip("."))


def _measure_pattern(unit_by_term: Mapping[str, str]) -> re.Pattern[str]:
    alternatives = []
    for term in sorted(unit_by_term, key=len, reverse=True):
        escaped = re.escape(term).replace(r"\ ", r"\.?\s*")
        if term == "in":
            # Bare "in" is inches only where the sentence cannot go on ("5 in.", "5 in)"):
            # "2 in 1" is a count and "under 30 in blue" is a budget.
            alternatives.append(r"in(?:\.|(?=\s*(?:[),;:/]|$)))")
        elif term[-1].isalnum():
            alternatives.append(escaped + r"(?![a-z0-9])")
        else:
            alternatives.append(escaped)
    chain = rf"{_NUMBER}(?:\s*(?:x|×|\*|by|-|–|to)\s*{_NUMBER})*"
    # The lookbehind lets "21x16x5mm" and '0.8"x0.6"' start after an 'x', but not inside a word
    # or after a currency sign.
    return re.compile(
        rf"(?<![0-9.,A-WYZa-wyz_$£€])(?P<values>{chain})\s*-?\s*(?P<unit>{'|'.join(alternatives)})",
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
    """Every number-with-unit phrase in the text, in order (so parsers never mistake them for prices)."""
    vocab = vocabulary()
    matches = []
    for match in vocab.measure_pattern.finditer(text):
        unit = vocab.unit_by_term.get(_unit_key(match.group("unit")))
        if unit is None:
            continue
        values = tuple(_parse_number(n) for n in _NUMBER_RE.findall(match.group("values")))
        matches.append(MeasureMatch(Measure(values, unit, match.group(0).strip()), match.start(), match.end()))
    return matches


def find_mentions(text: str, attributes: Iterable[str] | None = None) -> list[Mention]:
    """All vocabulary mentions, leftmost-longest on whole words, case-insensitive.

    A phrase listed under several attributes (e.g. "sterling silver": a material
    and a color) yields one mention per attribute. `attributes` restricts the
    result; the longest-match choice still sees the whole vocabulary, so "wide
    leg" stays a style and is not read as the width "wide".
    """
    vocab = vocabulary()
    wanted = None if attributes is None else frozenset(attributes)
    folded = _fold(text)
    matches = list(_TOKEN.finditer(folded))
    words = [m.group(0).replace("'", "") for m in matches]
    mentions: list[Mention] = []
    size_spans: list[tuple[int, int]] = []
    if wanted is None or "size" in wanted:
        size_mentions = _size_mentions(text, folded, vocab)
        mentions.extend(size_mentions)
        size_spans = [m.span for m in size_mentions]
    root, index = vocab.phrase_trie, 0
    while index < len(words):
        # Most words start no phrase: one membership test skips them.
        width, owners = _longest_phrase_at(words, index, root) if words[index] in root else (0, ())
        if not width:
            index += 1
            continue
        start, end = matches[index].start(), matches[index + width - 1].end()
        for attribute, canonical in owners:
            if wanted is not None and attribute not in wanted:
                continue
            if attribute == "size" and any(s <= start and end <= e for s, e in size_spans):
                continue  # already read with its "size" prefix
            mentions.append(Mention(attribute, canonical, start, end, text[start:end]))
        index += width
    mentions.sort(key=lambda m: (m.start, m.end))
    return mentions


def _longest_phrase_at(words: list[str], index: int, trie: dict[str, Any]) -> tuple[int, tuple[tuple[str, str], ...]]:
    node, best_width, best_owners = trie, 0, ()
    for offset in range(index, len(words)):
        node = node.get(words[offset])
        if node is None:
            break
        if _OWNERS in node:
            best_width, best_owners = offset - index + 1, node[_OWNERS]
    return best_width, best_owners


def _fold(text: str) -> str:
    """Lower case with one apostrophe, keeping every offset so spans index the original text."""
    folded = text.lower()
    if len(folded) != len(text):  # a few characters lower-case to two ("İ"); keep those as they are
        folded = "".join(c.lower() if len(c.lower()) == 1 else c for c in text)
    return folded.replace("’", "'")


def _size_mentions(text: str, folded: str, vocab: Vocabulary) -> list[Mention]:
    """Sizes that need context to be safe: "size 9", "size M", "32W x 30L"."""
    found = []
    for match in _SIZE_AFTER_WORD.finditer(folded) if "size" in folded else ():
        end = match.end()
        value = canonical_size(folded[match.start("first") : end]) if match.group("second") else None
        if value is None:  # "size 9 wide": the second word is not part of the size
            value, end = canonical_size(match.group("first")), match.end("first")
        if value is not None:
            found.append(Mention("size", value, match.start(), end, text[match.start() : end]))
    low, high = vocab.waist_size_range
    for match in _WAIST_BY_INSEAM.finditer(folded):
        waist, inseam = int(match.group(1)), int(match.group(2))
        if low <= waist <= high and 20 <= inseam <= 40:
            start, end = match.span()
            found.append(Mention("size", f"{waist}x{inseam}", start, end, text[start:end]))
    return found


def canonical_size(word: str) -> str | None:
    """A letter size ("xl" -> "XL", "xxl" -> "2XL", "m" -> "M"), or a numeric shoe/waist size as text."""
    vocab = vocabulary()
    letter = vocab.canonical("size", word)
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
    """All letter sizes from first to last inclusive ("S", "5XL" -> S, M, L, ..., 5XL); empty if unknown."""
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


def canonical_color(word: str) -> str | None:
    return vocabulary().canonical("color", word)


def canonical_material(word: str) -> str | None:
    return vocabulary().canonical("material", word)


def canonical_department(word: str) -> str | None:
    return vocabulary().canonical("department", word)


def canonical_closure(word: str) -> str | None:
    return vocabulary().canonical("closure", word)


def canonical_use_case(word: str) -> str | None:
    return vocabulary().canonical("use_case", word)


def canonical_style(word: str) -> str | None:
    return vocabulary().canonical("style", word)


def canonical_fit(word: str) -> str | None:
    return vocabulary().canonical("fit", word)


def canonical_width(word: str) -> str | None:
    return vocabulary().canonical("width", word)
