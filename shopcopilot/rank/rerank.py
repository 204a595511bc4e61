"""rerank: candidates -> products ordered by the evidence they offer for the state.

Hard constraints dominate soft ones; popularity and rating only break ties; the
profile is a weak prior. The state is read once per turn into a `Requirements`
value so scoring a candidate is a handful of set and substring tests.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..state.model import Constraint, ShoppingState
from .evidence import (
    CategoryProbe, FragmentProbe, ViewCheck, budget_match, category_match, fragment_match, prepare_category,
    prepare_fragments, prominence, rejection_check, value_check,
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

    categories: tuple[CategoryProbe, ...]
    values: tuple[tuple[Constraint, ViewCheck, float], ...]  # with its check and level weight
    budgets: tuple[Constraint, ...]
    rejections: tuple[ViewCheck, ...]
    probes: tuple[tuple[FragmentProbe, float], ...]  # with its level weight
    critical_rater: bool


def requirements(state: ShoppingState, views: list[ProductView]) -> Requirements:
    active = state.active()
    return Requirements(
        categories=tuple(prepare_category(c) for c in active if c.attribute == "category"),
        values=tuple((c, value_check(c), LEVEL_WEIGHT.get(c.level, 0.6))
                     for c in active if c.attribute not in ("category", "budget")),
        budgets=tuple(c for c in active if c.attribute == "budget"),
        rejections=tuple(rejection_check(facet, value)
                         for facet, value in dict.fromkeys((r.attribute, r.value) for r in state.rejected)),
        probes=tuple((p, LEVEL_WEIGHT.get(p.level, 0.6)) for p in prepare_fragments(state.active_fragments(), views)),
        critical_rater=str(state.profile.get("rating_style", "")).lower() in ("critical", "mixed"),
    )


def rerank(
    state: ShoppingState,
    views: dict[str, ProductView],
    lexical: dict[str, float],
    weights: RankWeights = RankWeights(),
    explain_top: int = 10,
    exclude: frozenset[str] | set[str] = frozenset(),
) -> list[Scored]:
    """Candidates scored and sorted, without `exclude` (already shown); the first `explain_top`
    carry their evidence and parts. Excluded products still count in the word statistics."""
    needs = requirements(state, list(views.values()))
    top_lexical = max(lexical.values(), default=0.0) or 1.0
    scored = [score_view(needs, view, lexical.get(asin, 0.0) / top_lexical, weights, explain=False)
              for asin, view in views.items() if asin not in exclude]
    scored.sort(key=lambda s: (-s.score, s.parent_asin))
    for index, item in enumerate(scored[:explain_top]):
        scored[index] = score_view(needs, views[item.parent_asin], lexical.get(item.parent_asin, 0.0) / top_lexical,
                                   weights, explain=True)
    return scored


def score_view(needs: Requirements, view: ProductView, lexical: float, w: RankWeights, explain: bool = True) -> Scored:
    """The evidence score of one product; with `explain`, also its parts and what it matched."""
    evidence: list[str] = []
    category = 0.0
    for probe in needs.categories:
        match = category_match(probe, view)
        category += w.category * match
        if explain and match >= 0.99:
            evidence.append(f"in {view.attributes.leaf or 'the category'}")
    fragments = 0.0
    for probe, strength in needs.probes:
        coverage, exact = fragment_match(probe, view)
        if exact:
            fragments += w.fragment_exact * strength + w.prominence * prominence(probe, view)
            if explain:
                evidence.append(f'"{_short(probe.text)}"')
        else:
            fragments += w.fragment_partial * strength * coverage
    values = 0.0
    for constraint, check, strength in needs.values:
        match = check(view)
        values += w.value * strength * match
        if explain and match > 0.5:
            evidence.append(constraint.value)
    budget = 0.0
    for constraint in needs.budgets:
        match = budget_match(constraint, view)
        budget += w.budget * match
        if explain and match > 0.5 and view.price is not None:
            evidence.append(f"${view.price:g} fits {constraint.value}")
    rejected = -w.rejected * sum(1 for has_rejected in needs.rejections if has_rejected(view))
    rating = view.product.average_rating
    tie_breaks = (w.lexical * lexical, w.popularity * view.popularity, w.rating * ((rating or 3.5) - 3.5) / 1.5,
                  w.profile * (rating - 4.0) if (needs.critical_rater and rating is not None) else 0.0)
    total = category + fragments + values + budget + rejected + sum(tie_breaks)
    if not explain:
        return Scored(view.parent_asin, total)
    parts = dict(zip(("category", "fragments", "values", "budget", "rejected", "lexical", "popularity", "rating",
                      "profile"), (category, fragments, values, budget, rejected, *tie_breaks)))
    return Scored(view.parent_asin, total, {k: v for k, v in parts.items() if v}, evidence)


def _short(text: str, limit: int = 48) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def reason(scored: Scored) -> str:
    if not scored.evidence:
        return "closest overall match to what you described"
    return "matches " + ", ".join(dict.fromkeys(scored.evidence))
