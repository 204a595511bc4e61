"""`shopcopilot serve`: the web demo and its API, on one or several worker processes.

Every flag can also be set by its environment variable (SHOPCOPILOT_WEB_*), which is also how
the settings reach uvicorn's worker processes. uvicorn's supervisor replaces a worker that dies
(checked every half second); the new one loads the index and serves once it is ready.
"""

from __future__ import annotations

import os
import socket
import threading
import time
import webbrowser
from pathlib import Path

import click

from .defaults import (
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_MESSAGE_CHARS,
    DEFAULT_RATE_LIMIT,
    MAX_MESSAGE_CHARS,
)
from .store import DEFAULT_IDLE_TTL_SECONDS, DEFAULT_MAX_SESSIONS, is_redis, open_store

BROWSER_WAIT_SECONDS = 120.0
# Longer than the usual load balancer's idle timeout (60 s) and clients' pools (httpx: 5 s),
# so the other side closes an idle connection first and never sends a request on one a
# worker has just closed (uvicorn's 5 s default races with them).
KEEP_ALIVE_SECONDS = 65


@click.command("serve")
@click.option(
    "--catalog",
    type=click.Path(path_type=Path),
    help="Catalog (.jsonl or .jsonl.gz). Default: the embedded synthetic catalog.",
)
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=click.IntRange(1, 65535))
@click.option("--no-browser", is_flag=True, help="Do not open the page in a browser.")
@click.option(
    "--session-store",
    "--store",
    "session_store",
    envvar="SHOPCOPILOT_WEB_SESSION_STORE",
    help="Where sessions live: redis://HOST:PORT/DB (workers on several machines), "
    "sqlite:///PATH or a file path. Default: web-sessions.sqlite3 in the cache directory.",
)
@click.option(
    "--idle-ttl",
    default=DEFAULT_IDLE_TTL_SECONDS,
    show_default=True,
    envvar="SHOPCOPILOT_WEB_IDLE_TTL",
    type=click.FloatRange(min=1),
    help="Seconds of inactivity after which a session expires.",
)
@click.option(
    "--max-sessions",
    default=DEFAULT_MAX_SESSIONS,
    show_default=True,
    envvar="SHOPCOPILOT_WEB_MAX_SESSIONS",
    type=click.IntRange(min=1),
    help="Live sessions kept; one more evicts the session idle the longest.",
)
@click.option(
    "--rate-limit",
    default=DEFAULT_RATE_LIMIT,
    show_default=True,
    envvar="SHOPCOPILOT_WEB_RATE_LIMIT",
    help="API requests per client address, like 300/minute or 10/second; 'off' for none. "
    "Shared by all workers with a Redis store, counted per worker with SQLite.",
)
@click.option(
    "--max-message-chars",
    default=DEFAULT_MESSAGE_CHARS,
    show_default=True,
    envvar="SHOPCOPILOT_WEB_MAX_MESSAGE_CHARS",
    type=click.IntRange(1, MAX_MESSAGE_CHARS),
    help="Longest message accepted (422 beyond).",
)
@click.option(
    "--max-body-bytes",
    default=DEFAULT_MAX_BODY_BYTES,
    show_default=True,
    envvar="SHOPCOPILOT_WEB_MAX_BODY_BYTES",
    type=click.IntRange(min=1024),
    help="Largest request body accepted (413 beyond).",
)
@click.option(
    "--demo-sessions",
    type=click.Path(path_type=Path),
    help="A session file (JSONL) for demo mode, besides the generated set.",
)
@click.option(
    "--demo-generated",
    default=12,
    show_default=True,
    type=click.IntRange(min=0),
    help="How many sessions to generate from the catalog for demo mode.",
)
@click.option(
    "--workers",
    default=1,
    show_default=True,
    envvar="SHOPCOPILOT_WEB_WORKERS",
    type=click.IntRange(min=1),
    help="Worker processes; each opens the index once and loads the agent, all share the "
    "session store, any of them serves any turn.",
)
def serve(
    catalog: Path | None,
    host: str,
    port: int,
    no_browser: bool,
    session_store: str | None,
    idle_ttl: float,
    max_sessions: int,
    rate_limit: str,
    max_message_chars: int,
    max_body_bytes: int,
    demo_sessions: Path | None,
    demo_generated: int,
    workers: int,
) -> None:
    """Serve the web demo: chat, recommendations, the shopper's state and the pipeline, live."""
    import uvicorn  # local: the CLI's other commands need no web server

    from ..bench.sessions_io import load_sessions
    from ..index import open_index
    from ..index.features_build import ensure_built
    from ..paths import resolve_catalog
    from .app import WebSettings

    if demo_sessions is not None:  # a bad file is reported now, naming its line, not by the server
        load_sessions(demo_sessions)
    _check_store_and_limit(session_store, rate_limit)
    # Build (or check) the index and the ranking features once, here, with progress bars,
    # rather than silently in every worker at startup.
    index = open_index(resolve_catalog(catalog))
    ensure_built(index.store, index.path, progress=True)
    index.close()

    settings = WebSettings(
        catalog_path=catalog,
        session_store=session_store,
        idle_ttl_seconds=idle_ttl,
        max_sessions=max_sessions,
        demo_sessions_path=demo_sessions,
        demo_generated=demo_generated,
        rate_limit=rate_limit,
        max_message_chars=max_message_chars,
        max_body_bytes=max_body_bytes,
    )
    url = f"http://{host}:{port}/"
    click.echo(f"Shopping Copilot on {url} (API docs at {url}docs), {workers} worker(s)")
    if not no_browser:
        threading.Thread(target=_open_when_up, args=(host, port, url), daemon=True).start()
    # Every worker (one or many) builds its app from the same settings, passed through the
    # environment.
    os.environ.update(settings.to_env())
    uvicorn.run(
        "shopcopilot.web.app:app_from_env",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        timeout_keep_alive=KEEP_ALIVE_SECONDS,
    )


def _check_store_and_limit(session_store: str | None, rate_limit: str) -> None:
    """A bad store target, an unreachable Redis or a malformed limit stops `serve` here, named,
    rather than every worker at startup."""
    from .guards import RateLimit
    from .store import StoreError

    if session_store is not None:
        try:
            store = open_store(session_store)
            store.live_count()
        except (ValueError, StoreError) as exc:
            raise click.BadParameter(str(exc), param_hint="--session-store") from None
        store.close()
    try:
        RateLimit.parse(rate_limit, session_store if is_redis(session_store) else None)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--rate-limit") from None


def _open_when_up(host: str, port: int, url: str) -> None:
    deadline = time.monotonic() + BROWSER_WAIT_SECONDS
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((host, port), timeout=1.0):
                webbrowser.open(url)
                return
        except OSError:
            time.sleep(0.3)
