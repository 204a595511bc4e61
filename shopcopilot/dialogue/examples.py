"""Requests a person could start with, drawn from what the catalog holds most of: a greeting
that shows what the copilot can do on this catalog, not on some other."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping

# Ways a person opens, each showing one thing the copilot understands; {item} is a kind of item
# the catalog holds plenty of, {who} who it is for, {price} a budget its prices make sensible.
OPENERS = (
    "I need {item} for my {who}, under ${price}",
    "{item} for {dept}, nothing black",
    "a gift for my {who}, around {price_words} dollars: maybe {item}?",
    "show me {item}, any brand is fine",
)
WHO = {"Women": ("wife", "women"), "Men": ("husband", "men"), "Girls": ("daughter", "girls"),
       "Boys": ("son", "boys")}  # fmt: skip
_TENS = {20: "twenty", 30: "thirty", 40: "forty", 50: "fifty", 60: "sixty", 70: "seventy",
         80: "eighty", 90: "ninety", 100: "a hundred"}  # fmt: skip
MIN_PRODUCTS = 5  # a kind with fewer would make a poor first list


def starters(
    paths: Mapping[tuple[str, ...], int],
    count: int = 4,
    names_a_kind: Callable[[str], bool] = lambda word: True,
) -> list[str]:
    """`count` opening requests for kinds of item this catalog holds many of, one per kind;
    `names_a_kind` tells a leaf that names an item ("Tunics") from one that does not ("Casual")."""
    kinds = [(d, leaf) for d, leaf in _common_kinds(paths) if names_a_kind(leaf.split()[-1])]
    out: list[str] = []
    for opener, (department, leaf) in zip(OPENERS * 2, kinds, strict=False):
        if len(out) == count:
            break
        who, dept = WHO.get(department, ("sister", department.lower()))
        price = 60 if department == "Women" else 50
        out.append(
            opener.format(
                item=_item(leaf),
                who=who,
                dept=dept,
                price=price,
                price_words=_TENS.get(price, str(price)),
            )
        )
    return out


def _common_kinds(paths: Mapping[tuple[str, ...], int]) -> list[tuple[str, str]]:
    """(department, leaf) pairs with many products, the most common first, one per leaf word."""
    counts: Counter[tuple[str, str]] = Counter()
    for path, number in paths.items():
        if len(path) >= 3 and path[1] in WHO and number >= MIN_PRODUCTS:
            counts[(path[1], path[-1])] += number
    seen, out = set(), []
    for (department, leaf), _ in counts.most_common():
        if leaf not in seen and "&" not in leaf and "," not in leaf:
            seen.add(leaf)
            out.append((department, leaf))
    return out


def _item(leaf: str) -> str:
    return leaf.lower()
