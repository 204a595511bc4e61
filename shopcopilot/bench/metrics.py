"""Benchmark metrics, computed and rounded the way the official evaluator reports them."""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .official import MAX_TURNS

MISS_TURN = MAX_TURNS + 1
DIGITS = 6
WEIGHTS = {"hit_rate_at_10": 0.50, "mrr": 0.30, "efficiency": 0.20}


@dataclass(frozen=True, slots=True)
class Outcome:
    """The scored result of one session (what metrics need)."""

    sample_id: str
    scenario_type: str
    first_hit_turn: int | None
    best_rank: int | None

    @property
    def hit(self) -> bool:
        return self.first_hit_turn is not None

    @property
    def reciprocal_rank(self) -> float:
        return 0.0 if self.best_rank is None else 1.0 / self.best_rank


def efficiency(mttc: float) -> float:
    return max(0.0, min(1.0, (MISS_TURN - mttc) / 10.0))


def technical_score(hit_rate: float, mrr: float, efficiency_value: float) -> float:
    return (
        WEIGHTS["hit_rate_at_10"] * hit_rate
        + WEIGHTS["mrr"] * mrr
        + WEIGHTS["efficiency"] * efficiency_value
    )


def summarize(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    """sample_count, HitRate@10, MRR, MTTC (misses count 11), Efficiency, TechnicalScore.

    Like the evaluator, Efficiency and TechnicalScore are computed from the rounded
    HitRate/MRR/MTTC, so the numbers match its output digit for digit.
    """
    if not outcomes:
        return {
            "sample_count": 0,
            "hit_rate_at_10": 0.0,
            "mrr": 0.0,
            "mttc": None,
            "efficiency": 0.0,
            "recommended_technical_score": 0.0,
        }
    count = len(outcomes)
    hit_rate = round(sum(outcome.hit for outcome in outcomes) / count, DIGITS)
    # fsum, as statistics.fmean in the evaluator, so the last digit agrees.
    mrr = round(math.fsum(outcome.reciprocal_rank for outcome in outcomes) / count, DIGITS)
    turns = [
        MISS_TURN if outcome.first_hit_turn is None else outcome.first_hit_turn
        for outcome in outcomes
    ]
    mttc = round(math.fsum(turns) / count, DIGITS)
    eff = efficiency(mttc)
    return {
        "sample_count": count,
        "hit_rate_at_10": hit_rate,
        "mrr": mrr,
        "mttc": mttc,
        "efficiency": round(eff, DIGITS),
        "recommended_technical_score": round(technical_score(hit_rate, mrr, eff), DIGITS),
    }


def summarize_by(
    outcomes: Iterable[Outcome], key: Callable[[Outcome], str | None]
) -> dict[str, dict[str, Any]]:
    """One summary per group, groups sorted by name; outcomes whose key is None are left out."""
    groups: dict[str, list[Outcome]] = defaultdict(list)
    for outcome in outcomes:
        name = key(outcome)
        if name is not None:
            groups[name].append(outcome)
    return {name: summarize(groups[name]) for name in sorted(groups)}


def latency_summary(latencies_ms: Sequence[float]) -> dict[str, float | int | None]:
    """Percentiles of respond() wall time in milliseconds."""
    if not latencies_ms:
        return {
            "calls": 0,
            "mean_ms": None,
            "p50_ms": None,
            "p95_ms": None,
            "p99_ms": None,
            "max_ms": None,
        }
    values = [float(v) for v in latencies_ms]
    # Linear interpolation between closest ranks ("inclusive"), as numpy.percentile does by default.
    cuts = (
        statistics.quantiles(values, n=100, method="inclusive") if len(values) > 1 else values * 99
    )
    return {
        "calls": len(values),
        "mean_ms": round(statistics.fmean(values), 3),
        "p50_ms": round(cuts[49], 3),
        "p95_ms": round(cuts[94], 3),
        "p99_ms": round(cuts[98], 3),
        "max_ms": round(max(values), 3),
    }
