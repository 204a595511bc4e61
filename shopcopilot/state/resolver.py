"""The optional model resolver: where the rules are unsure of a message, a language model is asked
for the same typed observations the rules produce, and what it says fills only what they left
empty.

Pure, like the rest of the state stage: the model is reached through an `Ask` callable that the
agent hands over (shopcopilot/llm.py makes one from the environment). Four measurable signals
say the rules are unsure (`unsure`); on any other turn no model is asked. Rules win on
conflict: a facet, a budget, an item or a critique the rules read is never overridden, and any
failure (an error, a timeout, output that is not JSON or not of the schema) leaves the rules'
reading as it was.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    WithJsonSchema,
    field_validator,
    model_validator,
)

from ..catalog.vocabulary import Mention
from ..terms import Attribute, Facet
from .budget import Budget
from .critique import CUES, KINDS, Critique, Pointer, Reading, Shown
from .cues import CONVERSATION
from .lexicon import Lexicon
from .model import ShoppingState
from .parse import Observation, content_word
from .readings import WORD, overlaps, typed_spans
from .update import SINGLE_VALUED, read_critiques

# -- the answer's schema: the typed part of `Observation`, as JSON ------------------------------

CritiqueKind = Literal[KINDS]  # type: ignore[valid-type]  # the kinds tuple, spelt once


_VALUE_FACETS = [f.value for f in Facet if f is not Facet.BUDGET]  # a budget has its own field


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ValueAnswer(_Strict):
    """A value the message names (Observation.values / .negated hold them as `Mention`s)."""

    facet: Annotated[Facet, WithJsonSchema({"type": "string", "enum": _VALUE_FACETS})]
    value: str = Field(min_length=1, max_length=80)

    @field_validator("facet")
    @classmethod
    def _not_budget(cls, facet: Facet) -> Facet:
        if facet is Facet.BUDGET:
            raise ValueError("a budget is said in `budget`, not as a value")
        return facet


class BudgetAnswer(_Strict):
    """Observation.budget: bounds in the shopper's currency, `target` for "around $50"."""

    min_price: float | None = Field(default=None, ge=0)
    max_price: float | None = Field(default=None, ge=0)
    target: float | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _bounds(self) -> BudgetAnswer:
        if self.min_price is None and self.max_price is None and self.target is None:
            raise ValueError("a budget needs min_price, max_price or target")
        low, high = self.min_price, self.max_price
        if low is not None and high is not None and low > high:
            raise ValueError("min_price is above max_price")
        return self


class CritiqueAnswer(_Strict):
    """What the message says of the products shown last, by position (1 = first shown)."""

    kind: CritiqueKind
    positions: list[int] = Field(min_length=1, max_length=10)


class ObservationAnswer(_Strict):
    """The model's reading of one message: the fields of `Observation` the rules type."""

    category_text: str | None = Field(default=None, max_length=80)
    values: list[ValueAnswer] = Field(default_factory=list, max_length=10)
    negated: list[ValueAnswer] = Field(default_factory=list, max_length=10)
    budget: BudgetAnswer | None = None
    no_preference: list[Attribute] = Field(default_factory=list, max_length=10)
    critiques: list[CritiqueAnswer] = Field(default_factory=list, max_length=10)


def _untitled(schema: Any) -> Any:
    """The schema without pydantic's generated titles: they repeat the names and cost tokens."""
    if isinstance(schema, dict):
        return {
            k: _untitled(v) for k, v in schema.items() if not (k == "title" and isinstance(v, str))
        }
    if isinstance(schema, list):
        return [_untitled(v) for v in schema]
    return schema


SCHEMA: dict[str, Any] = _untitled(ObservationAnswer.model_json_schema())


# -- when to ask: the rules' own signs of doubt --------------------------------------------------

