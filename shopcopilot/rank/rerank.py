"""rerank: candidates -> products ordered by the evidence they offer for the state.

Hard constraints dominate soft ones; popularity and rating only break ties; the
profile is a weak prior.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..state.model import ShoppingState
from .evidence import (
    budget_match, category_match, fragment_match, prepare_fragments, rejected_match, value_match,
)
from .view import ProductView

LEVEL_WEIGHT = {"hard": 1.0, "goal": 0.8, "soft": 0.6}


@dataclass(frozen=True, slots=True)
class RankWeights:
    category: float = 3.0
    fragment_exact: float = 2.0
    fragment_partial: float = 1.2
    value: float = 1.2
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


def rerank(
    state: ShoppingState,
    views: dict[str, ProductView],
    lexical: dict[str, float],
    weights: RankWeights = RankWeights(),
) -> list[Scored]:
    probes = prepare_fragments(state.active_fragments(), views.values())
    top_lexical = max(lexical.values(), default=0.0) or 1.0
    scored = [_score(state, view, probes, lexical.get(asin, 0.0) / top_lexical, weights) for asin, view in views.items()]
    scored.sort(key=lambda s: (-s.score, s.parent_asin))
    return scored


def _score(state, view: ProductView, probes, lexical: float, w: RankWeights) -> Scored:
    out = Scored(view.parent_asin, 0.0)
    for constraint in state.active("category"):
        match = category_match(constraint, view)
        _add(out, "category", w.category * match)
        if match >= 0.99:
            out.evidence.append(f"in {view.attributes.leaf or 'the category'}")
    for probe in probes:
        coverage, exact = fragment_match(probe, view)
        strength = LEVEL_WEIGHT.get(probe.level, 0.6)
        if exact:
            _add(out, "fragments", w.fragment_exact * strength)
            out.evidence.append(f'"{_short(probe.text)}"')
        else:
            _add(out, "fragments", w.fragment_partial * strength * coverage)
    for constraint in state.active():
        if constraint.attribute in ("category", "budget"):
            continue
        match = value_match(constraint, view)
        _add(out, "values", w.value * LEVEL_WEIGHT.get(constraint.level, 0.6) * match)
        if match > 0.5:
            out.evidence.append(constraint.value)
    for constraint in state.active("budget"):
        match = budget_match(constraint, view)
        _add(out, "budget", w.budget * match)
        if match > 0.5 and view.price is not None:
            out.evidence.append(f"${view.price:g} fits {constraint.value}")
    for rejection in state.rejected:
        if rejected_match(rejection.attribute, rejection.value, view):
            _add(out, "rejected", -w.rejected)
    _add(out, "lexical", w.lexical * lexical)
    _add(out, "popularity", w.popularity * view.popularity)
    rating = view.product.average_rating
    _add(out, "rating", w.rating * ((rating or 3.5) - 3.5) / 1.5)
    _add(out, "profile", w.profile * _profile_prior(state.profile, view))
    return out


def _add(scored: Scored, part: str, value: float) -> None:
    if value:
        scored.parts[part] = scored.parts.get(part, 0.0) + value
        scored.score += value


def _profile_prior(profile: dict, view: ProductView) -> float:
    """Shoppers who rate critically lean to well-rated products; a weak nudge only."""
    rating = view.product.average_rating
    if rating is None:
        return 0.0
    critical = str(profile.get("rating_style", "")).lower() in ("critical", "mixed")
    return (rating - 4.0) if critical else 0.0


def _short(text: str, limit: int = 48) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def reason(scored: Scored) -> str:
    if not scored.evidence:
        return "closest overall match to what you described"
    return "matches " + ", ".join(dict.fromkeys(scored.evidence))
