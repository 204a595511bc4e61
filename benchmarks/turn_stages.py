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
from typing import Any

import numpy as np

STAGES = ("_state", "_retrieve", "_rank", "_decide", "_respond")


def main() -> None:
    from scale_trace import session_arguments  # beside this script

    parser = session_arguments(__doc__, sessions=80)
    parser.add_argument("--slowest", type=int, default=10, help="turns to print by stage")
    args = parser.parse_args()
    os.environ.setdefault("SHOPCOPILOT_CACHE", str(args.work / f"cache-{args.size}"))
    turns = play(args)
    print(json.dumps(summarise(turns, args.slowest), indent=1))
    if args.output:
        args.output.write_text(json.dumps(turns))


def play(args: argparse.Namespace) -> list[dict[str, Any]]:
    from scale_trace import opened  # beside this script

    from shopcopilot.bench.runner import RunSettings, run_session
    from shopcopilot.index.tantivy_backend import TantivyBackend

    agent, sessions, data = opened(args)
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
    try:
        for session in sessions:
            run_session(
                agent, session, data, RunSettings(protocol=args.protocol, turn_timeout=None)
            )
    finally:
        TantivyBackend.ranked_rows, TantivyBackend.count = search, count  # type: ignore[method-assign]
    return turns


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