REASONS = ("reference", "comparison", "conflict", "unread")
# "unread": at least this many content words, and this share of them, that no typed observation
# covers (tuned on the understanding corpus's dev split; docs/llm.md).
UNREAD_WORDS = 2
UNREAD_SHARE = 0.5
_COMPARISON = re.compile(CONVERSATION.pattern("comparisons"), re.I)
_REFERRING = frozenset({"ordinal", "this", "other"})


def unsure(obs: Observation, shown: Sequence[Shown], reading: Reading) -> list[str]:
    """Why the rules are unsure of this message (empty: they are sure, nobody is asked).

    reference: a pointer at the products shown ("the 7th one", "the danish one") that points at
    none, or a critique of products the rules could not tell; comparison: the message compares
    products; conflict: two values of a one-value facet (two sizes, two brands) in one breath;
    unread: most content words are covered by no typed observation (only searched as words)."""
    reasons = []
    if shown and _unresolved_reference(obs, reading):
        reasons.append("reference")
    if _COMPARISON.search(obs.text):
        reasons.append("comparison")
    if _conflict(obs):
        reasons.append("conflict")
    words, uncovered = unread_words(obs)
    if len(uncovered) >= UNREAD_WORDS and len(uncovered) >= UNREAD_SHARE * len(words):
        reasons.append("unread")
    return reasons


def _unresolved_reference(obs: Observation, reading: Reading) -> bool:
    resolved = [(r.start, r.end) for r in reading.references]
    for pointer in obs.shown_talk.pointers:
        pointing = pointer.kind in _REFERRING or (
            pointer.kind == "description" and not pointer.indefinite and _ends_in_referent(pointer)
        )
        if pointing and not any(a < pointer.end and pointer.start < b for a, b in resolved):
            return True
    if any(not c.positions for c in reading.critiques):
        return True
    # A critique cue that became no critique, unless it describes ("the cheaper one").
    made = {(c.start, c.end) for c in reading.critiques}
    described = [(p.start, p.end) for p in obs.shown_talk.pointers]
    return any(
        (c.start, c.end) not in made and not any(a <= c.start < b for a, b in described)
        for c in obs.shown_talk.cues
        if c.kind in KINDS
    )


def _ends_in_referent(pointer: Pointer) -> bool:
    return pointer.text.lower().rstrip("'s").split()[-1] in CUES.referents


def _conflict(obs: Observation) -> bool:
    said: dict[str, set[str]] = {}
    for mention in obs.values:
        said.setdefault(mention.facet, set()).add(mention.value)
    return any(len(values) > 1 for facet, values in said.items() if facet in SINGLE_VALUED)


def unread_words(obs: Observation) -> tuple[list[str], list[str]]:
    """(content words of the message, those no typed observation covers). Free fragments do not
    cover: they are what the rules fall back on when they can type nothing."""
    spans = typed_spans(obs)
    words, uncovered = [], []
    for match in WORD.finditer(obs.text):
        word = match.group().lower()
        if not content_word(word):
            continue
        words.append(word)
        if not overlaps(match.start(), match.end(), spans):
            uncovered.append(word)
    return words, uncovered


