"""Who the item is for: recipients ("my wife", "the missus", "my 8 year old") and age groups
("toddler", "teen", "9 months old"), read from a message and kept in the state.

A recipient gives the department as a guess ("for my mom": women, soft) or as good as a
statement ("my son": boys, hard); a department the shopper states ("womens") always wins over
a guessed one, and an age group alone ("teen", "toddler") names no gender. The words, the age
bands and the department of each age group and gender live in data/audience.json, read and
checked once at import.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

from rapidfuzz import process
from rapidfuzz.distance import OSA
from text_to_num import text2num

from ..catalog.vocabulary import Mention, accepted_departments
from ..terms import QUESTION_FOR, Facet, Level, Status
from .model import AudienceFact, Constraint, ShoppingState, StateDiff
from .spelling import is_english

DATA_PATH = Path(__file__).with_name("data") / "audience.json"
GENDERS = ("female", "male")
AGE_GROUPS = ("baby", "toddler", "kid", "teen", "adult")
# Where a reading came from: a person's word ("my wife"), a number ("8 year old"), an age word
# ("toddler") or a pronoun ("she"). Only a number or an age word states an age.
RECIPIENT, AGE, WORD, PRONOUN = "recipient", "age", "word", "pronoun"
MAX_GAP = 6  # words between a cue and the person: "my 8 year old little boy"
MIN_TYPO_LENGTH = 5  # "husbnd", "daugther"; shorter words are too easily another word


class AudienceError(ValueError):
    """The audience file is malformed; the message names the file and the entry."""


@dataclass(frozen=True, slots=True)
class Person:
    """One recipient of the data file."""

    name: str
    gender: str | None
    age_group: str | None  # what they are, said or not ("wife": adult)
    assume_age: str | None  # the age their department is read with when none is said
    level: Level  # how sure their department is when no age is said


@dataclass(frozen=True, slots=True)
class Term:
    person: Person
    possessed: bool  # needs "my", "our"... before it ("my boy"; "a boy" is a department)


@dataclass(frozen=True, slots=True)
class Cues:
    """The loaded data file."""

    cues: frozenset[str]
    possessives: frozenset[str]
    terms: Mapping[tuple[str, ...], Term]
    typo_targets: tuple[str, ...]  # single words worth correcting towards
    longest: int
    people: Mapping[str, Person]
    modifiers: Mapping[str, str | None]
    age_words: Mapping[tuple[str, ...], str]
    longest_age_word: int
    others: frozenset[str]  # "her best friend" is someone else's
    their_events: frozenset[str]  # "my brother's wedding": the brother is no recipient
    units: Mapping[str, frozenset[str]]  # years, months, old, ... (see `ages` in the file)
    toddler_sizes: frozenset[str]
    most_years: int
    bands: tuple[tuple[str, float, float], ...]
    pronouns: Mapping[str, str]
    departments: Mapping[str, Mapping[str, tuple[str, Level] | None]]

    def unit(self, name: str, word: str) -> bool:
        return word in self.units[name]


# -- loading --------------------------------------------------------------------------------


def load_cues(path: Path) -> Cues:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise AudienceError(f"{path}: cannot read the audience cues: {error}") from error
    if not isinstance(raw, dict):
        raise AudienceError(f"{path}: must hold a JSON object")
    read = _Reader(raw, path)
    people, terms = read.recipients()
    age_words = read.age_words()
    ages = read.table("ages")
    words = {key: read.words(ages, "ages", key) for key in _AGE_UNITS}
    return Cues(
        cues=frozenset(read.words(raw, "", "cues")),
        possessives=frozenset(read.words(raw, "", "possessives")),
        terms=MappingProxyType(terms),
        typo_targets=tuple(
            sorted(
                {k[0] for k, t in terms.items() if len(k) == 1 and len(k[0]) >= MIN_TYPO_LENGTH}
            )
        ),
        longest=max(map(len, terms)),
        people=MappingProxyType(people),
        modifiers=MappingProxyType(read.modifiers()),
        age_words=MappingProxyType(age_words),
        longest_age_word=max(map(len, age_words)),
        others=frozenset(read.words(raw, "", "others")),
        their_events=frozenset(read.words(raw, "", "their_events")),
        units=MappingProxyType({key: frozenset(value) for key, value in words.items()}),
        toddler_sizes=frozenset(read.words(ages, "ages", "toddler_sizes")),
        most_years=read.number(ages, "ages.most_years"),
        bands=read.bands(ages),
        pronouns=MappingProxyType(read.pronouns()),
        departments=MappingProxyType(read.departments()),
    )


_AGE_UNITS = (
    "years",
    "months",
    "old",
    "years_old",
    "old_short",
    "before",
    "after_person",
    "hedges",
    "birthday",
    "ordinal_suffixes",
    "not_after",
)


class _Reader:
    """Checks each part of the file, naming the entry that is wrong."""

    def __init__(self, raw: dict[str, Any], path: Path) -> None:
        self.raw, self.path = raw, path

    def fail(self, entry: str, problem: str) -> AudienceError:
        return AudienceError(f"{self.path}: {entry}: {problem}")

    def table(self, key: str) -> dict[str, Any]:
        node = self.raw.get(key)
        if not isinstance(node, dict):
            raise self.fail(key, "missing or not an object")
        return node

    def words(self, node: Mapping[str, Any], where: str, key: str) -> tuple[str, ...]:
        entry = f"{where}.{key}" if where else key
        value = node.get(key)
        if not isinstance(value, list) or not value:
            raise self.fail(entry, "must be a non-empty list of words")
        out = []
        for term in value:
            words = _words_of(term) if isinstance(term, str) else ()
            if not words:
                raise self.fail(entry, f"{term!r} is not a word or phrase")
            out.append(" ".join(words))
        return tuple(out)

    def number(self, node: Mapping[str, Any], entry: str) -> int:
        value = node.get(entry.rsplit(".", 1)[-1])
        if not isinstance(value, int) or value <= 0:
            raise self.fail(entry, "must be a positive whole number")
        return value

    def choice(self, value: Any, allowed: Sequence[str | None], entry: str) -> Any:
        if value not in allowed:
            known = ", ".join(str(a) for a in allowed)
            raise self.fail(entry, f"{value!r} is not one of {known}")
        return value

    def recipients(self) -> tuple[dict[str, Person], dict[tuple[str, ...], Term]]:
        people: dict[str, Person] = {}
        terms: dict[tuple[str, ...], Term] = {}
        for name, entry in self.table("recipients").items():
            where = f"recipients.{name}"
            if not isinstance(entry, dict):
                raise self.fail(where, "must be an object")
            person = Person(
                name=name,
                gender=self.choice(entry.get("gender"), (*GENDERS, None), f"{where}.gender"),
                age_group=self.choice(
                    entry.get("age_group"), (*AGE_GROUPS, None), f"{where}.age_group"
                ),
                assume_age=self.choice(
                    entry.get("assume_age", entry.get("age_group")),
                    (*AGE_GROUPS, None),
                    f"{where}.assume_age",
                ),
                level=Level(self.choice(entry.get("level", "soft"), ("hard", "soft"), where)),
            )
            people[name] = person
            for possessed in (False, True):
                key = "possessed" if possessed else "terms"
                if key not in entry and possessed:
                    continue
                for phrase in self.words(entry, where, key):
                    for form in _forms(tuple(phrase.split())):
                        self._add_term(terms, form, Term(person, possessed), where)
        return people, terms

    def _add_term(
        self, terms: dict[tuple[str, ...], Term], form: tuple[str, ...], term: Term, where: str
    ) -> None:
        known = terms.get(form)
        if known is not None and known.person.name != term.person.name:
            phrase = " ".join(form)
            raise self.fail(where, f"{phrase!r} also names {known.person.name!r}")
        if known is None or not term.possessed:  # a plain term's plural beats a possessed one
            terms[form] = term

    def modifiers(self) -> dict[str, str | None]:
        table = self.table("modifiers")
        return {
            word: self.choice(age, (*AGE_GROUPS, None), f"modifiers.{word}")
            for word, age in table.items()
        }

    def age_words(self) -> dict[tuple[str, ...], str]:
        table = self.table("age_words")
        out: dict[tuple[str, ...], str] = {}
        for age in table:
            self.choice(age, AGE_GROUPS, f"age_words.{age}")
            for phrase in self.words(table, "age_words", age):
                out[tuple(phrase.split())] = age
        return out

    def bands(self, ages: Mapping[str, Any]) -> tuple[tuple[str, float, float], ...]:
        bands = ages.get("bands")
        if not isinstance(bands, list) or not bands:
            raise self.fail("ages.bands", "must be a list of [age group, from, to] in years")
        out = []
        for band in bands:
            if not (
                isinstance(band, list)
                and len(band) == 3
                and band[0] in AGE_GROUPS
                and all(isinstance(b, int | float) for b in band[1:])
                and band[1] < band[2]
            ):
                raise self.fail("ages.bands", f"{band!r} is not [age group, from, to]")
            out.append((band[0], float(band[1]), float(band[2])))
        return tuple(out)

    def pronouns(self) -> dict[str, str]:
        table = self.table("pronouns")
        out = {}
        for gender in GENDERS:
            for word in self.words(table, "pronouns", gender):
                out[word] = gender
        return out

    def departments(self) -> dict[str, Mapping[str, tuple[str, Level] | None]]:
        table = self.table("departments")
        out: dict[str, Mapping[str, tuple[str, Level] | None]] = {}
        for age in AGE_GROUPS:
            row = table.get(age)
            if not isinstance(row, dict):
                raise self.fail(f"departments.{age}", "missing or not an object")
            out[age] = {gender: self._department(row, age, gender) for gender in (*GENDERS, "any")}
        return out

    def _department(self, row: Mapping[str, Any], age: str, gender: str) -> tuple[str, Level] | None:
        value = row.get(gender)
        if value is None:
            return None
        if not (
            isinstance(value, list)
            and len(value) == 2
            and isinstance(value[0], str)
            and value[1] in ("hard", "soft")
        ):
            raise self.fail(f"departments.{age}.{gender}", "must be [department, hard|soft]")
        return value[0], Level(value[1])


def _forms(words: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    """A phrase and its plural ("bridesmaid", "bridesmaids"): "for my two boys"."""
    last = words[-1]
    if last.endswith("s") or last[-1].isdigit():
        return (words,)
    return words, (*words[:-1], last + "s")


_WORD = re.compile(r"[^\W\d_]+|\d+")


def _fold(word: str) -> str:
    """ASCII letters: "fiancée" is "fiancee"."""
    if word.isascii():
        return word
    return unicodedata.normalize("NFKD", word).encode("ascii", "ignore").decode()


def _words_of(text: str) -> tuple[str, ...]:
    return tuple(w for m in _WORD.finditer(text.lower()) if (w := _fold(m.group())))


@lru_cache(maxsize=1)
def cues() -> Cues:
    """The project's audience cues, loaded once."""
    return load_cues(DATA_PATH)


