"""report.md with PNG plots: hit turns, target ranks, scenarios, respond() latency.

The plots need matplotlib, an extra (`pip install 'shopcopilot[report]'`); without it the
report is written with its tables only.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from .metrics import MISS_TURN
from .official import TOP_K
from .runner import SessionRun

if TYPE_CHECKING:
    from matplotlib.figure import Figure

NO_PLOTS = "report plots skipped: matplotlib is not installed (pip install 'shopcopilot[report]')"
_SCENARIO_BARS = (
    ("hit_rate_at_10", "HitRate@10"),
    ("mrr", "MRR"),
    ("recommended_technical_score", "TechScore"),
)


def write_report(
    directory: Path,
    results: dict[str, Any],
    runs: Sequence[SessionRun],
    notice: Callable[[str], None],
) -> Path:
    """Write the plots and report.md into `directory`; returns the report path.
    Without matplotlib, `notice` gets one line naming the extra and the plots are left out."""
    directory.mkdir(parents=True, exist_ok=True)
    plt = _pyplot()
    if plt is None:
        notice(NO_PLOTS)
    plots = [] if plt is None else _write_plots(plt, directory, results, runs)
    path = directory / "report.md"
    path.write_text(_markdown(results, plots), encoding="utf-8")
    return path


def _pyplot() -> ModuleType | None:
    try:
        import matplotlib
    except ModuleNotFoundError as exc:
        if exc.name != "matplotlib":
            raise  # installed but broken: show why
        return None
    matplotlib.use("Agg")  # files only: no display on servers or CI
    import matplotlib.pyplot as plt

    return plt


def _write_plots(
    plt: ModuleType, directory: Path, results: dict[str, Any], runs: Sequence[SessionRun]
) -> list[str]:
    plots = {
        "hit_turns.png": _plot_hit_turns(plt, results["sessions"]),
        "ranks.png": _plot_ranks(plt, results["sessions"]),
        "scenarios.png": _plot_scenarios(plt, results["scenario_metrics"]),
        "latency.png": _plot_latency(plt, [turn.latency_ms for run in runs for turn in run.turns]),
    }
    for name, figure in plots.items():
        figure.savefig(directory / name, dpi=100, bbox_inches="tight")
        plt.close(figure)
    return list(plots)


def _plot_hit_turns(plt: ModuleType, sessions: list[dict[str, Any]]) -> Figure:
    counts = Counter(s["first_hit_turn"] if s["hit"] else MISS_TURN for s in sessions)
    turns = list(range(1, MISS_TURN + 1))
    figure, axes = plt.subplots(figsize=(7, 3.5))
    bars = axes.bar(turns, [counts.get(t, 0) for t in turns], color="tab:blue")
    bars[-1].set_color("tab:gray")
    axes.set_xticks(turns, [str(t) for t in turns[:-1]] + ["miss"])
    axes.set_xlabel("turn of the first counted hit")
    axes.set_ylabel("sessions")
    axes.set_title("When the target first reached the top 10")
    return figure


def _plot_ranks(plt: ModuleType, sessions: list[dict[str, Any]]) -> Figure:
    counts = Counter(s["best_rank"] for s in sessions if s["hit"])
    ranks = list(range(1, TOP_K + 1))
    figure, axes = plt.subplots(figsize=(7, 3.5))
    axes.bar(ranks, [counts.get(r, 0) for r in ranks], color="tab:green")
    axes.set_xticks(ranks)
    axes.set_xlabel("rank of the target at the hit")
    axes.set_ylabel("sessions")
    axes.set_title("Target rank when hit")
    return figure


def _plot_scenarios(plt: ModuleType, scenario_metrics: dict[str, dict[str, Any]]) -> Figure:
    names = list(scenario_metrics)
    width = 0.8 / len(_SCENARIO_BARS)
    figure, axes = plt.subplots(figsize=(7, 3.5))
    for index, (key, label) in enumerate(_SCENARIO_BARS):
        positions = [i + index * width for i in range(len(names))]
        axes.bar(positions, [scenario_metrics[n][key] for n in names], width, label=label)
    axes.set_xticks([i + width for i in range(len(names))], names)
    axes.set_ylim(0, 1)
    axes.legend()
    axes.set_title("Per scenario")
    return figure


def _plot_latency(plt: ModuleType, latencies_ms: list[float]) -> Figure:
    figure, axes = plt.subplots(figsize=(7, 3.5))
    axes.hist(latencies_ms or [0.0], bins=40, color="tab:orange")
    axes.set_xlabel("respond() wall time (ms)")
    axes.set_ylabel("turns")
    axes.set_title("Latency per turn")
    return figure


def _markdown(results: dict[str, Any], plots: list[str]) -> str:
    latency = results["latency"]
    usage = results["reported_token_usage"]
    lines = [
        f"# Benchmark report: {results['agent']}",
        "",
        f"- protocol: **{results['protocol']}**",
        f"- catalog: `{results['catalog']}`",
        f"- sessions: {results['sessions_file']} ({results['sample_count']})",
        f"- command: `{results['command']}`",
        f"- {_workers(results)}, turn timeout {results['turn_timeout']} s, "
        f"wall {results['wall_seconds']} s",
        "",
        "| group | N | HitRate@10 | MRR | MTTC | Efficiency | TechnicalScore |",
        "|---|---|---|---|---|---|---|",
        _row("**overall**", results),
        *(_row(name, metrics) for name, metrics in results["scenario_metrics"].items()),
        *(_row(f"category: {name}", m) for name, m in results.get("category_metrics", {}).items()),
        *(
            _row(f"difficulty: {name}", m)
            for name, m in results.get("difficulty_metrics", {}).items()
        ),
        "",
        f"respond() latency over {latency['calls']} calls: p50 {latency['p50_ms']} ms, "
        f"p95 {latency['p95_ms']} ms, p99 {latency['p99_ms']} ms, max {latency['max_ms']} ms.",
        f"Reported tokens: {usage['prompt_tokens']} prompt "
        f"+ {usage['completion_tokens']} completion.",
        f"Errors: {results['errors']}, timeouts: {results['timeouts']}.",
        *(f"- {example}" for example in results.get("error_examples", [])),
        "",
        *(f"![{name.removesuffix('.png').replace('_', ' ')}]({name})" for name in plots),
        "",
    ]
    return "\n".join(lines)


def _workers(results: dict[str, Any]) -> str:
    ray = results.get("ray")  # absent from results written before Ray runs existed
    return f"Ray {ray}, {results['workers']} actors" if ray else f"workers {results['workers']}"


def _row(name: str, metrics: dict[str, Any]) -> str:
    mttc = "-" if metrics["mttc"] is None else f"{metrics['mttc']:.3f}"
    return (
        f"| {name} | {metrics['sample_count']} | {metrics['hit_rate_at_10']:.3f} "
        f"| {metrics['mrr']:.4f} | {mttc} "
        f"| {metrics['efficiency']:.3f} | {metrics['recommended_technical_score']:.4f} |"
    )