# -- asking ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Reply:
    """What the model server answered: its text and the tokens the call cost."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0


# Messages in the OpenAI chat layout -> the reply; raises on any failure (timeout, HTTP error).
Ask = Callable[[list[dict[str, str]]], Reply]

_INSTRUCTIONS = """\
You help a shopping assistant for clothing, shoes and jewelry read one shopper message.
Rules already read part of it ("rules_read") but are unsure ("unsure_because"). Give only what
the message says and the rules missed; leave a field out when unsure. Values are the shopper's
wanted colours, materials, styles, sizes, brands, uses...; "negated" holds values they turn down;
"category_text" names the item to buy in a few words; "critiques" speak of the products shown,
by position. Answer with one JSON object that matches this JSON schema, and nothing else:
"""


def prompt(
    obs: Observation, state: ShoppingState, shown: Sequence[Shown], reasons: Sequence[str]
) -> list[dict[str, str]]:
    """A short chat: instructions with the schema, then the message and what is known."""
    facts = {
        "message": obs.text,
        "unsure_because": list(reasons),
        "rules_read": _rules_read(obs),
        "wanted_so_far": [
            f"{c.attribute}={c.value}" for c in state.active() if c.epoch == state.epoch
        ],
        "shown": [
            {"position": s.position, "title": s.title, "price": s.price, "brand": s.brand}
            for s in shown
        ],
    }
    return [
        {"role": "system", "content": _INSTRUCTIONS + json.dumps(SCHEMA, separators=(",", ":"))},
        {"role": "user", "content": json.dumps(facts, ensure_ascii=False)},
    ]


def _rules_read(obs: Observation) -> dict[str, Any]:
    return {
        "category_text": obs.category_text or None,
        "values": [f"{m.facet}={m.value}" for m in obs.values],
        "negated": [f"{m.facet}={m.value}" for m in obs.negated],
        "budget": obs.budget.describe() if obs.budget else None,
        "no_preference": obs.no_preference,
    }


_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.S | re.I)


def read_answer(text: str) -> ObservationAnswer:
    """The reply as an answer; raises ValueError (invalid JSON or a wrong shape). A code fence
    around the JSON is tolerated: small local models add one whatever they are told."""
    fenced = _FENCE.match(text)
    return ObservationAnswer.model_validate_json(fenced.group(1) if fenced else text)


# -- merging: the rules win ----------------------------------------------------------------------


def merge(
    obs: Observation,
    answer: ObservationAnswer,
    lexicon: Lexicon,
    shown: Sequence[Shown],
    reasons: Sequence[str],
) -> tuple[Observation, list[str], list[str]]:
    """The observation with what the answer adds where the rules left it empty, and (what was
    used, what was dropped and why), as short readable lines."""
    used: list[str] = []
    dropped: list[str] = []
    taken = {m.facet for m in (*obs.values, *obs.negated)}
    values = _mentions(answer.values, obs.text, lexicon, taken, used, dropped, "")
    negated = _mentions(answer.negated, obs.text, lexicon, taken, used, dropped, "not ")
    category = obs.category_text
    if answer.category_text:
        if category:
            dropped.append(f"item {answer.category_text!r}: the rules read {category!r}")
        elif not lexicon.category_tokens(answer.category_text):
            dropped.append(f"item {answer.category_text!r}: no category of this catalog")
        else:
            category = answer.category_text
            used.append(f"item {category!r}")
    budget = obs.budget
    if answer.budget is not None:
        if budget is not None:
            dropped.append(f"budget: the rules read {budget.describe()}")
        else:
            said = answer.budget
            budget = Budget(min_price=said.min_price, max_price=said.max_price, target=said.target)
            used.append(f"budget {budget.describe()}")
    open_attributes = set(answer.no_preference) - set(obs.no_preference)
    no_preference = list(obs.no_preference)
    for attribute in sorted(open_attributes):
        if any(m.attribute == attribute for m in (*obs.values, *values)):
            dropped.append(f"no preference for {attribute}: a value was read")
        else:
            no_preference.append(attribute)
            used.append(f"no preference for {attribute}")
    critiques = _critiques(answer.critiques, obs, shown, reasons, used, dropped)
    merged = replace(
        obs,
        values=[*obs.values, *values],
        negated=[*obs.negated, *negated],
        category_text=category,
        budget=budget,
        no_preference=no_preference,
        added_critiques=critiques,
    )
    return merged, used, dropped


def _mentions(
    answers: Sequence[ValueAnswer],
    text: str,
    lexicon: Lexicon,
    taken: set[Facet],
    used: list[str],
    dropped: list[str],
    label: str,
) -> list[Mention]:
    """The answer's values as the vocabulary names them, for facets the rules read nothing of."""
    out: list[Mention] = []
    for answer in answers:
        said = f"{label}{answer.facet}={answer.value}"
        if answer.facet in taken:
            dropped.append(f"{said}: the rules read a {answer.facet}")
            continue
        known = [m for m in lexicon.mentions(answer.value) if m.facet == answer.facet]
        if not known:
            dropped.append(f"{said}: not a value of this catalog")
            continue
        value = known[0].value
        at = text.lower().find(answer.value.lower())
        start, end = (at, at + len(answer.value)) if at >= 0 else (len(text), len(text))
        if any(m.facet == answer.facet and m.value == value for m in out):
            continue
        out.append(Mention(answer.facet, value, start, end, answer.value))
        used.append(f"{label}{answer.facet}={value}")
    return out


