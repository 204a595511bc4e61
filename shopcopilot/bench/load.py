"""Many simulated shoppers at once against a running server: the load driver behind
benchmarks/load.py and the fault tests (tests/test_serve_workers.py).

Each shopper has words of its own (a tag no one else says, a budget no one else names, a colour
and a colour to avoid) and checks after every turn that its state holds its own words and no
one else's. A turn that fails (a killed worker, a restarting store, 409/429/503) is settled the
way a careful client would: read the session back; if the turn was recorded, take the record;
if not, send it again. Afterwards every shopper's session is read back and compared with what
the shopper was told, turn by turn.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

COLOURS = [
    "black", "white", "red", "blue", "green", "pink",
    "gray", "brown", "purple", "yellow", "orange", "beige",
]  # fmt: skip
ITEMS = ["dress", "t-shirt", "sneakers", "jeans", "jacket", "boots", "hoodie", "skirt", "sandals"]
TAG = re.compile(r"zx\d{4}q")
RETRY_STATUSES = {409, 429, 500, 502, 503}
SETTLE_ATTEMPTS = 40


@dataclass(frozen=True, slots=True)
class Shopper:
    number: int

    @property
    def tag(self) -> str:
        return f"zx{self.number:04d}q"

    @property
    def colour(self) -> str:
        return COLOURS[self.number % len(COLOURS)]

    @property
    def avoided(self) -> str:
        return COLOURS[(self.number + 5) % len(COLOURS)]

    @property
    def budget(self) -> int:
        return 25 + self.number  # no two shoppers name the same budget

    @property
    def address(self) -> str:
        """Who the server thinks this shopper is (X-Forwarded-For): one client each."""
        return f"127.1.{self.number // 250}.{self.number % 250 + 1}"

    def messages(self, turns: int) -> list[str]:
        item = ITEMS[self.number % len(ITEMS)]
        script = [
            f"looking for a {self.colour} {item}, ref {self.tag}",
            f"under {self.budget} dollars",
            "something comfortable",
            f"not {self.avoided}",
            f"show me more {self.tag}",
        ]
        return [script[n % len(script)] for n in range(turns)]


def cross_talk(state: dict[str, Any], shopper: Shopper, said: list[str]) -> list[str]:
    """What in `state` is not this shopper's own (empty when the state is clean)."""
    problems = []
    history = [entry.get("user") for entry in state.get("history", [])]
    if history != said:
        problems.append(f"history {history!r} is not what was said {said!r}")
    foreign = set(TAG.findall(json.dumps(state))) - {shopper.tag}
    if foreign:
        problems.append(f"other shoppers' tags {sorted(foreign)}")
    for constraint in state.get("constraints", []):
        attribute, value = constraint.get("attribute"), constraint.get("value")
        if attribute == "color" and value != shopper.colour:
            problems.append(f"colour {value!r}, not {shopper.colour!r}")
        if attribute == "budget" and value != f"<= ${shopper.budget}":
            problems.append(f"budget {value!r}, not <= ${shopper.budget}")
    for rejected in state.get("rejected", []):
        if rejected.get("attribute") == "color" and rejected.get("value") != shopper.avoided:
            problems.append(f"rejected colour {rejected.get('value')!r}")
    return problems


@dataclass(slots=True)
class ShopperRun:
    shopper: Shopper
    session_id: str = ""
    answers: list[dict[str, Any]] = field(default_factory=list)  # the turn records received
    latencies: list[float] = field(default_factory=list)  # seconds, turns answered 200 at once
    failed_requests: int = 0  # non-200 answers and dropped connections, each settled after
    failures: list[str] = field(default_factory=list)  # what each failed request got
    recovered: int = 0  # failed turns found recorded on reading the session back
    resent: int = 0  # failed turns found absent and sent again
    workers: list[str] = field(default_factory=list)  # X-Worker of each answer at once
    problems: list[str] = field(default_factory=list)


