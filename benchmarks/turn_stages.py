"""Where a slow turn's time goes: each stage's CPU, turn by turn, at scale.

    python benchmarks/turn_stages.py --work WORK --size 1000000 --sessions 80 --protocol official
    python benchmarks/turn_stages.py --work WORK --protocol natural --retrieval common_holders=none

Plays generated sessions (the files `benchmarks/scale.py` writes into WORK, with its cache
folder WORK/cache-SIZE) and records, per turn, the process CPU of respond() and the thread CPU
of each agent stage (state, retrieval, ranking, decision) and of every index search and count,
with what each search asked (words, phrase or not, limit). Prints the percentiles and the
slowest turns split by stage; `-o` writes every turn. The quote search runs on a helper thread:
its CPU is in the process's figure and in "searches", not in "retrieve".
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

STAGES = ("_state", "_retrieve", "_rank", "_decide", "_respond")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--work", type=Path, required=True, help="benchmarks/scale.py's --work")
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--sessions", type=int, default=80, help="the first N of the 200")
    parser.add_argument("--protocol", choices=("official", "natural"), default="official")
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("--slowest", type=int, default=10, help="turns to print by stage")
    parser.add_argument("-o", "--output", type=Path, help="every turn's record, as JSON")
    parser.add_argument(
        "--retrieval", action="append", default=[], metavar="NAME=VALUE", help="as in scale.py"
    )
    args = parser.parse_args()
    os.environ.setdefault("SHOPCOPILOT_CACHE", str(args.work / f"cache-{args.size}"))
    turns = play(args)
    print(json.dumps(summarise(turns, args.slowest), indent=1))
    if args.output:
        args.output.write_text(json.dumps(turns))


def play(args: argparse.Namespace) -> list[dict[str, Any]]:
    from scale import _settings  # benchmarks/scale.py, beside this script

    from shopcopilot.agent import Agent
    from shopcopilot.bench.runner import BenchData, RunSettings, run_session
    from shopcopilot.bench.sessions_io import load_sessions
    from shopcopilot.index.tantivy_backend import TantivyBackend

    stem = f"sessions-{args.size}-iid200-seed{args.seed}"
    sessions = load_sessions(args.work / f"{stem}.jsonl")[: args.sessions]
    targets = json.loads((args.work / f"{stem}.targets.json").read_text())
    catalog = args.work / f"synthetic-{args.size}-seed7.jsonl.gz"
    agent = Agent(catalog, settings=_settings(1.0, args.retrieval), warm_up=False)
    agent.warm_up()
    turn: dict[str, Any] = {}

    def timed(name: str, method: Callable[..., Any], searched: bool = False) -> Callable[..., Any]:
        def wrapper(*a: Any, **k: Any) -> Any:
            started = time.thread_time()
            out = method(*a, **k)
            spent = (time.thread_time() - started) * 1000
            turn.setdefault(name, []).append(round(spent, 2))
            if searched:  # (backend, query): what the search asked
                query = a[1]
                words = sum(len(c.words) for c in query.clauses)
                phrase = any(c.phrase for c in query.clauses)
                turn.setdefault("asked", []).append([words, phrase, k.get("limit"), spent])
            return out

        return wrapper

    search, count = TantivyBackend.ranked_rows, TantivyBackend.count
    TantivyBackend.ranked_rows = timed("searches", search, searched=True)  # type: ignore[method-assign]
    TantivyBackend.count = timed("counts", count)  # type: ignore[method-assign]
    for stage in STAGES:
        setattr(agent, stage, timed(stage, getattr(agent, stage)))
    respond, turns = agent.respond, []

    def respond_timed(*a: Any, **k: Any) -> Any:
        turn.clear()
        started = time.process_time()
        out = respond(*a, **k)
        turns.append({"cpu_ms": (time.process_time() - started) * 1000, **turn})
        return out

    agent.respond = respond_timed  # type: ignore[method-assign]
    data = BenchData(str(catalog), _Known(agent.features.asins), targets)
    try:
        for session in sessions:
            run_session(
                agent, session, data, RunSettings(protocol=args.protocol, turn_timeout=None)
            )
    finally:
        TantivyBackend.ranked_rows, TantivyBackend.count = search, count  # type: ignore[method-assign]
    return turns


class _Known:
    def __init__(self, keys: Any) -> None:
        self.keys = keys

    def __contains__(self, asin: object) -> bool:
        return asin in self.keys


def summarise(turns: list[dict[str, Any]], slowest: int) -> dict[str, Any]:
    cpu = np.array([t["cpu_ms"] for t in turns])
    parts = (*STAGES, "searches", "counts")
    order = np.argsort(-cpu)[:slowest]
    asked = [a for t in turns for a in t.get("asked", [])]

    def spread(rows: list[list[Any]]) -> dict[str, float]:
        spent = np.array([r[3] for r in rows]) if rows else np.zeros(1)
        return {
            "n": len(rows),
            "total_ms": round(float(spent.sum()), 1),
            **{f"p{q}": round(float(np.percentile(spent, q)), 1) for q in (50, 90, 99)},
        }

    return {
        "turns": len(turns),
        "cpu_ms": {f"p{q}": round(float(np.percentile(cpu, q)), 1) for q in (50, 90, 95, 99)},
        "total_ms_by_part": {p: round(sum(sum(t.get(p, [])) for t in turns), 1) for p in parts},
        "scored_searches": spread([a for a in asked if not a[1]]),
        "quote_searches": spread([a for a in asked if a[1]]),
        "slowest_turns": [
            {"cpu_ms": round(float(cpu[i]), 1)}
            | {p: round(sum(turns[i].get(p, [])), 1) for p in parts}
            for i in order
        ],
    }


if __name__ == "__main__":
    main()
