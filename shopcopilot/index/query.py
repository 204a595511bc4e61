"""What a search asks for: structured clauses, filters, and the hits it returns.

A `Query` is a list of clauses so callers can build searches without escaping
anything; `Query.parse` turns user text into the same structure.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import NamedTuple

from .fields import check_fields
from .tokenize import tokens


class Occur(StrEnum):
    SHOULD = "should"  # optional, adds to the score
    MUST = "must"  # every hit contains it
    MUST_NOT = "must_not"  # no hit contains it


@dataclass(frozen=True, slots=True)
class Clause:
    """Words searched as separate terms, or as one phrase when `phrase` is set.

    For a term clause `occur` applies to each word: MUST means every word must
    appear (in any of `fields`), MUST_NOT that none may. Empty `fields` means
    every search field.
    """

    text: str
    phrase: bool = False
    occur: Occur = Occur.SHOULD
    boost: float = 1.0
    fields: tuple[str, ...] = ()
    words: tuple[str, ...] = field(init=False, repr=False, compare=False)  # `text` as index tokens

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise TypeError(f"clause text must be a string, got {type(self.text).__name__}")
        object.__setattr__(self, "occur", Occur(self.occur))
        object.__setattr__(self, "fields", tuple(self.fields))
        check_fields(self.fields)
        if (
            not isinstance(self.boost, (int, float))
            or not math.isfinite(self.boost)
            or self.boost <= 0
        ):
            raise ValueError(f"clause boost must be a finite number > 0, got {self.boost!r}")
        object.__setattr__(self, "words", tuple(tokens(self.text)))


def terms(
    text: str,
    *,
    occur: Occur | str = Occur.SHOULD,
    boost: float = 1.0,
    fields: tuple[str, ...] = (),
) -> Clause:
    return Clause(text, phrase=False, occur=Occur(occur), boost=boost, fields=fields)


def phrase(
    text: str,
    *,
    occur: Occur | str = Occur.SHOULD,
    boost: float = 1.0,
    fields: tuple[str, ...] = (),
) -> Clause:
    return Clause(text, phrase=True, occur=Occur(occur), boost=boost, fields=fields)


# A quoted phrase (closing quote optional so user text never fails), or a bare word.
_PIECE = re.compile(r'(?P<sign>[+-]?)(?:"(?P<phrase>[^"]*)"?|(?P<word>[^\s"]+))')


@dataclass(frozen=True, slots=True)
class Query:
    """Clauses, and `max_postings`: an optional word (or a phrase whose every word) held by more
    than this many products in a field is not scored in that field. Such a word's postings are
    most of a search's cost and its IDF is too low to order candidates; a bound in products,
    not a share, so a catalog smaller than it searches exactly as without (None: no bound).
    When the bound would leave nothing to score, the query is searched whole."""

    clauses: tuple[Clause, ...] = ()
    max_postings: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "clauses", tuple(self.clauses))
        if self.max_postings is not None and (
            not isinstance(self.max_postings, int) or self.max_postings < 1
        ):
            raise ValueError(
                f"Query.max_postings must be an integer >= 1 or None, got {self.max_postings!r}"
            )
        for clause in self.clauses:
            if not isinstance(clause, Clause):
                raise TypeError(
                    f"Query clauses must be Clause objects, got {type(clause).__name__}"
                )

    @classmethod
    def parse(cls, text: str, *, require_all: bool = False) -> Query:
        """User text: words, "quoted phrases", +required, -excluded, AND / OR / NOT.

        Words are OR-ed by default (`require_all` makes them all required);
        `a AND b` requires both neighbours; `NOT x` excludes x. Nothing in the
        text can make parsing fail.
        """
        pieces = _pieces(text)
        default = Occur.MUST if require_all else Occur.SHOULD
        clauses: list[Clause] = []
        plain: list[
            str
        ] = []  # optional words in a row: one clause (every back end splits it per word)
        pending: Occur | None = None  # set by NOT / AND for the next clause

        def flush() -> None:
            if plain:
                clauses.append(Clause(" ".join(plain)))
                plain.clear()

        for sign, body, is_phrase in pieces:
            if not is_phrase and body in ("AND", "OR", "NOT") and not sign:
                if body == "AND" and plain:
                    last = plain.pop()
                    flush()
                    clauses.append(Clause(last, occur=Occur.MUST))
                elif body == "AND" and clauses and clauses[-1].occur is Occur.SHOULD:
                    clauses[-1] = replace(clauses[-1], occur=Occur.MUST)
                pending = {"AND": Occur.MUST, "NOT": Occur.MUST_NOT, "OR": None}[body]
                continue
            occur = {"+": Occur.MUST, "-": Occur.MUST_NOT}.get(sign) or pending or default
            pending = None
            if occur is Occur.SHOULD and not is_phrase:
                plain.append(body)
                continue
            flush()
            clauses.append(Clause(body, phrase=is_phrase, occur=occur))
        flush()
        return cls(tuple(c for c in clauses if c.words))


def _pieces(text: str) -> list[tuple[str, str, bool]]:
    out = []
    for match in _PIECE.finditer(text):
        if match.group("phrase") is not None:
            out.append((match.group("sign"), match.group("phrase"), True))
        else:
            out.append((match.group("sign"), match.group("word"), False))
    return out


def as_query(query: str | Query) -> Query:
    if isinstance(query, Query):
        return query
    if isinstance(query, str):
        return Query.parse(query)
    raise TypeError(f"query must be a string or a Query, got {type(query).__name__}")


@dataclass(frozen=True, slots=True)
class Filters:
    """Hard limits on hits. A product with no price passes price limits unless told otherwise."""

    min_price: float | None = None
    max_price: float | None = None
    department: str | tuple[str, ...] | None = None
    include_missing_price: bool = True

    def __post_init__(self) -> None:
        for name in ("min_price", "max_price"):
            value = getattr(self, name)
            if value is not None and (
                not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0
            ):
                raise ValueError(
                    f"Filters.{name} must be a finite number >= 0 or None, got {value!r}"
                )
        if (
            self.min_price is not None
            and self.max_price is not None
            and self.min_price > self.max_price
        ):
            raise ValueError(
                f"Filters.min_price ({self.min_price}) is above max_price ({self.max_price})"
            )

    @property
    def departments(self) -> tuple[str, ...]:
        """Lower-cased department names, any of which passes (empty: no department filter)."""
        if self.department is None:
            return ()
        names = (self.department,) if isinstance(self.department, str) else self.department
        return tuple(dict.fromkeys(name.strip().lower() for name in names if name.strip()))

    @property
    def limits_price(self) -> bool:
        return self.min_price is not None or self.max_price is not None

    @property
    def is_empty(self) -> bool:
        return not self.limits_price and not self.departments


@dataclass(frozen=True, slots=True)
class Hit:
    parent_asin: str
    score: float
    rank: int  # 1-based position in the full ranking (offset included)


class RowHits(NamedTuple):
    """Ranked store rows and their scores, best first: what a back end returns before rows
    become ids (callers that work on rows, like the reranker, never pay for that)."""

    rows: Sequence[int]
    scores: Sequence[float]

    @staticmethod
    def empty() -> RowHits:
        return RowHits((), ())


NO_FILTERS = Filters()
