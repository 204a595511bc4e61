"""The Redis session store: workers on any number of machines share one Redis server (see
store.py for the contract).

Keys, under one prefix:
    {prefix}s:{id}     hash: created_at, last_active, version, turns, profile, agent_data, demo
    {prefix}t:{id}     hash: turn number -> the turn's record
    {prefix}active     sorted set: id scored by last_active (expiry, the cap, live counts)
    {prefix}lock:{id}  a session's lock (redis-py's Lock: a token with a lease)

Every change is one Lua script, which Redis runs atomically and writes to its append-only file
as one transaction: after a crash or restart a turn is there whole or not at all. A turn costs
two round trips (`open_turn`): one script takes the session's lock and reads the session, one
writes the turn and lets go of the lock. Connection
errors are retried with backoff for a few seconds (a restart), then reported as
StoreUnavailable. A retried turn write that had in fact landed is recognised and not counted
as a conflict.

The scripts touch keys they do not declare, so this store wants one Redis primary (with
replicas if you like), not a Redis Cluster: docs/deploy.md says what a cluster would change.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import orjson
import redis
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import LockError, LockNotOwnedError
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis.retry import Retry

from .store import (
    DEFAULT_IDLE_TTL_SECONDS,
    DEFAULT_MAX_SESSIONS,
    LOCK_LEASE_SECONDS,
    LOCK_WAIT_SECONDS,
    ExpiredSession,
    OpenTurn,
    SessionBusy,
    SessionConflict,
    StoredSession,
    StoreUnavailable,
    UnknownSession,
    UnknownTurn,
    check_limits,
)

PREFIX = "shopcopilot:"
LOCK_POLL_SECONDS = 0.005  # as redis-py's Lock polls in session_lock
# About 4 s of retries in all: a Redis restart with its append-only file reloaded fits.
RETRY = Retry(ExponentialBackoff(cap=0.5, base=0.05), retries=10)
UNREACHABLE = (RedisConnectionError, RedisTimeoutError)
log = logging.getLogger("shopcopilot.web")

_DROP = """
local function drop(p, ids)
  for _, sid in ipairs(ids) do
    redis.call('DEL', p .. 's:' .. sid, p .. 't:' .. sid)
    redis.call('ZREM', p .. 'active', sid)
  end
  return #ids
end
"""

# ARGV: prefix, id, now, cutoff, max_sessions, profile, agent_data, demo ('' for none)
_CREATE = (
    _DROP
    + """
local p, id, now = ARGV[1], ARGV[2], ARGV[3]
drop(p, redis.call('ZRANGEBYSCORE', p .. 'active', '-inf', '(' .. ARGV[4]))
local excess = redis.call('ZCARD', p .. 'active') - tonumber(ARGV[5]) + 1
local evicted = {}
if excess > 0 then
  evicted = redis.call('ZRANGE', p .. 'active', 0, excess - 1)
  drop(p, evicted)
end
redis.call('HSET', p .. 's:' .. id, 'created_at', now, 'last_active', now, 'version', 1,
           'turns', 0, 'profile', ARGV[6], 'agent_data', ARGV[7])
if ARGV[8] ~= '' then redis.call('HSET', p .. 's:' .. id, 'demo', ARGV[8]) end
redis.call('ZADD', p .. 'active', now, id)
return evicted
"""
)

_READ = """
local function read(p, id, now, idle_ttl)
  local key = p .. 's:' .. id
  local row = redis.call('HMGET', key, 'created_at', 'last_active', 'version', 'turns',
                         'profile', 'agent_data', 'demo')
  if not row[1] then return {'unknown'} end
  if tonumber(now) - tonumber(row[2]) > tonumber(idle_ttl) then
    redis.call('DEL', key, p .. 't:' .. id)
    redis.call('ZREM', p .. 'active', id)
    return {'expired'}
  end
  redis.call('HSET', key, 'last_active', now)
  redis.call('ZADD', p .. 'active', now, id)
  return {'ok', row[1], row[3], row[4], row[5], row[6], row[7]}
end
"""

# ARGV: prefix, id, now, idle_ttl
_GET = _READ + "return read(ARGV[1], ARGV[2], ARGV[3], ARGV[4])"

# ARGV: prefix, id, now, idle_ttl, lock token, lease in ms. The lock is the key redis-py's Lock
# uses in session_lock (a token with a lease), so the two exclude each other. A lock already
# holding this token is this very call, retried after a lost reply: it took the lock.
_LOCK_AND_GET = (
    _READ
    + """
local lock = ARGV[1] .. 'lock:' .. ARGV[2]
if redis.call('GET', lock) ~= ARGV[5]
   and not redis.call('SET', lock, ARGV[5], 'NX', 'PX', ARGV[6]) then
  return {'busy'}
