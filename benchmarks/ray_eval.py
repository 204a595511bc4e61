"""`eval --ray local` against `eval --workers N` on the same generated sessions.

Runs the two in turn (ray, workers, ray, workers, ...) so that a shared machine's load falls
on both, checks that every run gives the same metrics and per-session outcomes, and prints a
markdown table: wall time of the run (results.json's, agent start-up included), the whole
command's time, sessions per second, and the load average around each run.

    python benchmarks/ray_eval.py --sessions 10000 --seed 3 --rounds 2 -o runs/ray-eval
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

# What differs between two runs of the same sessions: timing and how the run was made.
RUN_KEYS = {"latency", "wall_seconds", "command", "workers", "ray", "sessions_file"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=500, help="generated iid sessions")
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2, help="--workers of the other run")
    parser.add_argument("--rounds", type=int, default=1, help="ray + workers pairs")
    parser.add_argument("--nice", type=int, default=10, help="niceness of the runs")
    parser.add_argument("-o", "--out", type=Path, default=Path("runs/ray-eval"))
    parser.add_argument(
        "--table-only", action="store_true", help="print the table of the runs already in --out"
    )
    args = parser.parse_args()
    if args.table_only:
        rows = json.loads((args.out / "summary.json").read_text())["rows"]
        for row in rows:  # summaries written before the respond columns existed
            results = json.loads((args.out / row["folder"] / "results.json").read_text())
            row.update(_respond_times(results))
        print(_table(rows))
        return
    modes = {"ray": ["--ray", "local"], "workers": ["--workers", str(args.workers)]}
    rows = []
    for round_number in range(1, args.rounds + 1):
        for name, extra in modes.items():
            out = args.out / f"{name}-{round_number}"
            rows.append(_run(name, extra, out, args))
            print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
    reference = _comparable(args.out / "ray-1")
    same = all(_comparable(args.out / row["folder"]) == reference for row in rows)
    (args.out / "summary.json").write_text(json.dumps({"rows": rows, "identical": same}, indent=1))
    print(_table(rows))
    print(f"\nmetrics and per-session outcomes identical across all runs: {same}")
    if not same:
        sys.exit(1)


def _run(name: str, extra: list[str], out: Path, args: argparse.Namespace) -> dict[str, Any]:
    command = [
        "nice",
        "-n",
        str(args.nice),
        sys.executable,
        "-m",
        "shopcopilot",
        "eval",
        "--generate",
        f"iid:{args.sessions}",
        "--seed",
        str(args.seed),
        "--no-report",
        *extra,
        "-o",
        str(out),
    ]
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    command_seconds = time.perf_counter() - started
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    return {
        "mode": name,
        "folder": out.name,
        "command": " ".join(command[3:]).replace(sys.executable, "python"),
        "wall_seconds": results["wall_seconds"],
        "command_seconds": round(command_seconds, 1),
        "sessions_per_second": round(results["sample_count"] / results["wall_seconds"], 2),
        "agents": results["workers"],
        "load_before": round(load_before, 2),
        "load_after": round(os.getloadavg()[0], 2),
        "technical_score": results["recommended_technical_score"],
        **_respond_times(results),
    }


def _respond_times(results: dict[str, Any]) -> dict[str, float]:
    latency = results["latency"]
    return {
        "respond_p50_ms": latency["p50_ms"],
        # Time inside respond() summed over all turns: what the agents themselves spent.
        "respond_total_seconds": round(latency["mean_ms"] * latency["calls"] / 1000, 1),
    }


def _comparable(folder: Path) -> dict[str, Any]:
    results = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    return {key: value for key, value in results.items() if key not in RUN_KEYS}


def _table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| run | agents | wall s | command s | sessions/s | respond p50 ms | respond total s "
        "| load 1-min before / after | TechnicalScore |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        lines.append(
            f"| {row['folder']} | {row['agents']} | {row['wall_seconds']:.1f} "
            f"| {row['command_seconds']:.1f} | {row['sessions_per_second']:.2f} "
            f"| {row['respond_p50_ms']:.1f} | {row['respond_total_seconds']:.0f} "
            f"| {row['load_before']:.1f} / {row['load_after']:.1f} "
            f"| {row['technical_score']:.4f} |"
        )
    for mode in ("ray", "workers"):
        walls = [row["wall_seconds"] for row in rows if row["mode"] == mode]
        lines.append(f"\nmedian wall, {mode}: {statistics.median(walls):.1f} s")
    ray, workers = (
        statistics.median(row["wall_seconds"] for row in rows if row["mode"] == mode)
        for mode in ("ray", "workers")
    )
    lines.append(f"ray / workers wall ratio: {ray / workers:.3f}")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