# -- reading a message --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Heard:
    """One thing a message says about who the item is for, with the words it came from."""

    value: str
    text: str
    start: int
    end: int
    cue: str


@dataclass(frozen=True, slots=True)
class AudienceReading:
    """What one message says about who the item is for."""

    recipient: Heard | None
    age_group: Heard | None
    gender: Heard | None  # from a pronoun or a baby's department word; not a recipient's own
    spans: tuple[tuple[int, int], ...]  # the words that say who, not what

    def covers(self, start: int, end: int) -> bool:
        return any(start < b and a < end for a, b in self.spans)

    def words(self, text: str) -> frozenset[str]:
        return frozenset(w for a, b in self.spans for w in _words_of(text[a:b]))


@dataclass(frozen=True, slots=True)
class _Token:
    word: str
    start: int
    end: int


class _Message:
    """A message as words with their places, and the text they came from."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.words = [
            _Token(word, m.start(), m.end())
            for m in _WORD.finditer(text.lower())
            if (word := _fold(m.group()))
        ]

    def __len__(self) -> int:
        return len(self.words)

    def word(self, index: int) -> str:
        return self.words[index].word if 0 <= index < len(self.words) else ""

    def index_at(self, start: int) -> int:
        return next(i for i, t in enumerate(self.words) if t.start == start)

    def gap_after(self, index: int) -> str:
        """What stands between a word and the next ("." in "9.5", "'" in "5'4")."""
        if index + 1 >= len(self.words):
            return ""
        return self.text[self.words[index].end : self.words[index + 1].start]

    def heard(self, first: int, last: int, value: str, cue: str) -> Heard:
        start, end = self.words[first].start, self.words[last].end
        return Heard(value, self.text[start:end], start, end, cue)


@dataclass(frozen=True, slots=True)
class _Named:
    """A person named in a message: from its cue ("my") through its noun."""

    first: int
    start: int  # the person's own words
    last: int
    person: Person


def read_audience(
    text: str, mentions: Iterable[Mention] = (), data: Cues | None = None
) -> AudienceReading | None:
    """Who the message says the item is for, or None. `mentions`: the vocabulary's values in
    it ("baby blue" is a colour, so its "baby" names no age; "it's a girl" is a baby's gender)."""
    data = data or cues()
    message = _Message(text)
    mentions = list(mentions)
    taken = [(m.start, m.end) for m in mentions if m.facet != Facet.DEPARTMENT]
    named = _recipients(message, data)
    people = [message.heard(n.first, n.last, n.person.name, RECIPIENT) for n in named]
    words = _age_words(message, data, taken)
    age = (
        _number_age(message, data, people)
        or _modifier_age(message, data, named[:1])
        or (words[0] if words else None)
        or _toddler_size(message, data)
    )
    recipient = people[0] if people else None
    if recipient is None and age is not None:
        recipient = _unnamed_child(message, age, data)
    gender = _pronoun_gender(message, data, recipient)
    if age is not None and age.value == "baby":
        gender = _baby_gender(mentions) or gender
    heard = [*people, *words, recipient, age]
    if gender is not None and gender.cue == WORD:
        heard.append(gender)
    if recipient is None and age is None and gender is None:
        return None
    spans = tuple(dict.fromkeys((h.start, h.end) for h in heard if h is not None))
    return AudienceReading(recipient, age, gender, spans)


def _recipients(message: _Message, data: Cues) -> list[_Named]:
    """The people the item may be for, in order: in "my baby girl" the girl (a person before
    another describes them), in "my friend's new baby" the baby, in "my brother's wedding" no
    one (the shopper goes to it)."""
    found: list[_Named] = []
    index = 0
    while index < len(message):
        match = _person_at(message, index, data)
        if match is None:
            index += 1
            continue
        width, term = match
        last = index + width - 1
        cue = _cue_before(message, index, data, term.possessed)
        alone = width > 1 and not term.possessed  # "best friend", "baby shower": no cue needed
        if (cue is not None or alone) and not _someone_elses(message, index, last, data):
            found.append(_Named(index if cue is None else cue, index, last, term.person))
        index += width
    return [n for i, n in enumerate(found) if not _describes_next(message, n, found[i + 1 :])]


def _person_at(message: _Message, index: int, data: Cues) -> tuple[int, Term] | None:
    for width in range(min(data.longest, len(message) - index), 0, -1):
        key = tuple(t.word for t in message.words[index : index + width])
        if (term := data.terms.get(key)) is not None:
            return width, term
    fixed = _typo_fixed(message.word(index), data.typo_targets)
    if fixed is not None and not data.terms[(fixed,)].possessed:
        return 1, data.terms[(fixed,)]
    return None


@lru_cache(maxsize=4096)
def _typo_fixed(word: str, targets: tuple[str, ...]) -> str | None:
    """A person's word typed with one slip ("husbnd", "daugther"), unless it is another word."""
    if len(word) < MIN_TYPO_LENGTH or not word.isalpha() or is_english(word):
        return None
    found = process.extractOne(word, targets, scorer=OSA.distance, score_cutoff=1)
    return None if found is None else found[0]


def _cue_before(message: _Message, index: int, data: Cues, possessed: bool) -> int | None:
    """Where the cue before a person is ("for my 8 year old son"), skipping modifiers and ages;
    None without one, or when the person is someone else's ("her best friend")."""
    wanted = data.possessives if possessed else data.cues
    for back in range(index - 1, max(-1, index - 1 - MAX_GAP), -1):
        word = message.word(back)
        if word in wanted or (word == "s" and (message.word(back - 1),) in data.terms):
            return back  # "my friend's new baby": the friend's is a possessive too
        if not (word in data.modifiers or _age_part(word, data)):
            return None
    return None


def _age_part(word: str, data: Cues) -> bool:
    return (
        _number(word) is not None
        or any(data.unit(u, word) for u in ("years", "months", "old", "years_old", "old_short"))
        or word in data.toddler_sizes
    )


def _someone_elses(message: _Message, index: int, last: int, data: Cues) -> bool:
    """Is the person someone else's ("her best friend"), or someone whose event the shopper
    dresses for ("my brother's wedding")? Neither is who the item is for."""
    if message.word(last + 1) == "s" and message.word(last + 2) in data.their_events:
        return True
    back = index - 1
    while back >= 0 and message.word(back) in data.modifiers:
        back -= 1
    return message.word(back) in data.others


def _describes_next(message: _Message, named: _Named, later: list[_Named]) -> bool:
    """Is this person only a word about the next one ("my baby girl", "my friend's new baby")?"""
    return bool(later) and later[0].first <= named.last + 1


@lru_cache(maxsize=1024)
def _number(word: str) -> int | None:
    """A whole number in digits or words ("8", "eight")."""
    if word.isdigit():
        return int(word)
    if not word.isalpha():
        return None
    try:
        return int(text2num(word, "en"))
    except ValueError:
        return None


def _number_age(message: _Message, data: Cues, people: list[Heard]) -> Heard | None:
    """An age in numbers: "8 year old", "8yo", "9 months old", "age 10", "she's 3", "5th
    birthday"."""
    person_ends = {p.end for p in people}
    for index, token in enumerate(message.words):
        amount = _number(token.word)
        if amount is None or amount > data.most_years:
            continue
        found = _age_after(message, index, amount, data)
        if found is None and _said_as_age(message, index, data, person_ends):
            found = (index, amount)
        if found is not None and (group := _band(found[1], data)) is not None:
            return message.heard(index, found[0], group, AGE)
    return None


def _age_after(
    message: _Message, index: int, amount: int, data: Cues
) -> tuple[int, float] | None:
    """(last word, age in years) of an age said with a unit after the number."""
    nxt, then = message.word(index + 1), message.word(index + 2)
    if data.unit("years_old", nxt):
        return index + 1, amount
    if data.unit("years", nxt) and (data.unit("old", then) or data.unit("old_short", then)):
        return index + 2, amount
    if data.unit("months", nxt) and data.unit("old", then):
        return index + 2, amount / 12
    if data.unit("ordinal_suffixes", nxt) and data.unit("birthday", then):
        return index + 2, amount
    return None


def _toddler_size(message: _Message, data: Cues) -> Heard | None:
    """A toddler's size ("3T"): a hint at the age, weaker than an age said in numbers."""
    for index in range(len(message) - 1):
        pair = f"{message.word(index)} {message.word(index + 1)}"
        if pair in data.toddler_sizes and message.gap_after(index) == "":
            return message.heard(index, index + 1, "toddler", WORD)
    return None


def _said_as_age(message: _Message, index: int, data: Cues, person_ends: set[int]) -> bool:
    """A bare number is an age after "age" or "turning", or after a person and "is" ("my son is
    7", "she's 3") unless a unit or a size follows ("he's 12 wide", "she's 5'4")."""
    back = index - 1
    while back >= 0 and data.unit("hedges", message.word(back)):
        back -= 1
    before = message.word(back)
    if data.unit("before", before):
        return True  # "age 10", "turning 15"
    if not data.unit("after_person", before) or back < 1:
        return False
    person = message.words[back - 1]
    if person.word not in data.pronouns and person.end not in person_ends:
        return False
    nxt = message.word(index + 1)
    return not (
        data.unit("not_after", nxt)
        or nxt.isdigit()
        or message.gap_after(index) in (".", "'", "/", "-", "x")
    )


def _band(years: float, data: Cues) -> str | None:
    for group, low, high in data.bands:
        if low <= years < high:
            return group
    return None


def _modifier_age(message: _Message, data: Cues, named: list[_Named]) -> Heard | None:
    """The age a word before the person says: "my teenage son", "my newborn nephew"."""
    for n in named:
        for index in range(n.first, n.start):
            if (group := data.modifiers.get(message.word(index))) is not None:
                return message.heard(index, index, group, WORD)
    return None


def _age_words(message: _Message, data: Cues, taken: list[tuple[int, int]]) -> list[Heard]:
    """Age groups named by a word ("toddler", "teen", "kids"), unless the word is part of
    another value ("baby blue")."""
    found = []
    index = 0
    while index < len(message):
        width = _age_word_at(message, index, data)
        if width:
            key = tuple(t.word for t in message.words[index : index + width])
            heard = message.heard(index, index + width - 1, data.age_words[key], WORD)
            if not any(heard.start < b and a < heard.end for a, b in taken):
                found.append(heard)
        index += width or 1
    return found


def _age_word_at(message: _Message, index: int, data: Cues) -> int:
    for width in range(min(data.longest_age_word, len(message) - index), 0, -1):
        if tuple(t.word for t in message.words[index : index + width]) in data.age_words:
            return width
    return 0


def _unnamed_child(message: _Message, age: Heard, data: Cues) -> Heard | None:
    """ "my 8 year old", "our 9 month old": a child named by their age alone."""
    index = message.index_at(age.start)
    if age.cue != AGE or message.word(index - 1) not in data.possessives:
        return None
    in_months = any(data.unit("months", word) for word in _words_of(age.text))
    name = "baby" if age.value == "baby" or in_months else "child"
    return Heard(name, age.text, message.words[index - 1].start, age.end, RECIPIENT)


def _pronoun_gender(message: _Message, data: Cues, recipient: Heard | None) -> Heard | None:
    """ "she", "his": the gender of a person the message names no gender for ("a coworker, I
    don't know her well"); None when both genders are used."""
    said = [i for i, t in enumerate(message.words) if t.word in data.pronouns]
    if not said or len({data.pronouns[message.word(i)] for i in said}) > 1:
        return None
    if recipient is not None and data.people[recipient.value].gender is not None:
        return None
    return message.heard(said[0], said[0], data.pronouns[message.word(said[0])], PRONOUN)


def _baby_gender(mentions: list[Mention]) -> Heard | None:
    """ "baby shower gift, it's a girl": a baby's gender said as a department word."""
    for m in mentions:
        if m.facet == Facet.DEPARTMENT and m.value in _BABY_GENDERS:
            return Heard(_BABY_GENDERS[m.value], m.text, m.start, m.end, WORD)
    return None


_BABY_GENDERS = {"girls": "female", "boys": "male"}


# -- the state ----------------------------------------------------------------------------------


def apply_audience(
    state: ShoppingState, reading: AudienceReading | None, level: Level, diff: StateDiff
) -> None:
    """Keep who the item is for, and the department that follows, unless the shopper stated a
    department this turn or (for a guess) before. `level`: the turn's level for a statement."""
    if reading is None:
        return
    changed, new_person = _update_audience(state, reading, diff)
    if changed:
        _apply_department(state, department_for(state, cues()), level, new_person, diff)


def _update_audience(
    state: ShoppingState, reading: AudienceReading, diff: StateDiff
) -> tuple[bool, bool]:
    """(did anything change, is it a new person)."""
    audience, turn, data = state.audience, state.turn, cues()
    before = (audience.recipient, audience.age_group, audience.gender)
    said = reading.recipient
    new_person = said is not None and (
        audience.recipient is None or audience.recipient.value != said.value
    )
    if said is not None and new_person:
        person = data.people.get(said.value)
        audience.recipient = _fact(said, turn)
        audience.gender = None  # a pronoun heard earlier was about someone else
        own_age = person.age_group if person else None
        audience.age_group = (
            AudienceFact(own_age, turn, said.text, RECIPIENT) if own_age else None
        )
    if (age := reading.age_group) is not None and _replaces_age(audience.age_group, age):
        audience.age_group = _fact(age, turn)
    if reading.gender is not None and _gender_of(audience, data) is None:
        audience.gender = _fact(reading.gender, turn)
    after = (audience.recipient, audience.age_group, audience.gender)
    for name, old, new in zip(("recipient", "age_group", "gender"), before, after, strict=True):
        if new is not None and new != old:
            diff.audience[name] = new.value
    return before != after, new_person


def _fact(heard: Heard, turn: int) -> AudienceFact:
    return AudienceFact(heard.value, turn, heard.text, heard.cue)


def _replaces_age(old: AudienceFact | None, new: Heard) -> bool:
    """A number said before is not undone by an age word ("she's 3", then "size 9 toddler")."""
    return old is None or not (old.cue == AGE and new.cue == WORD)


def _gender_of(audience: Any, data: Cues) -> str | None:
    if audience.recipient is not None:
        person = data.people.get(audience.recipient.value)
        if person is not None and person.gender is not None:
            return person.gender
    return audience.gender.value if audience.gender is not None else None


def department_for(state: ShoppingState, data: Cues) -> tuple[str, Level, str] | None:
    """(department, level, the words) for who the item is for, or None: an age group alone names
    no gender, and a person of unknown age and gender names no department."""
    audience = state.audience
    person = data.people.get(audience.recipient.value) if audience.recipient else None
    age_fact = audience.age_group
    stated_age = age_fact is not None and age_fact.cue in (AGE, WORD)
    if stated_age or person is None:
        age = age_fact.value if age_fact is not None else None
    else:
        age = person.assume_age
    gender = _gender_of(audience, data)
    found = data.departments[age][gender or "any"] if age is not None else None
    if found is None:
        return None
    department, level = found
    if not stated_age and person is not None:
        level = person.level
    if audience.gender is not None and audience.gender.cue == PRONOUN:
        level = Level.SOFT  # a pronoun is a guess
    said = (audience.recipient, age_fact if stated_age else None)
    words = " ".join(dict.fromkeys(f.text for f in said if f is not None and f.text))
    return department, level, words


def _apply_department(
    state: ShoppingState,
    wanted: tuple[str, Level, str] | None,
    turn_level: Level,
    new_person: bool,
    diff: StateDiff,
) -> None:
    current = [c for c in state.active() if c.data.get("facet") == Facet.DEPARTMENT]
    stated = [c for c in current if not _guessed(c)]
    if wanted is None:
        if new_person:  # the department guessed for someone else no longer holds
            _retire([c for c in current if _guessed(c)], diff)
        return
    value, level, words = wanted
    level = turn_level if level == Level.HARD else Level.SOFT
    if any(c.value == value for c in current):
        for constraint in current:
            if constraint.value == value and _guessed(constraint):
                constraint.level = level
        return
    said_now = [c for c in stated if c.source_turn == state.turn]
    if said_now or level == Level.SOFT:
        # A department the shopper names wins over who it is for, unless that only narrows it
        # ("a kids watch for my son": boys). Said in this message, it wins over a statement too.
        if not all(_narrows(value, c.value) for c in (said_now or stated)):
            return
    _retire(current, diff)
    constraint = Constraint(
        attribute=QUESTION_FOR[Facet.DEPARTMENT],
        value=value,
        level=level,
        source_turn=state.turn,
        confidence=0.9 if level == Level.HARD else 0.6,
        epoch=state.epoch,
        text=words,
        data={"facet": Facet.DEPARTMENT, "from": "audience"},
    )
    state.constraints.append(constraint)
    diff.added.append(_described(constraint))


def _narrows(value: str, stated: str) -> bool:
    """Is `value` a narrower department than `stated` ("boys" of "kids")?"""
    return value != stated and value in accepted_departments(stated)


def _guessed(constraint: Constraint) -> bool:
    """Was the department read from who the item is for, not from a department word?"""
    return constraint.data.get("from") == "audience"


def _retire(constraints: list[Constraint], diff: StateDiff) -> None:
    for constraint in constraints:
        constraint.status = Status.REPLACED
        diff.replaced.append(_described(constraint))


def _described(constraint: Constraint) -> dict[str, Any]:
    return {
        "attribute": constraint.attribute,
        "value": constraint.value,
        "level": constraint.level,
        "turn": constraint.source_turn,
        "epoch": constraint.epoch,
    }