end
local row = read(ARGV[1], ARGV[2], ARGV[3], ARGV[4])
if row[1] ~= 'ok' then redis.call('DEL', lock) end
return row
"""
)

# ARGV: prefix, id, lock token
_UNLOCK = """
local lock = ARGV[1] .. 'lock:' .. ARGV[2]
if redis.call('GET', lock) == ARGV[3] then return redis.call('DEL', lock) end
return 0
"""

# ARGV: prefix, id, read_version, turn, now, agent_data, record, demo ('' keeps the old one),
# lock token ('' for none: the lock, if this turn holds it, is let go of whatever follows)
_SAVE_TURN = """
local p, id = ARGV[1], ARGV[2]
local key, turns = p .. 's:' .. id, p .. 't:' .. id
if ARGV[9] ~= '' and redis.call('GET', p .. 'lock:' .. id) == ARGV[9] then
  redis.call('DEL', p .. 'lock:' .. id)
end
local stored = redis.call('HGET', key, 'version')
if not stored then return 0 end
local version, read = tonumber(stored), tonumber(ARGV[3])
if version == read + 1 and redis.call('HGET', turns, ARGV[4]) == ARGV[7] then
  return version  -- this very write, retried after a lost reply: it landed
end
if version ~= read then return 0 end
redis.call('HSET', key, 'version', read + 1, 'turns', ARGV[4], 'last_active', ARGV[5],
           'agent_data', ARGV[6])
if ARGV[8] ~= '' then redis.call('HSET', key, 'demo', ARGV[8]) end
redis.call('HSET', turns, ARGV[4], ARGV[7])
redis.call('ZADD', p .. 'active', ARGV[5], id)
return read + 1
"""

# ARGV: prefix, cutoff
_PURGE = (
    _DROP
    + """
