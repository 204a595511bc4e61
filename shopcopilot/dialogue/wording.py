"""The words: a short lead-in about what is shown, then the one question."""

from __future__ import annotations

from ..index.categoriser import WHO_WORDS
from ..state.model import ShoppingState
from ..terms import Attribute

QUESTIONS = {
    "other": "What else matters to you for this item?",
    "opening": "What are you looking for?",  # the open question while no item is known
    "category": "What kind of item are you looking for?",
    "style": "Who is it for, and is there a style or fit you like?",
    "color": "Do you have a color in mind?",
    "material": "Do you prefer a particular material?",
    "size": "What size do you need?",
    "use_case": "What will you mainly use it for?",
    "budget": "What budget should I stay within?",
    "brand": "Is there a brand you prefer?",
    "feature": "Is there a feature you need, such as a particular closure?",
}


def compose_message(
    state: ShoppingState,
    attribute: str | None,
    options: list[str],
    shown: int,
    relaxed: tuple[str, ...] = (),
    spread: bool = False,
) -> str:
    lead = _spread_lead(state, shown) if spread and shown > 1 else _lead(state, shown)
    if relaxed and shown:
        lead = f"{relaxed_text(state, relaxed)} {lead}"
    if attribute is None:
        return lead
    return f"{lead} {question_text(state, attribute, options)}"


def question_text(state: ShoppingState, attribute: str | None, options: list[str]) -> str:
    """The one question, with example answers when there are some."""
    if attribute is None:
        return ""
    items = state.active(Attribute.CATEGORY)
    if attribute == "other" and all(set(c.data.get("words", ())) <= WHO_WORDS for c in items):
        # "good morning!", "something for my kids": there is no item to ask more about yet
        attribute = "opening"
    question = QUESTIONS.get(attribute, QUESTIONS["other"])
    if options and attribute not in ("other", "opening"):
        question = question.rstrip("?") + f" (for example: {_join(options)})?"
    return question


def _lead(state: ShoppingState, shown: int) -> str:
    if shown == 0:
        return "I couldn't find a close match yet."
    category = next((c.text or c.value for c in state.active(Attribute.CATEGORY)), "")
    what = f" for {category}" if category else ""
    if shown == 1:
        return f"Here is my best match so far{what}."
    return f"Here are {shown} options{what}, best match first."


def _spread_lead(state: ShoppingState, shown: int) -> str:
    category = next((c.text or c.value for c in state.active(Attribute.CATEGORY)), "")
    what = f" of {category}" if category else ""
    return (
        f"Here is a spread{what}: {shown} different kinds, brands and prices. Which one comes "
        'closest? Tell me ("the second one") and I\'ll show more like it.'
    )


def relaxed_text(state: ShoppingState, relaxed: tuple[str, ...]) -> str:
    """'Nothing I found is for women, so I relaxed that.' ('Nothing else', after a list.)"""
    found = "Nothing else I found" if state.shown_this_epoch() else "Nothing I found"
    return f"{found} is {_join(list(relaxed), 'and')}, so I relaxed that."


def _join(options: list[str], last: str = "or") -> str:
    if len(options) <= 1:
        return "".join(options)
    return ", ".join(options[:-1]) + f" {last} " + options[-1]
