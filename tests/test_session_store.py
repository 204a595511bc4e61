"""The session store's contract, one suite run against both back ends: SQLite (a file) and
Redis (a real redis-server started for the run; skipped with the reason when it is missing)."""

from __future__ import annotations

import multiprocessing
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from shopcopilot.bench.local_redis import LocalRedis
from shopcopilot.web.redis_store import RedisStore
from shopcopilot.web.sqlite_store import SQLiteStore
from shopcopilot.web.store import (
    ExpiredSession,
    SessionBusy,
    SessionConflict,
    SessionStore,
    StoreUnavailable,
    UnknownSession,
    UnknownTurn,
    open_store,
)

BACKENDS = ["sqlite", "redis"]


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


# What builds a store of one back end, with the contract's settings; picklable for processes.
Spec = tuple[str, str, str]  # (back end, target, key prefix)


def build(spec: Spec, **settings: Any) -> SessionStore:
    kind, target, prefix = spec
    if kind == "redis":
        return RedisStore(target, prefix=prefix, **settings)
    return SQLiteStore(target, **settings)


@pytest.fixture(params=BACKENDS)
def spec(request: pytest.FixtureRequest, tmp_path: Path) -> Spec:
    if request.param == "redis":
        server: LocalRedis = request.getfixturevalue("redis_server")
        return ("redis", server.url, f"test-{uuid.uuid4().hex[:8]}:")
    return ("sqlite", str(tmp_path / "sessions.sqlite3"), "")


@pytest.fixture
def make_store(spec: Spec) -> Iterator[Callable[..., SessionStore]]:
    made: list[SessionStore] = []

    def make(**settings: Any) -> SessionStore:
        made.append(build(spec, **settings))
        return made[-1]

    yield make
    for store in made:
        store.close()


def test_a_session_round_trips_and_turns_are_recorded(make_store) -> None:
    store = make_store()
    state = {"history": [{"user": "un pull rouge, très doux 🧶"}], "budget": [None, 40.5]}
    assert store.create("a", {"summary": "p"}, state) == []
    stored = store.get("a")
    assert (stored.session_id, stored.version, stored.turns) == ("a", 1, 0)
    assert (stored.profile, stored.agent_data, stored.demo) == ({"summary": "p"}, state, None)
    assert store.save_turn("a", 1, 1, {"turn": 1}, {"turn": 1, "text": "é"}) == 2
    assert store.save_turn("a", 2, 2, {"turn": 2}, {"turn": 2}) == 3
    stored = store.get("a")
    assert (stored.version, stored.turns, stored.agent_data) == (3, 2, {"turn": 2})
    assert store.turn("a", 1) == {"turn": 1, "text": "é"}
    with pytest.raises(UnknownTurn, match="no turn 3"):
        store.turn("a", 3)
    with pytest.raises(UnknownSession, match="'nope'"):
        store.get("nope")


def test_a_stale_write_is_a_conflict_and_changes_nothing(make_store) -> None:
    store = make_store()
    store.create("a", {}, {"state": 0})
    assert store.save_turn("a", 1, 1, {"state": 1}, {"turn": 1}) == 2
    with pytest.raises(SessionConflict, match="changed while this turn ran"):
        store.save_turn("a", 1, 1, {"state": "stale"}, {"turn": "stale"})
    assert store.get("a").agent_data == {"state": 1}
    assert store.turn("a", 1) == {"turn": 1}
    with pytest.raises(SessionConflict):  # a session gone meanwhile is a conflict too
        store.save_turn("gone", 1, 1, {}, {})


def test_the_demo_record_is_kept_unless_a_turn_replaces_it(make_store) -> None:
    store = make_store()
    store.create("d", {}, {}, {"step": 0})
    store.save_turn("d", 1, 1, {}, {"turn": 1})
    assert store.get("d").demo == {"step": 0}
    store.save_turn("d", 2, 2, {}, {"turn": 2}, {"step": 2})
    assert store.get("d").demo == {"step": 2}


def test_an_idle_session_expires_once_then_is_unknown(make_store) -> None:
    clock = FakeClock()
    store = make_store(idle_ttl_seconds=60, clock=clock)
    store.create("a", {}, {})
    clock.now += 59
    assert store.get("a").turns == 0  # reading counts as activity
    clock.now += 59
    assert store.live_count() == 1
    clock.now += 2
    assert store.live_count() == 0
    with pytest.raises(ExpiredSession, match="expired after 60 s idle"):
        store.get("a")
    with pytest.raises(UnknownSession):
        store.get("a")


