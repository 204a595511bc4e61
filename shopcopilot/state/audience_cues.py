"""The words for who an item is for, read from data/audience.json and checked at import: people
("wife", "mum", "hubby", "my little one"), the cues before them ("my", "for"), age words
("toddler", "teen"), number phrases ("8 year old", "9 months old"), the age bands, pronouns,
and the department of each age group and gender. A malformed file fails the import with an
error naming the file and the entry.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..datafile import read_json_object
from ..terms import Level

DATA_PATH = Path(__file__).with_name("data") / "audience.json"
GENDERS = ("female", "male")
AGE_GROUPS = ("baby", "toddler", "kid", "teen", "adult")
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
    term_starts: frozenset[str]  # the first word of each term: most words start none
    typo_targets: tuple[str, ...]  # single words worth correcting towards
    longest: int
    people: Mapping[str, Person]
    modifiers: Mapping[str, str | None]
    age_words: Mapping[tuple[str, ...], str]
    age_word_starts: frozenset[str]
    longest_age_word: int
    others: frozenset[str]  # "her best friend" is someone else's
    their_events: frozenset[str]  # "my brother's wedding": the brother is no recipient
    gift_days: frozenset[str]  # "bf bday": the boyfriend is, with no "my" before him
    not_for: frozenset[str]  # "not for my wife", "with my husband"
    speaking: frozenset[str]  # "my dad swears by them"
    minding: frozenset[str]  # "walking the kids to school": the kids are no recipient
    minding_the: frozenset[str]  # ...the words skipped before such a word ("the", "two")
    units: Mapping[str, frozenset[str]]  # years, months, old, ... (see `ages` in the file)
    toddler_sizes: frozenset[str]
    most_years: int
    bands: tuple[tuple[str, float, float], ...]
    pronouns: Mapping[str, str]
    departments: Mapping[str, Mapping[str, tuple[str, Level] | None]]

    def unit(self, name: str, word: str) -> bool:
        return word in self.units[name]


def load_cues(path: Path) -> Cues:
    raw = read_json_object(path, AudienceError, "the audience cues")
    read = _Reader(raw, path)
    people, terms = read.recipients()
    age_words = read.age_words()
    ages = read.table("ages")
    units = {key: read.words(ages, "ages", key) for key in _AGE_UNITS}
    return Cues(
        cues=frozenset(read.words(raw, "", "cues")),
        possessives=frozenset(read.words(raw, "", "possessives")),
        terms=MappingProxyType(terms),
        term_starts=frozenset(words[0] for words in terms),
        typo_targets=tuple(
            sorted({k[0] for k in terms if len(k) == 1 and len(k[0]) >= MIN_TYPO_LENGTH})
        ),
        longest=max(map(len, terms)),
        people=MappingProxyType(people),
        modifiers=MappingProxyType(read.modifiers()),
        age_words=MappingProxyType(age_words),
        age_word_starts=frozenset(words[0] for words in age_words),
        longest_age_word=max(map(len, age_words)),
        others=frozenset(read.words(raw, "", "others")),
        their_events=frozenset(read.words(raw, "", "their_events")),
        gift_days=frozenset(read.words(raw, "", "gift_days")),
        not_for=frozenset(read.words(raw, "", "not_for")),
        speaking=frozenset(read.words(raw, "", "speaking")),
        minding=frozenset(read.words(raw, "", "minding")),
        minding_the=frozenset(read.words(raw, "", "minding_the")),
        units=MappingProxyType({key: frozenset(value) for key, value in units.items()}),
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
            words = words_of(term) if isinstance(term, str) else ()
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

    def _department(
        self, row: Mapping[str, Any], age: str, gender: str
    ) -> tuple[str, Level] | None:
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


WORD = re.compile(r"[^\W\d_]+|\d+")


def fold(word: str) -> str:
    """ASCII letters: "fiancée" is "fiancee"."""
    if word.isascii():
        return word
    return unicodedata.normalize("NFKD", word).encode("ascii", "ignore").decode()


def words_of(text: str) -> tuple[str, ...]:
    """Lower-case ASCII words, letters and digits apart ("8yo": 8, yo; "wife's": wife, s)."""
    return tuple(w for m in WORD.finditer(text.lower()) if (w := fold(m.group())))


_CUES = load_cues(DATA_PATH)  # at import: a broken file fails at once, naming the entry


def cues() -> Cues:
    """The project's audience cues."""
    return _CUES
