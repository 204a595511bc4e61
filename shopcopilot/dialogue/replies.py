"""What the copilot says to a person: what this turn changed, what still holds, the item in the
shopper's words, and the question, with the wording drawn from data/replies.json so a reply
does not repeat itself turn after turn."""

from __future__ import annotations

import json
from collections.abc import Sequence
from itertools import groupby
from pathlib import Path

from ..index.categoriser import WHO_WORDS
from ..state.budget import LOW_PRICE
from ..state.model import ShoppingState
from ..state.requirements import Requirement
from ..terms import Attribute

_DATA = json.loads(Path(__file__).with_name("data").joinpath("replies.json").read_text("utf-8"))
WORDINGS: dict[str, list[str]] = {k: v for k, v in _DATA.items() if not k.startswith("_")}
HELD_SHOWN = 3  # requirements named as still holding, at most
# What is worth repeating as still holding, in this order (a fragment of free text is not).
HOLDS_FIRST = ("budget", "size", "color", "department", "width", "material", "brand", "style")


def say(occasion: str, turn: int, **slots: object) -> str:
    choices = WORDINGS[occasion]
    text = choices[turn % len(choices)].format(**slots)
    return text[:1].upper() + text[1:]


def item_words(state: ShoppingState) -> str:
    """The item as the shopper named it, as many ("running shoes"), else "options"."""
    items = state.active(Attribute.CATEGORY)
    if not items:
        return "options"
    item = max(items, key=lambda c: c.source_turn)
    if set(item.data.get("words", ())) <= WHO_WORDS:
        return "options"  # "something for women" names who, not what
    return plural(item.text or item.value)


def plural(words: str) -> str:
    """'jacket' -> 'jackets', 'dress' -> 'dresses', 'hiking' -> 'hiking options'."""
    last = words.split()[-1] if words.split() else ""
    if last in _UNCOUNTED:
        return f"{words} options"
    if last in _IRREGULAR:
        return words[: len(words) - len(last)] + _IRREGULAR[last]
    if last.endswith(("ss", "x", "ch", "sh")):
        return words + "es"
    if not last or last.endswith(("s", "wear", "ing")) or not last.isalpha():
        return words if last.endswith(("s", "wear")) else f"{words} options"
    if last.endswith("y") and last[-2:-1] not in "aeiou":
        return words[:-1] + "ies"
    return words + "s"


# Names no one counts: a kind of goods, a sport or a look the catalog files things under.
_UNCOUNTED = frozenset(
    {"luggage", "jewelry", "jewellery", "clothing", "footwear", "lingerie", "gear", "denim"}
    | {"soccer", "golf", "tennis", "basketball", "baseball", "football", "volleyball", "softball"}
    | {"lacrosse", "hockey", "rugby", "cricket", "yoga", "pilates", "ballet", "gymnastics"}
    | {"karate", "dance", "cheer", "athletic", "outdoor", "casual", "formal", "western"}
)
_IRREGULAR = {"scarf": "scarves", "knife": "knives", "thief": "thieves", "leaf": "leaves"}


def change_lead(
    turn: int,
    state: ShoppingState,
    now: Sequence[Requirement],
    before: Sequence[Requirement],
    count: int,
    new_item: bool,
    left_out: Sequence[str] = (),
    item: str | None = None,
) -> str:
    """'Blue, still under $100 and in size 10.5: 10 running shoes.' `item`: the kind shown, when
    not the one asked for."""
    if not count:
        return say("nothing", turn, held="")
    earlier = {(r.facet, r.value.lower(), r.negated) for r in before}
    added = [r for r in now if (r.facet, r.value.lower(), r.negated) not in earlier]
    kept = [r for r in now if (r.facet, r.value.lower(), r.negated) in earlier]
    item = item or item_words(state)
    # A word turned down is a change worth naming; a wish in free words is named when it is the
    # turn's only news and says it in a few words ("arch support"), else the chips show it.
    shown_added = [
        r for r in added if r.negated or r.facet not in ("item", "feature", "recipient", "age")
    ]
    if not shown_added and not new_item and before:
        shown_added = [r for r in added if r.facet == "feature" and _few_words(r.label)]
    held = _held(kept if not new_item else now, item)
    if new_item:
        lead = say("new_item", turn, item=item, count=count, held=_with(held))
    elif not before or _first_item(added, before):
        # ... or the first item named ("a gift for my mom", then "maybe a sun hat?").
        lead = say("first", turn, item=item, count=count, held=_with(_held(now, item)))
    elif shown_added:
        changed = _changes(shown_added)
        still = f", still {held}" if held else ""
        lead = say("changed", turn, changed=changed, item=item, count=count, held=still)
    else:
        lead = say("same", turn, item=item, count=count, held=_with(held))
    if left_out:
        applies = "applies" if len(left_out) == 1 else "apply"
        lead += " " + say("no_longer", turn, dropped=_join(list(left_out)), applies=applies)
    return lead


FEW_WORDS = 3


def _few_words(label: str) -> bool:
    return 0 < len(label.split()) <= FEW_WORDS


def _first_item(added: Sequence[Requirement], before: Sequence[Requirement]) -> bool:
    return any(r.facet == "item" for r in added) and not any(r.facet == "item" for r in before)