@dataclass(slots=True)
class LoadResult:
    runs: list[ShopperRun]
    seconds: float  # from the first turn to the last

    @property
    def turns(self) -> int:
        return sum(len(run.answers) for run in self.runs)

    @property
    def errors(self) -> list[str]:
        return [f"shopper {r.shopper.number}: {p}" for r in self.runs for p in r.problems]

    def latency_ms(self, quantile: float) -> float:
        values = sorted(x for run in self.runs for x in run.latencies)
        if not values:
            return float("nan")
        return 1000 * values[min(len(values) - 1, int(quantile * len(values)))]

    def summary(self) -> dict[str, Any]:
        return {
            "shoppers": len(self.runs),
            "turns": self.turns,
            "seconds": round(self.seconds, 2),
            "turns_per_second": round(self.turns / self.seconds, 1) if self.seconds else 0.0,
            "latency_p50_ms": round(self.latency_ms(0.50), 1),
            "latency_p99_ms": round(self.latency_ms(0.99), 1),
            "failed_requests": sum(r.failed_requests for r in self.runs),
            "failures": sorted({f for r in self.runs for f in r.failures})[:5],
            "recovered_turns": sum(r.recovered for r in self.runs),
            "resent_turns": sum(r.resent for r in self.runs),
            "errors": len(self.errors),
            "turns_per_worker": dict(Counter(w for r in self.runs for w in r.workers)),
        }


# Called after each turn with the number completed so far and the worker that answered the
# last one, if one did at once (fault injection).
Progress = Callable[[int, str | None], Awaitable[None]]


async def run_load(
    base_url: str,
    shoppers: int,
    turns: int,
    deadline_seconds: float = 600.0,
    on_turn: Progress | None = None,
    trace: bool = False,
    on_shopped: Callable[[], None] | None = None,
    fresh_connections: bool = False,
) -> LoadResult:
    """`shoppers` concurrent shoppers, `turns` turns each, then every session read back
    (`on_shopped` is called in between: the benchmark reads CPU times there). With
    `fresh_connections` every request opens its own connection, so the kernel hands each turn
    to whichever worker accepts it (a kept-alive connection stays with one worker)."""
    kept = 0 if fresh_connections else shoppers + 10
    limits = httpx.Limits(max_connections=shoppers + 10, max_keepalive_connections=kept)
    timeout = httpx.Timeout(180.0, connect=30.0)  # a loaded 2-core machine queues a while
    done = [0]

    async def turn_done(worker: str | None) -> None:
        done[0] += 1
        if on_turn is not None:
            await on_turn(done[0], worker)

    async with httpx.AsyncClient(base_url=base_url, limits=limits, timeout=timeout) as client:
        runs = [ShopperRun(Shopper(n)) for n in range(shoppers)]
        began = time.perf_counter()
        await asyncio.wait_for(
            asyncio.gather(*(_shop(client, run, turns, trace, turn_done) for run in runs)),
            deadline_seconds,
        )
        seconds = time.perf_counter() - began
        if on_shopped is not None:
            on_shopped()
        for run in runs:
            await _verify(client, run, turns)
    return LoadResult(runs, seconds)


async def _shop(
    client: httpx.AsyncClient, run: ShopperRun, turns: int, trace: bool, turn_done: Callable
) -> None:
    headers = {"X-Forwarded-For": run.shopper.address}
    response = await _send(client, "POST", "/api/sessions", headers, json={"profile": {}})
    if response is None or response.status_code != 201:
        run.problems.append(f"could not start a session: {_describe(response)}")
        return
    run.session_id = response.json()["session_id"]
    said: list[str] = []
    for message in run.shopper.messages(turns):
        said.append(message)
        record = await _one_turn(client, run, headers, message, len(said), trace)
        if record is None:
            return
        answered_at_once = len(run.latencies) == len(run.answers) + 1  # not settled later
        run.answers.append(record)
        run.problems.extend(cross_talk(record["state"], run.shopper, said))
        await turn_done(run.workers[-1] if answered_at_once else None)


