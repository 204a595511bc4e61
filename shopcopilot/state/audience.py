"""Who the item is for: recipients ("my wife", "the missus", "my 8 year old") and age groups
("toddler", "teen", "9 months old"), read from a message and kept in the state.

A recipient gives the department as a guess ("for my mom": women, soft) or as good as a
statement ("my son": boys, hard); a department the shopper states ("womens") always wins over
a guessed one, and an age group alone ("teen", "toddler") names no gender. The words live in
data/audience.json (see audience_cues).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

from rapidfuzz import process
from rapidfuzz.distance import OSA
from text_to_num import alpha2digit, text2num

from ..catalog.vocabulary import Mention, accepted_departments, canonical_department
from ..terms import QUESTION_FOR, Facet, Level, Status
from .audience_cues import MIN_TYPO_LENGTH, WORD, Cues, Person, Term, cues, fold, words_of
from .model import Audience, AudienceFact, Constraint, ShoppingState, StateDiff
from .spelling import is_english

# Where a reading came from: a person's word ("my wife"), a number ("8 year old"), an age word
# ("toddler") or a pronoun ("she"). Only a number or an age word states an age.
RECIPIENT, AGE, WORD_CUE, PRONOUN = "recipient", "age", "word", "pronoun"
MAX_GAP = 6  # words between a cue and the person: "my 8 year old little boy"


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

    @property
    def names_someone(self) -> bool:
        """Does it say who (a person or an age), not only a pronoun?"""
        return self.recipient is not None or self.age_group is not None

    def covers(self, start: int, end: int) -> bool:
        return any(start < b and a < end for a, b in self.spans)

    def words(self, text: str) -> frozenset[str]:
        return frozenset(w for a, b in self.spans for w in words_of(text[a:b]))


class _Token(NamedTuple):  # a tuple: a message makes one per word, every turn
    word: str
    start: int
    end: int


class _Message:
    """A message as words with their places, and the text they came from."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.words = [
            _Token(word, m.start(), m.end())
            for m in WORD.finditer(text.lower())
            if (word := fold(m.group()))
        ]
        self.plain = [t.word for t in self.words]

    def phrase(self, index: int, width: int) -> tuple[str, ...]:
        return tuple(self.plain[index : index + width])

    def __len__(self) -> int:
        return len(self.words)

    def word(self, index: int) -> str:
        return self.plain[index] if 0 <= index < len(self.plain) else ""

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
    if gender is not None and gender.cue == WORD_CUE:
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
        if (
            (
                cue is not None
                or alone
                or (not term.possessed and _their_gift_day(message, last, data))
            )
            and not _someone_elses(message, index, last, data)
            and not _not_for_them(message, index if cue is None else cue, last, data)
        ):
            found.append(_Named(index if cue is None else cue, index, last, term.person))
        index += width
    return [n for i, n in enumerate(found) if not _describes_next(message, n, found[i + 1 :])]


def _their_gift_day(message: _Message, last: int, data: Cues) -> bool:
    """ "bf bday 2moro", "dad's birthday": the person whose day the gift is for."""
    after = last + 2 if message.word(last + 1) == "s" else last + 1
    return message.word(after) in data.gift_days


def _person_at(message: _Message, index: int, data: Cues) -> tuple[int, Term] | None:
    if message.plain[index] in data.term_starts:
        for width in range(min(data.longest, len(message) - index), 0, -1):
            if (term := data.terms.get(message.phrase(index, width))) is not None:
                return width, term
    word = message.plain[index]
    if len(word) < MIN_TYPO_LENGTH:
        return None
    fixed = _typo_fixed(word, data.typo_targets)
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


def _not_for_them(message: _Message, first: int, last: int, data: Cues) -> bool:
    """Is the person named as someone the item is not for: turned down ("not for my wife"),
    beside the shopper ("with my husband", "from my mum") or speaking ("my dad swears by
    them")?"""
    before = first - 1
    if message.word(before) in data.cues and message.word(first) in data.possessives:
        before -= 1  # "for my": look before "for"
    return message.word(before) in data.not_for or message.word(last + 1) in data.speaking


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
            found = _bare_age(message, index, amount, data)
        if found is not None and (group := _band(found[1], data)) is not None:
            return message.heard(index, found[0], group, AGE)
    return None