def spoken(requirement: Requirement) -> str:
    """A requirement as a sentence names it: "the $80 limit" (its chip says "≤ $80")."""
    label = requirement.label
    if requirement.facet != "budget":
        return label
    if requirement.value == LOW_PRICE:
        return "the low-price preference"
    for sign, said in (("≤ ", "the {} limit"), ("≥ ", "the {} minimum")):
        if label.startswith(sign):
            return said.format(label.removeprefix(sign))
    return f"the {label} range" if "–" in label else f"the budget of {label}"


def taken_back(before: Sequence[Requirement], now: Sequence[Requirement]) -> list[Requirement]:
    """What the shopper's message took back ("forget brown", "any size is fine"): a requirement
    held before with nothing of its facet held now (a new value replaces, it takes nothing
    back)."""
    facets = {r.facet for r in now}
    return [r for r in before if r.facet not in facets]


def unrelaxed(requirements: Sequence[Requirement], relaxed: Sequence[str]) -> list[Requirement]:
    """The requirements the list meets: not those relaxed this turn ("for baby", "in blue"),
    which the reply names as relaxed instead of as held."""
    gone = {phrase for label in relaxed for phrase in _alternatives(label)}
    return [r for r in requirements if not {_phrase(r), f"in {r.value}", f"in {r.label}"} & gone]


def _alternatives(label: str) -> set[str]:
    """A relaxed label and each value it names alone: "for kids or baby", "for kids", "for baby"."""
    lead, _, values = label.partition(" ")
    return {label, *(f"{lead} {value}" for value in values.split(" or "))}


WORN_IN = ("color", "material")  # "in blue", "in leather"


def _held(requirements: Sequence[Requirement], item: str) -> str:
    ranked = sorted(
        (r for r in requirements if r.facet in HOLDS_FIRST or r.negated),
        key=lambda r: HOLDS_FIRST.index(r.facet) if r.facet in HOLDS_FIRST else len(HOLDS_FIRST),
    )
    said = [r for r in ranked if r.value.lower() not in item.lower()]  # "black" of "black boots"
    labels: list[str] = []
    for (facet, negated), group in groupby(said, key=lambda r: (r.facet, r.negated)):
        held = list(group)
        if facet in WORN_IN and not negated:  # "in navy or grey": either will do
            labels.append("in " + _join([r.label for r in held], "or"))
        else:
            labels += [_phrase(r) for r in held]
    return _join(labels[:HELD_SHOWN])


def _phrase(requirement: Requirement) -> str:
    if requirement.negated:
        return requirement.label
    if requirement.facet == "budget":
        if requirement.value == LOW_PRICE:
            return "at low prices"  # "cheap": no limit said
        label = requirement.label
        return label.replace("≤ ", "under ").replace("≥ ", "over ")
    if requirement.facet == "department":
        return f"for {requirement.label}"  # "for girls or women": a daughter of age unsaid
    if requirement.facet == "size":
        return f"in {requirement.label}"
    if set(requirement.label.lower().split()[-1:]) & _THINGS:
        return f"with {requirement.label}"  # "leggings with pockets", not "leggings, pockets"
    return requirement.label


_THINGS = frozenset(_DATA["_with_things"])


def _with(held: str) -> str:
    return f", {held}" if held else ""


def _join(parts: Sequence[str], last: str = "and") -> str:
    parts = [p for p in parts if p]
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + f" {last} " + parts[-1]


def _changes(added: Sequence[Requirement]) -> str:
    """'blue and not padding, push up or wire': the values turned down said once, as one, and
    the colours (or materials) wanted too, either of which will do ('navy or grey')."""
    wanted = []
    for facet, group in groupby((r for r in added if not r.negated), key=lambda r: r.facet):
        phrases = [_phrase(r) for r in group]
        wanted += [_join(phrases, "or")] if facet in WORN_IN else phrases  # "navy or grey"
    refused = [r.value for r in added if r.negated]
    if len(refused) > 1:
        wanted.append("not " + _join(refused, "or"))
    else:
        wanted += [_phrase(r) for r in added if r.negated]
    return _join(wanted)


# What a listing that does not state a value leaves unsaid, as a reply names it.
_UNSAID_WHAT = {"color": "color", "material": "material", "size": "sizes", "width": "width"}


def unsaid(turn: int, added: Sequence[dict], naming: Sequence[tuple]) -> str:
    """'None of them lists brown, though' or 'Only #8 lists brown': a value asked for this turn
    that the first product does not name (kept because nothing contradicts it). `added`: the
    turn's new values (StateDiff.added); `naming`: (facet, values, places of the listed products
    that name one) (Ranking.naming)."""
    now = {(str(a["attribute"]), a["value"]) for a in added}
    for facet, values, places in naming:
        named = [v for v in values if (facet, v) in now]
        if not named or 1 in places:
            continue
        slots = {"value": " or ".join(named), "what": _UNSAID_WHAT[facet]}
        if not places:
            return say("unsaid", turn, **slots)
        where = " and ".join(f"#{p}" for p in places[:3])
        lists = "lists" if len(places) == 1 else "list"
        return say("unsaid_but", turn, places=where, lists=lists, **slots)
    return ""


def unmet(turn: int, wishes: Sequence[str]) -> str:
    """'None of these mentions unicorns: they are the closest I have.'"""
    return say("unmet_wish", turn, wish=_join(list(wishes), "or")) if wishes else ""
