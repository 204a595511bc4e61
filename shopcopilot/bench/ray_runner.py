"""Benchmark sessions on Ray: a local Ray started for the run, or an existing cluster.

One actor per CPU of the cluster; each builds the agent once (so each Ray worker opens the
index once) and then plays the sessions it is handed with the same `run_session` as a serial
run, so the results are the serial run's. The cluster must see the catalog (and the package)
at the same paths as this machine, as the workers of a shared file system do.
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from .runner import (
    BenchData,
    BenchError,
    ProgressCallback,
    RunSettings,
    SessionRun,
    build_agent,
    load_agent_class,
    run_session,
)
from .sessions_io import Session

LOCAL = "local"
INSTALL_HINT = "pip install 'shopcopilot[ray]'"
# A local Ray on a small machine stays small: the object store only carries sessions, results
# and the bench data once, and the dashboard and the log forwarding are off.
LOCAL_OBJECT_STORE_BYTES = 128 * 1024**2
# Where the index lives: actors on a cluster started elsewhere look in the same place.
FORWARDED_ENV = ("SHOPCOPILOT_CACHE",)
# Calls queued per actor, so an actor never waits a round trip for its next sessions.
IN_FLIGHT = 2
# Sessions per call: a few tens of milliseconds of work each, so one call per session would
# spend a noticeable share on Ray's per-call cost. Chunks stay small enough to balance.
MAX_CHUNK = 16
CONNECT_TIMEOUT = 5.0  # seconds to reach a cluster's address


def import_ray() -> Any:  # Any: ray is an optional dependency, typed only when installed
    """The ray module, or a one-line error telling how to install it."""
    try:
        import ray
    except ImportError as exc:
        raise BenchError(f"--ray needs Ray, which is not installed: {INSTALL_HINT}") from exc
    return ray


@contextmanager
def connected(address: str) -> Iterator[Any]:
    """Ray for the block: `local` starts one on this machine's cores, anything else is the
    address of a running cluster. A Ray this process is already connected to is reused (and
    left running)."""
    ray = import_ray()
    if ray.is_initialized():
        yield ray
        return
    start(ray, address)
    try:
        yield ray
    finally:
        ray.shutdown()


def start(ray: Any, address: str) -> None:
    """Connect this process to Ray as `connected` does, without the shutdown."""
    # ERROR: Ray's start-up notices (token authentication, usage stats) are not for this user.
    quiet = {"log_to_driver": False, "logging_level": logging.ERROR}
    if address != LOCAL:
        check_reachable(address)
    try:
        if address == LOCAL:
            os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no reporting home
            ray.init(
                address=LOCAL,
                num_cpus=os.cpu_count() or 1,
                object_store_memory=LOCAL_OBJECT_STORE_BYTES,
                include_dashboard=False,
                # Ray lowers its workers' priority by 15 (nice 19 under `nice -n 10`), which on
                # a busy machine slows the agents by a third; they run as the command does.
                _system_config={"worker_niceness": 0},
                **quiet,
            )
        else:
            ray.init(address=address, **quiet)
    except (ConnectionError, ValueError, RuntimeError) as exc:
        raise BenchError(f"cannot connect to Ray at {address!r}: {exc}") from exc


def check_reachable(address: str) -> None:
    """Fail in seconds on a HOST:PORT nothing listens at: Ray itself retries for minutes.
    Addresses without a port ('auto') are left to Ray."""
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not port.isdigit():
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), CONNECT_TIMEOUT).close()
    except OSError as exc:
        raise BenchError(f"cannot connect to Ray at {address!r}: nothing answers ({exc})") from exc


class SessionWorker:
    """Lives in one Ray worker process: the agent is built once, then plays what it is sent."""

    def __init__(self, agent_spec: str, data: BenchData, settings: RunSettings) -> None:
        # An agent that cannot start is reported by ready(): Ray would bury the message in
        # the actor's death notice.
        self._problem: str | None = None
        try:
            self._agent = build_agent(agent_spec, data.catalog_path)
        except BenchError as exc:
            self._problem = str(exc)
        self._data = data
        self._settings = settings

    def ready(self) -> str | None:
        """None when the agent is built, else why it is not."""
        return self._problem

    def run(self, chunk: list[tuple[int, Session]]) -> list[tuple[int, SessionRun]]:
        return [
            (index, run_session(self._agent, session, self._data, self._settings))
            for index, session in chunk
        ]


@dataclass(frozen=True, slots=True)
class RayRun:
    runs: list[SessionRun]
    actors: int  # how many agents played the sessions


def run_sessions_on_ray(
    agent_spec: str,
    sessions: Sequence[Session],
    data: BenchData,
    settings: RunSettings,
    address: str,
    on_done: ProgressCallback | None = None,
) -> RayRun:
    """All sessions, in input order, played by one agent per CPU of the Ray cluster."""
    load_agent_class(agent_spec)  # a bad spec fails here with a clear message, not in an actor
    with connected(address) as ray:
        actors = _start_actors(ray, agent_spec, data, settings, _cpus(ray))
        try:
            runs = _dispatch(ray, actors, sessions, on_done)
        finally:
            for actor in actors:
                ray.kill(actor)
    return RayRun(runs, len(actors))


def _cpus(ray: Any) -> int:
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


def _start_actors(
    ray: Any, agent_spec: str, data: BenchData, settings: RunSettings, count: int
) -> list[Any]:
    env = {name: os.environ[name] for name in FORWARDED_ENV if name in os.environ}
    worker_class = ray.remote(num_cpus=1, max_restarts=0)(SessionWorker)
    options = {"runtime_env": {"env_vars": env}} if env else {}
    shared = ray.put(data)  # once in the object store, not once per actor
    actors = [
        worker_class.options(**options).remote(agent_spec, shared, settings) for _ in range(count)
    ]
    problems = [p for p in _get(ray, [actor.ready.remote() for actor in actors]) if p]
    if problems:
        for actor in actors:
            ray.kill(actor)
        raise BenchError(f"a Ray worker could not start the agent: {problems[0]}")
    return actors


def _chunks(sessions: Sequence[Session], actors: int) -> Iterator[list[tuple[int, Session]]]:
    """Sessions with their positions, in calls of up to MAX_CHUNK, at least ~8 calls per actor."""
    size = max(1, min(MAX_CHUNK, len(sessions) // (actors * 8)))
    numbered = list(enumerate(sessions))
    for start_at in range(0, len(numbered), size):
        yield numbered[start_at : start_at + size]


def _dispatch(
    ray: Any, actors: list[Any], sessions: Sequence[Session], on_done: ProgressCallback | None
) -> list[SessionRun]:
    """Keep IN_FLIGHT calls queued on every actor and hand the next chunk to whichever actor
    finishes; results go back to their input positions."""
    chunks = _chunks(sessions, len(actors))
    pending: dict[Any, Any] = {}  # call -> the actor running it

    def send(actor: Any) -> None:
        chunk = next(chunks, None)
        if chunk is not None:
            pending[actor.run.remote(chunk)] = actor

    for actor in actors:
        for _ in range(IN_FLIGHT):
            send(actor)
    results: list[SessionRun | None] = [None] * len(sessions)
    while pending:
        done, _ = ray.wait(list(pending), num_returns=1)
        for call in done:
            actor = pending.pop(call)
            for index, run in _get(ray, call):
                results[index] = run
                if on_done:
                    on_done(run)
            send(actor)
    return [run for run in results if run is not None]


def _get(ray: Any, calls: Any) -> Any:
    """ray.get, with a dead actor or a failed agent start turned into one clear line."""
    try:
        return ray.get(calls)
    except ray.exceptions.RayError as exc:
        raise BenchError(f"a Ray worker failed: {_last_line(exc)}") from exc


def _last_line(exc: Exception) -> str:
    """Ray's messages end with the error itself, after the traceback."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return lines[-1] if lines else type(exc).__name__