async def _one_turn(
    client: httpx.AsyncClient,
    run: ShopperRun,
    headers: dict[str, str],
    message: str,
    number: int,
    trace: bool,
) -> dict[str, Any] | None:
    path = f"/api/sessions/{run.session_id}/messages" + ("?trace=true" if trace else "")
    for _ in range(SETTLE_ATTEMPTS):
        began = time.perf_counter()
        response = await _send(
            client, "POST", path, headers, json={"message": message}, errors=run.failures
        )
        if response is not None and response.status_code == 200:
            run.latencies.append(time.perf_counter() - began)
            run.workers.append(response.headers.get("x-worker", "?"))
            return response.json()
        if response is not None and response.status_code not in RETRY_STATUSES:
            run.problems.append(f"turn {number}: {_describe(response)}")
            return None
        run.failed_requests += 1
        if response is not None:
            run.failures.append(_describe(response)[:80])
        await asyncio.sleep(_retry_after(response))
        recorded = await _recorded_turn(client, run, headers, number)
        if recorded is not None:
            if recorded["user_message"] != message:
                run.problems.append(f"turn {number} was recorded with another message")
            run.recovered += 1
            return recorded
        run.resent += 1
    run.problems.append(f"turn {number} not done after {SETTLE_ATTEMPTS} attempts")
    return None


async def _recorded_turn(
    client: httpx.AsyncClient, run: ShopperRun, headers: dict[str, str], number: int
) -> dict[str, Any] | None:
    """The turn's record if the store has it, None if it does not (retrying the read)."""
    for _ in range(SETTLE_ATTEMPTS):
        response = await _send(client, "GET", f"/api/sessions/{run.session_id}", headers)
        if response is not None and response.status_code == 200:
            if response.json()["turns"] < number:
                return None
            path = f"/api/sessions/{run.session_id}/turns/{number}"
            turn = await _send(client, "GET", path, headers)
            if turn is not None and turn.status_code == 200:
                return turn.json()
        await asyncio.sleep(_retry_after(response))
    return None


async def _verify(client: httpx.AsyncClient, run: ShopperRun, turns: int) -> None:
    """Every turn the shopper was answered is in the store as answered; nothing else is."""
    if not run.session_id or run.problems:
        return
    headers = {"X-Forwarded-For": run.shopper.address}
    response = await _send(client, "GET", f"/api/sessions/{run.session_id}", headers)
    if response is None or response.status_code != 200:
        run.problems.append(f"session not readable afterwards: {_describe(response)}")
        return
    summary = response.json()
    if summary["turns"] != turns or len(run.answers) != turns:
        run.problems.append(f"{summary['turns']} turns stored, {len(run.answers)} answered")
    run.problems.extend(cross_talk(summary["state"], run.shopper, run.shopper.messages(turns)))
    for number, answer in enumerate(run.answers, 1):
        path = f"/api/sessions/{run.session_id}/turns/{number}"
        stored = await _send(client, "GET", path, headers)
        if stored is None or stored.status_code != 200:
            run.problems.append(f"turn {number} lost: {_describe(stored)}")
        elif _gist(stored.json()) != _gist(answer):
            run.problems.append(f"turn {number} stored differs from the answer")


def _gist(record: dict[str, Any]) -> tuple:
    ids = tuple(r["parent_asin"] for r in record["recommendations"])
    return record["turn"], record["user_message"], record["message"], ids


async def _send(
    client: httpx.AsyncClient,
    method: str,
    path: str,
    headers: dict[str, str],
    errors: list[str] | None = None,
    **kwargs: Any,
) -> httpx.Response | None:
    """The response, or None when the connection failed (a worker killed mid-request); the
    failure's kind goes to `errors`."""
    try:
        return await client.request(method, path, headers=headers, **kwargs)
    except httpx.TransportError as exc:
        if errors is not None:
            errors.append(f"connection failed: {type(exc).__name__}")
        return None


def _retry_after(response: httpx.Response | None) -> float:
    if response is None:
        return 0.2
    try:
        return min(5.0, float(response.headers.get("retry-after", 0.2)))
    except ValueError:
        return 0.2


def _describe(response: httpx.Response | None) -> str:
    if response is None:
        return "connection failed"
    return f"{response.status_code} {response.text[:200]}"
