"""state.update: one message in, a new ShoppingState and a StateDiff out."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from ..catalog.vocabulary import Mention
from ..index.categoriser import Reading
from ..index.text import STOPWORDS, stem, tokens
from ..reader.model import Reader
from ..terms import Attribute, Facet, Level, Status
from .audience import apply_audience
from .budget import LOW_PRICE, Budget, read_numbers
from .critique import CUES, Critique, Shown, resolve, said_as_a_price
from .critique import Reading as ShownReading
from .cues import CONVERSATION
from .lexicon import DEPARTMENT_NODES, Lexicon
from .model import (
    Audience,
    Constraint,
    CritiqueRecord,
    Fragment,
    Rejection,
    ShoppingState,
    StateDiff,
    Turn,
)
from .parse import NOT_A_WISH, Observation, content_word, parse_message
from .readings import WORD, covered, readings, typed_spans
from .spans import talk
from .spelling import is_english

# A shopper wants one of these at a time; a new value replaces the old one.
SINGLE_VALUED = frozenset({Facet.DEPARTMENT, Facet.SIZE, Facet.WIDTH, Facet.FIT, Facet.BRAND})
# Facets that only make sense for a category; a category switch drops them.
CATEGORY_BOUND = frozenset(
    {Facet.SIZE, Facet.WIDTH, Facet.FIT, Facet.CLOSURE, Facet.STYLE, Facet.USE_CASE}
)


# The model resolver (state/resolver.py): the observation to apply and a record for the trace.
Consult = Callable[
    [ShoppingState, Observation, Sequence[Shown], Lexicon], tuple[Observation, dict[str, Any]]
]


def update(
    state: ShoppingState,
    message: str,
    lexicon: Lexicon,
    turn: int,
    shown: Sequence[Shown] = (),
    consult: Consult | None = None,
    recent: Sequence[Shown] = (),
    reader: Reader | None = None,
    people: bool = False,
) -> tuple[ShoppingState, StateDiff]:
    """`shown`: the facts of the products shown last (what "the second one" points at);
    `consult`: the model resolver, asked between reading the message and applying it;
    `recent`: the facts of the products the shopper spoke of last (`pointed_at`); `people`: a
    person's reading of the message (state/parse.py, `parse_message`)."""
    new = state.copy()
    new.turn = turn
    if people and new.history and _starts_over(message):
        _clear(new)
    item = new.active(Attribute.CATEGORY)
    current = frozenset(item[-1].data.get("words", {})) if item else None
    obs = parse_message(
        message,
        lexicon,
        new.last_question(),
        first_turn=not new.history,
        current_item=current,
        reader=reader,
        shown=len(shown),
        people=people,
    )
    if people and not obs.budget:
        obs.budget = _budget_said_again(
            obs, new.active(Attribute.BUDGET), _sizes_held(new), lexicon
        )
    if not obs.category_text and not shown:
        obs.fragments += _left_over(obs, lexicon)
    diff = StateDiff()
    if consult is not None:
        obs, diff.resolver = consult(new, obs, shown, lexicon)
    diff.read = readings(obs)
    _lift(new, obs, diff)
    contrasted = _contrasted_values(new, obs)
    if (obs.override or contrasted or _retracts_a_value(new, obs)) and new.history:
        new.epoch += 1
        diff.new_epoch = True
    level = _level(new, obs)
    if obs.budget and _names_a_price(obs, shown):
        obs.budget = None  # "too pricey at $26.99" names the product's price; it is no budget
    recent = _placed(recent, shown)
    reading = read_critiques(new, obs, shown, recent) if shown else ShownReading()
    obs.negated_words += _said_of_shown(obs.shown_described, shown)
    obs.values = [m for m in obs.values if not _points_only(m, reading, obs.text)]
    _update_intent(new, obs, diff)
    was = [c.value for c in new.active(Attribute.CATEGORY)[-1:]]
    category_changed = _apply_category(new, obs, lexicon, level, diff)
    if people and obs.category_text and not _item_words(lexicon, obs.category_text):
        # An item no category names ("cleats"): searched for, and shown, in its own words
        obs.fragments.append(obs.category_text)
    if category_changed and new.history and not obs.category_narrows:
        # A narrower kind of the same item keeps them; for people, another kind of shoe keeps
        # the shoe size ("boots in 9", then "actually sneakers").
        now = [c.value for c in new.active(Attribute.CATEGORY)[-1:]]
        shoes = people and was and now and _footwear(lexicon, was[0]) and _footwear(lexicon, now[0])
        _drop_category_bound(
            new, diff, SHOE_SIZES if shoes else frozenset(), OCCASIONS if people else frozenset()
        )
    replaced_facets = _apply_values(
        new,
        [m for m in obs.values if (m.facet, m.value) not in contrasted],
        level,
        obs.override,
        diff,
    )
    replaced_facets |= _replace_contrasted(new, contrasted, diff)
    # After the values: a department the shopper states wins over one guessed from who it is for.
    apply_audience(new, obs.audience, level, diff, change_of_mind=obs.override)
    _apply_negations(new, obs, diff)
    _apply_budget(new, obs, diff)
    _apply_no_preference(new, obs, diff)
    _apply_critiques(new, obs, shown, diff, reading, recent)
    if obs.override and not replaced_facets and not category_changed:
        _archive_volunteered_fragments(new, diff)
    spans = typed_spans(obs) if obs.fragments else []
    for text in obs.fragments:
        new.fragments.append(
            Fragment(
                text,
                turn,
                new.epoch,
                level,
                covered=covered(obs, text, spans)
                or _talk(obs, text, spans, reader)
                or _told(text, lexicon),
                catalog_words=_catalog_words(text, lexicon),
            )
        )
        diff.fragments.append(text)
    new.history.append(Turn(turn=turn, user=message))
    return new, diff