return drop(ARGV[1], redis.call('ZRANGEBYSCORE', ARGV[1] .. 'active', '-inf', '(' .. ARGV[2]))
"""
)


class RedisStore:
    def __init__(
        self,
        url: str,
        idle_ttl_seconds: float = DEFAULT_IDLE_TTL_SECONDS,
        max_sessions: int = DEFAULT_MAX_SESSIONS,
        clock: Callable[[], float] = time.time,
        prefix: str = PREFIX,
    ) -> None:
        check_limits(idle_ttl_seconds, max_sessions)
        self.url = url
        self.idle_ttl_seconds = idle_ttl_seconds
        self.max_sessions = max_sessions
        self.lock_lease_seconds = LOCK_LEASE_SECONDS
        self.lock_wait_seconds = LOCK_WAIT_SECONDS
        self.prefix = prefix
        self._clock = clock
        self._redis = redis.Redis.from_url(
            url,
            retry=RETRY,
            retry_on_error=list(UNREACHABLE),
            socket_connect_timeout=2.0,
            socket_timeout=10.0,
        )
        self._create = self._redis.register_script(_CREATE)
        self._get = self._redis.register_script(_GET)
        self._lock_and_get = self._redis.register_script(_LOCK_AND_GET)
        self._unlock = self._redis.register_script(_UNLOCK)
        self._save_turn = self._redis.register_script(_SAVE_TURN)
        self._purge = self._redis.register_script(_PURGE)

    @contextmanager
    def _reachable(self) -> Iterator[None]:
        try:
            yield
        except UNREACHABLE as exc:
            raise StoreUnavailable(
                f"the session store ({self._where()}) is unreachable: {exc}; retry shortly"
            ) from exc

    def _where(self) -> str:
        kwargs = self._redis.connection_pool.connection_kwargs
        return f"redis {kwargs.get('host', kwargs.get('path', '?'))}:{kwargs.get('port', '')}"

    @contextmanager
    def session_lock(self, session_id: str) -> Iterator[None]:
        lock = self._redis.lock(
            f"{self.prefix}lock:{session_id}",
            timeout=self.lock_lease_seconds,
            sleep=LOCK_POLL_SECONDS,
            blocking_timeout=self.lock_wait_seconds,
        )
        with self._reachable():
            acquired = lock.acquire()
        if not acquired:
            raise SessionBusy(
                f"session {session_id!r} is busy with another turn for more than "
                f"{self.lock_wait_seconds:g} s; retry"
            )
        try:
            yield
        finally:
            self._release(lock, session_id)

    def _release(self, lock: Any, session_id: str) -> None:
        try:
            with self._reachable():
                lock.release()
        except (LockNotOwnedError, LockError):
            # The lease ran out first; the version check kept the session consistent anyway.
            log.warning("the lock of session %s expired before its turn ended", session_id)
        except StoreUnavailable:
            log.warning("could not release the lock of session %s; its lease ends it", session_id)

    @contextmanager
    def open_turn(self, session_id: str) -> Iterator[OpenTurn]:
        token = uuid.uuid4().hex
        stored = self._locked_read(session_id, token)
        held = True

        def save(turn: int, agent_data: dict, record: dict, demo: dict | None = None) -> int:
            nonlocal held
            try:
                version = self._write_turn(
                    session_id, stored.version, turn, agent_data, record, demo, token
                )
            except SessionConflict:
                held = False  # the script ran, and let go of the lock first
                raise
            held = False
            return version

        try:
            yield OpenTurn(stored, save)
        finally:
            if held:
                self._let_go(session_id, token)

    def _locked_read(self, session_id: str, token: str) -> StoredSession:
        """Take the session's lock and read it in one script; poll while another turn holds it."""
        deadline = time.monotonic() + self.lock_wait_seconds
        lease_ms = int(self.lock_lease_seconds * 1000)
        while True:
            now = self._clock()
            args: list[str | int | float] = [
                self.prefix,
                session_id,
                repr(now),
                self.idle_ttl_seconds,
                token,
                lease_ms,
            ]
            with self._reachable():
                row = self._lock_and_get(keys=[], args=args)
            if row[0] != b"busy":
                return self._stored(session_id, now, row)
            if time.monotonic() >= deadline:
                raise SessionBusy(
                    f"session {session_id!r} is busy with another turn for more than "
                    f"{self.lock_wait_seconds:g} s; retry"
                )
            time.sleep(LOCK_POLL_SECONDS)

    def _let_go(self, session_id: str, token: str) -> None:
        try:
            with self._reachable():
                released = self._unlock(keys=[], args=[self.prefix, session_id, token])
        except StoreUnavailable:
            log.warning("could not release the lock of session %s; its lease ends it", session_id)
            return
        if not released:
            log.warning("the lock of session %s expired before its turn ended", session_id)

    def create(
        self,
        session_id: str,
        profile: dict[str, Any],
        agent_data: dict[str, Any],
        demo: dict[str, Any] | None = None,
    ) -> list[str]:
        now = self._clock()
        args: list[str | int | float] = [
            self.prefix,
            session_id,
            repr(now),
            repr(now - self.idle_ttl_seconds),
            self.max_sessions,
            _dump(profile),
            _dump(agent_data),
            _dump_optional(demo),
        ]
        with self._reachable():
            evicted = self._create(keys=[], args=args)
        return [sid.decode() for sid in evicted]

    def get(self, session_id: str) -> StoredSession:
        now = self._clock()
        with self._reachable():
            row = self._get(
                keys=[], args=[self.prefix, session_id, repr(now), self.idle_ttl_seconds]
            )
        return self._stored(session_id, now, row)

    def _stored(self, session_id: str, now: float, row: list[Any]) -> StoredSession:
        """The session a read script returned, or its error."""
        status = row[0].decode()
        if status == "unknown":
            raise UnknownSession(f"unknown session {session_id!r}")
        if status == "expired":
            raise ExpiredSession(
                f"session {session_id!r} expired after {self.idle_ttl_seconds:g} s idle; "
                "start a new one"
            )
        created_at, version, turns, profile, agent_data = row[1:6]
        demo = row[6] if len(row) > 6 else None
        return StoredSession(
            session_id=session_id,
            created_at=float(created_at),
            last_active=now,
            version=int(version),
            turns=int(turns),
            profile=orjson.loads(profile),
            agent_data=orjson.loads(agent_data),
            demo=orjson.loads(demo) if demo else None,
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
        return self._write_turn(session_id, read_version, turn, agent_data, record, demo, "")

    def _write_turn(
        self,
        session_id: str,
        read_version: int,
        turn: int,
        agent_data: dict[str, Any],
        record: dict[str, Any],
        demo: dict[str, Any] | None,
        token: str,
    ) -> int:
        args: list[str | int | float] = [
            self.prefix,
            session_id,
            read_version,
            turn,
            repr(self._clock()),
            _dump(agent_data),
            _dump(record),
            _dump_optional(demo),
            token,
        ]
        with self._reachable():
            version = int(self._save_turn(keys=[], args=args))
        if version == 0:
            raise SessionConflict(
                f"session {session_id!r} changed while this turn ran "
                "(another request or worker); reload it"
            )
        return version

    def turn(self, session_id: str, turn: int) -> dict[str, Any]:
        stored = self.get(session_id)
        with self._reachable():
            record = self._redis.hget(f"{self.prefix}t:{session_id}", str(turn))
        if record is None:
            raise UnknownTurn(f"session {session_id!r} has no turn {turn} (it has {stored.turns})")
        return orjson.loads(record)

    def live_count(self) -> int:
        cutoff = self._clock() - self.idle_ttl_seconds
        with self._reachable():
            return int(self._redis.zcount(f"{self.prefix}active", repr(cutoff), "+inf"))

    def purge_expired(self) -> int:
        cutoff = self._clock() - self.idle_ttl_seconds
        with self._reachable():
            return int(self._purge(keys=[], args=[self.prefix, repr(cutoff)]))

    def close(self) -> None:
        self._redis.close()


def _dump(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()


def _dump_optional(value: Any) -> str:
    return "" if value is None else _dump(value)
