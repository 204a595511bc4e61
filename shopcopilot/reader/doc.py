"""One reading of a message: its tokens, cut once, and the spans each reader adds.

A message is tokenised here and nowhere else for the reader; the readers (the learned tagger,
the item classifier, the rules' vocabulary) each add typed spans to the same `Doc`, and the
state consumes the spans. Offsets are characters of the text as typed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..index.text import stem

# A word (letters and digits, with inner apostrophes: "men's"), a number with its inner point or
# comma ("10.5", "1,299.99"), or any other single character ("$", "#", "-", an emoji).
_TOKEN = re.compile(r"[^\W_]+(?:(?:['’]|(?<=\d)[.,](?=\d))[^\W_]+)*|\S")


@dataclass(frozen=True, slots=True)
class Token:
    text: str
    start: int
    end: int
    lower: str
    stem: str


@dataclass(frozen=True, slots=True)
class Span:
    start: int  # characters of Doc.text
    end: int
    label: str  # item, color, budget, not, ref, ...
    value: Any = None  # the item's catalog node, a budget's amounts, ...
    score: float = 1.0
    source: str = "model"

    def covers(self, other: Span | tuple[int, int]) -> bool:
        start, end = (other.start, other.end) if isinstance(other, Span) else other
        return self.start <= start and end <= self.end

    def as_dict(self, text: str) -> dict[str, Any]:
        out = {
            "start": self.start,
            "end": self.end,
            "label": self.label,
            "text": text[self.start : self.end],
        }
        if self.value is not None:
            out["value"] = self.value
        return out | {"source": self.source}


@dataclass(slots=True)
class Doc:
    text: str
    tokens: list[Token]
    spans: list[Span] = field(default_factory=list)

    def of(self, label: str) -> list[Span]:
        return [s for s in self.spans if s.label == label]

    def words(self, span: Span) -> str:
        return self.text[span.start : span.end]

    def negated(self, span: Span) -> bool:
        """Is the span inside a negation's scope ("nothing white": white)?"""
        return any(n.covers(span) for n in self.of("not"))

    def token_range(self, start: int, end: int) -> range:
        """The tokens that lie within characters [start, end)."""
        first = next((i for i, t in enumerate(self.tokens) if t.end > start), len(self.tokens))
        last = next((i for i, t in enumerate(self.tokens) if t.start >= end), len(self.tokens))
        return range(first, last)


def make_doc(text: str) -> Doc:
    tokens = []
    for match in _TOKEN.finditer(text):
        word = match.group()
        lower = word.lower().replace("’", "'")
        tokens.append(
            Token(
                word,
                match.start(),
                match.end(),
                lower,
                stem(lower) if any(c.isalnum() for c in lower) else lower,
            )
        )
    return Doc(text, tokens)