def _talk(obs: Observation, text: str, spans: list[tuple[int, int]], reader: Reader | None) -> bool:
    """Talk to both readings of the message: the reader's in the turn's context and its
    reading of the words alone. The context may sway it ("a hood is non-negotiable", after a
    question about the material: nothing marked), the words alone rarely do."""
    if not talk(obs.doc, text, spans):
        return False
    return reader is None or obs.doc is None or talk(reader.read(obs.text), text, spans)


def _catalog_words(text: str, lexicon: Lexicon) -> tuple[str, ...]:
    """The words no dictionary has that the catalog uses ("rfid"), for the chip to show."""
    return tuple(w for w in tokens(text) if not is_english(w) and lexicon.in_catalog(w))


TOLD_WORDS = 3  # a wish of this many words or more, one of which no product uses, is a story


def _told(fragment: str, lexicon: Lexicon) -> bool:
    """Is a free fragment a story told rather than a wish ("the floor gets wet by the sink",
    "she'll lose her lip balm otherwise")? It is still searched, but listed as no requirement."""
    words = [w for w in tokens(fragment) if w not in STOPWORDS and content_word(w)]
    unknown = [w for w in words if not w.isdigit() and not lexicon.uses_word(w)]
    return len(words) >= TOLD_WORDS and bool(unknown)


def _left_over(obs: Observation, lexicon: Lexicon) -> list[str]:
    """A message naming no item and no wish of its own but words the catalog uses that nothing
    read ("she wants to be a witch for halloween": witch): those words, so the search keeps them."""
    spans = typed_spans(obs)
    if any(not covered(obs, f, spans) for f in obs.fragments):
        return []
    words = [
        m.group()
        for m in WORD.finditer(obs.text)
        if content_word(m.group().lower())
        and m.group().lower() not in NOT_A_WISH
        and lexicon.in_catalog(m.group())
        and not any(a <= m.start() < b for a, b in spans)
    ]
    return [" ".join(words)] if words else []


def _said_of_shown(words: list[str], shown: Sequence[Shown]) -> list[str]:
    """What the shopper called the shown products that some of their titles say ("these are
    all puffers"): a thing they turn down. A word no title says is no thing of theirs."""
    return [w for w in words if any(stem(w) in s.words for s in shown)]


def _level(state: ShoppingState, obs: Observation) -> Level:
    """Answers and overrides are requirements; what a browser volunteers up front is softer."""
    if not state.history and (obs.browsing or state.intent == "browsing" and not _specific(obs)):
        return Level.SOFT
    return Level.HARD


def _specific(obs: Observation) -> bool:
    """Did the message name values, or who the item is for ("for my son")?"""
    return bool(obs.values) or (obs.audience is not None and obs.audience.names_someone)


def _update_intent(state: ShoppingState, obs: Observation, diff: StateDiff) -> None:
    if obs.browsing:
        state.intent, state.intent_confidence = "browsing", 0.8
    elif not state.history and (_specific(obs) or obs.fragments or obs.budget):
        state.intent, state.intent_confidence = "buying", 0.7
    elif state.history and (_specific(obs) or obs.budget) and state.intent == "browsing":
        # Specific answers are a sign the shopper is converging on something.
        state.intent_confidence = max(0.3, state.intent_confidence - 0.1)
    else:
        return
    diff.intent = state.intent


def _apply_category(
    state: ShoppingState, obs: Observation, lexicon: Lexicon, level: str, diff: StateDiff
) -> bool:
    words = _item_words(lexicon, obs.category_text) if obs.category_text else {}
    if not words:
        return False
    current = state.active(Attribute.CATEGORY)
    if current and set(current[-1].data.get("words", {})) == set(words):
        return False
    for old in current:
        old.status = Status.REPLACED
        diff.replaced.append(old.described())
    constraint = Constraint(
        attribute=Attribute.CATEGORY,
        value=obs.category_text.lower(),
        source_turn=state.turn,
        confidence=0.9,
        epoch=state.epoch,
        text=obs.category_text,
        data={"words": words, **_item_data(lexicon, obs, words)},
    )
    state.constraints.append(constraint)
    diff.added.append(constraint.described())
    return bool(current)


