"""What the learned reader's spans decide in a message's observation: the item, its words and
its catalog node. Measured on the understanding corpus's dev split, the reader's item beat the
rules' (item F1 0.781 -> 0.875); its negation scope, budget phrases and critiques did not beat
the rules there (negation F1 0.736 against 0.770; budget and critiques level or lower), so
those stay with the rules. Where the reader names no item, the rules' reading stands, unless an
item is known and the reader reads the rules' item words as something the item has ("ones with
pockets"): dev conversations 0.767 -> 0.770 of turns, the corpus's item F1 level. A free
fragment in which the reader leaves nothing unread is talk, searched but not held (`talk`):
dev exact-state 0.367 -> 0.397, features F1 0.171 -> 0.233."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..index.text import stem
from ..reader.doc import Doc, Span


def apply_spans(
    doc: Doc, obs, item_known: bool = False, names_a_kind: Callable[[str], bool] | None = None
) -> None:
    refused = {stem(w) for phrase in obs.negated_words for w in phrase.lower().split()}
    wanted = [
        s
        for s in doc.of("item")
        if not doc.negated(s)
        and not any(a < s.end and s.start < b for a, b in obs.shown_kinds)
        and not _head_refused(doc, s, refused)
    ]
    said = obs.category_text.lower().split()
    rules = set(said)
    # ... only when the rules' item names a kind: not "team" of "made the all-star team ...
    # his old cleats are falling apart", where the reader's cleats stand, however unsure; nor
    # "piece" of "a single piece of ski gear" (a piece of something names no kind).
    kinds = [w for at, w in enumerate(said) if said[at + 1 : at + 2] != ["of"]]
    if names_a_kind is not None and not any(names_a_kind(w) for w in kinds):
        rules = set()
    if rules and all(_unsure(s) and not rules & set(doc.words(s).lower().split()) for s in wanted):
        wanted = []  # "a little girl! I want to send a cute dress": the rules' dress stands
    if wanted:
        # Of several items, the one the reader is surest of: in a story ("coins all over the
        # floor ... i need a new men's wallet") the one asked for reads as a surer kind.
        # ... unless one is asked for instead ("he got a wallet. a keychain instead").
        instead = [s for s in wanted if _said_instead(doc.text[s.end :])]
        span = instead[-1] if instead else max(wanted, key=lambda s: s.score or 0.0)
        obs.category_text = doc.words(span)
        obs.item_node, obs.item_p = span.value, span.score
    elif item_known and obs.category_text and _read_as_other(doc, obs.category_text):
        # "ones with pockets": pockets is what the item should have; not "shorts instead".
        asked_instead = f"{obs.category_text} instead".lower() in doc.text.lower()
        obs.category_text = obs.category_text if asked_instead else ""


UNSURE = 0.1  # an item the reader is this unsure of gives way to another the rules read


def _unsure(span: Span) -> bool:
    return (span.score or 0.0) < UNSURE


def _said_instead(after: str) -> bool:
    """Does "instead" follow the item ("a keychain instead"), not "instead of" (a refusal)?"""
    words = after.lower().replace(",", " ").split()
    return words[:1] == ["instead"] and words[1:2] != ["of"]


def _head_refused(doc: Doc, span: Span, refused: set[str]) -> bool:
    """Did the rules read the item's head word as turned down ("he is never going to carry an
    umbrella": no umbrella is wanted)?"""
    words = doc.token_range(span.start, span.end)
    return bool(words) and doc.tokens[words[-1]].stem in refused


def _read_as_other(doc: Doc, words: str) -> bool:
    """Does the reader mark the rules' item words as a value of another slot?"""
    marked = _marks_in(doc, words.lower(), lowered=True)
    return bool(marked) and all(s.label in OTHER_SLOTS for s in marked or ())


def _marks_in(doc: Doc, words: str, lowered: bool = False) -> list[Span] | None:
    """The reader's spans over where `words` are said in the message (None: not said so)."""
    at = (doc.text.lower() if lowered else doc.text).find(words)
    if at < 0:
        return None
    end = at + len(words)
    return [s for s in doc.spans if s.start < end and at < s.end]


# What the rules may take for an item that the reader reads as something the item has.
OTHER_SLOTS = frozenset({"feature", "color", "material", "style", "use", "size", "width", "brand"})


def talk(doc: Doc | None, fragment: str, read: Sequence[tuple[int, int]] = ()) -> bool:
    """Is a free fragment talk rather than a requirement: nothing in it that the reader marks
    (a value, a negation, a reference, a critique) is left unread by the typed readings (`read`:
    their character spans)? "so proud!!" (nothing marked), "these say for women, he's a man"
    (women, read as a department). Such a fragment is still searched, not held as a wish."""
    marked = _marks_in(doc, fragment) if doc is not None else None
    if marked is None:
        return False  # no reader, or written otherwise than read: not known to be talk
    return all(any(a < s.end and s.start < b for a, b in read) for s in marked)
