"""Every response of a benchmark run, in full, for proving a change behaviour-neutral.

    python benchmarks/dump_responses.py -o before.jsonl          # on the old code
    python benchmarks/dump_responses.py -o after.jsonl           # on the new code
    cmp before.jsonl after.jsonl                                 # identical, or not

For each session of the public set (both protocols) and of a generated iid set, each turn's
whole response (message, question, every recommendation with its score and reason) and
the shopper state after it, one JSON line per turn. Timing is left out so that two runs of
the same code give the same file byte for byte.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from rich.console import Console

from shopcopilot.agent import Agent
from shopcopilot.bench.real import prepare_real_benchmark
from shopcopilot.bench.runner import RunSettings, load_bench_data, run_session
from shopcopilot.bench.sessions import generate_sessions
from shopcopilot.bench.sessions_io import load_sessions


class Recorder:
    """Wraps the agent; keeps every turn's full response and the state it left."""

    def __init__(self, agent: Agent, label: str, out) -> None:
        self.agent, self.label, self.out = agent, label, out
        self.sessions = 0  # the runner's session ids are random; number them instead

    def reset(self, session_id, profile):
        self.sessions += 1
        self.agent.reset(session_id, profile)

    def respond(self, session_id, message, turn, top_k):
        response = self.agent.respond(session_id, message, turn, top_k)
        state = self.agent.export_session(session_id)
        line = {
            "run": self.label,
            "session": self.sessions,
            "turn": turn,
            "message": message,
            "response": response,
            "state": state,
        }
        self.out.write(json.dumps(line, sort_keys=True) + "\n")
        return response


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("-o", "--out", type=Path, required=True)
    parser.add_argument(
        "--generated", type=int, default=100, help="generated iid sessions (0: none)"
    )
    parser.add_argument("--limit", type=int, default=None, help="only the first N public sessions")
    args = parser.parse_args()
    catalog, sessions_path = prepare_real_benchmark(Console(stderr=True))
    public = load_sessions(sessions_path)[: args.limit]
    runs = [("official", "official", public), ("natural", "natural", public)]
    if args.generated:
        excluded = frozenset(s.target_asin for s in public)
        generated = list(
            generate_sessions(catalog, "iid", args.generated, 3, exclude_targets=excluded)
        )
        runs += [
            ("generated-official", "official", generated),
            ("generated-natural", "natural", generated),
        ]
    agent = Agent(catalog, warm_up=False)
    agent.warm_up()
    with args.out.open("w", encoding="utf-8") as out:
        for label, protocol, sessions in runs:
            data = load_bench_data(catalog, sessions)
            recorder = Recorder(agent.with_settings(agent.settings), label, out)
            for session in sessions:
                run_session(
                    recorder, session, data, RunSettings(protocol=protocol, turn_timeout=None)
                )


if __name__ == "__main__":
    main()
