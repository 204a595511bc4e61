"""Budgets versus measures: "under $40" is money, "up to 30 mm wide" is not.

A number is money only when something says so: a currency next to it ("$40", "40 quid",
"€40"), a budget cue ("under 40", "50 max"), a money word in the same clause ("spend"),
or the agent having just asked about budget. A number is never money when the words
around it make it a size ("size 10", "mens 12 wide", "32x30"), an age ("my 8 year old"),
a quantity ("pack of 3"), a measure ("18 inch", "40mm"), a karat ("14k gold") or a shown
product ("the $13 one").

Numbers in words ("forty bucks", "a hundred and twenty") become digits with text2num;
amounts with separators ("$1,299.99", "1.299,00 €") are read by price-parser. The cue
words and currencies live in data/money.json; here is only the clause structure.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from price_parser import Price
from text_to_num import alpha2digit

from ..catalog.vocabulary import Mention, canonical_size, vocabulary
from ..terms import Facet

DATA_PATH = Path(__file__).with_name("data") / "money.json"

# A budget that only leans low ("cheap sunglasses"): its value, no limit said (state/update.py).
LOW_PRICE = "low price"


class MoneyDataError(ValueError):
    """data/money.json is malformed; the message names the entry."""


@dataclass(frozen=True, slots=True)
class Budget:
    min_price: float | None = None
    max_price: float | None = None
    target: float | None = None
    text: str = ""
    currency: str = "USD"  # ISO code of the currency the shopper named

    def describe(self) -> str:
        """ "<= $40"; another currency is shown as said and as it is applied: the catalog is
        priced in dollars and there are no exchange rates offline, so £30 is compared as $30."""
        said = self._bounds(_MONEY.signs.get(self.currency, "$"))
        if self.currency == _MONEY.default:
            return said
        return f"{said} (compared as {self._bounds(_MONEY.signs[_MONEY.default])})"

    def _bounds(self, sign: str) -> str:
        if self.min_price is not None and self.max_price is not None:
            return f"{sign}{self.min_price:g}-{sign}{self.max_price:g}"
        if self.max_price is not None:
            return f"<= {sign}{self.max_price:g}"
        if self.min_price is not None:
            return f">= {sign}{self.min_price:g}"
        return f"~{sign}{self.target:g}" if self.target is not None else "any"


# -- the data file, compiled -----------------------------------------------------------------

# A word (with inner apostrophes: "don't", "i'm") or one sign ("$", "~", "-", "#").
_TOKEN = re.compile(r"[^\W_]+(?:'[^\W_]+)*|[^\s\w]|_")
_FILLERS = frozenset({":", "=", "a", "an", "the"})  # "budget: 40", "under a 100", "the $50 mark"


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.lower().replace("’", "'"))


class _Phrases:
    """A list of phrases from the data file, matched word by word against the words right before
    or right after a number (a set lookup per phrase length, not a regex scan)."""

    def __init__(self, phrases: Iterable[str]) -> None:
        self.phrases = frozenset(tuple(_tokens(p)) for p in phrases)
        self._lengths = sorted({len(p) for p in self.phrases}, reverse=True)

    def ends(self, words: list[str]) -> bool:
        """Do the words end with one of the phrases, or with one and filler words after it?"""
        return self.ending_at(words) >= 0

    def ends_exactly(self, words: list[str]) -> bool:
        """Do the words end with one of the phrases (no filler after it)?"""
        return any(tuple(words[-n:]) in self.phrases for n in self._lengths if n <= len(words))

    def starts(self, words: list[str]) -> bool:
        return any(tuple(words[:n]) in self.phrases for n in self._lengths if n <= len(words))

    def ending_at(self, words: list[str]) -> int:
        """Where the phrase that ends the words (fillers after it allowed) starts; -1: none."""
        while words:
            for n in self._lengths:
                if n <= len(words) and tuple(words[-n:]) in self.phrases:
                    return len(words) - n
            if words[-1] not in _FILLERS:
                return -1
            words = words[:-1]
        return -1


def _phrase(text: str) -> str:
    """A currency word or sign as a pattern, at word edges."""
    body = r"\s+".join(re.escape(word) for word in text.split())
    start = r"(?<![\w'])" if text[0].isalnum() else ""
    end = r"(?!\w)" if text[-1].isalnum() else ""
    return f"{start}(?:{body}){end}"


def _alternation(phrases: Iterable[str]) -> str:
    return "|".join(_phrase(p) for p in sorted(set(phrases), key=len, reverse=True))


@dataclass(frozen=True, slots=True)
class _Cue:
    kind: str  # max / min / around / budget (a budget word that says no bound)
    strength: int  # 2: makes a bare number money ("under 40"); 1: needs a money context
    phrases: _Phrases


@dataclass(frozen=True, slots=True)
class _Money:
    default: str
    signs: Mapping[str, str]  # currency -> its sign
    currency_of: Mapping[str, str]  # a currency word or sign, lower case -> currency
    amount: re.Pattern[str]  # one amount: "$1,299.99", "40 bucks", "2k", "60ish"
    amount_words: re.Pattern[str]  # "a grand", "a fiver"
    amount_values: Mapping[str, tuple[float, str]]  # "fiver" -> (5, "GBP")
    amount_counts: Mapping[str, float]  # "a couple" -> 2, as in "a couple grand"
    money_words: frozenset[str]
    before: tuple[_Cue, ...]  # in order of precedence
    after: tuple[_Cue, ...]
    negators: frozenset[str]
    negator_suffixes: tuple[str, ...]
    over: _Phrases
    range_before: _Phrases
    joiners: _Phrases
    joiners_needing_money: _Phrases
    not_money_before: _Phrases
    not_money_after: _Phrases
    reference_after: _Phrases
    karat_after: _Phrases
    sizing_after: _Phrases
    ages_before_cue: frozenset[str]
    age_cues: frozenset[str]
    size_before: _Phrases
    size_after: _Phrases
    range_size_after: tuple[str, ...]


def load_money(path: Path) -> _Money:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise MoneyDataError(f"{path}: cannot read: {error}") from error
    try:
        return _compile(raw)
    except (KeyError, TypeError, ValueError, re.error) as error:
        raise MoneyDataError(f"{path}: {error!r}") from error


def _words(table: Mapping[str, Any], key: str) -> list[str]:
    words = table[key]
    if not isinstance(words, list) or not all(isinstance(w, str) and _tokens(w) for w in words):
        raise TypeError(f"{key!r} must be a list of phrases")
    if any(w != w.lower() for w in words):
        raise ValueError(f"{key!r}: phrases are lower case")
    return words


def _single_words(table: Mapping[str, Any], key: str) -> frozenset[str]:
    words = _words(table, key)
    if any(len(_tokens(w)) != 1 for w in words):
        raise ValueError(
            f"{key!r}: one word each, not {next(w for w in words if len(_tokens(w)) != 1)!r}"
        )
    return frozenset(words)


def _compile(raw: Mapping[str, Any]) -> _Money:
    currencies, cues, never = raw["currencies"], raw["cues"], raw["not_money"]
    default = raw["default_currency"]
    if default not in currencies:
        raise ValueError(f"default_currency {default!r} is not a listed currency")
    before = {w: code for code, c in currencies.items() for w in _words(c, "before")}
    after = {w: code for code, c in currencies.items() for w in _words(c, "after")}
    amount_values = {
        word: (float(entry["value"]), str(entry.get("currency", "")))
        for word, entry in raw["amount_words"].items()
    }
    counts = {" ".join(_tokens(w)): float(n) for w, n in raw["amount_counts"].items()}
    # Units of measure from the shared vocabulary, less those that are also money ("pounds").
    units = [u for u in vocabulary().unit_by_term if u not in after and _tokens(u)]
    words_of_money = {w for w in [*after, *before] if len(_tokens(w)) == 1}

    def phrases(table: Mapping[str, Any], key: str) -> _Phrases:
        return _Phrases(_words(table, key))

    return _Money(
        default=default,
        signs={code: c["sign"] for code, c in currencies.items()},
        currency_of={**before, **after},
        amount=_amount_pattern(before, after),
        amount_words=re.compile(
            rf"(?:(?P<count>\d+(?:\.\d+)?|{_alternation(counts)})\s*)?"
            rf"(?<![\w'])(?P<word>{'|'.join(map(re.escape, amount_values))})s?(?![\w'])",
            re.I,
        ),
        amount_values=amount_values,
        amount_counts=counts,
        money_words=_single_words(raw, "money_words") | words_of_money,
        before=_cues(cues, _BEFORE),
        after=_cues(cues, _AFTER),
        negators=_single_words(cues, "negators"),
        negator_suffixes=tuple(_words(cues, "negator_suffixes")),
        over=phrases(cues, "over"),
        range_before=phrases(cues, "range_before"),
        joiners=phrases(cues, "range_joiners"),
        joiners_needing_money=phrases(cues, "range_needs_money"),
        not_money_before=phrases(never, "before"),
        not_money_after=_Phrases([*_words(never, "after"), *units]),
        reference_after=phrases(never, "reference_after"),
        karat_after=phrases(never, "karat_after"),
        sizing_after=phrases(never, "sizing_after"),
        ages_before_cue=_single_words(never, "ages_before_cue"),
        age_cues=_single_words(never, "age_cues"),
        size_before=phrases(raw["sizes"], "before"),
        size_after=phrases(raw["sizes"], "after"),
        range_size_after=tuple(_words(raw["sizes"], "range_after")),
    )


# (kind, strength, list in the data file), in order of precedence: the first that matches wins.
_BEFORE = (
    ("max", 2, "max_strong_before"),
    ("around", 1, "around_before"),
    ("min", 1, "min_before"),
    ("max", 1, "max_before"),
    ("budget", 1, "budget_before"),
)
_AFTER = (
    ("max", 2, "max_after"),
    ("around", 2, "around_strong_after"),
    ("around", 1, "around_after"),
    ("min", 1, "min_after"),
)


def _cues(table: Mapping[str, Any], order: tuple[tuple[str, int, str], ...]) -> tuple[_Cue, ...]:
    return tuple(
        _Cue(kind, strength, _Phrases(_words(table, key))) for kind, strength, key in order
    )


def _amount_pattern(before: Mapping[str, str], after: Mapping[str, str]) -> re.Pattern[str]:
    """One amount: an optional currency, a number (with separators, "k" for thousands, "-ish"),
    an optional currency after; never a piece of a word, a model number or a size ("2xl",
    "36x32", "f91w", "#3")."""
    return re.compile(
        rf"""(?<![\w.,#/])
        (?:(?P<pre>{_alternation(before)})\s?)?
        (?P<num>\d{{1,3}}(?:[,.]\d{{3}})+(?:[.,]\d{{1,2}})?|\d+(?:\.\d+|,\d{{2}}(?!\d))?)
        (?P<k>k)?
        (?P<ish>\s?-?\s?ish)?
        (?:\s?(?P<post>{_alternation(after)}))?
        (?![^\W_]|[.,]\d)""",
        re.I | re.X,
    )


_MONEY = load_money(DATA_PATH)


# -- reading a message ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Amount:
    value: float
    currency: str | None  # None: no currency said next to it
    start: int
    end: int
    ish: bool
    thousands: bool
    before: list[str]  # the words right before it, lower case
    after: list[str]  # the words right after it
    number: str  # the digits as written ("10.5")


@dataclass(frozen=True, slots=True)
class _Reading:
    """One way the message states money, with how sure we are that it is money."""

    score: int
    position: int
    budget: Budget


@dataclass(frozen=True, slots=True)
class Numbers:
    """What the numbers in a message are: the budget, and the sizes ("womens 9", "10.5 wide")
    that must never be read as money (their spans index the message)."""

    budget: Budget | None = None
    sizes: tuple[Mention, ...] = ()


# Numbers in words, as a budget is said ("forty bucks", "a hundred and twenty").
NUMBER_WORDS = frozenset(_single_words(json.loads(DATA_PATH.read_text("utf-8")), "number_words"))

_LONGEST_CUE = 5  # words in a budget cue ("no more than", "stretch it to")

# What a shopper means by "around $100": within this factor of it either way ($74 to $135).
AROUND = 1.35


def around(target: float | None) -> tuple[float, float] | None:
    """The price band of a goal ("around $100"), None without one."""
    return None if target is None else (target / AROUND, target * AROUND)


def cues_an_amount(text: str) -> bool:
    """Does the text start with a budget cue said right before an amount ("stretch it to 55",
    "cap it at sixty")? Its words then ask nothing of the product."""
    words = _tokens(text)
    for n, word in enumerate(words[: _LONGEST_CUE + 1]):
        if word[0].isdigit() or word in NUMBER_WORDS or word in _MONEY.currency_of:
            return n > 0 and any(tuple(words[:n]) in c.phrases.phrases for c in _MONEY.before)
    return False


def money_talk() -> frozenset[str]:
    """Every word that speaks of money: currencies, money words and the budget cues' words
    ("under", "less", "bucks")."""
    cue_words = {
        word
        for cue in (*_MONEY.before, *_MONEY.after)
        for phrase in cue.phrases.phrases
        for word in phrase
    }
    return _MONEY.money_words | frozenset(_MONEY.currency_of) | frozenset(cue_words)


def read_numbers(text: str, asked: str | None = None, protected: tuple[str, ...] = ()) -> Numbers:
    """The budget and the sizes stated in `text`; `asked`: the attribute the agent just asked
    about; `protected` spans (category names such as "Under $30") are ignored."""
    readings: list[_Reading] = []
    sizes: list[Mention] = []
    offset = 0
    # Sentence ends, but not the point inside "29.99".
    for clause in re.split(r"(?<!\d)\.|\.(?!\d)|[;!?\n]", _mask(text, protected)):
        found, sized = _clause_readings(clause, asked, offset)
        readings += found
        sizes += sized
        offset += len(clause) + 1
    sizes += garment_sizes(text)
    if not readings:
        return Numbers(None, tuple(sizes))
    best = max(readings, key=lambda r: (r.score, -r.position))
    return Numbers(_with_other_bound(best.budget, readings), tuple(sizes))


# Sizes written with letters, which no shoe or waist number is: toddler "2T", baby "0-3 months"
# or "18m" (not "a 6 month old": an age), bra "34B" / "36DD" (even bands 28 to 48).
_GARMENT_SIZE = re.compile(
    r"\b(?:(?P<t>[2-6])t|(?P<m>\d{1,2}(?:\s?(?:-|to)\s?\d{1,2})?)(?:m|\s?mos?|\s?months?)"
    r"(?!\s*old)|(?P<band>[234]\d)(?P<cup>[a-h]|dd|ddd))\b",
    re.IGNORECASE,
)


# A capital S, M or L standing alone is a letter size ("S or M", "M please"); lower case they
# are too often something else ("m" for metres, a stray "s").
_LETTER_SIZE = re.compile(r"(?<![\w'’&.-])(?P<letter>[SML])(?![\w'’&-])")
# A shoe size with its width glued on: "8W", "7.5N", "10WW" (in the shoe range: "32W" is a waist).
_SHOE_WIDTH = re.compile(r"\b(?P<size>\d{1,2}(?:\.5)?)(?P<width>ww|xw|w|n)\b", re.IGNORECASE)
_WIDTHS = {"w": "wide", "n": "narrow", "ww": "extra wide", "xw": "extra wide"}
# Kids' sizes sold as a range: "size 7-8", "7-8 toddler", "10-12 years" (not "girls 7-16", the
# range a department spans).
_SIZE_RANGE = re.compile(
    r"\b(?:size\s+(?P<a>\d{1,2}\s?-\s?\d{1,2})\b"
    rf"|(?P<b>\d{{1,2}}-\d{{1,2}})(?=\s+(?:{_alternation(_MONEY.range_size_after)})\b))",
    re.IGNORECASE,
)


def garment_sizes(text: str) -> list[Mention]:
    """Toddler, baby and bra sizes in `text`, in the catalog's forms ("2T", "6 months", "34B"),
    letter sizes written as one capital ("S or M") and shoe sizes with a width ("8W")."""
    found = [
        Mention(Facet.SIZE, m["letter"], m.start(), m.end(), m.group())
        for m in _LETTER_SIZE.finditer(text)
    ]
    for m in _SIZE_RANGE.finditer(text):
        group = "a" if m["a"] else "b"
        size = re.sub(r"\s", "", m[group])
        start = m.start() if group == "a" else m.start(group)  # with "size", which it reads
        found.append(Mention(Facet.SIZE, size, start, m.end(group), text[start : m.end(group)]))
    low, high = vocabulary().shoe_size_range
    for m in _SHOE_WIDTH.finditer(text):
        if not low <= float(m["size"]) <= high:
            continue  # "32w 30l": a waist, not a shoe
        found.append(Mention(Facet.SIZE, m["size"], m.start(), m.start("width"), m["size"]))
        found.append(
            Mention(Facet.WIDTH, _WIDTHS[m["width"].lower()], m.start("width"), m.end(), m["width"])
        )
    for said in _GARMENT_SIZE.finditer(text):
        if said["t"]:
            size = f"{said['t']}T"
        elif said["m"]:
            size = re.sub(r"\s?(?:-|to)\s?", "-", said["m"]) + " months"
        elif 28 <= int(said["band"]) <= 48 and int(said["band"]) % 2 == 0:
            size = said["band"] + said["cup"].upper()
        else:
            continue
        found.append(Mention(Facet.SIZE, size, said.start(), said.end(), said.group()))
    return found


def parse_budget(
    text: str, expecting_budget: bool = False, protected: tuple[str, ...] = ()
) -> Budget | None:
    """The budget stated in `text`, if any."""
    return read_numbers(text, "budget" if expecting_budget else None, protected).budget


def _mask(text: str, protected: tuple[str, ...]) -> str:
    for phrase in protected:
        text = re.sub(re.escape(phrase), lambda m: " " * len(m.group()), text, flags=re.I)
    return text


def _digits(clause: str) -> str:
    """Numbers in words as digits ("forty-five bucks" -> "45 bucks", "a fiver" -> "5 gbp")."""
    clause = alpha2digit(clause.replace("-ish", " ish"), "en")
    lowered = clause.lower()
    if any(word in lowered for word in _MONEY.amount_values):
        clause = _MONEY.amount_words.sub(_amount_word, clause)
    return clause


def _amount_word(match: re.Match[str]) -> str:
    """A word that is an amount: "a fiver" is money by itself; "a grand" only with a cue, like a
    bare number ("under a grand"; "a grand entrance" is none)."""
    value, currency = _MONEY.amount_values[match.group("word").lower()]
    said = " ".join(_tokens(match.group("count") or "a"))
    count = _MONEY.amount_counts.get(said) or float(said)
    return f"{count * value:g} {currency.lower()}".strip()


def _clause_readings(
    original: str, asked: str | None, offset: int
) -> tuple[list[_Reading], list[Mention]]:
    clause = _digits(original)
    if not _DIGIT.search(clause):
        return [], []
    words = {t.removesuffix("'s") for t in _tokens(clause)}  # "budget's about 150"
    money_clause = asked == "budget" or not _MONEY.money_words.isdisjoint(words)
    amounts = [a for m in _MONEY.amount.finditer(clause) if (a := _amount(m, clause)) is not None]
    readings, in_range = [], set()
    text = original.strip()
    for low, high in zip(amounts, amounts[1:], strict=False):
        ranged = _range(clause, low, high, money_clause, text)
        if ranged:
            readings.append(replace(ranged, position=offset + low.start))
            in_range |= {low.start, high.start}
    sizes = []
    for amount in amounts:
        if amount.start in in_range:
            continue
        single = _single(amount, money_clause, text)
        if single:
            readings.append(replace(single, position=offset + amount.start))
        elif size := _size(amount, asked):
            sizes += _size_mention(original, amount.number, size, offset)
    return readings, sizes


def _after(amount: _Amount) -> list[str]:
    """The words after a number, past a hyphen ("40-year-old", "4-pack")."""
    return amount.after[1:] if amount.after[:1] == ["-"] else amount.after


def _size(amount: _Amount, asked: str | None) -> str | None:
    """The shoe or waist size a number that is not money names, if its words say it is one:
    "womens 9", "he's a 9.5", "10.5 wide", "36 waist", a half size ("mens running shoes 10.5"),
    or any number in answer to a size question. One end of a range ("girls 7-16") is none."""
    size = canonical_size(amount.number)
    if size is None or amount.thousands or amount.ish or _ranged(amount):
        return None
    after = _after(amount)
    if amount.currency:  # "a 38 euro size": the currency word names the sizing
        return size if _MONEY.sizing_after.starts(after) else None
    if _MONEY.size_after.starts(after):
        return size
    if _MONEY.not_money_after.starts(after):
        return None  # "9 years old", "3-pack"
    said = (
        asked == "size"
        or _MONEY.size_before.ends_exactly(amount.before)
        or amount.number.endswith(".5")
    )
    return size if said else None


def _ranged(amount: _Amount) -> bool:
    before, after = amount.before, amount.after
    return (
        len(before) >= 2 and before[-2][0].isdigit() and _MONEY.joiners.starts(before[-1:])
    ) or (len(after) >= 2 and after[1][0].isdigit() and _MONEY.joiners.starts(after[:1]))


def _size_mention(original: str, number: str, size: str, offset: int) -> list[Mention]:
    """The size as a mention with its span in the message (numbers in words were turned into
    digits before reading, so the digits are looked up in the clause as written)."""
    found = re.search(rf"(?<![\w.,]){re.escape(number)}(?![\w]|[.,]\d)", original)
    if found is None:
        return []
    start, end = offset + found.start(), offset + found.end()
    return [Mention(Facet.SIZE, size, start, end, found.group())]


def _number(text: str) -> float | None:
    """ "49.99" as is; separators ("1,299.99", "1.299,00", "49,99") as price-parser reads them."""
    if _PLAIN_NUMBER.fullmatch(text):
        return float(text)
    return Price.fromstring(text).amount_float


_DIGIT = re.compile(r"\d")
_PLAIN_NUMBER = re.compile(r"\d+(?:\.\d{1,2}|\.\d{4,})?")
_AROUND_WORDS = 8  # cues and contexts are read from this many words either side of a number


def _amount(match: re.Match[str], clause: str) -> _Amount | None:
    parsed = _number(match.group("num"))
    if parsed is None:
        return None
    currency = next((_MONEY.currency_of[g.lower()] for g in match.group("pre", "post") if g), None)
    thousands = bool(match.group("k"))
    return _Amount(
        value=parsed * 1000 if thousands else parsed,
        currency=currency,
        start=match.start(),
        end=match.end(),
        ish=bool(match.group("ish")),
        thousands=thousands,
        before=_tokens(clause[max(0, match.start() - 64) : match.start()])[-_AROUND_WORDS:],
        after=_tokens(clause[match.end() : match.end() + 64])[:_AROUND_WORDS],
        number=match.group("num"),
    )


def _not_money(amount: _Amount) -> bool:
    """Is the number a size, an age, a quantity, a measure, a karat or a shown product?"""
    after = _after(amount)
    if _MONEY.reference_after.starts(after):
        return True  # "the $13 one": a product the shopper saw, not a budget
    if amount.thousands and _MONEY.karat_after.starts(after):
        return True  # "14k gold"
    if _MONEY.sizing_after.starts(after):
        return True  # "a 38 euro size"
    if amount.currency:
        return False
    if amount.before[-2:] and _is_age_limit(amount.before[-2:]):
        return True  # "kids under 5" are young, not cheap
    before = amount.before
    if len(before) >= 2 and before[-2].isdigit() and _MONEY.joiners.starts(before[-1:]):
        before = before[:-2]  # "size 7-8", "US 4-6": the second number has the first one's words
    if _in_as_a_word(after):
        return _MONEY.not_money_before.ends(before)
    return _MONEY.not_money_before.ends(before) or _MONEY.not_money_after.starts(after)


def _in_as_a_word(after: list[str]) -> bool:
    """ "under 60 in black": "in" leads a phrase there, it is no inch ("a 4 in heel", "28 in")."""
    return after[:1] == ["in"] and len(after) > 1 and after[1] in _after_in()


@functools.cache
def _after_in() -> frozenset[str]:
    """Words after which "in" is the preposition: an article, "size", a colour or a size of the
    vocabulary ("in black", "in a medium", "in size 9")."""
    from ..catalog.vocabulary import vocabulary  # local: the vocabulary loads once, when needed

    tables = vocabulary().tables
    words = {"a", "an", "the", "size", "my"}
    for table in (Facet.COLOR, Facet.SIZE):
        for canonical, terms in tables.get(table, {}).items():
            words.update(t for t in (canonical, *terms) if " " not in t)
    return frozenset(words)


def _is_age_limit(words: list[str]) -> bool:
    return words[0] in _MONEY.ages_before_cue and words[-1] in _MONEY.age_cues


def _cue(amount: _Amount) -> tuple[str | None, int]:
    """(kind, strength) of the cues around a number: kind max / min / around / budget (a budget
    word that says no bound); strength 2 when the cue alone makes a number money ("under 40"),
    1 when it needs a money context ("at least 40" in "spend at least 40")."""
    before, after = amount.before, ["ish"] if amount.ish else amount.after
    said = (
        ("max", 2)  # "I'd rather not spend more than 40", not "more than 40"
        if _negated_over(before) or _capped_around(before)
        else next(((c.kind, c.strength) for c in _MONEY.before if c.phrases.ends(before)), None)
    )
    said_after = next(((c.kind, c.strength) for c in _MONEY.after if c.phrases.starts(after)), None)
    kind_before, strength_before = said or (None, 0)
    kind_after, strength_after = said_after or (None, 0)
    kind = kind_before if kind_before not in (None, "budget") else kind_after or kind_before
    if kind == "around" and kind_after == "max":
        kind = "max"  # "like thirty max": the cap is the point, the hedge only rounds it
    return kind, max(strength_before, strength_after)


def _capped_around(before: list[str]) -> bool:
    """ "stretch it to around 65", "up to about 50": a hedged amount that is still a ceiling."""
    around = next((c for c in _MONEY.before if c.kind == "around"), None)
    at = around.phrases.ending_at(before) if around else -1
    if at <= 0:
        return False
    rest = before[:at]
    return any(c.kind == "max" and c.strength == 2 and c.phrases.ends(rest) for c in _MONEY.before)


def _negated_over(before: list[str]) -> bool:
    """ "not more than", "don't want to pay more than", "can't go over": a negator, up to three
    words, then "more than" / "over"."""
    at = _MONEY.over.ending_at(before)
    if at < 0:
        return False
    return any(
        word in _MONEY.negators or word.endswith(_MONEY.negator_suffixes)
        for word in before[max(0, at - 4) : at]
    )


def _single(amount: _Amount, money_clause: bool, text: str) -> _Reading | None:
    if _not_money(amount):
        return None
    kind, strength = _cue(amount)
    explicit = amount.currency is not None
    if not (explicit or strength == 2 or money_clause):
        return None
    currency = amount.currency or _MONEY.default
    value = amount.value
    if kind in ("max", "budget"):
        budget = Budget(max_price=value, text=text, currency=currency)
    elif kind == "min":
        budget = Budget(min_price=value, text=text, currency=currency)
    else:  # a bare price is a target: "leather belt €40"
        budget = Budget(target=value, text=text, currency=currency)
    score = 2 * explicit + strength + (kind not in (None, "budget"))
    return _Reading(score, 0, budget)


def _range(
    clause: str, low: _Amount, high: _Amount, money_clause: bool, text: str
) -> _Reading | None:
    """ "between 50 and 80", "£30-40", "50 to 80 bucks": two amounts joined."""
    joined = _tokens(clause[low.end : high.start])
    if not (_MONEY.joiners.starts(joined) and _MONEY.joiners.ends(joined)):
        return None
    if not 0 < low.value < high.value or _not_money(low) or _not_money(high):
        return None
    explicit = bool(low.currency or high.currency)
    cued = _MONEY.range_before.ends(low.before)
    if _MONEY.joiners_needing_money.starts(joined) and not (explicit or cued or money_clause):
        return None  # "2 and 3" is no price range by itself
    currency = low.currency or high.currency or _MONEY.default
    budget = Budget(min_price=low.value, max_price=high.value, text=text, currency=currency)
    return _Reading(2 * explicit + 1 + cued + money_clause, 0, budget)


def _with_other_bound(budget: Budget, readings: list[_Reading]) -> Budget:
    """ "at least 40 but no more than 60": a lower and an upper bound said apart make a range."""
    low, high = budget.min_price, budget.max_price
    if budget.target is not None or (low is None) == (high is None):
        return budget
    for reading in readings:
        other = reading.budget
        other_low, other_high = other.min_price, other.max_price
        if high is not None and other_high is None and other_low is not None and other_low < high:
            return replace(budget, min_price=other_low)
        if low is not None and other_low is None and other_high is not None and other_high > low:
            return replace(budget, max_price=other_high)
    return budget
