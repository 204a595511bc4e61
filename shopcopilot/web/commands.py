"""`shopcopilot serve`: the web demo."""

from __future__ import annotations

import os
import socket
import threading
import time
import webbrowser
from pathlib import Path

import click

from .store import DEFAULT_IDLE_TTL_SECONDS, DEFAULT_MAX_SESSIONS

BROWSER_WAIT_SECONDS = 120.0


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
    "--store",
    "store_path",
    type=click.Path(path_type=Path, dir_okay=False),
    help="SQLite session store. Default: web-sessions.sqlite3 in the cache directory.",
)
@click.option(
    "--idle-ttl",
    default=DEFAULT_IDLE_TTL_SECONDS,
    show_default=True,
    type=click.FloatRange(min=1),
    help="Seconds of inactivity after which a session expires.",
)
@click.option(
    "--max-sessions",
    default=DEFAULT_MAX_SESSIONS,
    show_default=True,
    type=click.IntRange(min=1),
    help="Live sessions kept; one more evicts the session idle the longest.",
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
    type=click.IntRange(min=1),
    help="Worker processes; each loads the agent, all share the session store.",
)
def serve(
    catalog: Path | None,
    host: str,
    port: int,
    no_browser: bool,
    store_path: Path | None,
    idle_ttl: float,
    max_sessions: int,
    demo_sessions: Path | None,
    demo_generated: int,
    workers: int,
) -> None:
    """Serve the web demo: chat, recommendations, the shopper's state and the pipeline, live."""
    import uvicorn  # local: the CLI's other commands need no web server

    from ..bench.sessions_io import load_sessions
    from ..index import open_index
    from ..index.features import ensure_built
    from ..paths import resolve_catalog
    from .app import WebSettings

    if demo_sessions is not None:  # a bad file is reported now, naming its line, not by the server
        load_sessions(demo_sessions)
    # Build (or check) the index and the ranking features once, here, with progress bars,
    # rather than silently in every worker at startup.
    index = open_index(resolve_catalog(catalog))
    ensure_built(index.store, index.path, progress=True)
    index.close()

    settings = WebSettings(
        catalog_path=catalog,
        store_path=store_path,
        idle_ttl_seconds=idle_ttl,
        max_sessions=max_sessions,
        demo_sessions_path=demo_sessions,
        demo_generated=demo_generated,
    )
    url = f"http://{host}:{port}/"
    click.echo(f"Shopping Copilot on {url} (API docs at {url}docs)")
    if not no_browser:
        threading.Thread(target=_open_when_up, args=(host, port, url), daemon=True).start()
    # Every worker (one or many) builds its app from the same settings, passed through the
    # environment.
    os.environ.update(settings.to_env())
    uvicorn.run(
        "shopcopilot.web.app:app_from_env", factory=True, host=host, port=port, workers=workers
    )


def _open_when_up(host: str, port: int, url: str) -> None:
    deadline = time.monotonic() + BROWSER_WAIT_SECONDS
    while time.monotonic() < deadline:
        try:
            with socket.create_connection((host, port), timeout=1.0):
                webbrowser.open(url)
                return
        except OSError:
            time.sleep(0.3)