def test_expired_sessions_are_purged(make_store) -> None:
    clock = FakeClock()
    store = make_store(idle_ttl_seconds=10, clock=clock)
    store.create("old", {}, {})
    store.create("older", {}, {})
    clock.now += 5
    store.create("new", {}, {})
    clock.now += 6
    assert store.purge_expired() == 2
    assert store.get("new").session_id == "new"
    with pytest.raises(UnknownSession):
        store.get("old")
    store.create("newest", {}, {})  # creating purges too: nothing left to purge here
    assert store.purge_expired() == 0


def test_the_cap_evicts_the_session_idle_the_longest(make_store) -> None:
    clock = FakeClock()
    store = make_store(max_sessions=2, clock=clock)
    store.create("oldest", {}, {})
    clock.now += 1
    store.create("middle", {}, {})
    clock.now += 1
    store.get("oldest")  # now "middle" is idle the longest
    clock.now += 1
    assert store.create("newest", {}, {}) == ["middle"]
    with pytest.raises(UnknownSession):
        store.get("middle")
    assert store.live_count() == 2
    with pytest.raises(UnknownTurn):
        store.turn("oldest", 1)


def test_limits_are_checked(spec: Spec) -> None:
    with pytest.raises(ValueError, match="idle_ttl_seconds"):
        build(spec, idle_ttl_seconds=0)
    with pytest.raises(ValueError, match="max_sessions"):
        build(spec, max_sessions=0)


def test_a_second_turn_waits_for_the_first_then_runs(make_store) -> None:
    store, other = make_store(), make_store()  # two connections, as two workers have
    store.create("a", {}, {})
    order: list[str] = []
    inside = threading.Event()

    def first() -> None:
        with store.session_lock("a"):
            inside.set()
            time.sleep(0.3)
            order.append("first")

    thread = threading.Thread(target=first)
    thread.start()
    inside.wait(5)
    began = time.monotonic()
    with other.session_lock("a"):
        order.append("second")
    waited = time.monotonic() - began
    thread.join()
    assert order == ["first", "second"]
    assert waited > 0.1
    with other.session_lock("b"):  # another session is not held up
        pass


def test_a_lock_held_past_the_wait_is_busy(make_store) -> None:
    store, other = make_store(), make_store()
    other.lock_wait_seconds = 0.2
    with (
        store.session_lock("a"),
        pytest.raises(SessionBusy, match="busy"),
        other.session_lock("a"),
    ):
        pass
    with other.session_lock("a"):  # released on the way out
        pass


def test_an_open_turn_reads_the_session_under_its_lock_and_saves_once(make_store) -> None:
    store, other = make_store(), make_store()
    other.lock_wait_seconds = 0.2
    store.create("a", {"p": 1}, {"n": 0})
    with store.open_turn("a") as opened:
        assert (opened.stored.version, opened.stored.agent_data) == (1, {"n": 0})
        with pytest.raises(SessionBusy), other.session_lock("a"):
            pass  # the turn holds the session's lock
        assert opened.save(1, {"n": 1}, {"turn": 1}, None) == 2
    with other.open_turn("a") as opened:  # the lock was let go of
        assert (opened.stored.version, opened.stored.turns) == (2, 1)
        assert opened.stored.agent_data == {"n": 1}
    assert store.turn("a", 1) == {"turn": 1}


def test_an_open_turn_waits_for_a_held_lock_and_lets_go_when_it_fails(make_store) -> None:
    store, other = make_store(), make_store()
    other.lock_wait_seconds = 0.2
    store.create("a", {}, {"n": 0})
    with store.session_lock("a"), pytest.raises(SessionBusy, match="busy"), other.open_turn("a"):
        pass
    with pytest.raises(RuntimeError), store.open_turn("a"):
        raise RuntimeError("the agent failed")  # nothing saved
    with other.open_turn("a") as opened:  # not stranded by the failure
        assert opened.stored.version == 1
        with pytest.raises(SessionConflict):  # another write got in (a lease ran out, say)
            store.save_turn("a", 1, 1, {"n": "other"}, {"turn": "other"})
            opened.save(1, {"n": 1}, {"turn": 1}, None)
    with other.session_lock("a"):  # let go of after the conflict too
        assert store.get("a").agent_data == {"n": "other"}