# How sure the categoriser must be to name the kind of an item the category words do not know.
KNOWN_BY_CATEGORISER = 0.9


def _item_words(lexicon: Lexicon, item: str) -> dict[str, float]:
    """The item's category words; for a name the categories do not use ("bathrobe"), those of
    the category the catalog's categoriser files it under, when it is sure."""
    if words := lexicon.category_tokens(item):
        return words
    reading = lexicon.read_item(item)
    if reading is None or reading.node is None or reading.node_p < KNOWN_BY_CATEGORISER:
        return {}
    return lexicon.category_tokens(reading.node)


def _item_data(lexicon: Lexicon, obs: Observation, words: dict[str, float]) -> dict[str, Any]:
    """The learned reader's node for the item where the catalog has it, else the categoriser's."""
    if obs.item_node and (
        reading := lexicon.reading_of(obs.item_node, obs.category_text, obs.item_p)
    ):
        return reading.as_data()
    return item_reading(lexicon, obs.category_text, words)


def item_reading(lexicon: Lexicon, text: str, words: dict[str, float]) -> dict[str, Any]:
    """The catalog categoriser's reading of the item's name (node, leaf and their probabilities),
    for the later stages and the trace; nothing when it names no node or when its reading shares
    no word with the shopper's own category words: then the words speak alone."""
    reading = lexicon.read_item(text)
    if reading is None or reading.node is None or not _agrees(reading, text, words):
        return {}
    return reading.as_data()


def _agrees(reading: Reading, text: str, words: dict[str, float]) -> bool:
    """Does the reading's node or path hold one of the shopper's words for the item, as said or
    as the catalog's category words ("bikini": Bikinis; "trousers": Pants)? Words naming only
    who it is for decide nothing. Compared without a final "s": the light stemmer keeps
    "bikinis" whole."""
    said = {w.rstrip("s") for w in {stem(t) for t in tokens(text)} | set(words)}
    said -= {w.rstrip("s") for w in DEPARTMENT_NODES}
    if not said:
        return True
    named = {
        stem(t).rstrip("s") for part in (reading.node or "", *reading.path) for t in tokens(part)
    }
    return bool(said & named)


SHOE_SIZES = frozenset({Facet.SIZE, Facet.WIDTH})


def _footwear(lexicon: Lexicon, item: str) -> bool:
    reading = lexicon.read_item(item)
    return reading is not None and reading.path[:1] == ("Shoes",)


# For people, the occasion a new item is for too ("a tie first", after oxfords for a wedding).
OCCASIONS = frozenset(CONVERSATION.words["occasions"])


def _drop_category_bound(
    state: ShoppingState,
    diff: StateDiff,
    kept: frozenset[Facet] = frozenset(),
    occasions: frozenset[str] = frozenset(),
) -> None:
    for constraint in state.active():
        if constraint.data.get("facet") == Facet.USE_CASE and constraint.value in occasions:
            continue
        if constraint.data.get("facet") in CATEGORY_BOUND - kept:
            constraint.status = Status.REPLACED
            diff.replaced.append(constraint.described())
    for fragment in state.active_fragments():
        fragment.status = Status.REPLACED


def _apply_values(
    state: ShoppingState, mentions: list[Mention], level: Level, override: bool, diff: StateDiff
) -> set[str]:
    replaced: set[str] = set()
    new_facets = {m.facet for m in mentions}
    for facet in new_facets:
        earlier = [
            c for c in state.active() if c.data.get("facet") == facet and c.source_turn < state.turn
        ]
        if earlier and (override or facet in SINGLE_VALUED):
            for old in earlier:
                old.status = Status.REPLACED
                diff.replaced.append(old.described())
            replaced.add(facet)
    for mention in mentions:
        if any(
            c.data.get("facet") == mention.facet and c.value == mention.value
            for c in state.active()
        ):
            continue
        constraint = Constraint(
            attribute=mention.attribute,
            value=mention.value,
            level=level,
            source_turn=state.turn,
            confidence=0.9,
            epoch=state.epoch,
            text=mention.text,
            data={"facet": mention.facet},
        )
        state.constraints.append(constraint)
        diff.added.append(constraint.described())
        state.unconstrained = [a for a in state.unconstrained if a != mention.attribute]
    return replaced


# Words that set one value against another: "suede to leather", "leather over suede".
_CONTRAST = re.compile(CONVERSATION.pattern("contrasts"), re.I)


_LISTED_WITH = re.compile(r"\s*(?:,|/|&|\band\b|\bor\b|\s)*\s*$", re.I)


