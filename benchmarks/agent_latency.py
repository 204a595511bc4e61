"""respond() latency of the copilot: wall and CPU time per turn, and the whole-run time.

    python benchmarks/agent_latency.py --catalog PADDED.jsonl.gz --sessions public_set.jsonl
    [--protocol official]

Reports agent construction time (index already built) and its warm-up (which a server
runs in the background after start; here it runs before the timed turns so its CPU is
not charged to them), then per-turn respond() wall and CPU (process) time percentiles
over every turn of every session, and the total time of the run. CPU time is the
steadier number on a shared machine. With --stages,
a second run through respond_traced() reports each pipeline stage's own time.
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict

from shopcopilot.agent import FOR_PEOPLE, Agent
from shopcopilot.bench.runner import RunSettings, load_bench_data, run_session
from shopcopilot.bench.sessions_io import load_sessions


class Timed:
    """Wraps an agent and records wall and CPU time of every respond()."""

    def __init__(self, agent: Agent) -> None:
        self.agent, self.wall, self.cpu = agent, [], []

    def reset(self, session_id, profile):
        self.agent.reset(session_id, profile)

    def respond(self, session_id, message, turn, top_k):
        wall, cpu = time.perf_counter(), time.process_time()
        response = self.agent.respond(session_id, message, turn, top_k)
        self.cpu.append((time.process_time() - cpu) * 1000)
        self.wall.append((time.perf_counter() - wall) * 1000)
        return response


def percentiles(values: list[float]) -> str:
    ordered = sorted(values)
    pick = lambda q: ordered[min(len(ordered) - 1, int(q * len(ordered)))]  # noqa: E731
    return (
        f"p50 {pick(0.5):.1f} ms, p95 {pick(0.95):.1f} ms, p99 {pick(0.99):.1f} ms, "
        f"max {ordered[-1]:.1f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--catalog", required=True)
    parser.add_argument("--sessions", required=True)
    parser.add_argument("--protocol", default="official", choices=["official", "natural"])
    parser.add_argument(
        "--stages", action="store_true", help="also report per-stage times (a second run)"
    )
    parser.add_argument(
        "--people",
        action="store_true",
        help="the web page's and chat's settings (FOR_PEOPLE: the full list, meaning beside "
        "the words); SHOPCOPILOT_DENSE=0 or 1 then compares without and with product vectors",
    )
    args = parser.parse_args()
    sessions = load_sessions(args.sessions)
    data = load_bench_data(args.catalog, sessions)
    started = time.perf_counter()
    people = {"settings": FOR_PEOPLE} if args.people else {}
    agent = Timed(Agent(args.catalog, warm_up=False, **people))
    built = time.perf_counter() - started
    agent.agent.warm_up()
    warmed = time.perf_counter() - started - built
    settings = RunSettings(protocol=args.protocol, turn_timeout=None)
    for session in sessions:
        run_session(agent, session, data, settings)
    total = time.perf_counter() - started
    print(
        f"agent construction: {built:.2f} s, warm-up {warmed:.2f} s; "
        f"whole run ({len(sessions)} sessions, {len(agent.wall)} turns): {total:.1f} s"
    )
    print(f"respond() wall: {percentiles(agent.wall)}")
    print(f"respond() CPU:  {percentiles(agent.cpu)}")
    if args.stages:
        print_stage_times(agent.agent, sessions, data, settings)


class Traced:
    """Drives respond_traced() and keeps each turn's per-stage milliseconds."""

    def __init__(self, agent: Agent) -> None:
        self.agent, self.stages = agent, defaultdict(list)

    def reset(self, session_id, profile):
        self.agent.reset(session_id, profile)

    def respond(self, session_id, message, turn, top_k):
        result = self.agent.respond_traced(session_id, message, turn, top_k)
        for event in result.trace:
            self.stages[event["stage"]].append(event["ms"])
        return result.response


def print_stage_times(agent: Agent, sessions, data, settings: RunSettings) -> None:
    traced = Traced(agent.with_settings(agent.settings))  # same caches, fresh sessions
    for session in sessions:
        run_session(traced, session, data, settings)
    for stage, times in traced.stages.items():
        print(f"stage {stage:10s} {percentiles(times)}, mean {sum(times) / len(times):.1f} ms")


if __name__ == "__main__":
    main()