def _age_after(message: _Message, index: int, amount: int, data: Cues) -> tuple[int, float] | None:
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


def _bare_age(message: _Message, index: int, amount: int, data: Cues) -> tuple[int, float]:
    """(last word, age in years) of an age said after "is" or "age": "she's 10 months", "age 9"."""
    if data.unit("months", message.word(index + 1)):
        return index + 1, amount / 12
    if data.unit("years", message.word(index + 1)):
        return index + 1, amount
    return index, amount


def _toddler_size(message: _Message, data: Cues) -> Heard | None:
    """A toddler's size ("3T"): a hint at the age, weaker than an age said in numbers."""
    for index in range(len(message) - 1):
        if not message.plain[index].isdigit():
            continue
        pair = f"{message.plain[index]} {message.plain[index + 1]}"
        if pair in data.toddler_sizes and message.gap_after(index) == "":
            return message.heard(index, index + 1, "toddler", WORD_CUE)
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
    if before.endswith("s") and before[:-1] in data.pronouns:
        return _no_unit_after(message, index, data)  # "shes 9": she's, typed without the '
    if not data.unit("after_person", before) or back < 1:
        return False
    person = message.words[back - 1]
    if person.word not in data.pronouns and person.end not in person_ends:
        return False
    return _no_unit_after(message, index, data)


def _no_unit_after(message: _Message, index: int, data: Cues) -> bool:
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
                return message.heard(index, index, group, WORD_CUE)
    return None


def _age_words(message: _Message, data: Cues, taken: list[tuple[int, int]]) -> list[Heard]:
    """Age groups named by a word ("toddler", "teen", "kids"), unless the word is part of
    another value ("baby blue")."""
    found = []
    index = 0
    while index < len(message):
        width = _age_word_at(message, index, data)
        if width:
            group = data.age_words[message.phrase(index, width)]
            heard = message.heard(index, index + width - 1, group, WORD_CUE)
            taken_now = any(heard.start < b and a < heard.end for a, b in taken)
            if not taken_now and not _minded(message, index, data):
                found.append(heard)
        index += width or 1
    return found


def _minded(message: _Message, index: int, data: Cues) -> bool:
    """Are the children the age word at `index` names someone the shopper minds ("walking the
    kids to school", "I teach kindergarten", "herding my toddlers"), not who the item is for?
    A verb in -ing needs a word skipped between: "running kids shoes" are kids' shoes."""
    before = index - 1
    while before >= 0 and message.word(before) in data.minding_the and before > index - 3:
        before -= 1
    word = message.word(before) if before >= 0 else ""
    skipped = before < index - 1
    return word in data.minding or (skipped and (word in ("have", "has") or _verb_ing(word)))


def minded(text: str, start: int) -> bool:
    """Is the word at character `start` of `text` children the shopper minds ("walking the kids
    to school"), not who the item is for? (A department word: "kids", "toddler".)"""
    message = _Message(text)
    index = next((i for i, w in enumerate(message.words) if w.start <= start < w.end), -1)
    return index >= 0 and _minded(message, index, cues())


def _verb_ing(word: str) -> bool:
    return word.endswith("ing") and len(word) > 5 and word not in NOT_VERBS


NOT_VERBS = frozenset({"something", "anything", "nothing", "everything", "clothing", "matching"})


def _age_word_at(message: _Message, index: int, data: Cues) -> int:
    if message.plain[index] not in data.age_word_starts:
        return 0
    for width in range(min(data.longest_age_word, len(message) - index), 0, -1):
        if message.phrase(index, width) in data.age_words:
            return width
    return 0


def _unnamed_child(message: _Message, age: Heard, data: Cues) -> Heard | None:
    """ "my 8 year old", "our 9 month old": a child named by their age alone."""
    index = message.index_at(age.start)
    if age.cue != AGE or message.word(index - 1) not in data.possessives:
        return None
    in_months = any(data.unit("months", word) for word in words_of(age.text))
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
    """ "baby shower gift, it's a girl", "a baby boy": a baby's gender said as a department
    word, alone or in the baby department's own name."""
    for m in mentions:
        if m.facet != Facet.DEPARTMENT:
            continue
        said = [m.value] if m.value in _BABY_GENDERS else words_of(m.text)
        for value in filter(None, map(canonical_department, said)):
            if value in _BABY_GENDERS:
                return Heard(_BABY_GENDERS[value], m.text, m.start, m.end, WORD_CUE)
    return None