def _contrasted_values(state: ShoppingState, obs: Observation) -> set[tuple[str, str]]:
    """Earlier values the shopper sets against a new one in the same breath ("switch the suede
    to leather", "blue beats black", or any two after a change-of-mind cue): a change of mind,
    whatever the wording. A plain list ("95% polyester, 5% spandex") contrasts nothing."""
    contrasted: set[tuple[str, str]] = set()
    for facet in {m.facet for m in obs.values}:
        earlier = {c.value for c in state.active() if c.data.get("facet") == facet}
        said = [m for m in obs.values if m.facet == facet]
        for old in (m for m in said if m.value in earlier):
            for new in (m for m in said if m.value not in earlier):
                first, second = sorted((old, new), key=lambda m: m.start)
                between = obs.text[first.end : second.start]
                # After a cue ("scrap suede. leather pls") the value not asked for before is the new
                # one, unless the two are listed together ("actually, black or navy").
                if _CONTRAST.search(between) or obs.override and not _LISTED_WITH.match(between):
                    contrasted.add((facet, old.value))
        if earlier and any(_but_of_a_product(obs, m) for m in said if m.value not in earlier):
            contrasted |= {(facet, value) for value in earlier}  # "the third one but in green"
    return contrasted


# The words that may join a pointer to the value that changes it ("the third one but in green").
_BUT_JOIN = frozenset({"but", "in", "with", "made", "of", "only", "just", "a", "an", "the"})


def _but_of_a_product(obs: Observation, mention: Mention) -> bool:
    """Is the value said as the change to a product pointed at ("#2 but in green", "the third
    one, but with a hood")? It replaces what was asked of that facet before."""
    for pointer in obs.shown_talk.pointers:
        between = tokens(obs.text[pointer.end : mention.start])
        if pointer.end <= mention.start and "but" in between and set(between) <= _BUT_JOIN:
            return True
    return False


def _replace_contrasted(
    state: ShoppingState, contrasted: set[tuple[str, str]], diff: StateDiff
) -> set[str]:
    for constraint in state.active():
        if (constraint.data.get("facet"), constraint.value) in contrasted:
            constraint.status = Status.REPLACED
            diff.replaced.append(constraint.described())
    return {facet for facet, _ in contrasted}


def _starts_over(message: str) -> bool:
    """ "start over, I need a rain jacket", "new search": nothing said before holds."""
    plain = f" {' '.join(tokens(message))} "
    return any(f" {phrase} " in plain for phrase in _START_OVER)


_START_OVER = CONVERSATION.words["start_over"]


def _clear(state: ShoppingState) -> None:
    """Everything asked for so far set aside: requirements, refusals, who it is for, wishes."""
    for constraint in state.active():
        constraint.status = Status.REPLACED
    for fragment in state.active_fragments():
        fragment.status = Status.REPLACED
    state.rejected = []
    state.audience = Audience()
    state.epoch += 1


def _lift(state: ShoppingState, obs: Observation, diff: StateDiff) -> None:
    """ "forget brown", "doesn't have to be straw": a value the shopper asked for earlier is
    taken back, neither turned down nor asked for again. Of a value never asked for, "forget
    heels" stays a refusal, and "it doesn't need to be waterproof" no wish."""
    for mention in obs.lifted:
        held = [
            c
            for c in state.active()
            if c.data.get("facet") == mention.facet
            and c.value == mention.value
            and c.source_turn < state.turn
        ]
        if not held and mention not in obs.values:
            continue  # "forget heels", never asked for: a refusal
        for constraint in held:
            constraint.status = Status.REPLACED
            diff.replaced.append(constraint.described())
        if held:
            _unword_item(state, mention)
        obs.negated = [m for m in obs.negated if m is not mention]
        obs.values = [m for m in obs.values if m is not mention]
        # "it doesn't need to be waterproof" is no wish for waterproof in free words either.
        obs.fragments = [f for f in obs.fragments if mention.text.lower() not in f.lower()]


def _unword_item(state: ShoppingState, mention: Mention) -> None:
    """ "leather doesn't matter" after "a leather wallet": the item is a wallet now."""
    gone = {stem(word) for word in tokens(mention.text)}
    for item in state.active(Attribute.CATEGORY):
        kept = [word for word in item.value.split() if stem(word.lower()) not in gone]
        if kept and len(kept) < len(item.value.split()):
            item.value = item.text = " ".join(kept)
            words = item.data.get("words", {})
            item.data = {
                **item.data,
                "words": {w: v for w, v in words.items() if stem(w) not in gone},
            }


def _retracts_a_value(state: ShoppingState, obs: Observation) -> bool:
    """Turning down a value the shopper asked for earlier ("I want synthetic, not polyester"
    after asking for polyester) is a change of mind, whatever the wording."""
    asked = {(c.data.get("facet"), c.value) for c in state.active() if c.source_turn < state.turn}
    return any((m.facet, m.value) in asked for m in obs.negated)


