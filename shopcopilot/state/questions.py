"""Questions about the products already shown: "how much is the first one?", "is #2 available
in blue?", "which is the cheapest?", "what's the difference between 1 and 2?".

A question is read, not applied: it changes no requirement (asking whether #1 comes in blue
is not asking for blue), and the list it asks about stays. The phrases are data
(data/questions.json); the pointers ("the first one", "#2") come from the critique reader.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from .critique import read_shown_talk, words_with_spans

DATA_FILE = Path(__file__).with_name("data") / "questions.json"
_RAW = json.loads(DATA_FILE.read_text(encoding="utf-8"))
FACT_PHRASES: dict[str, list[tuple[str, ...]]] = {
    fact: [tuple(p.split()) for p in phrases] for fact, phrases in _RAW["facts"].items()
}
OPENERS = frozenset(_RAW["openers"])
HAS_CUES = [tuple(p.split()) for p in _RAW["has_cues"]]
PRONOUNS = [tuple(p.split()) for p in _RAW["pronouns"]]
FILLER = frozenset(_RAW["filler"])
ASKING = frozenset(_RAW["asking"])
GENERIC = frozenset(_RAW["generic"])
INTERJECTIONS = frozenset(_RAW["interjections"])
FOLLOW_UP = frozenset(_RAW["follow_up"])
SHORT = 5  # words: "#1 rating", "cheapest", "price of #2" ask without a question's form
# Facts about the list as a whole: asked of every product shown unless some are named.
OF_THE_LIST = ("cheapest", "priciest", "best_rated")
OF_A_PAIR = ("cheaper", "pricier", "compare")
OF_ONE = ("price", "rating", "material", "sizes", "colors")  # what a bare "#1 rating" asks
LIST_AFTER = (["these"], ["those"], ["them"])  # "any of these", "which of them"
WHICH_ONES = (["which", "one"], ["which", "ones"])
LIST_OPENERS = frozenset({"which", "any", "do", "does", "are", "is"})  # "do any of these ..."


@dataclass(frozen=True, slots=True)
class Question:
    """`fact`: price | rating | material | sizes | colors | has | cheapest | priciest |
    best_rated | cheaper | pricier | compare. `positions`: 1-based places in the list shown
    (empty: the whole list); `values`: what a `has` question asks about ("blue", "size 10.5").
    `pronoun`: it points with "it"/"that one" at the product spoken of last."""

    fact: str
    positions: tuple[int, ...] = ()
    values: tuple[str, ...] = ()
    pronoun: bool = False
    text: str = ""
    every: bool = False  # "which of these are leather?", "any of them waterproof?": the list


def read_question(text: str) -> Question | None:
    """The question the message asks about shown products, if it asks one; after a remark of
    its own ("oh these are cute!! do any of them have a hood?"), the sentence asking it."""
    question = _read_question(text)
    if question is None and (asked := _asking_sentence(text)) != text:
        question = _read_question(asked)
    return question


def _asking_sentence(text: str) -> str:
    """The sentence that ends with the message's first question mark."""
    end = text.find("?")
    if end < 0:
        return text
    start = max(text.rfind(stop, 0, end) for stop in ".!")
    return text[start + 1 : end + 1].strip() if start >= 0 else text


