"""docs/screenshot.png from the running page: the web demo on the embedded catalog, a short
conversation played in Debian's Chromium through Playwright, the page captured at a desktop size.

    python benchmarks/screenshot.py                    # make screenshot
    python benchmarks/screenshot.py -o /tmp/page.png --catalog path/to/catalog.jsonl

The server runs in this process on a free loopback port with a throw-away session store; the
catalog's index comes from the usual cache (built on first use). The conversation: a gift with a
budget, a correction, then a question about a shown product, whose card the reply highlights.
"""

from __future__ import annotations

import argparse
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import uvicorn
from playwright.sync_api import Page, sync_playwright

from shopcopilot.web.app import WebSettings, create_app

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]
CONVERSATION = [
    "a gift for my sister, she likes hiking, under 60 dollars",
    "actually make it blue",
    "how much is the first one?",
]
VIEWPORT = {"width": 1440, "height": 900}
TURN_TIMEOUT_MS = 120_000  # the first turn also waits for the agent's warm-up


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def serving(catalog: Path | None) -> Iterator[str]:
    """The web app on a free port, in a thread of this process; yields its address."""
    with tempfile.TemporaryDirectory(prefix="shopcopilot-screenshot-") as scratch:
        settings = WebSettings(
            catalog_path=catalog,
            session_store=Path(scratch) / "sessions.sqlite3",
            demo_generated=0,
            rate_limit="off",
        )
        port = free_port()
        server = uvicorn.Server(
            uvicorn.Config(create_app(settings), host="127.0.0.1", port=port, log_level="warning")
        )
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        deadline = time.monotonic() + 600  # a first run generates and indexes the catalog
        while not server.started:
            if time.monotonic() > deadline or not thread.is_alive():
                raise RuntimeError("the web server did not start")
            time.sleep(0.1)
        try:
            yield f"http://127.0.0.1:{port}/"
        finally:
            server.should_exit = True
            thread.join(10)


def play(page: Page, messages: list[str]) -> None:
    for number, message in enumerate(messages, 1):
        page.fill("#message", message)
        page.press("#message", "Enter")
        reply = f".msg.agent[data-turn='{number}']"
        page.wait_for_selector(reply, timeout=TURN_TIMEOUT_MS)
        print(f"turn {number}: {message!r} -> {page.inner_text(reply + ' .reply')!r}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-o", "--output", type=Path, default=ROOT / "docs" / "screenshot.png")
    parser.add_argument(
        "--catalog", type=Path, default=None, help="default: the embedded synthetic catalog"
    )
    args = parser.parse_args(argv)
    if not CHROMIUM.exists():
        print(f"needs Debian's Chromium at {CHROMIUM} (run `make browser-deps`)", file=sys.stderr)
        return 1
    with serving(args.catalog) as url, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport=VIEWPORT, device_scale_factor=1)
            page = context.new_page()
            page.goto(url)
            page.wait_for_selector("body[data-ready=true]", timeout=TURN_TIMEOUT_MS)
            play(page, CONVERSATION)
            page.evaluate("document.activeElement && document.activeElement.blur()")
            page.wait_for_timeout(600)  # the highlighted card's scroll settles
            args.output.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(args.output))
        finally:
            browser.close()
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
