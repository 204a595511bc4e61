"""Budgets versus measures: "under $40" is money, "up to 30 mm wide" is not.

A number is money only when something says so: a currency sign or word next to
it, a budget word in the same clause, or the agent having just asked about
budget. A number followed by a unit of measure is never money.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_DIGIT = re.compile(r"\d")
_NUMBER = re.compile(
    r"(?P<cur>\$|usd\s*)?\s*(?P<num>\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?P<k>k\b)?", re.I
)
_UNIT_AFTER = re.compile(
    r"""^\s*(?:-\s*)?(?:mm|cm|m|km|in|inch|inches|"|”|''|ft|feet|foot|oz|ounces?|lbs?|pounds?|g|grams?|kg|ml|l|liters?|
    litres?|yards?|yd|%|percent|x|pcs|pieces?|pack|packs|pairs?|sets?|years?|yrs?|months?|days?|hours?|
    karat|carat|ct|kt|mah|w|watts?|v|volts?|atm|bar|meters?|metres?|mph|count|ply|gauge|denier|
    st|nd|rd|th|s\b)(?![a-z])""",
    re.I | re.X,
)
_CURRENCY_AFTER = re.compile(r"^\s*(?:dollars?|bucks?|usd|\$)(?![a-z])", re.I)
_MONEY_WORDS = re.compile(
    r"\b(budget|spend|spending|price[ds]?|cost[s]?|pay|paying|cheap(?:er)?|afford|expensive|"
    r"pricey|dollars?|bucks?|usd)\b",
    re.I,
)
# Strong cues make a bare number money ("under 30"); weak ones need a money context.
_STRONG_MAX_BEFORE = re.compile(
    r"(under|below|less\s+th[ae]n|lower\s+than|cheaper\s+than|no\s+more\s+than|not\s+more\s+than|"
    r"(?:not|n't|never|rather\s+not)\s+(?:\w+\s+){0,3}(?:more\s+than|over|above)|"
    r"nothing\s+(?:over|above|more\s+than))\s*$",
    re.I,
)
_WEAK_MAX_BEFORE = re.compile(
    r"(max(?:imum)?(?:\s+of)?|at\s+most|up\s+to|within|<=?|budget(?:\s+(?:is|of))?|spend(?:ing)?|"
    r"pay|limit(?:\s+(?:is|of))?|cap(?:\s+(?:is|of))?)\s*:?\s*$",
    re.I,
)
_MIN_BEFORE = re.compile(
    r"(over|above|more\s+than|at\s+least|minimum(?:\s+of)?|>=?|starting\s+at)\s*$", re.I
)
_TARGET_BEFORE = re.compile(
    r"(around|about|roughly|approximately|approx\.?|near|close\s+to|~|somewhere\s+around|"
    r"ballpark(?:\s+of)?)\s*$",
    re.I,
)
_MAX_AFTER = re.compile(
    r"^\s*(?:dollars?|bucks?)?\s*(or\s+(?:less|under|below|cheaper)|tops|max(?:imum)?|at\s+most)\b",
    re.I,
)
_RANGE = re.compile(
    r"(?:between|from)?\s*\$?\s*(?P<a>\d+(?:\.\d+)?)\s*(?:dollars?|bucks?)?\s*(?:-|–|to|"
    r"and)\s*\$?\s*(?P<b>\d+(?:\.\d+)?)",
    re.I,
)


@dataclass(frozen=True, slots=True)
class Budget:
    min_price: float | None = None
    max_price: float | None = None
    target: float | None = None
    text: str = ""

    def describe(self) -> str:
        if self.min_price is not None and self.max_price is not None:
            return f"${self.min_price:g}-${self.max_price:g}"
        if self.max_price is not None:
            return f"<= ${self.max_price:g}"
        if self.min_price is not None:
            return f">= ${self.min_price:g}"
        return f"~${self.target:g}" if self.target is not None else "any"


def parse_budget(
    text: str, expecting_budget: bool = False, protected: tuple[str, ...] = ()
) -> Budget | None:
    """The budget stated in `text`, if any. `protected` spans (category names) are ignored."""
    if not _DIGIT.search(text):
        return None  # every amount is read from digits; most messages have none
    masked = _mask(text, protected)
    # Sentence ends, but not the point inside "29.99".
    for clause in re.split(r"(?<!\d)\.|\.(?!\d)|[;!?\n]", masked):
        budget = _clause_budget(clause, expecting_budget)
        if budget:
            return budget
    return None


def _mask(text: str, protected: tuple[str, ...]) -> str:
    for phrase in protected:
        text = re.sub(re.escape(phrase), lambda m: " " * len(m.group()), text, flags=re.I)
    return text


def _clause_budget(clause: str, expecting: bool) -> Budget | None:
    money_clause = expecting or bool(_MONEY_WORDS.search(clause)) or "$" in clause
    ranged = _range(clause, money_clause)
    if ranged:
        return ranged
    for match in _NUMBER.finditer(clause):
        after = clause[match.end() :]
        if _UNIT_AFTER.match(after) and not match.group("cur"):
            continue
        explicit = bool(match.group("cur")) or bool(_CURRENCY_AFTER.match(after))
        value = _value(match)
        before = clause[: match.start()]
        if _TARGET_BEFORE.search(before):
            if explicit or money_clause:
                return Budget(target=value, text=clause.strip())
        elif _STRONG_MAX_BEFORE.search(before) or _MAX_AFTER.match(after):
            return Budget(max_price=value, text=clause.strip())
        elif _WEAK_MAX_BEFORE.search(before):
            if explicit or money_clause:
                return Budget(max_price=value, text=clause.strip())
        elif _MIN_BEFORE.search(before):
            if explicit or money_clause:
                return Budget(min_price=value, text=clause.strip())
        elif explicit or money_clause:
            return Budget(target=value, text=clause.strip())
    return None


def _range(clause: str, money_clause: bool) -> Budget | None:
    for match in _RANGE.finditer(clause):
        after = clause[match.end() :]
        if _UNIT_AFTER.match(after):
            continue
        explicit = "$" in match.group() or bool(_CURRENCY_AFTER.match(after))
        if not (explicit or money_clause):
            continue
        low, high = sorted((float(match.group("a")), float(match.group("b"))))
        if low == high or low < 0:
            continue
        return Budget(min_price=low, max_price=high, text=clause.strip())
    return None


def _value(match: re.Match[str]) -> float:
    value = float(match.group("num").replace(",", ""))
    return value * 1000 if match.group("k") else value
