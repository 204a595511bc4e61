"""`shopcopilot serve --workers 2` as a real server (uvicorn worker processes) over each session
store, driven by the load driver's shoppers: any worker serves any turn, concurrent turns of one
session run in order, and a worker killed with -9 or a Redis restarted mid-load loses no
completed turn and corrupts nothing."""

from __future__ import annotations

import asyncio
import itertools
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import redis

from shopcopilot.bench.load import LoadResult, run_load
from shopcopilot.bench.local_redis import LocalRedis
from shopcopilot.bench.serving import ServedCopilot

SHOPPERS, TURNS = 16, 5
FAULT_AFTER = 20  # turns completed when the fault strikes
DATABASES = itertools.cycle(range(1, 16))
BACKENDS = ["sqlite", "redis"]


def new_target(kind: str, folder: Path, request: pytest.FixtureRequest) -> str:
    if kind == "redis":
        server: LocalRedis = request.getfixturevalue("redis_server")
        return f"redis://127.0.0.1:{server.port}/{next(DATABASES)}"  # a database of its own
    return str(folder / "sessions.sqlite3")


def forget(target: str) -> None:
    if target.startswith("redis://"):
        client = redis.Redis.from_url(target)
        client.flushdb()
        client.close()


@pytest.fixture(params=BACKENDS)
def store_target(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    target = new_target(request.param, tmp_path, request)
    yield target
    forget(target)


@pytest.fixture(scope="module", params=BACKENDS)
def served(
    request: pytest.FixtureRequest,
    hand_catalog: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[ServedCopilot, str]]:
    """One server per back end for the tests that do not break it."""
    folder = tmp_path_factory.mktemp(f"served-{request.param}")
    target = new_target(request.param, folder, request)
    with serve(hand_catalog, folder, target) as server:
        yield server, target
    forget(target)


def serve(hand_catalog: Path, tmp_path: Path, store: str, workers: int = 2) -> ServedCopilot:
    return ServedCopilot(
        ["--catalog", str(hand_catalog), "--session-store", store, "--demo-generated", "0"],
        log_path=tmp_path / "serve.log",
        env={"SHOPCOPILOT_CACHE": str(tmp_path.parent / "serve-cache")},
        workers=workers,
    )


def assert_clean(result: LoadResult) -> None:
    assert result.errors == []
    assert result.turns == SHOPPERS * TURNS


def assert_sqlite_intact(store: str) -> None:
    if "://" in store:
        return
    db = sqlite3.connect(store)
    try:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        per_session = db.execute(
            "SELECT s.turns, COUNT(t.turn), s.version FROM sessions s"
            " LEFT JOIN turns t USING (session_id) GROUP BY s.session_id"
        ).fetchall()
    finally:
        db.close()
    assert all(turns == recorded == version - 1 for turns, recorded, version in per_session)


def test_any_worker_serves_any_turn(served: tuple[ServedCopilot, str]) -> None:
    server, target = served
    result = asyncio.run(
        run_load(server.base_url, SHOPPERS, TURNS, deadline_seconds=240, fresh_connections=True)
    )
    assert_clean(result)
    assert len(result.summary()["turns_per_worker"]) == 2
    assert any(len(set(run.workers)) == 2 for run in result.runs)  # one session, both workers
    assert_sqlite_intact(target)


def test_turns_sent_at_once_for_one_session_run_one_after_another(
    served: tuple[ServedCopilot, str],
) -> None:
    messages = [f"red cotton shirt number {n}" for n in range(6)]

    async def all_at_once(base_url: str) -> tuple[list[httpx.Response], dict]:
        async with httpx.AsyncClient(base_url=base_url, timeout=60) as client:
            session_id = (await client.post("/api/sessions", json={})).json()["session_id"]
            path = f"/api/sessions/{session_id}/messages"
            responses = await asyncio.gather(
                *(client.post(path, json={"message": m}) for m in messages)
            )
            return list(responses), (await client.get(f"/api/sessions/{session_id}")).json()

    responses, summary = asyncio.run(all_at_once(served[0].base_url))
    assert [r.status_code for r in responses] == [200] * 6
    turns = [r.json() for r in responses]
    assert sorted(t["turn"] for t in turns) == [1, 2, 3, 4, 5, 6]
    history = [entry["user"] for entry in summary["state"]["history"]]
    assert sorted(history) == sorted(messages) and summary["turns"] == 6
    for turn in turns:  # each turn saw exactly the turns before it
        seen = [entry["user"] for entry in turn["state"]["history"]]
        assert seen == history[: turn["turn"]]


def test_a_worker_killed_mid_load_loses_no_completed_turn(
    hand_catalog: Path, tmp_path: Path, store_target: str
) -> None:
    with serve(hand_catalog, tmp_path, store_target) as server:
        pids = server.worker_pids()
        assert len(pids) == 2
        killed: list[int] = []

        async def fault(done: int, worker: str | None) -> None:
            if done >= FAULT_AFTER and worker is not None and not killed:
                server.kill_worker(int(worker))  # one that is serving right now
                killed.append(int(worker))

        result = asyncio.run(
            run_load(server.base_url, SHOPPERS, TURNS, deadline_seconds=240, on_turn=fault)
        )
        # uvicorn's supervisor starts a new worker in the killed one's place
        replacement = server.wait_for_workers(1, 120, avoid=frozenset(pids))
    assert len(killed) == 1 and killed[0] in pids
    assert replacement and not replacement & pids
    assert str(killed[0]) in result.summary()["turns_per_worker"]
    assert_clean(result)
    assert_sqlite_intact(store_target)


def test_redis_restarted_mid_load_loses_no_completed_turn(
    hand_catalog: Path, tmp_path: Path
) -> None:
    with LocalRedis(tmp_path / "redis") as redis_server:
        with serve(hand_catalog, tmp_path, redis_server.url) as server:
            restarts = []

            async def fault(done: int, worker: str | None) -> None:
                if done == FAULT_AFTER:
                    restarts.append(await asyncio.to_thread(redis_server.restart))

            result = asyncio.run(
                run_load(server.base_url, SHOPPERS, TURNS, deadline_seconds=240, on_turn=fault)
            )
        assert len(restarts) == 1
    assert_clean(result)