def _read_question(text: str) -> Question | None:
    if "?" in text.rstrip()[:-1]:
        text = text[: text.index("?") + 1]  # "does #1 have pockets? she loves them": the question
    spans = words_with_spans(text)
    words = [w for w, _, _ in spans]
    if not words:
        return None
    talk = read_shown_talk(text)
    positions = _positions(talk, words)
    used = set()
    facts = []
    for name, phrases in FACT_PHRASES.items():
        for first, past in _find(words, phrases):
            facts.append((first, name))
            used |= set(range(first, past))
    # A short one asks too: "#1 rating", "price of #2", a bare "cheapest?"-less "cheapest".
    named = {f for _, f in facts}
    about_one = bool(positions) and bool(named & set(OF_ONE))
    # "between the first and second which is cheaper": a pair named and what is asked of it
    about_two = len(positions) >= 2 and bool(named & set(OF_A_PAIR))
    # "just tell me which one's cheapest": which of the list, however the message opens
    which_of_all = bool(named & set(OF_THE_LIST)) and bool(_find(words, WHICH))
    says_what = about_one or about_two or which_of_all or len(words) <= 2
    if not _asks(text, words, bool(facts) and says_what):
        return None  # "just get me the cheapest" picks; "which is the cheapest?" asks
    fact = _chosen(sorted(facts), positions, bool(_find(words, WHICH)))
    # "is it machine washable?": a pronoun points only in a short question that opens as one
    # ("and what's it made of?", "ty!! is it lined?": after an interjection).
    asked = _past_interjections(words)
    pronoun = not positions and asked[:1] != [] and asked[0] in OPENERS and len(asked) <= 8
    pronoun = pronoun and bool(_find(words, PRONOUNS))
    # "which of these are leather?", "which ones are waterproof?": asked of the whole list
    of_the_list = any(w == "of" and words[n + 1 : n + 2] in LIST_AFTER for n, w in enumerate(words))
    every = (
        not positions
        and asked[:1] != []
        and asked[0] in LIST_OPENERS
        and (of_the_list or asked[:2] in WHICH_ONES)
    )
    if fact is None:
        if len(positions) >= 2:
            return Question("compare", positions, (), False, text)  # "which is warmer, 1 or 2?"
        if not positions and not pronoun and not every:
            return None
        said_before = set(range(_question_clause(text, spans)))  # "the third one looks nice, "
        values = _asked_values(text, spans, used | _pointer_words(talk, spans) | said_before)
        values = tuple(v for v in values if not set(v.split()) <= GENERIC)  # "what about #3"
        if not values:
            return None
        return Question("has", positions, values, pronoun and not every, text, every)
    if fact in OF_THE_LIST or fact in OF_A_PAIR:
        return Question(fact, positions, (), False, text)
    if not positions and not pronoun:
        return None  # "what colors do you have?" asks the catalog, not a shown product
    return Question(fact, positions, (), pronoun, text)


def follow_up(text: str, before: Question | None) -> Question | None:
    """The question asked before, of other products: "and the first?", "what about #3?" after
    "how much is the second one?". Only a short message that points and says nothing else."""
    if before is None or before.fact not in (*OF_ONE, "has"):
        return None
    words = [w for w, _, _ in words_with_spans(text)]
    if not words or len(words) > SHORT:
        return None
    talk = read_shown_talk(text)
    positions = _positions(talk, words)
    if not positions:  # "and what sizes?" after "what colours does #2 come in?": of #2 too
        facts = {name for name, phrases in FACT_PHRASES.items() if _find(words, phrases)}
        if len(facts) == 1 and (fact := facts.pop()) in OF_ONE:
            return Question(fact, before.positions, (), before.pronoun, text)
        return None
    rest = set(range(len(words))) - _pointer_words(talk, words_with_spans(text))
    if any(words[i] not in FOLLOW_UP for i in rest):
        return None
    return Question(before.fact, positions, before.values, False, text)


def of_the_pair(question: Question, before: Question | None) -> Question:
    """A comparison naming no products ("so which of those two is cheaper") is of the ones the
    question before named ("what's the difference between 1 and 2")."""
    if question.fact not in OF_A_PAIR or len(question.positions) >= 2:
        return question
    if before is None or len(before.positions) < 2:
        return question
    return Question(question.fact, before.positions, (), False, question.text)


def _question_clause(text: str, spans: list[tuple[str, int, int]]) -> int:
    """The index of the first word of the first clause that opens as a question ("does it come
    in black?" of "the third one looks nice, does it come in black?"); 0 when none does."""
    for i, (word, start, _) in enumerate(spans):
        opens = i == 0 or any(c in text[spans[i - 1][2] : start] for c in ",.;!?")
        if opens and word in OPENERS:
            return i
    return 0


