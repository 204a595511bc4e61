"""dialogue.decide: which one question to ask, how many products to show, and the words.

The question is chosen by expected information over the candidates' attribute
distributions, discounted by how often candidates state that attribute at all;
an open question leads while little is known.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field

from ..index.features import Facets, FeatureStore
from ..rank.rerank import Scored
from ..state.model import ShoppingState
from ..terms import Attribute
from .facets import values_of
from .wording import compose_message

ASKABLE = (
    "other",
    "category",
    "style",
    "color",
    "material",
    "size",
    "use_case",
    "budget",
    "brand",
    "feature",
)
# How likely a shopper is to have an answer: most know who it is for, few know a brand.
# Style and colour were lowered from 0.7 / 0.8 on the generated tuning sets (official +0.0015,
# natural +0.005; generated iid natural +0.011, the other sets within +-0.0012).
ANSWERABLE = {
    "category": 1.0,
    "material": 0.8,
    "color": 0.6,
    "style": 0.5,
    "budget": 0.7,
    "size": 0.6,
    "use_case": 0.6,
    "feature": 0.6,
    "brand": 0.3,
}
# One answer resolves at most a few bits, however many values there are.
MAX_BITS = 2.5


@dataclass(frozen=True, slots=True)
class DialogueSettings:
    max_turns: int = 10
    pool: int = 40  # top candidates whose attribute spread decides the question
    open_question_value: float = 2.5
    open_question_decay: float = 0.5
    open_question_min_items: int = 2
    min_gain: float = 0.0  # any question that can still teach something beats none
    # How many products to show: few while a question is still narrowing the search
    # (an early low-rank hit is worth less than a later top hit), all once it is not.
    first_turn_width: int = 1
    asking_width: int = 1
    narrow_turns: int = 1  # turns (from the first) that use the narrow widths while asking
    # ...and later turns too while each answer brings at least this many new requirements:
    # a shopper giving rich answers is worth hearing out before spreading a wide net.
    rich_answer: int = 2
    width: int = 10
    ask: bool = True
    # The narrow widths are a benchmark policy (an early top hit scores more than a list);
    # a person sees the whole list, best first, on every turn (the web page, `chat`).
    narrow: bool = True


@dataclass(slots=True)
class Decision:
    ask_attribute: str | None
    message: str
    width: int
    options: list[str] = field(default_factory=list)
    alternatives: list[dict] = field(default_factory=list)


def decide(
    state: ShoppingState,
    ranked: list[Scored],
    features: FeatureStore,
    turn: int,
    top_k: int,
    settings: DialogueSettings = DialogueSettings(),
    alternatives: bool = True,
    relaxed: tuple[str, ...] = (),
    spread: bool = False,
) -> Decision:
    """The turn's question, width and message; `alternatives=False` skips scoring the questions
    that cannot win (the trace shows them, a plain reply does not). `relaxed`: hard
    requirements no candidate met, which the message owns up to. `spread`: the list is a spread
    for a shopper who keeps drawing a blank: no question, an invitation to pick instead."""
    pool = features.facets([s.row for s in ranked[: settings.pool]])
    last_turn = turn >= settings.max_turns
    scores = (
        []
        if (last_turn or not settings.ask or spread)
        else _question_scores(state, pool, settings, alternatives)
    )
    best = scores[0] if scores and scores[0][1] > settings.min_gain else None
    attribute = best[0] if best else None
    # Right after a change of mind the shopper has just told us what they want: show a full set.
    fresh_epoch = state.epoch > 0 and not state.shown_this_epoch()
    news = 0 if fresh_epoch else _new_requirements(state, turn)
    width = (
        min(top_k, settings.width)
        if fresh_epoch
        else _width(turn, attribute, top_k, settings, news)
    )
    options = _options(attribute, pool) if attribute else []
    message = compose_message(state, attribute, options, min(width, len(ranked)), relaxed, spread)
    return Decision(
        ask_attribute=attribute,
        message=message,
        width=width,
        options=options,
        alternatives=[{"attribute": a, "score": round(s, 3)} for a, s in scores[:6]],
    )


def _width(
    turn: int, attribute: str | None, top_k: int, settings: DialogueSettings, news: int
) -> int:
    narrow = turn <= settings.narrow_turns or news >= settings.rich_answer
    if attribute is None or not narrow or not settings.narrow:
        return min(top_k, settings.width)
    return max(1, min(top_k, settings.first_turn_width if turn <= 1 else settings.asking_width))


def _new_requirements(state: ShoppingState, turn: int) -> int:
    """How many requirements this turn's message added (values, budget, fragments)."""
    values = sum(
        1 for c in state.constraints if c.source_turn == turn and c.attribute != "category"
    )
    return values + sum(1 for f in state.fragments if f.source_turn == turn)


