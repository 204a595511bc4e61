"""What a message was read as, each reading with the words it came from, for the trace and the
web page: a wrong reading is visible at a glance ("up" read as the item, "sixty" as a rejected
word). Offsets index the message as read (typos fixed); -1 where a reading has no one place.
What was said of shown products is in the diff's references and critiques, with their words.
"""

from __future__ import annotations

import re
from typing import Any

from .budget import read_numbers
from .parse import NOT_A_WISH, Observation, content_word, cue_span, cue_spans


def readings(obs: Observation) -> list[dict[str, Any]]:
    """The observation as a list of {kind, value, start, end, words}, in message order."""
    text = obs.text
    found = [
        *(_at(text, "value", f"{m.facet}={m.value}", m.start, m.end) for m in obs.values),
        *(_at(text, "not", f"{m.facet}={m.value}", m.start, m.end) for m in obs.negated),
        *(_found(text, "not", word, word) for word in obs.negated_words),
        *(
            [_found(text, "item", obs.category_text, obs.category_text)]
            if obs.category_text
            else []
        ),
        *(_found(text, "wish", fragment, fragment) for fragment in obs.fragments),
        *_cues(obs),
    ]
    if obs.budget is not None:
        found.append(_found(text, "budget", obs.budget.describe(), _money_clause(text)))
    if obs.audience is not None:
        found += [_at(text, "who", f"{slot}={h.value}", h.start, h.end) for slot, h in _heard(obs)]
    if obs.doc is not None:  # the learned reader's spans, each with its words
        found += [
            _at(text, f"read {s.label}", "" if s.value is None else str(s.value), s.start, s.end)
            for s in obs.doc.spans
        ]
    return sorted(found, key=lambda r: (r["start"] < 0, r["start"]))


WORD = re.compile(r"[a-z0-9][a-z0-9'-]*", re.I)


def typed_spans(obs: Observation) -> list[tuple[int, int]]:
    """Where in the message the typed readings were said: values, rejections, the item, the
    budget, who it is for, cues and what was said of shown products (free fragments are not
    typed: they are what is left when nothing else reads the words)."""
    text = obs.text
    spans = [(m.start, m.end) for m in (*obs.values, *obs.negated)]
    spans += [(p.start, p.end) for p in obs.shown_talk.pointers]
    spans += [(c.start, c.end) for c in obs.shown_talk.cues]
    spans += list(obs.audience.spans) if obs.audience is not None else []
    spans += cue_spans(text)
    lowered = text.lower()
    # The budget's own clause: "with a hood, and not more than 50 on ..." leaves the hood unread.
    money = _money_clause(obs.budget.text) if obs.budget else ""
    for said in (obs.category_text, money, *obs.negated_words):
        at = lowered.find(said.lower()) if said else -1
        if at >= 0:
            spans.append((at, at + len(said)))
    return spans


def covered(obs: Observation, fragment: str, spans: list[tuple[int, int]]) -> bool:
    """Are the fragment's words all read already as typed readings ("size 18", "about 25
    quid")? Such a fragment is kept for the search, but asks nothing the readings do not."""
    at = obs.text.lower().find(fragment.lower())
    if at < 0:  # written otherwise than read (a typo fixed): not known to be covered
        return False
    words = [
        (at + m.start(), at + m.end())
        for m in WORD.finditer(fragment)
        if content_word(m.group().lower()) and m.group().lower() not in NOT_A_WISH
    ]
    return all(overlaps(start, end, spans) for start, end in words)


def overlaps(start: int, end: int, spans: list[tuple[int, int]]) -> bool:
    """Does the stretch [start, end) overlap any of the spans?"""
    return any(a < end and start < b for a, b in spans)


def _money_clause(text: str) -> str:
    """The clause the budget was said in ("under forty bucks"), or the whole message."""
    clauses = re.split(r"[,;.!?]\s+|\s+(?:and|but)\s+", text)
    return next((c for c in clauses if read_numbers(c).budget is not None), text)


def _cues(obs: Observation) -> list[dict[str, Any]]:
    """No preference, not sure, a change of mind, browsing: where the message said so."""
    out = []
    for kind, value, said in (
        ("no preference", ", ".join(obs.no_preference), bool(obs.no_preference)),
        ("not sure", "", True),
        ("change of mind", "", obs.override),
        ("browsing", "", bool(obs.browsing)),
    ):
        span = cue_span(obs.text, kind) if said else None
        if span:
            out.append(_at(obs.text, kind, value, *span))
    return out


def _heard(obs: Observation) -> list[tuple[str, Any]]:
    reading = obs.audience
    said = {"recipient": reading.recipient, "age group": reading.age_group} if reading else {}
    if reading and reading.gender and not reading.recipient:  # a recipient's gender is theirs
        said["department"] = reading.gender
    return [(slot, heard) for slot, heard in said.items() if heard is not None]


def _at(text: str, kind: str, value: str, start: int, end: int) -> dict[str, Any]:
    return {"kind": kind, "value": value, "start": start, "end": end, "words": text[start:end]}


def _found(text: str, kind: str, value: str, words: str) -> dict[str, Any]:
    """A reading kept as words: its place is where those words are in the message."""
    match = re.search(re.escape(words.strip()), text, re.I) if words.strip() else None
    if match is None:
        return {"kind": kind, "value": value, "start": -1, "end": -1, "words": words}
    return _at(text, kind, value, *match.span())
