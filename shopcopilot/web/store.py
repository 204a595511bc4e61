"""The SQLite session store: the source of truth for every web session.

Each completed turn writes the agent's exported session (everything needed to
continue it) plus the turn's record, in one transaction, so a restarted server
or another worker process picks the session up where it stopped.

Limits:
- a session idle for longer than `idle_ttl_seconds` has expired: the next
  request for it gets ExpiredSession (once), then it is gone;
- at most `max_sessions` live sessions: creating one more evicts the session
  that has been idle the longest (its next request gets UnknownSession).
  Eviction rather than refusal keeps a public demo usable when visitors leave
  tabs open; the evicted ids are returned so the caller can log them.

Every write of a turn names the version it read; a mismatch means another
request or worker advanced the session meanwhile (SessionConflict).
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DEFAULT_IDLE_TTL_SECONDS = 6 * 3600.0
DEFAULT_MAX_SESSIONS = 1000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    session_id  TEXT PRIMARY KEY,
    created_at  REAL NOT NULL,
    last_active REAL NOT NULL,
    version     INTEGER NOT NULL,
    turns       INTEGER NOT NULL,
    profile     TEXT NOT NULL,
    agent_data  TEXT NOT NULL,
    demo        TEXT
);
CREATE INDEX IF NOT EXISTS sessions_by_activity ON sessions (last_active);
CREATE TABLE IF NOT EXISTS turns (
    session_id TEXT NOT NULL REFERENCES sessions (session_id) ON DELETE CASCADE,
    turn       INTEGER NOT NULL,
    record     TEXT NOT NULL,
    PRIMARY KEY (session_id, turn)
);
"""


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


class SessionStore:
    def __init__(
        self,
        path: str | Path,
        idle_ttl_seconds: float = DEFAULT_IDLE_TTL_SECONDS,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if idle_ttl_seconds <= 0:
            raise ValueError(f"idle_ttl_seconds must be positive, got {idle_ttl_seconds}")
        if max_sessions < 1:
            raise ValueError(f"max_sessions must be at least 1, got {max_sessions}")
        self.path = Path(path)
        self.idle_ttl_seconds = idle_ttl_seconds
        self.max_sessions = max_sessions
        self._clock = clock
        self.path.parent.mkdir(parents=True, exist_ok=True)
        db = self._open()
        try:
            # WAL lets several worker processes read while one writes.
            db.execute("PRAGMA journal_mode=WAL")
            db.executescript(_SCHEMA)
        finally:
            db.close()

    def _open(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=10.0, isolation_level=None)
        db.execute("PRAGMA foreign_keys=ON")
        return db

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """One short-lived connection and transaction per operation: safe across threads and
        processes."""
        db = self._open()
        try:
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")
        finally:
            db.close()

    def create(
        self,
        session_id: str,
        profile: dict[str, Any],
        agent_data: dict[str, Any],
        demo: dict[str, Any] | None = None,
    ) -> list[str]:
        """Store a new session; returns the ids evicted to stay under the cap."""
        now = self._clock()
        with self._connect() as db:
            self._purge_expired(db, now)
            evicted = self._make_room(db)
            db.execute(
                "INSERT INTO sessions VALUES (?, ?, ?, 1, 0, ?, ?, ?)",
                (session_id, now, now, _dump(profile), _dump(agent_data), _dump_optional(demo)),
            )
        return evicted

    def get(self, session_id: str) -> StoredSession:
        """The session, marked active now; raises UnknownSession or ExpiredSession."""
        now = self._clock()
        with self._connect() as db:
            row = db.execute(
                "SELECT session_id, created_at, last_active, version, turns, profile,"
                " agent_data, demo FROM sessions WHERE session_id = ?",
                (session_id,),
            ).fetchone()
            expired = row is not None and now - row[2] > self.idle_ttl_seconds
            if expired:
                db.execute("DELETE FROM sessions WHERE session_id = ?", (session_id,))
            elif row is not None:
                db.execute(
                    "UPDATE sessions SET last_active = ? WHERE session_id = ?", (now, session_id)
                )
        if row is None:
            raise UnknownSession(f"unknown session {session_id!r}")
        if expired:
            raise ExpiredSession(
                f"session {session_id!r} expired after {self.idle_ttl_seconds:g} s idle; "
                "start a new one"
            )
        return StoredSession(
            session_id=row[0],
            created_at=row[1],
            last_active=now,
            version=row[3],
            turns=row[4],
            profile=json.loads(row[5]),
            agent_data=json.loads(row[6]),
            demo=json.loads(row[7]) if row[7] is not None else None,
        )

    def save_turn(
        self,
        session_id: str,
        read_version: int,
        turn: int,
        agent_data: dict[str, Any],
        record: dict[str, Any],
        demo: dict[str, Any] | None = None,
    ) -> int:
        """Record a completed turn atomically; returns the session's new version."""
        now = self._clock()
        with self._connect() as db:
            updated = db.execute(
                "UPDATE sessions SET version = version + 1, turns = ?, last_active = ?,"
                " agent_data = ?, demo = COALESCE(?, demo)"
                " WHERE session_id = ? AND version = ?",
                (turn, now, _dump(agent_data), _dump_optional(demo), session_id, read_version),
            ).rowcount
            if updated != 1:
                raise SessionConflict(
                    f"session {session_id!r} changed while this turn ran "
                    "(another request or worker); reload it"
                )
            db.execute(
                "INSERT OR REPLACE INTO turns VALUES (?, ?, ?)", (session_id, turn, _dump(record))
            )
        return read_version + 1

    def turn(self, session_id: str, turn: int) -> dict[str, Any]:
        """One completed turn's record (the session must be live)."""
        stored = self.get(session_id)
        with self._connect() as db:
            row = db.execute(
                "SELECT record FROM turns WHERE session_id = ? AND turn = ?", (session_id, turn)
            ).fetchone()
        if row is None:
            raise UnknownTurn(f"session {session_id!r} has no turn {turn} (it has {stored.turns})")
        return json.loads(row[0])

    def live_count(self) -> int:
        cutoff = self._clock() - self.idle_ttl_seconds
        with self._connect() as db:
            return db.execute(
                "SELECT COUNT(*) FROM sessions WHERE last_active >= ?", (cutoff,)
            ).fetchone()[0]

    def purge_expired(self) -> int:
        """Delete every expired session; returns how many."""
        with self._connect() as db:
            return self._purge_expired(db, self._clock())

    def _purge_expired(self, db: sqlite3.Connection, now: float) -> int:
        cutoff = now - self.idle_ttl_seconds
        return db.execute("DELETE FROM sessions WHERE last_active < ?", (cutoff,)).rowcount

    def _make_room(self, db: sqlite3.Connection) -> list[str]:
        count = db.execute("SELECT COUNT(*) FROM sessions").fetchone()[0]
        excess = count - self.max_sessions + 1
        if excess <= 0:
            return []
        evicted = [
            row[0]
            for row in db.execute(
                "SELECT session_id FROM sessions ORDER BY last_active LIMIT ?", (excess,)
            ).fetchall()
        ]
        db.executemany("DELETE FROM sessions WHERE session_id = ?", [(sid,) for sid in evicted])
        return evicted


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _dump_optional(value: Any) -> str | None:
    return None if value is None else _dump(value)