def _question_scores(
    state: ShoppingState, pool: list[Facets], settings: DialogueSettings, every: bool = True
) -> list[tuple[str, float]]:
    """(attribute, value) of each question that may be asked, best first (ties: ASKABLE order)."""
    askable = [attribute for attribute in ASKABLE if _may_ask(state, attribute, settings)]
    scores = []
    if "other" in askable:  # first in ASKABLE: it wins its ties
        scores.append(
            (
                "other",
                settings.open_question_value - settings.open_question_decay * state.asked("other"),
            )
        )
        if not every and all(scores[0][1] >= ANSWERABLE[a] * MAX_BITS for a in askable[1:]):
            return scores  # no attribute can beat it
    for attribute in askable:
        if attribute != "other":
            scores.append(
                (
                    attribute,
                    ANSWERABLE[attribute] * min(MAX_BITS, _expected_information(attribute, pool)),
                )
            )
    scores.sort(key=lambda pair: -pair[1])
    return scores


def _may_ask(state: ShoppingState, attribute: str, settings: DialogueSettings) -> bool:
    if attribute == "other":
        if attribute not in state.unconstrained:
            return _open_question_still_useful(state, settings.open_question_min_items)
        # Declined once ("use your judgment"): a first "no preference" is often just that
        # moment's answer. Ask again once a specific question has drawn a blank too, and then
        # only while the open question keeps bringing lists.
        open_turns = [turn for turn, asked in state.questions if asked == "other"]
        if not _specific_question_came_back_empty(state, since=open_turns[0]):
            return False
        return len(open_turns) == 1 or _open_question_still_useful(
            state, settings.open_question_min_items
        )
    if attribute in state.unconstrained:
        return False
    if state.asked(attribute):
        return False  # answered, or the shopper could not say: never ask twice
    if attribute == "category":
        return not state.active(Attribute.CATEGORY)
    return not state.active(attribute)


def _specific_question_came_back_empty(state: ShoppingState, since: int) -> bool:
    return any(
        turn > since and attribute != "other" and attribute in state.unconstrained
        for turn, attribute in state.questions
    )


def _open_question_still_useful(state: ShoppingState, min_items: int) -> bool:
    """Ask 'anything else?' again only while the last such answer listed at least
    `min_items` requirements; a shopper who answers it with one thing is better served
    by specific questions."""
    asked_turns = [turn for turn, attribute in state.questions if attribute == "other"]
    if not asked_turns:
        return True
    answer_turn = asked_turns[-1] + 1
    items = sum(1 for f in state.fragments if f.source_turn == answer_turn)
    if min_items <= 1:
        items += sum(1 for c in state.constraints if c.source_turn == answer_turn)
    return items >= min_items


def _expected_information(attribute: str, pool: list[Facets]) -> float:
    """Entropy (bits) of the attribute over the pool, times the share that states it."""
    if not pool:
        return 0.0
    counts: dict[str, float] = {}  # a product with n values gives each 1/n
    known = 0
    get = counts.get
    for values in map(values_of(attribute), pool):
        if values:
            known += 1
            share = 1.0 / len(values)
            for value in values:
                counts[value] = get(value, 0) + share
    if not counts:
        return 0.0
    total = sum(counts.values())
    entropy = -sum((c / total) * math.log2(c / total) for c in counts.values())
    return entropy * known / len(pool)


def _options(attribute: str, pool: list[Facets]) -> list[str]:
    counts: Counter[str] = Counter()
    for values in map(values_of(attribute), pool):
        counts.update(values)
    return [value for value, _ in counts.most_common(4)]
