"""The web demo's HTTP layer: a thin FastAPI app over the Agent, the session store and the demo
controller.

    create_app(settings) -> FastAPI     # `shopcopilot serve` runs it with uvicorn
    app_from_env() -> FastAPI           # the same, configured by SHOPCOPILOT_WEB_* (for --workers)

The agent is built once per process, in the lifespan; sessions live in the session store
(SQLite or Redis, store.py), so any worker process serves any turn of any session.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import fastapi_offline
import threadpoolctl
from fastapi import APIRouter, Depends, FastAPI, Query, Request
from fastapi import Path as PathParam
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, Response
from fastapi.sse import EventSourceResponse, ServerSentEvent
from fastapi.staticfiles import StaticFiles
from pydantic import TypeAdapter
from starlette import types as asgi

from ..paths import cache_dir, resolve_catalog
from ..state.requirements import FACETS
from . import schemas
from .defaults import DEFAULT_MAX_BODY_BYTES, DEFAULT_MESSAGE_CHARS, DEFAULT_RATE_LIMIT
from .demo import (
    DemoController,
    DemoError,
    DemoFinished,
    DemoSource,
    NotADemoRun,
    UnknownDemoSession,
)
from .guards import BodyLimit, RateLimit, RateLimited
from .sessions import (
    DemoRunDrop,
    SessionService,
    TurnPlan,
    UnknownFacet,
)
from .store import (
    DEFAULT_IDLE_TTL_SECONDS,
    DEFAULT_MAX_SESSIONS,
    ExpiredSession,
    SessionBusy,
    SessionConflict,
    StoredSession,
    StoreUnavailable,
    UnknownSession,
    UnknownTurn,
    is_redis,
    open_store,
)

STATIC_DIR = Path(__file__).parent / "static"
# Swagger UI and ReDoc as fastapi-offline ships them, served from here: /docs works offline.
DOCS_ASSETS_DIR = Path(fastapi_offline.__file__).parent / "static"
DOCS_ASSETS_URL = "/docs/assets"
STORE_FILE = "web-sessions.sqlite3"
RETRY_AFTER_UNAVAILABLE = 1  # seconds: a Redis restart takes about that
log = logging.getLogger("shopcopilot.web")


@dataclass(frozen=True, slots=True)
class WebSettings:
    catalog_path: Path | None = None  # None: the embedded default (synthetic) catalog
    # redis://HOST:PORT/DB, sqlite:///PATH or a path; None: web-sessions.sqlite3 in the cache
    session_store: str | Path | None = None
    idle_ttl_seconds: float = DEFAULT_IDLE_TTL_SECONDS
    max_sessions: int = DEFAULT_MAX_SESSIONS
    demo_sessions_path: Path | None = None
    demo_generated: int = 12
    demo_seed: int = 0
    rate_limit: str = DEFAULT_RATE_LIMIT  # per client address; "off" for none
    max_message_chars: int = DEFAULT_MESSAGE_CHARS
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES

    def __post_init__(self) -> None:
        ceiling = schemas.MAX_MESSAGE_CHARS
        if not 1 <= self.max_message_chars <= ceiling:
            raise ValueError(
                f"max_message_chars must be 1 to {ceiling}, got {self.max_message_chars}"
            )
        if self.max_body_bytes < 1024:
            raise ValueError(f"max_body_bytes must be at least 1024, got {self.max_body_bytes}")

    def to_env(self) -> dict[str, str]:
        """The settings as SHOPCOPILOT_WEB_* variables, read back by `from_env` in worker
        processes."""
        values = {
            "CATALOG": self.catalog_path,
            "SESSION_STORE": self.session_store,
            "IDLE_TTL": self.idle_ttl_seconds,
            "MAX_SESSIONS": self.max_sessions,
            "DEMO_SESSIONS": self.demo_sessions_path,
            "DEMO_GENERATED": self.demo_generated,
            "DEMO_SEED": self.demo_seed,
            "RATE_LIMIT": self.rate_limit,
            "MAX_MESSAGE_CHARS": self.max_message_chars,
            "MAX_BODY_BYTES": self.max_body_bytes,
        }
        return {
            f"SHOPCOPILOT_WEB_{key}": str(value)
            for key, value in values.items()
            if value is not None
        }

    @classmethod
    def from_env(cls) -> WebSettings:
        env = os.environ

        def path(key: str) -> Path | None:
            value = env.get(f"SHOPCOPILOT_WEB_{key}")
            return Path(value) if value else None

        def value(key: str, default: Any) -> Any:
            return type(default)(env.get(f"SHOPCOPILOT_WEB_{key}", default))

        defaults = cls()
        return cls(
            catalog_path=path("CATALOG"),
            session_store=env.get("SHOPCOPILOT_WEB_SESSION_STORE") or None,
            idle_ttl_seconds=value("IDLE_TTL", defaults.idle_ttl_seconds),
            max_sessions=value("MAX_SESSIONS", defaults.max_sessions),
            demo_sessions_path=path("DEMO_SESSIONS"),
            demo_generated=value("DEMO_GENERATED", defaults.demo_generated),
            demo_seed=value("DEMO_SEED", defaults.demo_seed),
            rate_limit=value("RATE_LIMIT", defaults.rate_limit),
            max_message_chars=value("MAX_MESSAGE_CHARS", defaults.max_message_chars),
            max_body_bytes=value("MAX_BODY_BYTES", defaults.max_body_bytes),
        )


@dataclass(frozen=True, slots=True)
class WebContext:
    """Everything a request needs, built once per process."""

    catalog_path: Path
    agent: Any
    service: SessionService
    demo: DemoController
    rate_limit: RateLimit
    max_message_chars: int


def build_context(settings: WebSettings) -> WebContext:
    from ..agent import FOR_PEOPLE, Agent  # local: the schema and --help need no pipeline

    one_blas_thread()
    catalog_path = resolve_catalog(settings.catalog_path)
    # Warmed once the server is up.
    agent = Agent(catalog_path=catalog_path, settings=FOR_PEOPLE, warm_up=False)
    target = settings.session_store or cache_dir() / STORE_FILE
    store = open_store(target, settings.idle_ttl_seconds, settings.max_sessions)
    service = SessionService(agent, store)
    demo = DemoController(
        service,
        DemoSource(
            catalog_path, settings.demo_sessions_path, settings.demo_generated, settings.demo_seed
        ),
    )
    rate_limit = RateLimit.parse(settings.rate_limit, str(target) if is_redis(target) else None)
    return WebContext(catalog_path, agent, service, demo, rate_limit, settings.max_message_chars)


def one_blas_thread() -> None:
    """A worker runs one turn at a time and there is a worker per core, so the BLAS library's
    own threads (numpy's matrix products: the nearest-in-meaning scan) only spin against the
    other workers: with them a turn cost about 10 ms more CPU on 2 cores (docs/benchmarks.md)."""
    threadpoolctl.threadpool_limits(limits=1, user_api="blas")


def create_app(settings: WebSettings | None = None) -> FastAPI:
    settings = settings or WebSettings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        app.state.web = await asyncio.to_thread(build_context, settings)
        # The agent's lookups and the demo set (which reads the catalog once) are loaded now, off
        # the
        # startup path, so the first chat or demo request does not wait for them.
        threading.Thread(target=_warm_up, args=(app.state.web,), daemon=True).start()
        yield
        app.state.web.service.store.close()

    app = FastAPI(
        title="Shopping Copilot",
        version="0.1.0",
        description=API_DESCRIPTION,
        lifespan=lifespan,
        docs_url=None,  # FastAPI's own pages load their scripts from a CDN; ours are below
        redoc_url=None,
    )
    _add_error_handlers(app)
    app.add_middleware(BodyLimit, max_bytes=settings.max_body_bytes)
    app.add_middleware(WorkerHeader)
    app.include_router(router)
    app.include_router(service_router)
    app.include_router(docs_router)
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    app.mount(DOCS_ASSETS_URL, StaticFiles(directory=DOCS_ASSETS_DIR), name="docs-assets")
    return app


class WorkerHeader:
    """ASGI middleware: `X-Worker: <pid>` on every response, so an operator (or a test) can
    see which worker process answered."""

    def __init__(self, app: asgi.ASGIApp) -> None:
        self.app = app
        self.header = (b"x-worker", str(os.getpid()).encode())

    async def __call__(self, scope: asgi.Scope, receive: asgi.Receive, send: asgi.Send) -> None:
        async def tagged(message: asgi.Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), self.header]
            await send(message)

        await self.app(scope, receive, tagged if scope["type"] == "http" else send)


def app_from_env() -> FastAPI:
    return create_app(WebSettings.from_env())


def _warm_up(web: WebContext) -> None:
    web.agent.warm_up()
    try:
        web.demo.demo_set()
    except Exception:  # reported again, to the client, by GET /api/demo/sessions
        log.exception("building the demo session set failed")


API_DESCRIPTION = """
A conversational product-search agent with an explicit, revisable model of what the shopper wants.

**Sessions** live in a session store (SQLite, or Redis for several machines): every completed turn
is written there, so a restarted server (or any other worker process) continues a session where it
stopped. A session idle for longer than the configured time expires (`410`, then `404`). The number
of live sessions is capped: creating one more **evicts the session idle the longest** (its next
request gets `404`).

**Turns** come back as one JSON body (`POST .../messages`) or as server-sent events
(`POST .../messages/stream`): one `stage` event per pipeline stage as it finishes, then `turn`.
`POST .../messages` keeps each stage's timing and summary only, unless asked for `?trace=true`;
the stream always sends the whole pipeline. Two turns sent at once for one session run one after
the other (the second waits, up to 15 s, then gets `409`).

**Limits**: requests per client address (`429` with `Retry-After`), the message's length (`422`),
the request body's size (`413`). A store that cannot be reached answers `503` with `Retry-After`.

**Requirements** (`requirements` in every turn) are what the shopper has asked for, in force after
the turn; the page shows them as chips. `DELETE .../requirements/{facet}` drops one (or all of a
facet) as a turn of its own, answered like a message.

**Demo mode** plays a benchmark session: a simulated customer (official or natural protocol)
talks to the agent one step at a time. Only the demo controller knows the target.
"""

ERRORS: dict[int | str, dict[str, Any]] = {
    404: {"model": schemas.ErrorBody, "description": "Unknown session, turn or product"},
    409: {
        "model": schemas.ErrorBody,
        "description": "The session changed meanwhile, or the demo run cannot step",
    },
    410: {"model": schemas.ErrorBody, "description": "The session expired"},
    429: {"model": schemas.ErrorBody, "description": "Too many requests from this client"},
    503: {"model": schemas.ErrorBody, "description": "The session store is unreachable"},
}
# One server-sent event (OpenAPI 3.2's `itemSchema`, which FastAPI emits for event streams).
STREAM_EVENT_SCHEMA = {
    "type": "object",
    "required": ["event", "data"],
    "properties": {
        "event": {"enum": ["stage", "turn", "error"]},
        "data": {
            "type": "string",
            "contentMediaType": "application/json",
            "description": 'A StageEvent, the TurnResult, or {"detail": ...}',
        },
    },
}
# On streaming routes FastAPI would document a `model` under text/event-stream; errors are JSON.
_ERROR_JSON = {"application/json": {"schema": schemas.ErrorBody.model_json_schema()}}
STREAM_RESPONSES: dict[int | str, dict[str, Any]] = {
    **{
        code: {"description": spec["description"], "content": _ERROR_JSON}
        for code, spec in ERRORS.items()
    },
    200: {
        "description": schemas.STREAM_DESCRIPTION,
        "content": {"text/event-stream": {"itemSchema": STREAM_EVENT_SCHEMA}},
    },
}

_STATUS_FOR_ERROR: dict[type[Exception], int] = {
    UnknownSession: 404,
    UnknownTurn: 404,
    UnknownDemoSession: 404,
    ExpiredSession: 410,
    SessionConflict: 409,
    SessionBusy: 409,
    NotADemoRun: 409,
    DemoFinished: 409,
    DemoError: 409,
    DemoRunDrop: 409,
    RateLimited: 429,
    StoreUnavailable: 503,
}


def _add_error_handlers(app: FastAPI) -> None:
    async def as_json(request: Request, exc: Exception) -> JSONResponse:
        status = next(code for kind, code in _STATUS_FOR_ERROR.items() if isinstance(exc, kind))
        headers = {}
        if isinstance(exc, RateLimited):
            headers["Retry-After"] = str(exc.retry_after)
        elif isinstance(exc, StoreUnavailable):
            headers["Retry-After"] = str(RETRY_AFTER_UNAVAILABLE)
            log.warning("%s", exc)
        return JSONResponse({"detail": str(exc)}, status_code=status, headers=headers)

    for kind in _STATUS_FOR_ERROR:
        app.add_exception_handler(kind, as_json)

    async def unknown_facet(request: Request, exc: Exception) -> JSONResponse:
        # Shaped like FastAPI's own 422s, so the one documented body covers both.
        facet = request.path_params.get("facet", "")
        body = {
            "detail": [{"type": "enum", "loc": ["path", "facet"], "msg": str(exc), "input": facet}]
        }
        return JSONResponse(body, status_code=422)

    app.add_exception_handler(UnknownFacet, unknown_facet)


# ---- routes
# ---------------------------------------------------------------------------------------------


# Dependencies that do no I/O are `async def`: FastAPI runs a plain `def` one in the thread pool,
# a hop that costs more than the check itself.
async def web(request: Request) -> WebContext:
    return request.app.state.web


Web = Annotated[WebContext, Depends(web)]


def rate_limited(ctx: Web, request: Request) -> None:
    """Counts the request against its client's limit (429 over it)."""
    ctx.rate_limit.check(request.client.host if request.client else "unknown")


# Every API route counts against the client's rate limit, except the health check.
router = APIRouter(dependencies=[Depends(rate_limited)])
service_router = APIRouter()
SessionId = Annotated[
    str, PathParam(min_length=1, max_length=100, description="A session id from POST /api/sessions")
]


async def checked_message(ctx: Web, body: schemas.NewMessage) -> schemas.NewMessage:
    """The message, within this server's length limit (a 422 like the schema's own otherwise)."""
    limit = ctx.max_message_chars
    if len(body.message) > limit:
        raise RequestValidationError(
            [
                {
                    "type": "string_too_long",
                    "loc": ("body", "message"),
                    "msg": f"String should have at most {limit} characters",
                    "input": f"({len(body.message)} characters)",
                    "ctx": {"max_length": limit},
                }
            ]
        )
    return body


Message = Annotated[schemas.NewMessage, Depends(checked_message)]


# Streaming endpoints check in dependencies: once a stream has begun, its status can no longer be a
# 4xx.
def live_session(ctx: Web, session_id: SessionId) -> StoredSession:
    return ctx.service.store.get(session_id)


def steppable_demo_run(
    ctx: Web, stored: Annotated[StoredSession, Depends(live_session)]
) -> StoredSession:
    ctx.demo.plan_step(stored)
    return stored


@router.get("/", include_in_schema=False)
def index_page() -> FileResponse:
    return FileResponse(STATIC_DIR / "index.html", headers={"Cache-Control": "no-cache"})


@service_router.get("/api/health", response_model=schemas.Health, tags=["service"])
def health(ctx: Web) -> dict[str, Any]:
    return {
        "status": "ok",
        "catalog": str(ctx.catalog_path),
        "live_sessions": ctx.service.store.live_count(),
    }


@router.post(
    "/api/sessions", status_code=201, response_model=schemas.SessionSummary, tags=["sessions"]
)
def create_session(ctx: Web, body: schemas.NewSession | None = None) -> dict[str, Any]:
    """Start a session, optionally with the shopper's profile."""
    return ctx.service.create(body.profile if body else {})


@router.get(
    "/api/sessions/{session_id}",
    response_model=schemas.SessionSummary,
    responses=ERRORS,
    tags=["sessions"],
)
def get_session(ctx: Web, session_id: SessionId) -> dict[str, Any]:
    """The session: completed turns, profile, the agent's state, and the demo run if it is one."""
    return ctx.service.summary(session_id)


@router.get(
    "/api/sessions/{session_id}/state",
    response_model=dict[str, Any],
    responses=ERRORS,
    tags=["sessions"],
)
def get_state(ctx: Web, session_id: SessionId) -> dict[str, Any]:
    """The agent's model of what the shopper wants (constraints, rejections, intent, questions
    asked)."""
    return ctx.service.summary(session_id)["state"]


@router.get(
    "/api/sessions/{session_id}/turns/{turn}",
    response_model=schemas.TurnResult,
    responses=ERRORS,
    tags=["sessions"],
)
def get_turn(
    ctx: Web, session_id: SessionId, turn: Annotated[int, PathParam(ge=1, le=1_000_000)]
) -> dict[str, Any]:
    """A completed turn as recorded: the reply, recommendations, state, diff and pipeline trace."""
    return ctx.service.store.turn(session_id, turn)


@router.post(
    "/api/sessions/{session_id}/messages",
    response_model=schemas.TurnResult,
    responses=ERRORS,
    tags=["sessions"],
)
def send_message(
    ctx: Web,
    session_id: SessionId,
    body: Message,
    trace: Annotated[
        bool,
        Query(
            description="Also the stages' detailed outputs (the page's pipeline view); "
            "without it each stage keeps its timing and summary only"
        ),
    ] = False,
) -> Response:
    """The shopper says something; the agent answers (one JSON body when the turn is done)."""
    return turn_response(ctx.service.run_turn(session_id, _chat_plan(body, trace)))


@router.post(
    "/api/sessions/{session_id}/messages/stream",
    response_class=EventSourceResponse,
    responses=STREAM_RESPONSES,
    tags=["sessions"],
)
async def send_message_streamed(
    ctx: Web, stored: Annotated[StoredSession, Depends(live_session)], body: Message
) -> AsyncIterator[ServerSentEvent]:
    """As POST .../messages, but each pipeline stage is sent as it finishes."""
    async for event in _stream_turn(ctx.service, stored.session_id, _chat_plan(body)):
        yield event


@router.delete(
    "/api/sessions/{session_id}/requirements/{facet}",
    response_model=schemas.TurnResult,
    responses={
        **ERRORS,
    },
    tags=["sessions"],
)
def drop_requirement(
    ctx: Web,
    session_id: SessionId,
    facet: Annotated[
        str,
        PathParam(
            min_length=1,
            max_length=40,
            description="What the requirement is about (422 for another name).",
            json_schema_extra={"enum": list(FACETS)},
        ),
    ],
    value: Annotated[
        str | None,
        Query(
            min_length=1,
            max_length=200,
            description="Drop only the requirement of this value (a requirement's `value`); "
            "without it, every requirement of the facet",
        ),
    ] = None,
    trace: Annotated[
        bool, Query(description="Also the stages' detailed outputs, as for POST .../messages")
    ] = False,
) -> Response:
    """The shopper drops a requirement (a chip's ×): a turn of its own, answered like a message,
    with the requirements that remain. It is recorded as said "(removed <the chip's label>)"."""
    return turn_response(
        ctx.service.run_turn(session_id, ctx.service.drop_plan(facet, value, trace=trace))
    )


@router.get("/api/examples", response_model=schemas.Examples, tags=["catalog"])
def examples(
    ctx: Web, n: Annotated[int, Query(ge=1, le=12, description="How many at most")] = 4
) -> dict[str, Any]:
    """Example requests that work on the served catalog (the page's greeting offers them)."""
    return {"examples": ctx.service.examples(n)}


@router.get(
    "/api/products/{parent_asin}",
    response_model=schemas.ProductDetail,
    responses={404: ERRORS[404]},
    tags=["catalog"],
)
def get_product(
    ctx: Web, parent_asin: Annotated[str, PathParam(min_length=1, max_length=100)]
) -> Any:
    """One catalog product with its derived attributes."""
    product = ctx.agent.index.store.get(parent_asin)
    if product is None:
        return JSONResponse({"detail": f"unknown product {parent_asin!r}"}, status_code=404)
    attributes = ctx.agent.index.store.attributes(parent_asin)
    derived = jsonable_encoder(attributes.to_dict()) if attributes is not None else {}
    return {**product.to_record(), "attributes": derived}


@router.get("/api/demo/sessions", response_model=schemas.DemoSessionList, tags=["demo"])
def list_demo_sessions(ctx: Web) -> dict[str, Any]:
    """Benchmark sessions that demo mode can play on the served catalog."""
    return ctx.demo.listing()


@router.post(
    "/api/demo/runs",
    status_code=201,
    response_model=schemas.SessionSummary,
    responses=ERRORS,
    tags=["demo"],
)
def start_demo_run(ctx: Web, body: schemas.NewDemoRun) -> dict[str, Any]:
    """A new session driven by a simulated customer; step it with POST /api/demo/runs/{id}/step."""
    return ctx.demo.start(body.sample_id, body.protocol, body.seed)


@router.post(
    "/api/demo/runs/{session_id}/step",
    response_model=schemas.TurnResult,
    responses=ERRORS,
    tags=["demo"],
)
def step_demo_run(ctx: Web, session_id: SessionId) -> Response:
    """One turn: the simulated customer's pending message goes to the agent; the customer then
    moves."""
    return turn_response(ctx.service.run_turn(session_id, ctx.demo.plan_step))


@router.post(
    "/api/demo/runs/{session_id}/step/stream",
    response_class=EventSourceResponse,
    responses=STREAM_RESPONSES,
    tags=["demo"],
)
async def step_demo_run_streamed(
    ctx: Web, stored: Annotated[StoredSession, Depends(steppable_demo_run)]
) -> AsyncIterator[ServerSentEvent]:
    """As POST .../step, with each pipeline stage sent as it finishes."""
    async for event in _stream_turn(ctx.service, stored.session_id, ctx.demo.plan_step):
        yield event


# ---- API documentation pages, with local assets --------------------------------------------------

docs_router = APIRouter(include_in_schema=False)


@docs_router.get("/docs")
def swagger_ui(request: Request) -> HTMLResponse:
    return get_swagger_ui_html(
        openapi_url=request.app.openapi_url,
        title="Shopping Copilot - API",
        swagger_js_url=f"{DOCS_ASSETS_URL}/swagger-ui-bundle.js",
        swagger_css_url=f"{DOCS_ASSETS_URL}/swagger-ui.css",
        swagger_favicon_url=f"{DOCS_ASSETS_URL}/favicon.png",
    )


@docs_router.get("/redoc")
def redoc(request: Request) -> HTMLResponse:
    return get_redoc_html(
        openapi_url=request.app.openapi_url,
        title="Shopping Copilot - API",
        redoc_js_url=f"{DOCS_ASSETS_URL}/redoc.standalone.js",
        redoc_favicon_url=f"{DOCS_ASSETS_URL}/favicon.png",
        with_google_fonts=False,
    )


TURN_RESULT = TypeAdapter(schemas.TurnResult)


def turn_response(record: dict[str, Any]) -> Response:
    """The turn as FastAPI would answer it through `response_model=TurnResult` (validated, then
    dumped by pydantic), but in the route's own worker thread: FastAPI would validate in another
    hop to the thread pool and dump on the event loop."""
    turn = TURN_RESULT.validate_python(record, from_attributes=True)
    body = TURN_RESULT.dump_json(turn, by_alias=True)
    return Response(body, media_type="application/json")


def _chat_plan(body: schemas.NewMessage, trace: bool = True) -> Callable[[StoredSession], TurnPlan]:
    return lambda stored: TurnPlan(body.message, body.top_k, trace)


async def _stream_turn(
    service: SessionService, session_id: str, plan: Callable[[StoredSession], TurnPlan]
) -> AsyncIterator[ServerSentEvent]:
    """Run the turn in a worker thread; relay its stage events, then the turn (or the error)."""
    loop = asyncio.get_running_loop()
    events: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()

    def send(kind: str, data: Any) -> None:
        loop.call_soon_threadsafe(events.put_nowait, (kind, data))

    def run() -> None:
        try:
            record = service.run_turn(
                session_id, plan, on_event=lambda event: send("stage", jsonable_encoder(event))
            )
        except Exception as exc:  # the status line is already sent: report the failure in-band
            log.exception("turn failed for session %s", session_id)
            send("error", {"detail": f"{type(exc).__name__}: {exc}"})
        else:
            send("turn", schemas.TurnResult.model_validate(record).model_dump(mode="json"))

    # Not awaited directly: if the client goes away the turn still completes and is stored.
    loop.run_in_executor(None, run)
    while True:
        kind, data = await events.get()
        yield ServerSentEvent(event=kind, data=data)
        if kind != "stage":
            return
