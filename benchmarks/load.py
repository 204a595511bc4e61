"""Many shoppers at once: `shopcopilot serve --workers N` with a Redis (or SQLite) session store,
driven by concurrent simulated shoppers (shopcopilot/bench/load.py), with faults on request.

    python benchmarks/load.py                             # 200 shoppers x 5 turns, 2 workers
    python benchmarks/load.py --fault kill-worker            # kill -9 a worker halfway
    python benchmarks/load.py --fault restart-redis          # kill -9 + restart Redis halfway
    python benchmarks/load.py --store sqlite                 # the SQLite store instead
    python benchmarks/load.py --url http://127.0.0.1:8000    # a server already running

It starts redis-server (Debian's, on a free loopback port, append-only file on) and the server
itself, on the embedded synthetic 50,000-product catalog unless --catalog names another. It
reports throughput, latency p50/p99, the errors (expected: 0), and CPU per served turn (the
worker processes' CPU time over the run, and Redis's) beside respond()'s own CPU per turn on
the same messages in this process. Every shopper checks that its state holds only its own words.
Exit status 1 when any shopper saw an error.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import psutil

from shopcopilot.bench.load import LoadResult, Shopper, run_load
from shopcopilot.bench.local_redis import LocalRedis
from shopcopilot.bench.serving import ServedCopilot

WARM_UP_SHOPPERS = 20  # each worker's first turns load lookups: not measured


def main() -> int:
    args = parse_args()
    with ExitStack() as stack:
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="load-")))
        redis_server = None
        if args.url:
            base_url, server = args.url, None
        else:
            target = str(folder / "sessions.sqlite3")
            if args.store == "redis":
                redis_server = LocalRedis(folder / "redis", appendfsync=args.appendfsync)
                stack.enter_context(redis_server)
                target = redis_server.url
            server = ServedCopilot(
                [*(["--catalog", str(args.catalog)] if args.catalog else []),
                 "--session-store", target, "--demo-generated", "0"],
                log_path=folder / "serve.log",
                workers=args.workers,
            )  # fmt: skip
            print(f"starting serve --workers {args.workers} ({args.store})", file=sys.stderr)
            stack.enter_context(server)
            base_url = server.base_url
        asyncio.run(run_load(base_url, WARM_UP_SHOPPERS, 2, deadline_seconds=300))
        processes = _processes(server, redis_server)
        before = _cpu(processes)
        after: dict[str, float] = {}
        fault = _fault(args, server, redis_server)
        print(f"{args.shoppers} shoppers x {args.turns} turns", file=sys.stderr)
        result = asyncio.run(
            run_load(
                base_url,
                args.shoppers,
                args.turns,
                deadline_seconds=args.deadline,
                on_turn=fault.at_turn if fault else None,
                trace=args.trace,
                on_shopped=lambda: after.update(_cpu(processes)),
            )
        )
        # The agent alone, and the web service without HTTP, on the same messages, in this
        # process (the server is idle by now).
        respond = _respond_cpu(args, redis_server.url if redis_server else None)
    report = _report(args, result, before, after, fault)
    report["respond"] = respond
    print(json.dumps(report, indent=2))
    if args.output:
        args.output.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    for error in result.errors[:20]:
        print("ERROR", error, file=sys.stderr)
    return 1 if result.errors else 0


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shoppers", type=int, default=200)
    parser.add_argument("--turns", type=int, default=5)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--store", choices=["redis", "sqlite"], default="redis")
    parser.add_argument("--appendfsync", choices=["always", "everysec"], default="always")
    parser.add_argument("--catalog", type=Path, help="Default: the embedded synthetic catalog.")
    parser.add_argument("--url", help="A server already running (no faults, no CPU counts).")
    parser.add_argument("--fault", choices=["none", "kill-worker", "restart-redis"], default="none")
    parser.add_argument("--trace", action="store_true", help="Ask every turn for ?trace=true.")
    parser.add_argument("--deadline", type=float, default=900.0, help="Seconds, at most.")
    parser.add_argument("-o", "--output", type=Path, help="Also write the report here (JSON).")
    args = parser.parse_args()
    if args.url and args.fault != "none":
        parser.error("--fault needs the server started here (no --url)")
    if args.fault == "restart-redis" and args.store != "redis":
        parser.error("--fault restart-redis needs --store redis")
    return args


class Fault:
    """Strikes once, when half the turns are done; notes when and what it found."""

    def __init__(self, kind: str, at: int, server: ServedCopilot, redis: LocalRedis | None):
        self.kind, self.at, self.server, self.redis = kind, at, server, redis
        self.notes: dict[str, Any] = {}

    async def at_turn(self, done: int, worker: str | None) -> None:
        if done < self.at or self.notes:
            return
        if self.kind == "kill-worker" and worker is None:
            return  # wait for a turn a worker answered: that worker is busy serving
        self.notes["after_turns"] = done
        if self.kind == "kill-worker":
            before = frozenset(self.server.worker_pids())
            victim = int(worker) if worker else min(before)
            self.server.kill_worker(victim)
            self.notes["killed_worker"] = victim
            began = time.monotonic()
            await asyncio.to_thread(self.server.wait_for_workers, 1, 300, before)
            self.notes["replacement_serving_after_s"] = round(time.monotonic() - began, 1)
        elif self.redis is not None:
            self.notes["redis_away_s"] = round(await asyncio.to_thread(self.redis.restart), 2)


def _fault(args, server: ServedCopilot | None, redis: LocalRedis | None) -> Fault | None:
    if args.fault == "none" or server is None:
        return None
    return Fault(args.fault, args.shoppers * args.turns // 2, server, redis)


def _processes(server: ServedCopilot | None, redis: LocalRedis | None) -> dict[str, list]:
    if server is None:
        return {}
    found = {"workers": psutil.Process(server.pid).children(recursive=True)}
    if redis is not None and redis.pid is not None:
        found["redis"] = [psutil.Process(redis.pid)]
    return found


def _cpu(processes: dict[str, list]) -> dict[str, float]:
    totals = {}
    for name, group in processes.items():
        seconds = 0.0
        for process in group:
            try:
                times = process.cpu_times()
            except psutil.NoSuchProcess:  # killed on purpose: its time is gone with it
                continue
            seconds += times.user + times.system
        totals[name] = seconds
    return totals


def _report(args, result: LoadResult, before, after, fault: Fault | None) -> dict[str, Any]:
    report: dict[str, Any] = {
        "command": "python benchmarks/load.py " + " ".join(sys.argv[1:]),
        "store": args.store if not args.url else args.url,
        "workers": args.workers,
        "appendfsync": args.appendfsync if args.store == "redis" else None,
        "trace": args.trace,
        **result.summary(),
    }
    if fault is None and result.turns:
        for name in before:
            used = after[name] - before[name]
            report[f"cpu_ms_per_turn_{name}"] = round(1000 * used / result.turns, 2)
    if fault is not None:
        report["fault"] = {"kind": fault.kind, **fault.notes}
    report["first_errors"] = result.errors[:5]
    return report


def _respond_cpu(args, redis_url: str | None) -> dict[str, float]:
    """CPU per turn on the same shoppers' messages, in this process, with one BLAS thread as
    the workers have: the official respond(), the fully traced turn, and the web service's light
    turn without HTTP (reading and writing the session store: the same Redis when the run used
    one, else a fresh SQLite file)."""
    from shopcopilot.agent import FOR_PEOPLE, Agent
    from shopcopilot.web.app import one_blas_thread
    from shopcopilot.web.sessions import SessionService, TurnPlan
    from shopcopilot.web.store import open_store

    one_blas_thread()  # as in the serving workers, so that the two compare
    agent = Agent(args.catalog, settings=FOR_PEOPLE, warm_up=False)
    agent.warm_up()
    shoppers = [Shopper(n) for n in range(args.shoppers)]
    with tempfile.TemporaryDirectory() as folder:
        store = open_store(redis_url or Path(folder) / "service.sqlite3")
        service = SessionService(agent, store)

        def served(shopper: Shopper) -> None:
            session_id = service.create({})["session_id"]
            for message in shopper.messages(args.turns):
                service.run_turn(session_id, lambda _, m=message: TurnPlan(m, trace=False))

        def direct(shopper: Shopper, traced: bool) -> None:
            session = f"direct-{shopper.number}"
            agent.reset(session, {})
            for turn, message in enumerate(shopper.messages(args.turns), 1):
                if traced:
                    agent.respond_traced(session, message, turn)
                else:
                    agent.respond(session, message, turn)
            agent.forget(session)

        runs = {
            "respond": lambda shopper: direct(shopper, False),
            "respond_traced": lambda shopper: direct(shopper, True),
            "service_light_turn": served,
        }
        timings = {}
        for name, run in runs.items():
            began = time.process_time()
            for shopper in shoppers:
                run(shopper)
            used = time.process_time() - began
            timings[f"cpu_ms_per_turn_{name}"] = round(
                1000 * used / (len(shoppers) * args.turns), 2
            )
        store.close()
    return timings


if __name__ == "__main__":
    sys.exit(main())
