"""Runs benchmark sessions against any agent with the official contract.

The runner owns the session loop and the scoring; the customer (official or natural)
owns what the shopper says. A bad agent never stops a run: a respond() that raises,
hangs past the turn timeout or returns something malformed is scored as an empty
response for that turn and counted.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import multiprocessing
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from ..catalog.loader import iter_lines
from ..catalog.product import Product, RecordError, product_from_record
from .customer import NATURAL_PROTOCOLS, Customer, make_customer
from .metrics import Outcome
from .official import EMPTY_RESPONSE, MAX_TURNS, TOP_K, score_recommendations
from .sessions_io import Session

DEFAULT_AGENT = "shopcopilot.agent:Agent"
BASELINE_AGENT = "shopcopilot.bench.baseline:BaselineAgent"
DEFAULT_TURN_TIMEOUT = 30.0


class BenchError(Exception):
    """The benchmark cannot run as asked; the message says what to fix."""


# ---- records of a run ---------------------------------------------------------------------


@dataclass(slots=True)
class TurnRecord:
    turn: int
    customer_message: str
    agent_message: str
    ask_attribute: Any
    recommended: list[str]
    target_rank: int | None  # where the target was shown this turn, counted or not
    counted_hit: bool
    latency_ms: float
    error: str | None = None
    timed_out: bool = False
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass(slots=True)
class SessionRun:
    sample_id: str
    scenario_type: str
    target_asin: str
    category_bucket: str | None
    difficulty_bucket: str | None
    first_hit_turn: int | None = None
    best_rank: int | None = None
    turns: list[TurnRecord] = field(default_factory=list)
    reset_error: str | None = None

    @property
    def outcome(self) -> Outcome:
        return Outcome(self.sample_id, self.scenario_type, self.first_hit_turn, self.best_rank)

    @property
    def errors(self) -> int:
        return sum(1 for turn in self.turns if turn.error and not turn.timed_out) + (
            self.reset_error is not None
        )

    @property
    def timeouts(self) -> int:
        return sum(1 for turn in self.turns if turn.timed_out)

    @property
    def prompt_tokens(self) -> int:
        return sum(turn.prompt_tokens for turn in self.turns)

    @property
    def completion_tokens(self) -> int:
        return sum(turn.completion_tokens for turn in self.turns)


@dataclass(frozen=True, slots=True)
class BenchData:
    """What scoring needs from the catalog: every id, and each target's raw record."""

    catalog_path: str
    catalog_ids: frozenset[str]
    target_records: dict[str, dict[str, Any]]

    def target_product(self, asin: str) -> Product:
        return product_from_record(self.target_records[asin])


@dataclass(frozen=True, slots=True)
class RunSettings:
    protocol: str = "official"
    seed: int = 0
    turn_timeout: float | None = DEFAULT_TURN_TIMEOUT
    max_turns: int = MAX_TURNS
    top_k: int = TOP_K


# ---- loading the catalog side and the agent
# ---------------------------------------------------------


def load_bench_data(catalog_path: str | Path, sessions: Sequence[Session]) -> BenchData:
    """One pass over the catalog: all ids (for scoring) and the targets' raw records."""
    path = Path(catalog_path)
    if not path.is_file():
        raise BenchError(f"catalog not found: {path}")
    wanted = {session.target_asin for session in sessions}
    ids: set[str] = set()
    records: dict[str, dict[str, Any]] = {}
    for number, line in iter_lines(path):
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise BenchError(f"{path}:{number}: not valid JSON ({exc.msg})") from exc
        if not isinstance(record, dict) or record.get("parent_asin") in (None, ""):
            raise BenchError(f"{path}:{number}: a catalog line needs a 'parent_asin'")
        asin = str(record["parent_asin"])
        ids.add(asin)
        if asin in wanted and asin not in records:
            records[asin] = _checked_target(record, path, number)
    missing = sorted(
        {s.sample_id: s.target_asin for s in sessions if s.target_asin not in records}.items()
    )
    if missing:
        shown = ", ".join(f"{sample} -> {asin}" for sample, asin in missing[:5])
        raise BenchError(f"{len(missing)} session target(s) are not in the catalog {path}: {shown}")
    return BenchData(str(path), frozenset(ids), records)


def _checked_target(record: dict[str, Any], path: Path, number: int) -> dict[str, Any]:
    try:
        product_from_record(record)
    except RecordError as exc:
        raise BenchError(
            f"{path}:{number}: a session target is not a usable product: {exc}"
        ) from exc
    return record