_BABY_GENDERS = {"girls": "female", "boys": "male"}


# -- the state ----------------------------------------------------------------------------------


def apply_audience(
    state: ShoppingState,
    reading: AudienceReading | None,
    level: Level,
    diff: StateDiff,
    change_of_mind: bool = False,
) -> None:
    """Keep who the item is for, and the department that follows, unless the shopper stated a
    department this turn or (for a guess) before, and has not changed their mind about who it
    is for ("actually, it's for my wife"). `level`: the turn's level for a statement."""
    if reading is None:
        return
    changed, new_person = _update_audience(state, reading, diff)
    if changed:
        wanted = department_for(state, cues())
        _apply_department(state, wanted, level, new_person and change_of_mind, diff)
        _note_childs_gender(state)


def _note_childs_gender(state: ShoppingState) -> None:
    """A baby's department names no gender ("baby"); the gender said of the child ("my 18
    month old daughter") goes with it, for the list to hold (rank/hard.py). A toddler's things
    are filed under the baby's department as often as under the girls' or boys' ("Toddler
    Girls' Dress" in Baby): either will do ("also"), with the child's gender."""
    toddler = state.audience.age_group is not None and state.audience.age_group.value == "toddler"
    gender = _gender_of(state.audience, cues())
    for constraint in state.active():
        if constraint.data.get("facet") != Facet.DEPARTMENT:
            continue
        data = {k: v for k, v in constraint.data.items() if k not in ("gender", "also")}
        if gender and constraint.value == "baby":
            data["gender"] = gender
        elif gender and toddler and constraint.value in ("girls", "boys"):
            data.update(also="baby", gender=gender)
        elif toddler and constraint.value == "kids":
            data["also"] = "baby"  # "my 2 year old": a toddler's things of either gender
        if data.get("also") == "baby" and _two_or_under(state.audience.age_group):
            data["first"] = "baby"  # baby clothes go up to 24 months: theirs first
        constraint.data = data


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
        # "a 9 year old girl", then "I said girl but it's for my son": the age said of no one
        # named is the child's still
        unnamed_age = audience.recipient is None and _said_age(audience.age_group)
        audience.recipient = _fact(said, turn)
        audience.gender = None  # a pronoun heard earlier was about someone else
        own_age = person.age_group if person else None
        if own_age:
            audience.age_group = AudienceFact(own_age, turn, said.text, RECIPIENT)
        elif not unnamed_age:
            audience.age_group = None
    if (age := reading.age_group) is not None and _replaces_age(audience.age_group, age):
        audience.age_group = _fact(age, turn)
    if reading.gender is not None and _gender_of(audience, data) is None:
        audience.gender = _fact(reading.gender, turn)
    after = (audience.recipient, audience.age_group, audience.gender)
    for name, old, new in zip(("recipient", "age_group", "gender"), before, after, strict=True):
        if new is not None and new != old:
            diff.audience[name] = new.value
    return before != after, new_person


def _said_age(fact: AudienceFact | None) -> bool:
    return fact is not None and fact.cue == AGE


def _fact(heard: Heard, turn: int) -> AudienceFact:
    return AudienceFact(heard.value, turn, heard.text, heard.cue)


def _replaces_age(old: AudienceFact | None, new: Heard) -> bool:
    """A number said before is not undone by an age word ("she's 3", then "size 9 toddler")."""
    return old is None or not (old.cue == AGE and new.cue == WORD_CUE)


def _gender_of(audience: Audience, data: Cues) -> str | None:
    if audience.recipient is not None:
        person = data.people.get(audience.recipient.value)
        if person is not None and person.gender is not None:
            return person.gender
    return audience.gender.value if audience.gender is not None else None


