"""What the learned reader's spans decide in a message's observation: the item (its words and
its catalog node) and which values a negation governs. The vocabulary still names the values;
the reader says which of them are wanted, turned down, or no requirement at all."""

from __future__ import annotations

import os

from ..catalog.vocabulary import Mention
from ..index.text import STOPWORDS, stem
from ..reader.doc import Doc, Span
from .budget import read_numbers

ITEM_SURE = float(os.environ.get("RT", "0"))  # the reader's item phrase stands from this confidence


import os
_X = os.environ.get("RX", "")


def apply_spans(doc: Doc, obs, first_turn: bool) -> None:
    if "i" not in _X:
        _item(doc, obs, first_turn)
    if "n" not in _X:
        _negation(doc, obs)
    if "b" not in _X:
        _budget(doc, obs)


def _budget(doc: Doc, obs) -> None:
    """Money the rules did not read as a budget, in a phrase the reader marks as one ("a tenner
    or so"): the deterministic reader reads the amount in that phrase alone."""
    if obs.budget is not None:
        return
    for span in doc.of("budget"):
        budget = read_numbers(doc.words(span), "budget").budget
        if budget is not None:
            obs.budget = budget
            return


def _item(doc: Doc, obs, first_turn: bool) -> None:
    wanted = [s for s in doc.of("item") if not doc.negated(s)]
    if wanted and wanted[0].score >= ITEM_SURE:
        span = wanted[0]
        obs.category_text = doc.words(span)
        obs.item_node, obs.item_p = span.value, span.score
    elif first_turn and not wanted and "k" not in _X:
        obs.category_text = ""


def _negation(doc: Doc, obs) -> None:
    nots = doc.of("not")
    mentions: list[Mention] = [*obs.values, *obs.negated]
    mentions.sort(key=lambda m: m.start)
    obs.values = [m for m in mentions if not _inside(nots, m)]
    obs.negated = [m for m in mentions if _inside(nots, m)]
    words = []
    for span in doc.spans:
        if span.label == "not" or not any(n.covers(span) for n in nots):
            continue
        if any(m.start < span.end and span.start < m.end for m in obs.negated):
            continue  # a value the vocabulary names: turned down as that value
        head = _head(doc, span)
        if head:
            words.append(head)
    obs.negated_words = words


def _inside(nots: list[Span], mention: Mention) -> bool:
    return any(n.covers((mention.start, mention.end)) for n in nots)


def _head(doc: Doc, span: Span) -> str | None:
    """The last content word of a phrase: English names the thing last."""
    words = [
        doc.tokens[i].lower
        for i in doc.token_range(span.start, span.end)
        if doc.tokens[i].lower.isalpha() and doc.tokens[i].lower not in STOPWORDS
    ]
    return stem(words[-1]) if words else None