def _critiques(
    answers: Sequence[CritiqueAnswer],
    obs: Observation,
    shown: Sequence[Shown],
    reasons: Sequence[str],
    used: list[str],
    dropped: list[str],
) -> list[Critique]:
    """Critiques only where the rules could not resolve the shown products talked of."""
    positions = {s.position for s in shown}
    out: list[Critique] = []
    for answer in answers:
        said = f"{answer.kind} #{','.join(map(str, answer.positions))}"
        if "reference" not in reasons and "comparison" not in reasons:
            dropped.append(f"{said}: the rules resolved the products talked of")
        elif not set(answer.positions) <= positions:
            dropped.append(f"{said}: no such product shown")
        else:
            critique = Critique(answer.kind, tuple(answer.positions), 0, len(obs.text), obs.text)
            out.append(critique)
            used.append(said)
    return out


# -- the whole step ----------------------------------------------------------------------------


class Resolver:
    """Asks the model where the rules are unsure; `attempts` bounds the calls per turn (one
    retry), each bounded by the `Ask`'s own timeout."""

    def __init__(self, ask: Ask, attempts: int = 2, label: str = "") -> None:
        self.ask, self.attempts, self.label = ask, attempts, label

    def __call__(
        self,
        state: ShoppingState,
        obs: Observation,
        shown: Sequence[Shown],
        lexicon: Lexicon,
    ) -> tuple[Observation, dict[str, Any]]:
        """The observation to apply and the record of what happened (empty: not asked)."""
        reasons = unsure(obs, shown, read_critiques(state, obs, shown))
        if not reasons:
            return obs, {}
        record: dict[str, Any] = {
            "asked": True,
            "model": self.label,
            "reasons": reasons,
            "attempts": 0,
            "said": None,
            "error": None,
            "used": [],
            "dropped": [],
            "prompt_tokens": 0,
            "completion_tokens": 0,
        }
        messages = prompt(obs, state, shown, reasons)
        start = time.perf_counter()
        answer = self._answer(messages, record)
        record["ms"] = round((time.perf_counter() - start) * 1000, 1)
        if answer is None:
            return obs, record
        merged, record["used"], record["dropped"] = merge(obs, answer, lexicon, shown, reasons)
        return (merged if record["used"] else obs), record

    def _answer(
        self, messages: list[dict[str, str]], record: dict[str, Any]
    ) -> ObservationAnswer | None:
        for _ in range(self.attempts):
            record["attempts"] += 1
            try:
                reply = self.ask(messages)
            except Exception as error:  # any failure of an optional helper: the rules stand
                record["error"] = _describe(error)
                continue
            record["prompt_tokens"] += reply.prompt_tokens
            record["completion_tokens"] += reply.completion_tokens
            record["said"] = reply.text[:2000]
            try:
                answer = read_answer(reply.text)
            except (ValidationError, ValueError) as error:
                record["error"] = "invalid answer: " + _describe(error)
                continue
            record["error"] = None
            return answer
        return None


def _describe(error: BaseException) -> str:
    text = str(error).splitlines()[0] if str(error) else ""
    return f"{type(error).__name__}: {text}"[:300]
