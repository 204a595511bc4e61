"""One benchmark run end to end: sessions -> runner -> results.json, transcripts, report."""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from ..index.catalog_index import HASH_CACHE_FILE, index_root
from ..index.fingerprint import catalog_sha256
from .report import write_report
from .results import RunInfo, build_results, write_results
from .runner import (
    BenchData,
    ProgressCallback,
    RunSettings,
    SessionRun,
    load_bench_data,
    run_sessions,
)
from .sessions_io import Session


@dataclass(frozen=True, slots=True)
class EvalRequest:
    agent_spec: str
    catalog_path: Path
    sessions: Sequence[Session]
    sessions_label: str
    settings: RunSettings
    workers: int
    out_dir: Path
    command: str
    report: bool = True
    ray: str | None = None  # a Ray address, or "local": play the sessions on Ray


def run_eval(request: EvalRequest, console: Console | None = None) -> dict[str, Any]:
    """Run, write DIR/results.json + transcripts.jsonl (+ report), print the table; return
    results."""
    console = console or Console(stderr=True)
    data = load_bench_data(request.catalog_path, request.sessions)
    started = time.perf_counter()
    with _progress(console) as progress:
        task = progress.add_task(
            f"{request.settings.protocol}", total=len(request.sessions), hits=0
        )
        hits = 0

        def advance(run: SessionRun) -> None:
            nonlocal hits
            hits += run.outcome.hit
            progress.update(task, advance=1, hits=hits)

        runs, workers = _run(request, data, advance)
    info = RunInfo(
        protocol=request.settings.protocol,
        agent=request.agent_spec,
        catalog=str(request.catalog_path),
        sessions_file=request.sessions_label,
        command=request.command,
        workers=workers,
        ray=request.ray,
        turn_timeout=request.settings.turn_timeout,
        seed=request.settings.seed,
        wall_seconds=round(time.perf_counter() - started, 3),
    )
    results = build_results(runs, info)
    # What `compare` checks, so that the same inputs named by other paths are the same run.
    results["catalog_sha256"] = catalog_sha256(request.catalog_path, index_root() / HASH_CACHE_FILE)
    results["sessions_sha256"] = sessions_sha256(request.sessions)
    write_results(request.out_dir, results, runs)
    if request.report:
        notice = partial(console.print, markup=False, soft_wrap=True)  # one line, as written
        write_report(request.out_dir, results, runs, notice)
    console.print(results_table(results))
    console.print(summary_line(results))
    return results


def _run(
    request: EvalRequest, data: BenchData, advance: ProgressCallback
) -> tuple[list[SessionRun], int]:
    """The runs, and how many agents played them."""
    if request.ray is None:
        runs = run_sessions(
            request.agent_spec, request.sessions, data, request.settings, request.workers, advance
        )
        return runs, request.workers
    from .ray_runner import run_sessions_on_ray  # local: Ray is an optional dependency

    ray_run = run_sessions_on_ray(
        request.agent_spec, request.sessions, data, request.settings, request.ray, advance
    )
    return ray_run.runs, ray_run.actors


def sessions_sha256(sessions: Sequence[Session]) -> str:
    records = [session.to_record() for session in sessions]
    return hashlib.sha256(json.dumps(records, sort_keys=True).encode()).hexdigest()


def _progress(console: Console) -> Progress:
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("hits {task.fields[hits]}"),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    )


def results_table(results: dict[str, Any]) -> Table:
    table = Table(title=f"{results['agent']} - {results['protocol']} protocol")
    for name in ("scenario", "N", "HitRate@10", "MRR", "MTTC", "Efficiency", "TechScore"):
        table.add_column(name, justify="left" if name == "scenario" else "right")
    rows = [("overall", results), *results["scenario_metrics"].items()]
    for name, metrics in rows:
        table.add_row(name, *_metric_cells(metrics), style="bold" if name == "overall" else None)
    return table


def _metric_cells(metrics: dict[str, Any]) -> list[str]:
    mttc = metrics["mttc"]
    return [
        str(metrics["sample_count"]),
        f"{metrics['hit_rate_at_10']:.3f}",
        f"{metrics['mrr']:.4f}",
        "-" if mttc is None else f"{mttc:.2f}",
        f"{metrics['efficiency']:.3f}",
        f"{metrics['recommended_technical_score']:.4f}",
    ]


def summary_line(results: dict[str, Any]) -> str:
    latency = results["latency"]
    p50 = latency["p50_ms"]
    timing = (
        "no calls"
        if p50 is None
        else (
            f"respond p50 {p50:.1f} ms, p95 {latency['p95_ms']:.1f} ms, "
            f"max {latency['max_ms']:.1f} ms"
        )
    )
    tokens = results["reported_token_usage"]["total_tokens"]
    return (
        f"{timing}; tokens {tokens}; errors {results['errors']}, "
        f"timeouts {results['timeouts']}; {results['wall_seconds']:.1f} s"
    )