def _past_interjections(words: list[str]) -> list[str]:
    lead = next((n for n, w in enumerate(words) if w not in INTERJECTIONS), len(words))
    return words[lead:]


def _asks(text: str, words: list[str], names_a_fact: bool) -> bool:
    opening = next((w for w in words if w not in INTERJECTIONS), "")
    if text.rstrip().endswith("?") or opening in OPENERS:
        return True
    return names_a_fact and (len(words) <= SHORT or any(w in ASKING for w in words))


def _chosen(facts: list[tuple[int, str]], positions: tuple[int, ...], which: bool) -> str | None:
    """The fact asked: a comparison wins over a plain 'price' when two products are named;
    naming none, only a "which" asks one ("which of those two is cheaper?"), never "cheaper
    options?", which asks for cheaper products."""
    names = [fact for _, fact in facts]
    for fact in ("cheapest", "priciest", "best_rated"):
        if fact in names:
            return fact
    if len(positions) >= 2:
        for fact in ("cheaper", "pricier", "compare"):
            if fact in names:
                return fact
        if not names or names == ["price"]:
            return "compare" if not names else "price"
    if not positions and which:  # "which of those two is cheaper?": the pair spoken of last
        for fact in ("cheaper", "pricier"):
            if fact in names:
                return fact
    names = [n for n in names if n not in ("compare", "cheaper", "pricier")]
    return names[0] if names else None


WHICH: list[tuple[str, ...]] = [("which",), ("whichever",)]


def _positions(talk, words: list[str]) -> tuple[int, ...]:
    found = [p.ordinal for p in talk.pointers if p.kind == "ordinal" and p.ordinal > 0]
    # "the 12th one": past the ordinals the pointer reader knows, still a place in a list.
    found += [int(w[:-2]) for w in words if re.fullmatch(r"\d{1,3}(?:st|nd|rd|th)", w)]
    for pointer in talk.pointers:
        if pointer.kind == "ordinal" and pointer.count > 1 and pointer.ordinal > 0:
            found += range(pointer.ordinal + 1, pointer.ordinal + pointer.count)
    # "between 1 and 2", "1 or 3", "1 vs 2": bare small numbers beside a comparison.
    if any(_find(words, FACT_PHRASES[f]) for f in OF_A_PAIR):
        found += [int(w) for w in words if w.isdigit() and 1 <= int(w) <= 20]
    return tuple(dict.fromkeys(found))


def _pointer_words(talk, spans: list[tuple[str, int, int]]) -> set[int]:
    inside = set()
    for pointer in talk.pointers:
        inside |= {
            i for i, (_, s, e) in enumerate(spans) if s >= pointer.start and e <= pointer.end
        }
    return inside


def _asked_values(text: str, spans: list[tuple[str, int, int]], used: set[int]) -> tuple[str, ...]:
    """What a yes/no question asks about: its words left once the question's own are gone,
    split where the shopper lists ("in blue, size 10.5" -> blue, size 10.5)."""
    words = [w for w, _, _ in spans]
    skip = set(used)
    for first, past in _find(words, HAS_CUES + PRONOUNS):
        skip |= set(range(first, past))
    values: list[list[str]] = []
    current: list[str] = []
    for i, (word, start, _) in enumerate(spans):
        breaks = i and re.search(r"[,;/?.!]|\band\b|\bor\b", text[spans[i - 1][2] : start].lower())
        if breaks or word in ("and", "or"):
            values.append(current)
            current = []
        if i in skip or word in FILLER or word in OPENERS:
            if current and word not in ("and", "or"):
                values.append(current)
                current = []
            continue
        current.append(word)
    values.append(current)
    return tuple(" ".join(v) for v in values if v)


def _find(words: list[str], phrases: list[tuple[str, ...]]) -> list[tuple[int, int]]:
    out = []
    for i in range(len(words)):
        for phrase in phrases:
            if tuple(words[i : i + len(phrase)]) == phrase:
                out.append((i, i + len(phrase)))
    return out