def _apply_negations(state: ShoppingState, obs: Observation, diff: StateDiff) -> None:
    for mention in obs.negated:
        for constraint in state.active():
            if constraint.data.get("facet") == mention.facet and constraint.value == mention.value:
                constraint.status = Status.NEGATED
        state.rejected.append(Rejection(mention.facet, mention.value, state.turn))
        diff.negated.append({"attribute": mention.facet, "value": mention.value})
    for word in obs.negated_words:
        said = word if " " in word else stem(word)  # "puff sleeves" is matched as a phrase
        state.rejected.append(Rejection("word", said, state.turn))
        diff.negated.append({"attribute": "word", "value": said})


def _sizes_held(state: ShoppingState) -> list[float]:
    said = [str(c.value) for c in state.active() if c.data.get("facet") == Facet.SIZE]
    return [float(v) for v in said if v.replace(".", "", 1).isdigit()]  # "10.5", not "M"


def _budget_said_again(
    obs: Observation, held: list[Constraint], sizes: list[float], lexicon: Lexicon
) -> Budget | None:
    """A bare amount near the budget held revises it, in the budget's own form ("fine, twenty
    then" after "fifteen tops": at most $20; "sixty would sit better" after "under 100"), unless
    the number is a size or an age, or nearer a size held than the budget ("11 then" after size
    10). Only within a factor of REVISED_WITHIN of the old amount."""
    if not held or any(m.facet == Facet.SIZE for m in obs.values):
        return None
    if obs.audience is not None and obs.audience.age_group is not None:
        return None
    said = read_numbers(obs.text, "budget", lexicon.money_like_categories).budget
    old = held[-1].data
    slot, before = next(((f, old[key]) for key, f in BUDGET_SLOTS if old.get(key)), ("", 0.0))
    amount = said and (said.target or said.max_price or said.min_price)
    if not (said and amount and before / REVISED_WITHIN <= amount <= before * REVISED_WITHIN):
        return None
    if any(abs(math.log(amount / size)) < abs(math.log(amount / before)) for size in sizes if size):
        return None
    return Budget(**{slot: amount}, text=said.text, currency=old.get("currency") or said.currency)


REVISED_WITHIN = 3
BUDGET_SLOTS = (("max", "max_price"), ("target", "target"), ("min", "min_price"))


def _apply_budget(state: ShoppingState, obs: Observation, diff: StateDiff) -> None:
    if not obs.budget:
        if obs.cheap and not state.active(Attribute.BUDGET):
            _lean_low(state, obs.cheap, diff)
        return
    for old in state.active(Attribute.BUDGET):
        old.status = Status.REPLACED
        if not old.data.get("lean"):  # "cheap", then "under 20": said more exactly, not changed
            diff.replaced.append(old.described())
    budget = obs.budget
    constraint = Constraint(
        attribute=Attribute.BUDGET,
        value=budget.describe(),
        level=Level.GOAL if budget.target is not None else Level.HARD,
        source_turn=state.turn,
        confidence=0.9,
        epoch=state.epoch,
        text=budget.text,
        data={
            "facet": Facet.BUDGET,
            "min": budget.min_price,
            "max": budget.max_price,
            "target": budget.target,
            "currency": budget.currency,  # applied to dollar prices as is (see Budget.describe)
        },
    )
    state.constraints.append(constraint)
    diff.added.append(constraint.described())


def _lean_low(state: ShoppingState, said: str, diff: StateDiff) -> None:
    """ "cheap sunglasses": no limit, but the cheaper ones first (rank/evidence.py)."""
    constraint = Constraint(
        attribute=Attribute.BUDGET,
        value=LOW_PRICE,
        level=Level.SOFT,
        source_turn=state.turn,
        confidence=0.7,
        epoch=state.epoch,
        text=said,
        data={"facet": Facet.BUDGET, "lean": "low"},
    )
    state.constraints.append(constraint)
    diff.added.append(constraint.described())


def _apply_no_preference(state: ShoppingState, obs: Observation, diff: StateDiff) -> None:
    for attribute in obs.no_preference:
        if attribute not in state.unconstrained:
            state.unconstrained.append(attribute)
            diff.unconstrained.append(attribute)
        for constraint in state.active(attribute):
            # "style, I don't care" leaves who it is for ("men's slippers") as said, and
            # "socks for men, whatever kind" the socks said in the same breath.
            if constraint.data.get("facet") != Facet.DEPARTMENT and (
                constraint.source_turn != state.turn
            ):
                constraint.status = Status.UNCONSTRAINED


def _archive_volunteered_fragments(state: ShoppingState, diff: StateDiff) -> None:
    """'Ignore my earlier preference' with nothing more specific: the preferences the
    shopper volunteered unasked (not their answers to questions) are archived."""
    asked_turns = {turn + 1 for turn, _ in state.questions}
    for fragment in state.active_fragments():
        if fragment.source_turn not in asked_turns:
            fragment.status = Status.REPLACED
            diff.replaced.append(
                {"attribute": "feature", "value": fragment.text, "turn": fragment.source_turn}
            )


# -- critiques of shown products ------------------------------------------------------------