def test_an_open_turn_on_an_unknown_or_expired_session_holds_no_lock(make_store) -> None:
    clock = FakeClock()
    store = make_store(idle_ttl_seconds=60, clock=clock)
    store.lock_wait_seconds = 0.2
    with pytest.raises(UnknownSession), store.open_turn("nope"):
        pass
    store.create("a", {}, {})
    clock.now += 61
    with pytest.raises(ExpiredSession), store.open_turn("a"):
        pass
    with store.session_lock("a"), store.session_lock("nope"):
        pass  # neither was left locked


def _take_turns(spec: Spec, worker: int, turns: int) -> None:
    store = build(spec)
    for _ in range(turns):
        with store.session_lock("shared"):
            stored = store.get("shared")
            count = stored.agent_data["count"] + 1
            state = {"count": count, "by": [*stored.agent_data["by"], worker]}
            store.save_turn("shared", stored.version, stored.turns + 1, state, {"by": worker})
    store.close()


def test_processes_taking_turns_on_one_session_lose_none(make_store, spec: Spec) -> None:
    """Four processes each apply 15 turns to one session, under its lock: every turn lands, in
    one order, with no conflict."""
    store = make_store()
    store.create("shared", {}, {"count": 0, "by": []})
    context = multiprocessing.get_context("fork")
    workers = [context.Process(target=_take_turns, args=(spec, n, 15)) for n in range(4)]
    for process in workers:
        process.start()
    for process in workers:
        process.join(60)
        assert process.exitcode == 0
    stored = store.get("shared")
    assert stored.agent_data["count"] == stored.turns == 60
    assert stored.version == 61
    recorded = [store.turn("shared", n)["by"] for n in range(1, 61)]
    assert recorded == stored.agent_data["by"]
    assert sorted(recorded) == sorted(n for n in range(4) for _ in range(15))


def test_open_store_reads_the_target(tmp_path: Path, redis_server: LocalRedis) -> None:
    assert isinstance(open_store(tmp_path / "a.sqlite3"), SQLiteStore)
    assert isinstance(open_store(f"sqlite:///{tmp_path}/b.sqlite3"), SQLiteStore)
    assert (tmp_path / "b.sqlite3").exists()
    redis_store = open_store(redis_server.url)
    assert isinstance(redis_store, RedisStore)
    redis_store.close()
    with pytest.raises(ValueError, match="unknown session store scheme 'postgres'"):
        open_store("postgres://db/sessions")


# ---- Redis only: restarts ------------------------------------------------------------------------


def test_redis_killed_and_restarted_keeps_every_acknowledged_turn(tmp_path: Path) -> None:
    """kill -9 of redis-server with the append-only file on (fsync always): every write it
    acknowledged is there after the restart, and the store reconnects by itself."""
    with LocalRedis(tmp_path / "redis") as server:
        store = RedisStore(server.url)
        store.create("a", {}, {"n": 0})
        for turn in range(1, 31):
            store.save_turn("a", turn, turn, {"n": turn}, {"turn": turn})
        server.restart()
        stored = store.get("a")
        assert (stored.turns, stored.version, stored.agent_data) == (30, 31, {"n": 30})
        assert [store.turn("a", n)["turn"] for n in range(1, 31)] == list(range(1, 31))
        store.close()


def test_an_unreachable_redis_is_reported_as_unavailable(tmp_path: Path) -> None:
    with LocalRedis(tmp_path / "redis") as server:
        store = RedisStore(server.url)
        store.create("a", {}, {})
        server.kill()
        began = time.monotonic()
        with pytest.raises(StoreUnavailable, match="unreachable"):
            store.get("a")
        assert time.monotonic() - began < 15  # retried for a few seconds, then gave up
        store.close()


def test_a_lock_and_read_retried_after_a_lost_reply_is_not_kept_waiting(tmp_path: Path) -> None:
    """The script that takes a session's lock and reads it may have run when its reply was lost;
    the client's retry (the same token) finds its own lock and goes on, and another turn (another
    token) still waits."""
    with LocalRedis(tmp_path / "redis") as server:
        store = RedisStore(server.url)
        store.lock_wait_seconds = 0.2
        store.create("a", {}, {"n": 0})
        assert store._locked_read("a", "token-1").version == 1
        began = time.monotonic()
        assert store._locked_read("a", "token-1").version == 1  # the retry
        assert time.monotonic() - began < 0.1
        with pytest.raises(SessionBusy):
            store._locked_read("a", "token-2")
        store.close()
