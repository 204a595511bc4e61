"""The SQLite session store: one file, the embedded default (see store.py for the contract).

Several worker processes on one machine share the file: WAL lets them read while one writes,
a busy timeout makes a writer wait for another instead of failing, and every operation is one
short transaction. Each thread keeps its connection open (closing the last connection to a WAL
file checkpoints it, which cost more than the turn itself). A session's lock is an OS file lock
(one of LOCK_STRIPES files beside the database, chosen by the session id), so a killed worker's
lock is released with its process.
"""

from __future__ import annotations

import sqlite3
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import filelock
import orjson

from .store import (
    DEFAULT_IDLE_TTL_SECONDS,
    DEFAULT_MAX_SESSIONS,
    LOCK_WAIT_SECONDS,
    ExpiredSession,
    OpenTurn,
    SessionBusy,
    SessionConflict,
    StoredSession,
    UnknownSession,
    UnknownTurn,
    check_limits,
    locked_then_read,
)

BUSY_TIMEOUT_SECONDS = 10.0
# Sessions share lock files by hash: a clash makes one turn wait for another session's, which
# costs nothing when a worker runs one turn at a time anyway, and the folder stays small.
LOCK_STRIPES = 256

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


class SQLiteStore:
    def __init__(
        self,
        path: str | Path,
        idle_ttl_seconds: float = DEFAULT_IDLE_TTL_SECONDS,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
        clock: Callable[[], float] = time.time,
    ) -> None:
        check_limits(idle_ttl_seconds, max_sessions)
        self.path = Path(path)
        self.idle_ttl_seconds = idle_ttl_seconds
        self.max_sessions = max_sessions
        self.lock_wait_seconds = LOCK_WAIT_SECONDS
        self._clock = clock
        self._locks = Path(f"{self.path}.locks")
        self._local = threading.local()
        self._opened: list[sqlite3.Connection] = []
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._locks.mkdir(exist_ok=True)
        db = self._open()
        try:
            # WAL lets several worker processes read while one writes; it is a property of the
            # file, so setting it once is enough. Sync stays FULL (the default): a commit is on
            # disk before the turn is answered.
            db.execute("PRAGMA journal_mode=WAL")
            db.executescript(_SCHEMA)
        finally:
            db.close()

    def _open(self) -> sqlite3.Connection:
        db = sqlite3.connect(
            self.path,
            timeout=BUSY_TIMEOUT_SECONDS,
            isolation_level=None,
            check_same_thread=False,  # closed by close() from another thread
        )
        db.execute("PRAGMA foreign_keys=ON")
        return db

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """One transaction per operation on this thread's connection: safe across threads and
        processes."""
        db = getattr(self._local, "db", None)
        if db is None:
            db = self._local.db = self._open()
            self._opened.append(db)
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    @contextmanager
    def session_lock(self, session_id: str) -> Iterator[None]:
        stripe = zlib.crc32(session_id.encode()) % LOCK_STRIPES
        lock = filelock.FileLock(
            self._locks / f"{stripe}.lock", timeout=self.lock_wait_seconds, poll_interval=0.002
        )
        try:
            lock.acquire()
        except filelock.Timeout:
            raise SessionBusy(
                f"session {session_id!r} is busy with another turn for more than "
                f"{self.lock_wait_seconds:g} s; retry"
            ) from None
        try:
            yield
        finally:
            lock.release()

    def open_turn(self, session_id: str) -> AbstractContextManager[OpenTurn]:
        # A local file lock and a local file: nothing to save by folding the steps together.
        return locked_then_read(self, session_id)

    def create(
        self,
        session_id: str,
        profile: dict[str, Any],
        agent_data: dict[str, Any],
        demo: dict[str, Any] | None = None,
    ) -> list[str]:
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
            profile=orjson.loads(row[5]),
            agent_data=orjson.loads(row[6]),
            demo=orjson.loads(row[7]) if row[7] is not None else None,
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
        stored = self.get(session_id)
        with self._connect() as db:
            row = db.execute(
                "SELECT record FROM turns WHERE session_id = ? AND turn = ?", (session_id, turn)
            ).fetchone()
        if row is None:
            raise UnknownTurn(f"session {session_id!r} has no turn {turn} (it has {stored.turns})")
        return orjson.loads(row[0])

    def live_count(self) -> int:
        cutoff = self._clock() - self.idle_ttl_seconds
        with self._connect() as db:
            return db.execute(
                "SELECT COUNT(*) FROM sessions WHERE last_active >= ?", (cutoff,)
            ).fetchone()[0]

    def purge_expired(self) -> int:
        with self._connect() as db:
            return self._purge_expired(db, self._clock())

    def close(self) -> None:
        for db in self._opened:
            db.close()
        self._opened.clear()
        self._local = threading.local()

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
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()


def _dump_optional(value: Any) -> str | None:
    return None if value is None else _dump(value)