def _apply_critiques(
    state: ShoppingState,
    obs: Observation,
    shown: Sequence[Shown],
    diff: StateDiff,
    reading: ShownReading,
    recent: Sequence[Shown] = (),
) -> None:
    """References and critiques of the products shown last, turned into state: a budget
    relative to a product's price, rejections of its values, a soft anchor, no repeats.
    `recent`: the products spoken of before, placed in the list (`_placed`)."""
    if not shown:
        return
    known = {(c.kind, c.positions) for c in reading.critiques}
    reading.critiques += [c for c in obs.added_critiques if (c.kind, c.positions) not in known]
    # Position 0 is a product pointed at earlier and no longer listed: no position to report.
    diff.references = [
        {**r.to_dict(), "positions": [p for p in r.positions if p]}
        for r in reading.references
        if any(r.positions)
    ]
    by_position = {s.position: s for s in (*recent[:1], *shown)}
    liked = {p for c in reading.critiques if c.kind in ("pick", "more_like") for p in c.positions}
    for critique in reading.critiques:
        if critique.kind == "cheaper" and obs.cheap and not critique.pointed:
            continue  # "nothing too expensive, she's a student": a low price wished, no limit
        if critique.kind == "pricier" and "budget" in obs.no_preference and not critique.pointed:
            continue  # "I can spend more": the limit goes, no floor comes
        products = [by_position[p] for p in critique.positions if p in by_position]
        if critique.kind in ("cheaper", "pricier") and set(critique.positions) <= liked:
            critique = replace(critique, liked=True)
        apply = _CRITIQUE_EFFECTS.get(critique.kind, _anchor)
        effect, anchor = apply(state, obs, critique, products, shown, diff)
        record = CritiqueRecord(
            kind=critique.kind,
            turn=state.turn,
            epoch=state.epoch,
            positions=list(critique.positions),
            products=[p.parent_asin for p in products],
            text=critique.text,
            effect=effect,
            anchor=anchor,
        )
        state.critiques.append(record)
        listed = [p for p in critique.positions if p]  # 0: pointed at before, no longer listed
        diff.critiques.append({**critique.to_dict(), "positions": listed, "effect": effect})
    if reading.references or reading.critiques:
        # "the second one is close but too expensive" is said of products, not words to search
        obs.fragments = [f for f in obs.fragments if not _about_shown(f, obs, reading)]


def _points_only(mention: Mention, reading: ShownReading, text: str) -> bool:
    """Is the value said only to point at a shown product ("the black one", "the nike ones"),
    not asked for ("the espofy one in brown")?"""
    return any(
        r.kind == "description"
        and r.start <= mention.start < r.end
        and r.text.lower().rstrip("'s").split()[-1] in CUES.referents
        for r in reading.references
    )


def _placed(recent: Sequence[Shown], shown: Sequence[Shown]) -> list[Shown]:
    """The products spoken of before, at their position in the list shown last (0: not in it)."""
    where = {s.parent_asin: s.position for s in shown}
    return [replace(r, position=where.get(r.parent_asin, 0)) for r in recent]


def _names_a_price(obs: Observation, shown: Sequence[Shown]) -> bool:
    """Is every amount of the message's budget a shown product's price said as one ("just too
    pricey at $26.99", "the keyocean one thats 29"), not a budget ("under 30", "near $25")?"""
    budget = obs.budget
    if budget is None or not obs.shown_talk:
        return False
    amounts = [a for a in (budget.min_price, budget.max_price, budget.target) if a is not None]
    prices = [s.price for s in shown if s.price is not None]
    return bool(amounts) and all(
        said_as_a_price(obs.shown_talk, a) and any(abs(a - p) <= max(1.0, 0.02 * p) for p in prices)
        for a in amounts
    )


def read_critiques(
    state: ShoppingState, obs: Observation, shown: Sequence[Shown], recent: Sequence[Shown] = ()
) -> ShownReading:
    """What the message says of the products shown last, as the rules read it."""
    budget = obs.budget
    stated = (
        [a for a in (budget.min_price, budget.max_price, budget.target) if a is not None]
        if budget
        else []
    )
    # Turning down what they asked for themselves ("silver instead of gold") corrects the
    # request; it says nothing of the products shown.
    asked = {
        (c.data.get("facet"), c.value) for c in state.constraints if c.source_turn < state.turn
    }
    negated = [m for m in obs.negated if (m.facet, m.value) not in asked]
    said = [*obs.values, *obs.negated]
    return resolve(
        obs.shown_talk,
        shown,
        obs.text,
        obs.values,
        negated,
        stated,
        said,
        recent,
        obs.negated_words,
    )


def _about_shown(fragment: str, obs: Observation, reading) -> bool:
    """Is the fragment nothing but pointers at shown products and what is said of them (with the
    values read anyway, when it asks about one: "do you have the second one in a medium?")?"""
    talk = obs.shown_talk
    said = [c.text for c in talk.cues] + [r.text for r in reading.references]
    said += [talk.text[start:end] for _, start, end in talk.numbers]  # "at $26.99"
    if any(talk.questions) and any(r.text.lower() in fragment.lower() for r in reading.references):
        said += [m.text for m in (*obs.values, *obs.negated)]  # "the second one in a medium?"
    explained = {w for text in said for w in tokens(text)} | CUES.frame["fillers"]
    content = [
        w
        for w in tokens(fragment)
        if w not in STOPWORDS and w not in explained and w not in CUES.ordinals
    ]
    return not content


