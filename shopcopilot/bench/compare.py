"""Comparing two results.json files: metric deltas and sessions that flipped."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rich.console import Console
from rich.table import Table

METRICS = ("hit_rate_at_10", "mrr", "mttc", "efficiency", "recommended_technical_score")
_LABELS = {
    "hit_rate_at_10": "HitRate@10",
    "mrr": "MRR",
    "mttc": "MTTC",
    "efficiency": "Efficiency",
    "recommended_technical_score": "TechScore",
}


@dataclass(slots=True)
class Comparison:
    # group ("overall" or a scenario) -> metric -> (before, after)
    metrics: dict[str, dict[str, tuple[float | None, float | None]]] = field(default_factory=dict)
    gained: list[str] = field(default_factory=list)  # miss before, hit after
    lost: list[str] = field(default_factory=list)  # hit before, miss after
    only_before: list[str] = field(default_factory=list)
    only_after: list[str] = field(default_factory=list)
    differences: list[str] = field(
        default_factory=list
    )  # run settings that differ, e.g. the protocol


def compare_results(before: dict[str, Any], after: dict[str, Any]) -> Comparison:
    comparison = Comparison()
    comparison.metrics["overall"] = {m: (before.get(m), after.get(m)) for m in METRICS}
    scenarios = sorted(
        set(before.get("scenario_metrics", {})) | set(after.get("scenario_metrics", {}))
    )
    for name in scenarios:
        old = before.get("scenario_metrics", {}).get(name, {})
        new = after.get("scenario_metrics", {}).get(name, {})
        comparison.metrics[name] = {m: (old.get(m), new.get(m)) for m in METRICS}
    old_hits = {s["sample_id"]: bool(s["hit"]) for s in before["sessions"]}
    new_hits = {s["sample_id"]: bool(s["hit"]) for s in after["sessions"]}
    for sample_id, hit in new_hits.items():
        if sample_id not in old_hits:
            comparison.only_after.append(sample_id)
        elif hit and not old_hits[sample_id]:
            comparison.gained.append(sample_id)
        elif old_hits[sample_id] and not hit:
            comparison.lost.append(sample_id)
    comparison.only_before = [sample_id for sample_id in old_hits if sample_id not in new_hits]
    comparison.differences = [
        f"{key}: {before.get(key)} -> {after.get(key)}"
        for key in ("protocol", "catalog", "sessions_file")
        if _differ(before, after, key)
    ]
    return comparison


# Runs record their inputs' content hashes; files named by two paths (a generated set is saved
# in each run's own folder) are the same input when their contents are.
_CONTENT_KEYS = {"catalog": "catalog_sha256", "sessions_file": "sessions_sha256"}


def _differ(before: dict[str, Any], after: dict[str, Any], key: str) -> bool:
    content = _CONTENT_KEYS.get(key)
    if content and before.get(content) and after.get(content):
        return before[content] != after[content]
    return before.get(key) != after.get(key)  # runs from before the hashes were recorded


def _delta(before: float | None, after: float | None) -> str:
    if before is None or after is None:
        return "-"
    return f"{after - before:+.4f}"


def _value(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def render_comparison(
    comparison: Comparison, console: Console, before_name: str, after_name: str
) -> None:
    table = Table(title=f"before: {before_name}\nafter:  {after_name}\n(MTTC: lower is better)")
    for name in ("group", "metric", "before", "after", "delta"):
        table.add_column(name, justify="left" if name in ("group", "metric") else "right")
    for group, values in comparison.metrics.items():
        for position, (metric, (before, after)) in enumerate(values.items()):
            table.add_row(
                group if position == 0 else "",
                _LABELS[metric],
                _value(before),
                _value(after),
                _delta(before, after),
                end_section=position == len(values) - 1,
            )
    console.print(table)
    for difference in comparison.differences:
        console.print(f"note: the runs differ in {difference}")
    console.print(f"gained (miss -> hit): {len(comparison.gained)}  " + " ".join(comparison.gained))
    console.print(f"lost   (hit -> miss): {len(comparison.lost)}  " + " ".join(comparison.lost))
    if comparison.only_before or comparison.only_after:
        console.print(
            f"sessions only in before: {len(comparison.only_before)}, only in after: "
            f"{len(comparison.only_after)} (the runs used different session sets)"
        )
