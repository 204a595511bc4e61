"""What protects a server shared by many shoppers: a per-client rate limit and a cap on the size
of a request body. (The cap on live sessions is the store's; the cap on a message's length is
checked with the message.)

The rate limit counts requests per client address (uvicorn puts the address a trusted proxy
names in X-Forwarded-For there: set FORWARDED_ALLOW_IPS to the load balancer's). With the Redis
session store the counters live in the same Redis, so the limit holds across all workers and
machines; with SQLite each worker process counts for itself (a client may reach the limit once
per worker). Over the limit: 429 with Retry-After.
"""

from __future__ import annotations

import json
import logging
import math
import time
from dataclasses import dataclass

import limits
from limits.storage import storage_from_string
from limits.strategies import SlidingWindowCounterRateLimiter
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

log = logging.getLogger("shopcopilot.web")
OFF = ("", "0", "off", "none")


class RateLimited(Exception):
    def __init__(self, limit: str, retry_after: int) -> None:
        super().__init__(
            f"too many requests from this client: the limit is {limit}; retry in {retry_after} s"
        )
        self.retry_after = retry_after


@dataclass(frozen=True, slots=True)
class RateLimit:
    """`limit` in the limits package's words ("300/minute", "10/second"); None: no limit."""

    item: limits.RateLimitItem | None
    limiter: SlidingWindowCounterRateLimiter | None
    text: str

    @classmethod
    def parse(cls, text: str | None, redis_url: str | None = None) -> RateLimit:
        text = (text or "").strip()
        if text.lower() in OFF:
            return cls(None, None, "off")
        try:
            item = limits.parse(text)
        except ValueError:
            raise ValueError(
                f"rate limit {text!r} is not of the form COUNT/PERIOD, like 300/minute or "
                "10/second (or 'off')"
            ) from None
        # Counters in the session store's Redis when there is one, so every worker shares them.
        storage = storage_from_string(redis_url if redis_url else "memory://")
        return cls(item, SlidingWindowCounterRateLimiter(storage), text)

    def check(self, client: str) -> None:
        """Count one request from `client`; raises RateLimited over the limit."""
        if self.item is None or self.limiter is None:
            return
        try:
            if self.limiter.hit(self.item, client):
                return
            stats = self.limiter.get_window_stats(self.item, client)
        except Exception:  # the counters' Redis is away: serve rather than refuse everyone
            log.warning("rate limit not checked: its storage is unreachable", exc_info=True)
            return
        raise RateLimited(self.text, max(1, math.ceil(stats.reset_time - time.time())))


class BodyLimit:
    """ASGI middleware: a request body over `max_bytes` gets 413 before the app reads it whole
    (by its Content-Length, or by counting a body sent in chunks)."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope)
        if declared is not None and declared > self.max_bytes:
            await self._refuse(send, declared)
            return
        received = 0
        started = False

        async def counting_receive() -> Message:
            nonlocal received
            message = await receive()
            received += len(message.get("body", b""))
            if received > self.max_bytes:
                raise _TooLarge(received, self.max_bytes)
            return message

        async def watching_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counting_receive, watching_send)
        except _TooLarge as exc:  # read outside a route, which would have answered it
            if started:
                raise
            await self._refuse(send, exc.size)

    async def _refuse(self, send: Send, size: int) -> None:
        body = json.dumps({"detail": too_large(size, self.max_bytes)}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 413,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": body})


class _TooLarge(HTTPException):
    """Raised while a route reads the body: FastAPI passes HTTPExceptions through as they are."""

    def __init__(self, size: int, max_bytes: int) -> None:
        super().__init__(413, too_large(size, max_bytes))
        self.size = size


def too_large(size: int, max_bytes: int) -> str:
    return f"request body is at least {size} bytes; the limit is {max_bytes} bytes"


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None