def _stated_amounts(
    obs: Observation, shown: Sequence[Shown], everything: Sequence[Shown]
) -> list[float]:
    """The budget numbers the message states, unless they are a shown product's price ("the
    keyocean one, that's 29" names a product, it sets no budget). Said of the whole list
    ("these look cheap, I can spend up to 50"), only a number framed as a price names one: some
    product of ten is near any budget."""
    if not obs.budget:
        return []
    budget = obs.budget
    amounts = [a for a in (budget.min_price, budget.max_price, budget.target) if a is not None]
    prices = [s.price for s in shown if s.price is not None]
    whole_list = len(shown) > 1 and len(shown) == len(everything)
    if amounts and all(
        any(abs(a - p) <= max(1.0, 0.02 * p) for p in prices)
        and (not whole_list or said_as_a_price(obs.shown_talk, a))
        for a in amounts
    ):
        return []
    return amounts


Effect = tuple[str, dict]


FEW_SHOWN = 3  # a list this short is read against its cheapest (or dearest) product


def _price_budget(
    state: ShoppingState, obs: Observation, critique: Critique, products: list[Shown], shown, diff
) -> Effect:
    """ "Cheaper" caps the budget at the (lowest) critiqued price, "nicer" starts it at the
    (highest); a number the shopper states in the same breath wins, and so does a tighter
    budget they set before. A product pointed at that lists no price is read against the middle
    price of the list it was in ("the second one but cheaper" still means cheaper)."""
    prices = [p.price for p in products if p.price is not None]
    middle = not prices and critique.pointed
    if middle:
        listed = sorted(s.price for s in shown if s.price is not None)
        prices = listed[len(listed) // 2 : len(listed) // 2 + 1]
    if not prices:
        return "", {}
    cheaper = critique.kind == "cheaper"
    price = min(prices) if cheaper else max(prices)
    if obs.people and not critique.pointed and len(prices) > FEW_SHOWN:
        # "something cheaper" of a person's list of ten: cheaper than its middle, not than its
        # cheapest (an $8 watch among $40 ones would leave nothing to show).
        price = float(
            round(sorted(prices)[(len(prices) - 1) // 2 if cheaper else len(prices) // 2])
        )
    # "cheaper, under $30" states a budget; "the keyocean one, that's 29" names a price
    if obs.budget and (not critique.pointed or _stated_amounts(obs, products, shown)):
        return f"kept the budget you stated ({obs.budget.describe()})", {}
    key = "max" if cheaper else "min"
    for old in state.active(Attribute.BUDGET):
        held = old.data.get(key)
        tighter = held is not None and (held <= price if cheaper else held >= price)
        if tighter and old.source_turn < state.turn:
            return f"your budget ({old.value}) is already {'lower' if cheaper else 'higher'}", {}
    # The other end of a range said before stays: "$15-$30", then "too pricey" of a $21 one
    other = "min" if cheaper else "max"
    kept = [
        old.data.get(other)
        for old in state.active(Attribute.BUDGET)
        if old.data.get(other) is not None
        and (old.data[other] < price if cheaper else old.data[other] > price)
    ]
    _drop_budgets(state, diff)
    floor = kept[-1] if kept else None  # the range's other end
    low, high = (floor, price) if cheaper else (price, floor)
    constraint = Constraint(
        attribute=Attribute.BUDGET,
        value=_describe_range(low, high),
        source_turn=state.turn,
        confidence=0.8,
        epoch=state.epoch,
        text=critique.text,
        data={
            "facet": Facet.BUDGET,
            "min": low,
            "max": high,
            "target": None,
            "critique": {
                "kind": critique.kind,
                "price": price,
                "positions": list(critique.positions),
                "pointed": critique.pointed and not middle,
                "liked": critique.liked,
                "middle": middle,
            },
        },
    )
    state.constraints.append(constraint)
    diff.added.append(constraint.described())
    than = (
        f"the middle price shown (${price:g}; that one lists none)"
        if middle
        else f"the ${price:g} one"
    )
    return f"{'cheaper' if cheaper else 'pricier'} than {than}: {constraint.value}", {}


def _describe_range(low: float | None, high: float | None) -> str:
    if low is not None and high is not None:
        return f"${low:g}-${high:g}"
    return f"at most ${high:g}" if high is not None else f"at least ${low:g}"


def _drop_budgets(state: ShoppingState, diff: StateDiff) -> None:
    """Budgets give way to the critique's; one read from this very message ("the keyocean one,
    that's 29") was never the shopper's budget, so it goes without a trace."""
    for old in state.active(Attribute.BUDGET):
        if old.source_turn == state.turn:
            state.constraints.remove(old)
            diff.added = [a for a in diff.added if a != old.described()]
        else:
            old.status = Status.REPLACED
            diff.replaced.append(old.described())


def _anchor(
    state: ShoppingState, obs: Observation, critique: Critique, products: list[Shown], shown, diff
) -> Effect:
    """ "More like that one": the product becomes a soft anchor for the ranking."""
    if not products:
        return "", {}
    product = products[0]
    if critique.kind == "pick":
        # Noted, not steered by: a shopper who names a product they like has not asked for more
        # of it, and reading a pick where there is none would pull the list off course.
        return f"you picked #{product.position}", {}
    anchor = {**product.to_dict(), "kind": critique.kind}
    return f"more like #{product.position}: same category, shared details, similar price", anchor


def _reject_values(
    state: ShoppingState, obs: Observation, critique: Critique, products: list[Shown], shown, diff
) -> Effect:
    """ "Not that brand / colour / material / style": the values the shopper names, else the
    critiqued product's own."""
    facet = critique.kind.removeprefix("not_")
    named = [value for f, value in critique.named if f == facet]
    own = products[0].values(facet) if len(products) == 1 else ()
    if not named and facet != "style" and len(own) <= MAX_IMPLIED_REJECTIONS:
        named = list(own)  # "not that colour" of one product: its colours, unless a palette
    rejected = [(facet, v.lower() if facet == "brand" else v) for v in dict.fromkeys(named)]
    if _CORRECTING.match(obs.text):
        # "no, a blue dress for me": the shopper corrects what was read, and asks for blue.
        wanted = {(m.facet, m.value) for m in obs.values}
        rejected = [pair for pair in rejected if pair not in wanted]
    # Words of "the santa one lol no" are not rejected one by one: "neck" of "crew neck ones"
    # would turn down every v-neck too; the products themselves are not shown again.
    added = [_reject(state, f, v, diff) for f, v in rejected]
    said = ", ".join(v for (_, v), new in zip(rejected, added, strict=True) if new)
    return (f"no more {said}" if said else "not shown again"), {}


MAX_IMPLIED_REJECTIONS = 2
# A message opening with "no," corrects what was read: "no, a blue dress for me".
_CORRECTING = re.compile(
    rf"\s*(?:{'|'.join(sorted(CONVERSATION.words['correcting']))})\s*[,.!]", re.IGNORECASE
)


def _reject(state: ShoppingState, facet: str, value: str, diff: StateDiff) -> bool:
    # Turned down already, under this facet or another typed one ("no maxi ones": maxi as a
    # style, then as the length the critique reads): once is enough, and the shopper sees it
    # once. A word turned down gives way to the facet that names it ("not fossil": the brand).
    if any(r.value == value and r.attribute != "word" for r in state.rejected):
        return False
    state.rejected = [r for r in state.rejected if not (r.attribute == "word" and r.value == value)]
    for constraint in state.active():
        if constraint.data.get("facet") == facet and constraint.value == value:
            constraint.status = Status.NEGATED
    state.rejected.append(Rejection(facet, value, state.turn))
    diff.negated.append({"attribute": facet, "value": value})
    return True


def _length(
    state: ShoppingState, obs: Observation, critique: Critique, products: list[Shown], shown, diff
) -> Effect:
    """ "Too long" turns down long lengths (the catalog lists them as styles: maxi, knee high);
    "too short", "not the cropped ones" turn down short ones."""
    wanted = "short" if critique.kind == "shorter" else "long"
    said = [
        word
        for word in (*critique.text.lower().split(), *critique.words)
        if CUES.length_words.get(word) not in (None, wanted)
    ]
    value = said[0] if said else ("long" if wanted == "short" else "short")
    _reject(state, "length", value, diff)
    return f"{critique.kind} than #{','.join(map(str, critique.positions))}: no {value}", {}


def _size_preference(
    state: ShoppingState, obs: Observation, critique: Critique, products: list[Shown], shown, diff
) -> Effect:
    """ "Too big" / "too small": no catalog column says how big, so a soft preference the
    reranker reads from this record."""
    return f"prefer {critique.kind} than #{','.join(map(str, critique.positions))}", {}


def _none_of_these(
    state: ShoppingState, obs: Observation, critique: Critique, products: list[Shown], shown, diff
) -> Effect:
    brands = sorted({p.brand.lower() for p in products if p.brand})
    return "none of these again; other brands first", {"brands": brands}


_CRITIQUE_EFFECTS = {
    "cheaper": _price_budget,
    "pricier": _price_budget,
    "more_like": _anchor,
    "pick": _anchor,
    "not_brand": _reject_values,
    "not_color": _reject_values,
    "not_material": _reject_values,
    "not_style": _reject_values,
    "shorter": _length,
    "longer": _length,
    "smaller": _size_preference,
    "bigger": _size_preference,
    "none_of_these": _none_of_these,
}
