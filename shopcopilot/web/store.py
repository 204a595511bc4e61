"""The session store: the source of truth for every web session, behind one interface.

Two back ends keep the same contract (tests/test_session_store.py runs one suite on both):

    sqlite_store.SQLiteStore   one file, the embedded default; several worker processes on one
                               machine share it (WAL, a busy timeout)
    redis_store.RedisStore     a Redis server: workers on several machines share it

    open_store(target, ...)    "redis://HOST:PORT/DB", "sqlite:///PATH" or a plain path

Each completed turn writes the agent's exported session (everything needed to continue it)
plus the turn's record atomically, so a restarted server or another worker process picks the
session up where it stopped.

Limits:
- a session idle for longer than `idle_ttl_seconds` has expired: the next request for it gets
  ExpiredSession (once), then it is gone;
- at most `max_sessions` live sessions: creating one more evicts the session that has been idle
  the longest (its next request gets UnknownSession). Eviction rather than refusal keeps a
  public demo usable when visitors leave tabs open; the evicted ids are returned so the caller
  can log them.

Turns of one session are applied one at a time, in the order they take the session's lock
(`session_lock`, or `open_turn`, which takes the lock and reads the session together): a second
request for a session waits while another worker runs its turn, up to `lock_wait_seconds`, then
gets SessionBusy. Every write of a turn also names the version
it read, and a mismatch (SessionConflict) means another request advanced the session anyway
(a lock whose holder outlived its lease): the lock orders turns, the version keeps them
correct.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

DEFAULT_IDLE_TTL_SECONDS = 6 * 3600.0
DEFAULT_MAX_SESSIONS = 1000
# A turn takes milliseconds (about a second for a worker's very first); a lock outliving a
# killed worker strands its session for at most the lease.
LOCK_LEASE_SECONDS = 10.0
LOCK_WAIT_SECONDS = 15.0


class StoreError(Exception):
    """Base of the store's errors; the message is fit to show a client."""


class UnknownSession(StoreError):
    pass


class ExpiredSession(StoreError):
    pass


class UnknownTurn(StoreError):
    pass


class SessionConflict(StoreError):
    pass


class SessionBusy(StoreError):
    """Another request held the session's lock for longer than this one would wait."""


class StoreUnavailable(StoreError):
    """The store cannot be reached (a Redis restart, say): worth retrying shortly."""


@dataclass(frozen=True, slots=True)
class StoredSession:
    session_id: str
    created_at: float
    last_active: float
    version: int
    turns: int
    profile: dict[str, Any]
    agent_data: dict[str, Any]
    demo: dict[str, Any] | None


# Records a turn of an open session: (turn, agent_data, record, demo) -> the new version.
SaveTurn = Callable[[int, dict[str, Any], dict[str, Any], dict[str, Any] | None], int]


@dataclass(frozen=True, slots=True)
class OpenTurn:
    """A session read under its lock, for one turn. `save` records the turn against the version
    read; a back end that can also lets go of the lock in that same write."""

    stored: StoredSession
    save: SaveTurn


class SessionStore(Protocol):
    """What the web layer needs from a session store."""

    idle_ttl_seconds: float
    max_sessions: int

    def create(
        self,
        session_id: str,
        profile: dict[str, Any],
        agent_data: dict[str, Any],
        demo: dict[str, Any] | None = None,
    ) -> list[str]:
        """Store a new session (version 1, no turns); returns the ids evicted for room."""
        ...

    def get(self, session_id: str) -> StoredSession:
        """The session, marked active now; raises UnknownSession or ExpiredSession."""
        ...

    def save_turn(
        self,
        session_id: str,
        read_version: int,
        turn: int,
        agent_data: dict[str, Any],
        record: dict[str, Any],
        demo: dict[str, Any] | None = None,
    ) -> int:
        """Record a completed turn atomically if the session is still at `read_version`;
        returns the new version, or raises SessionConflict."""
        ...

    def turn(self, session_id: str, turn: int) -> dict[str, Any]:
        """One completed turn's record (the session must be live); raises UnknownTurn."""
        ...

    def live_count(self) -> int: ...

    def purge_expired(self) -> int:
        """Delete every expired session; returns how many."""
        ...

    def session_lock(self, session_id: str) -> AbstractContextManager[None]:
        """Held while one turn of the session runs; raises SessionBusy after the wait."""
        ...

    def open_turn(self, session_id: str) -> AbstractContextManager[OpenTurn]:
        """The session's lock and the session as `get` reads it, held for one turn; as
        `session_lock` then `get`, in fewer round trips where the back end allows."""
        ...

    def close(self) -> None: ...


@contextmanager
def locked_then_read(store: SessionStore, session_id: str) -> Iterator[OpenTurn]:
    """`open_turn` from the store's own steps: its lock, then a read, then `save_turn`."""
    with store.session_lock(session_id):
        stored = store.get(session_id)

        def save(turn: int, agent_data: dict, record: dict, demo: dict | None = None) -> int:
            return store.save_turn(session_id, stored.version, turn, agent_data, record, demo)

        yield OpenTurn(stored, save)


def check_limits(idle_ttl_seconds: float, max_sessions: int) -> None:
    if idle_ttl_seconds <= 0:
        raise ValueError(f"idle_ttl_seconds must be positive, got {idle_ttl_seconds}")
    if max_sessions < 1:
        raise ValueError(f"max_sessions must be at least 1, got {max_sessions}")


def open_store(
    target: str | Path,
    idle_ttl_seconds: float = DEFAULT_IDLE_TTL_SECONDS,
    max_sessions: int = DEFAULT_MAX_SESSIONS,
    clock: Callable[[], float] = time.time,
) -> SessionStore:
    """The store a target names: redis://HOST:PORT/DB, sqlite:///PATH, or a path (SQLite)."""
    text = str(target)
    if text.startswith(("redis://", "rediss://", "unix://")):
        from .redis_store import RedisStore  # local: SQLite deployments never import redis

        return RedisStore(text, idle_ttl_seconds, max_sessions, clock)
    from .sqlite_store import SQLiteStore

    return SQLiteStore(sqlite_path(text), idle_ttl_seconds, max_sessions, clock)


def sqlite_path(target: str) -> Path:
    """The file a SQLite target names; anything else with a scheme is refused by name."""
    if target.startswith("sqlite:///"):
        return Path(target[len("sqlite://") :])
    if "://" in target:
        scheme = target.split("://", 1)[0]
        raise ValueError(
            f"unknown session store scheme {scheme!r} in {target!r}: "
            "use redis://HOST:PORT/DB, sqlite:///PATH or a file path"
        )
    return Path(target)


def is_redis(target: str | Path | None) -> bool:
    return target is not None and str(target).startswith(("redis://", "rediss://", "unix://"))
