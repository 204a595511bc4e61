"""rerank: candidates -> products ordered by the evidence they offer for the state.

Hard constraints dominate soft ones; popularity and rating only break ties; the
profile is a weak prior. The state is read once per turn into a `Requirements`
value so scoring a candidate is a handful of set and substring tests.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..state.model import Constraint, ShoppingState
from .evidence import (
    FragmentProbe, budget_match, category_match, fragment_match, prepare_fragments, prominence, rejected_match,
    value_match,
)
from .view import ProductView

LEVEL_WEIGHT = {"hard": 1.0, "goal": 0.8, "soft": 0.6}


@dataclass(frozen=True, slots=True)
class RankWeights:
    category: float = 6.0
    fragment_exact: float = 2.0
    fragment_partial: float = 1.2
    prominence: float = 0.3
    value: float = 0.8
    budget: float = 1.5
    rejected: float = 2.5
    lexical: float = 0.6
    popularity: float = 0.15
    rating: float = 0.05
    profile: float = 0.05


@dataclass(slots=True)
class Scored:
    parent_asin: str
    score: float
    parts: dict[str, float] = field(default_factory=dict)
    evidence: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Requirements:
    """The active state, read once per turn."""

    categories: tuple[Constraint, ...]
    values: tuple[Constraint, ...]
    budgets: tuple[Constraint, ...]
    rejections: tuple[tuple[str, str], ...]
    probes: tuple[FragmentProbe, ...]
    critical_rater: bool


def requirements(state: ShoppingState, views: list[ProductView]) -> Requirements:
    active = state.active()
    return Requirements(
        categories=tuple(c for c in active if c.attribute == "category"),
        values=tuple(c for c in active if c.attribute not in ("category", "budget")),
        budgets=tuple(c for c in active if c.attribute == "budget"),
        rejections=tuple(dict.fromkeys((r.attribute, r.value) for r in state.rejected)),
        probes=tuple(prepare_fragments(state.active_fragments(), views)),
        critical_rater=str(state.profile.get("rating_style", "")).lower() in ("critical", "mixed"),
    )


def rerank(
    state: ShoppingState,
    views: dict[str, ProductView],
    lexical: dict[str, float],
    weights: RankWeights = RankWeights(),
) -> list[Scored]:
    needs = requirements(state, list(views.values()))
    top_lexical = max(lexical.values(), default=0.0) or 1.0
    scored = [score_view(needs, view, lexical.get(asin, 0.0) / top_lexical, weights) for asin, view in views.items()]
    scored.sort(key=lambda s: (-s.score, s.parent_asin))
    return scored


def score_view(needs: Requirements, view: ProductView, lexical: float, w: RankWeights) -> Scored:
    parts: dict[str, float] = {}
    evidence: list[str] = []
    category = 0.0
    for constraint in needs.categories:
        match = category_match(constraint, view)
        category += w.category * match
        if match >= 0.99:
            evidence.append(f"in {view.attributes.leaf or 'the category'}")
    parts["category"] = category
    fragments = 0.0
    for probe in needs.probes:
        coverage, exact = fragment_match(probe, view)
        strength = LEVEL_WEIGHT.get(probe.level, 0.6)
        if exact:
            fragments += w.fragment_exact * strength + w.prominence * prominence(probe, view)
            evidence.append(f'"{_short(probe.text)}"')
        else:
            fragments += w.fragment_partial * strength * coverage
    parts["fragments"] = fragments
    values = 0.0
    for constraint in needs.values:
        match = value_match(constraint, view)
        values += w.value * LEVEL_WEIGHT.get(constraint.level, 0.6) * match
        if match > 0.5:
            evidence.append(constraint.value)
    parts["values"] = values
    budget = 0.0
    for constraint in needs.budgets:
        match = budget_match(constraint, view)
        budget += w.budget * match
        if match > 0.5 and view.price is not None:
            evidence.append(f"${view.price:g} fits {constraint.value}")
    parts["budget"] = budget
    parts["rejected"] = -w.rejected * sum(1 for facet, value in needs.rejections if rejected_match(facet, value, view))
    parts["lexical"] = w.lexical * lexical
    parts["popularity"] = w.popularity * view.popularity
    rating = view.product.average_rating
    parts["rating"] = w.rating * ((rating or 3.5) - 3.5) / 1.5
    parts["profile"] = w.profile * (rating - 4.0) if (needs.critical_rater and rating is not None) else 0.0
    parts = {k: v for k, v in parts.items() if v}
    return Scored(view.parent_asin, sum(parts.values()), parts, evidence)


def _short(text: str, limit: int = 48) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def reason(scored: Scored) -> str:
    if not scored.evidence:
        return "closest overall match to what you described"
    return "matches " + ", ".join(dict.fromkeys(scored.evidence))