def department_for(state: ShoppingState, data: Cues) -> tuple[str, Level, str, bool] | None:
    """(department, level, the words, whether the age is assumed) for who the item is for, or
    None: an age group alone names no gender, and a person of unknown age and gender names no
    department."""
    audience = state.audience
    person = data.people.get(audience.recipient.value) if audience.recipient else None
    age_fact = audience.age_group
    stated_age = age_fact is not None and age_fact.cue in (AGE, WORD_CUE)
    if stated_age or person is None:
        age = age_fact.value if age_fact is not None else None
    else:
        age = person.assume_age
    gender = _gender_of(audience, data)
    if age == "toddler" and stated_age and age_fact is not None and _in_months(age_fact, data):
        age = "baby"  # "my 18 month old": baby clothes are sized in months
    found = data.departments[age][gender or "any"] if age is not None else None
    if found is None:
        return None
    department, level = found
    if not stated_age and person is not None:
        level = person.level
    if audience.gender is not None and audience.gender.cue == PRONOUN:
        # A pronoun is a guess; a child's age said is not ("my little one turns 2 ... for her":
        # never a woman's dress).
        level = level if stated_age and age in CHILD_AGES else Level.SOFT
    said = (audience.recipient, age_fact if stated_age else None)
    words = " ".join(dict.fromkeys(f.text for f in said if f is not None and f.text))
    return department, level, words, not stated_age and person is not None


CHILD_AGES = frozenset({"baby", "toddler", "kid"})
GROWN = {"boys": "men", "girls": "women"}  # a child's department and the grown-up's beside it


def _in_months(fact: AudienceFact, data: Cues) -> bool:
    return any(data.unit("months", word) for word in fact.text.lower().split())


BABY_YEARS = 2  # the baby departments' sizes go up to 24 months


def _two_or_under(fact: AudienceFact | None) -> bool:
    """An age said of two years or less ("my 2 year old", "she's two", "18 months")."""
    if fact is None or fact.cue != AGE:
        return False
    said = alpha2digit(fact.text.lower(), "en", threshold=0).split()
    numbers = [float(w) for w in said if w.replace(".", "", 1).isdigit()]
    most = BABY_YEARS * 12 if _in_months(fact, cues()) else BABY_YEARS
    return bool(numbers) and numbers[0] <= most


def _apply_department(
    state: ShoppingState,
    wanted: tuple[str, Level, str, bool] | None,
    turn_level: Level,
    someone_else: bool,
    diff: StateDiff,
) -> None:
    """`someone_else`: the shopper changed their mind about who the item is for."""
    current = [c for c in state.active() if c.data.get("facet") == Facet.DEPARTMENT]
    if wanted is None:
        if state.audience.recipient and state.audience.recipient.source_turn == state.turn:
            _retire([c for c in current if _guessed(c)], diff)  # guessed for someone else
        return
    value, level, words, assumed = wanted
    level = turn_level if level == Level.HARD else Level.SOFT
    if any(c.value == value for c in current):
        for constraint in current:
            if constraint.value == value and _guessed(constraint):
                constraint.level = level
        return
    stated = [c for c in current if not _guessed(c)]
    said_now = [c for c in stated if c.source_turn == state.turn]
    earlier = [] if someone_else else stated
    # A department the shopper names wins over who it is for, unless that only narrows it ("a
    # kids watch for my son": boys). Said in this very message, it wins over a statement too.
    if (said_now or level == Level.SOFT) and not all(
        _narrows(value, c.value) for c in (said_now or earlier)
    ):
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
        # "my son": boys, on an age assumed, which a person's list does not hold to
        data={
            "facet": Facet.DEPARTMENT,
            "from": "audience",
            **({"assumed": True} if assumed else {}),
        },
    )
    state.constraints.append(constraint)
    diff.added.append(constraint.described())


def _narrows(value: str, stated: str) -> bool:
    """Is `value` a narrower department than `stated` ("boys" of "kids", never "kids" of
    "girls")?"""
    return value != stated and accepted_departments(value) < accepted_departments(stated)


def _guessed(constraint: Constraint) -> bool:
    """Was the department read from who the item is for, not from a department word?"""
    return constraint.data.get("from") == "audience"


def _retire(constraints: list[Constraint], diff: StateDiff) -> None:
    for constraint in constraints:
        constraint.status = Status.REPLACED
        diff.replaced.append(constraint.described())