def resolve_agent_spec(spec: str | None) -> str:
    """The given `module:Class`, else the project's Agent when it exists, else the baseline."""
    if spec:
        return spec
    # find_spec, not import: an Agent module that exists but fails to import must fail loudly later.
    return (
        DEFAULT_AGENT
        if importlib.util.find_spec(DEFAULT_AGENT.partition(":")[0])
        else BASELINE_AGENT
    )


def load_agent_class(spec: str) -> Callable[..., Any]:
    module_name, sep, class_name = spec.partition(":")
    if not sep or not module_name or not class_name:
        raise BenchError(f"agent must be given as module:Class, got {spec!r}")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise BenchError(f"cannot import agent module {module_name!r}: {exc}") from exc
    factory = getattr(module, class_name, None)
    if not callable(factory):
        raise BenchError(f"module {module_name!r} has no class {class_name!r}")
    return factory


def build_agent(spec: str, catalog_path: str | Path) -> Any:
    factory = load_agent_class(spec)
    try:
        agent = factory(str(catalog_path))
    except Exception as exc:
        raise BenchError(
            f"constructing {spec}({catalog_path!s}) failed: {type(exc).__name__}: {exc}"
        ) from exc
    for method in ("reset", "respond"):
        if not callable(getattr(agent, method, None)):
            raise BenchError(f"{spec} has no {method}() method; see the agent contract")
    return agent


@cache
def product_lookup(catalog_path: str) -> Callable[[str], Product | None]:
    """asin -> Product from the catalog's index, opened once per process (the natural customer reads
    shown items)."""
    from ..index import open_index  # local: only the natural protocol needs it

    return open_index(catalog_path, progress=False).store.get


# ---- one call, guarded
# -------------------------------------------------------------------------------


@dataclass(slots=True)
class CallResult:
    value: Any = None
    error: str | None = None
    timed_out: bool = False
    latency_ms: float = 0.0


