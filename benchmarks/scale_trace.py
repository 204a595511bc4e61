"""Where the target drops out, turn by turn: retrieval, the reranker's pool, or the list shown.

    python benchmarks/scale_trace.py --work WORK --size 1000000 --sessions 40
    python benchmarks/scale_trace.py --work WORK --size 1000000 --protocol natural -o turns.json

Plays generated sessions (the files `benchmarks/scale.py` writes into WORK, with its cache
folder WORK/cache-SIZE) and, on every turn, looks for the session's target in each stage's
output: the retrieval's candidates (and its rank there by lexical score), the reranker's
pool, the products shown. The harness reads the target; the agent never sees it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np


def main() -> None:
    args = session_arguments(__doc__, sessions=40).parse_args()
    os.environ.setdefault("SHOPCOPILOT_CACHE", str(args.work / f"cache-{args.size}"))
    runs = trace(args)
    summary = summarise(runs)
    print(json.dumps(summary, indent=1))
    if args.output:
        args.output.write_text(json.dumps(runs, indent=1))


def session_arguments(doc: str | None, sessions: int) -> argparse.ArgumentParser:
    """The options of a script that plays `benchmarks/scale.py`'s generated sessions."""
    parser = argparse.ArgumentParser(
        description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--work", type=Path, required=True, help="benchmarks/scale.py's --work")
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--sessions", type=int, default=sessions, help="the first N of the 200")
    parser.add_argument("--protocol", choices=("official", "natural"), default="official")
    parser.add_argument("--seed", type=int, default=3)
    parser.add_argument("-o", "--output", type=Path, help="every turn's record, as JSON")
    parser.add_argument(
        "--retrieval", action="append", default=[], metavar="NAME=VALUE", help="as in scale.py"
    )
    return parser


def opened(args: argparse.Namespace) -> tuple[Any, list[Any], Any]:
    """The copilot on the size's catalog (warmed up), the first `--sessions` generated sessions
    and the harness's data for them (`--work`, `--size`, `--seed`, `--retrieval`)."""
    from scale import _settings  # benchmarks/scale.py, beside this script

    from shopcopilot.agent import Agent
    from shopcopilot.bench.runner import BenchData
    from shopcopilot.bench.sessions_io import load_sessions

    stem = f"sessions-{args.size}-iid200-seed{args.seed}"
    sessions = load_sessions(args.work / f"{stem}.jsonl")[: args.sessions]
    targets = json.loads((args.work / f"{stem}.targets.json").read_text())
    catalog = args.work / f"synthetic-{args.size}-seed7.jsonl.gz"
    agent = Agent(catalog, settings=_settings(1.0, args.retrieval), warm_up=False)
    agent.warm_up()
    return agent, sessions, BenchData(str(catalog), _Known(agent.features.asins), targets)


def trace(args: argparse.Namespace) -> list[dict[str, Any]]:
    from shopcopilot.bench.runner import RunSettings, run_session

    agent, sessions, data = opened(args)
    watched: dict[str, Any] = {}
    retrieve, rank = agent._retrieve, agent._rank

    def watch_retrieve(tracer, state, meaning):  # the stage's own output, read as it leaves
        candidates = retrieve(tracer, state, meaning)
        at = np.flatnonzero(candidates.rows == watched["row"])
        order = np.argsort(-candidates.scores, kind="stable")
        lexical = int(np.flatnonzero(order == at[0])[0]) + 1 if len(at) else None
        watched["turns"].append({"candidates": len(candidates), "lexical_rank": lexical})
        return candidates

    def watch_rank(tracer, state, candidates, top_k, meaning):
        ranked = rank(tracer, state, candidates, top_k, meaning)
        ids = [s.parent_asin for s in ranked]
        target = watched["asin"]
        watched["turns"][-1]["pool_rank"] = ids.index(target) + 1 if target in ids else None
        return ranked

    agent._retrieve, agent._rank = watch_retrieve, watch_rank  # type: ignore[method-assign]
    runs = []
    for session in sessions:
        row = agent.features.row_of(session.target_asin)
        watched.update(asin=session.target_asin, row=(row or 0) + 1, turns=[])
        run = run_session(
            agent, session, data, RunSettings(protocol=args.protocol, turn_timeout=None)
        )
        turns = [
            {**seen, "turn": record.turn, "shown_rank": record.target_rank}
            for seen, record in zip(watched["turns"], run.turns, strict=False)
        ]
        runs.append(
            {
                "sample_id": session.sample_id,
                "category": session.category_bucket,
                "first_hit_turn": run.first_hit_turn,
                "turns": turns,
            }
        )
        print(f"{session.sample_id}: first hit {run.first_hit_turn}", file=sys.stderr)
    return runs


class _Known:
    def __init__(self, keys: Any) -> None:
        self.keys = keys

    def __contains__(self, asin: object) -> bool:
        return asin in self.keys


def stage_of(turn: dict[str, Any]) -> str:
    if turn["shown_rank"]:
        return "shown"
    if turn["lexical_rank"] is None:
        return "not retrieved"
    if turn.get("pool_rank") is None:
        return "retrieved, not in the reranker's pool"
    return "in the pool, not shown"


def summarise(runs: list[dict[str, Any]]) -> dict[str, Any]:
    turns = [t for run in runs for t in run["turns"]]
    misses = [run for run in runs if not run["first_hit_turn"]]
    return {
        "sessions": len(runs),
        "turns": len(turns),
        "misses": len(misses),
        "turns by stage": dict(Counter(stage_of(t) for t in turns).most_common()),
        "last turn of a missed session by stage": dict(
            Counter(stage_of(run["turns"][-1]) for run in misses if run["turns"]).most_common()
        ),
    }


if __name__ == "__main__":
    main()