def guarded_call(function: Callable[[], Any], timeout: float | None) -> CallResult:
    """Run `function`, turning exceptions and overruns into a CallResult.

    With a timeout the call runs in a daemon thread: Python cannot kill a thread, so a
    hung call is abandoned (it cannot block the run or the interpreter's exit).
    """
    result = CallResult()

    def run() -> None:
        start = time.perf_counter()
        try:
            result.value = function()
        except (Exception, SystemExit) as exc:  # SystemExit too: an agent must not end the run
            result.error = f"{type(exc).__name__}: {exc}"
        result.latency_ms = (time.perf_counter() - start) * 1000.0

    if timeout is None:
        run()
        return result
    thread = threading.Thread(target=run, name="agent-call", daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        return CallResult(
            error=f"timed out after {timeout:g}s", timed_out=True, latency_ms=timeout * 1000.0
        )
    return result


def sanitize_response(value: Any) -> tuple[dict[str, Any], str | None]:
    """The response as the evaluator sees it, and why it was rejected (None when fine)."""
    if not isinstance(value, dict):
        return dict(
            EMPTY_RESPONSE
        ), f"malformed response: expected a dict, got {type(value).__name__}"
    if not isinstance(value.get("message"), str):
        return dict(EMPTY_RESPONSE), "malformed response: 'message' is not a string"
    return value, None


def reported_tokens(response: Mapping[str, Any]) -> tuple[int, int]:
    """Usage counts that are non-negative integers; anything else counts as 0."""
    usage = response.get("usage")
    if not isinstance(usage, dict):
        return 0, 0
    counts = [usage.get(key) for key in ("prompt_tokens", "completion_tokens")]
    return tuple(value if isinstance(value, int) and value >= 0 else 0 for value in counts)  # type: ignore[return-value]


# ---- the session loop
# ----------------------------------------------------------------------------------


def run_session(agent: Any, session: Session, data: BenchData, settings: RunSettings) -> SessionRun:
    """One session: the official loop, with the customer plugged in."""
    customer = make_customer(
        settings.protocol,
        session,
        data.target_product(session.target_asin),
        settings.seed,
        record=data.target_records[session.target_asin],
        lookup=product_lookup(data.catalog_path)
        if settings.protocol in NATURAL_PROTOCOLS
        else None,
    )
    run = SessionRun(
        session.sample_id,
        session.scenario_type,
        session.target_asin,
        session.category_bucket,
        session.difficulty_bucket,
    )
    session_id = f"eval_{uuid.uuid4().hex}"
    reset = guarded_call(
        lambda: agent.reset(session_id, dict(session.user_profile)), settings.turn_timeout
    )
    run.reset_error = reset.error
    _converse(agent, session_id, customer, session.target_asin, data, settings, run)
    return run


def _converse(
    agent: Any,
    session_id: str,
    customer: Customer,
    target: str,
    data: BenchData,
    settings: RunSettings,
    run: SessionRun,
) -> None:
    override_turn = customer.override_turn()
    override_sent = override_turn is None
    message = customer.first_message()
    for turn in range(1, settings.max_turns + 1):
        response, record = _take_turn(agent, session_id, message, turn, target, data, settings)
        record.counted_hit = override_sent and record.target_rank is not None
        run.turns.append(record)
        if record.counted_hit:
            run.first_hit_turn, run.best_rank = turn, record.target_rank
            return
        if turn == settings.max_turns:
            return
        if not override_sent and turn + 1 == override_turn:
            override_sent = True
            message = customer.override_message()
        else:
            message = customer.reply(response, turn)


def _plain(value: Any) -> Any:
    """A JSON-safe, picklable stand-in for whatever the agent put in a field."""
    return value if value is None or isinstance(value, (str, int, float, bool)) else repr(value)


def _take_turn(
    agent: Any,
    session_id: str,
    message: str,
    turn: int,
    target: str,
    data: BenchData,
    settings: RunSettings,
) -> tuple[dict[str, Any], TurnRecord]:
    """The agent's (sanitised) response and the turn's record; counted_hit is the caller's call."""
    call = guarded_call(
        lambda: agent.respond(session_id, message, turn, settings.top_k), settings.turn_timeout
    )
    response, problem = (
        sanitize_response(call.value) if call.error is None else (dict(EMPTY_RESPONSE), call.error)
    )
    prompt_tokens, completion_tokens = reported_tokens(response)
    ranked = score_recommendations(
        response.get("recommendations"), data.catalog_ids, settings.top_k
    )
    record = TurnRecord(
        turn=turn,
        customer_message=message,
        agent_message=response["message"],
        ask_attribute=_plain(response.get("ask_attribute")),
        recommended=ranked,
        target_rank=ranked.index(target) + 1 if target in ranked else None,
        counted_hit=False,
        latency_ms=round(call.latency_ms, 3),
        error=problem,
        timed_out=call.timed_out,
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
    )
    return response, record


# ---- many sessions, serial or in worker processes
# ----------------------------------------------------------------


ProgressCallback = Callable[[SessionRun], None]


def run_sessions(
    agent_spec: str,
    sessions: Sequence[Session],
    data: BenchData,
    settings: RunSettings,
    workers: int = 1,
    on_done: ProgressCallback | None = None,
) -> list[SessionRun]:
    """All sessions, in input order. Each worker process builds its own agent once."""
    if workers < 1:
        raise BenchError(f"--workers must be at least 1, got {workers}")
    if workers == 1 or len(sessions) <= 1:
        agent = build_agent(agent_spec, data.catalog_path)
        runs = []
        for session in sessions:
            runs.append(run_session(agent, session, data, settings))
            if on_done:
                on_done(runs[-1])
        return runs
    return _run_parallel(agent_spec, sessions, data, settings, workers, on_done)


_worker_state: dict[str, Any] = {}


def _worker_init(agent_spec: str, data: BenchData, settings: RunSettings) -> None:
    _worker_state.update(
        agent=build_agent(agent_spec, data.catalog_path), data=data, settings=settings
    )


def _worker_session(session: Session) -> SessionRun:
    return run_session(
        _worker_state["agent"], session, _worker_state["data"], _worker_state["settings"]
    )


def _run_parallel(
    agent_spec: str,
    sessions: Sequence[Session],
    data: BenchData,
    settings: RunSettings,
    workers: int,
    on_done: ProgressCallback | None,
) -> list[SessionRun]:
    # spawn: a forked child would inherit the parent's threads (progress bar) and open indexes.
    context = multiprocessing.get_context("spawn")
    load_agent_class(agent_spec)  # a bad spec fails here with a clear message, not inside a worker
    results: list[SessionRun | None] = [None] * len(sessions)
    try:
        with ProcessPoolExecutor(
            workers,
            mp_context=context,
            initializer=_worker_init,
            initargs=(agent_spec, data, settings),
        ) as pool:
            futures = {
                pool.submit(_worker_session, session): index
                for index, session in enumerate(sessions)
            }
            for future in as_completed(futures):
                run = results[futures[future]] = future.result()
                if on_done:
                    on_done(run)
    except BrokenProcessPool as exc:
        raise BenchError(
            f"a worker process died ({exc}); run with --workers 1 to see the agent's error"
        ) from exc
    return [run for run in results if run is not None]
