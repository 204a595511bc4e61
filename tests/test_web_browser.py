"""The page in a real browser: Playwright driving Debian's Chromium against a live server.

Screenshots go to test-artifacts/. Skipped when /usr/bin/chromium is absent (`make browser-deps`
installs it).
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

CHROMIUM = Path("/usr/bin/chromium")
if not CHROMIUM.exists():
    pytest.skip(
        "needs Debian's Chromium at /usr/bin/chromium (run `make browser-deps`)",
        allow_module_level=True,
    )

import uvicorn  # noqa: E402 - only once the browser is known to be there
from playwright.sync_api import Browser, Page, expect, sync_playwright  # noqa: E402

from shopcopilot.web.app import WebSettings, create_app  # noqa: E402

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"
TIMEOUT_MS = 30_000

SCRIPT_TITLE = "Evil <script>window.__pwned = 'title'</script> Straw Sun Hat"
IMG_FEATURE = "<img src=x onerror=\"window.__pwned = 'feature'\"> wide brim"
HOSTILE_PRODUCT = {
    "parent_asin": "HOSTILE1",
    "title": SCRIPT_TITLE,
    "features": [IMG_FEATURE, "<b>bold</b> straw weave"],
    "description": ["<img src=x onerror=\"window.__pwned = 'description'\">Packable sun hat"],
    "price": 19.5,
    "categories": ["Clothing, Shoes & Jewelry", "Women <i>Hats</i>", "Sun Hats"],
    "details": {
        "<svg onload=\"window.__pwned = 'details'\">": "<script>window.__pwned = 'value'</script>"
    },
    "average_rating": 4.0,
    "rating_number": 3,
    "store": "<a href=\"javascript:window.__pwned = 'store'\">Shady Store</a>",
}
GARMENTS = [
    ("T-Shirt", "Women", "Tops & Tees", "cotton"),
    ("Hiking Boot", "Men", "Boots", "leather"),
    ("Winter Beanie", "Women", "Hats & Caps", "wool"),
    ("Rain Jacket", "Men", "Coats & Jackets", "nylon"),
]
COLORS = ["red", "black", "navy", "white", "green"]


def product_record(number: int) -> dict:
    kind, department, leaf, material = GARMENTS[number % len(GARMENTS)]
    color = COLORS[number // len(GARMENTS) % len(COLORS)]
    return {
        "parent_asin": f"B{number:03d}",
        "title": f"{color.title()} {department}'s {material.title()} {kind}",
        "features": [f"{material.title()} shell", f"Color: {color}", "Easy care"],
        "description": [f"A {color} {kind.lower()}."],
        "price": 15.0 + 2 * number,
        "categories": ["Clothing, Shoes & Jewelry", department, "Clothing", leaf],
        "details": {"Department": department},
        "average_rating": 4.4,
        "rating_number": 11 * number + 2,
        "store": f"Label {number % 4}",
    }


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = tmp_path_factory.mktemp("web-browser")
    catalog = root / "catalog.jsonl"
    records = [product_record(n) for n in range(20)] + [HOSTILE_PRODUCT]
    catalog.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SHOPCOPILOT_CACHE", str(root / "cache"))
        app = create_app(
            WebSettings(
                catalog_path=catalog,
                session_store=root / "sessions.sqlite3",
                demo_generated=3,
                rate_limit="off",
            )
        )
        port = free_port()
        server = uvicorn.Server(
            uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
        )
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        deadline = time.monotonic() + 60
        while not server.started:
            if time.monotonic() > deadline or not thread.is_alive():
                raise RuntimeError("the web server did not start")
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/"
        server.should_exit = True
        thread.join(10)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture()
def page(browser: Browser, server_url: str) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(server_url)
    page.wait_for_selector("body[data-ready=true]")
    yield page
    context.close()
    assert not errors, f"the page raised: {errors}"


def send(page: Page, message: str, turn: int) -> None:
    page.fill("#message", message)
    page.press("#message", "Enter")
    page.wait_for_selector(f".msg.agent[data-turn='{turn}']")


def screenshot(page: Page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / name), full_page=True)


def test_a_message_brings_cards_state_and_pipeline(page: Page) -> None:
    send(page, "a red cotton t-shirt for women", 1)
    cards = page.locator("#recs .card")
    expect(cards.first).to_be_visible()
    first = cards.first.inner_text()
    assert "T-Shirt" in first and "$" in first and "★" in first and "›" in first
    expect(page.locator("#state-constraints")).to_contain_text("red")
    stages = page.locator("#pipeline .stage")
    expect(stages).to_have_count(5)
    assert page.locator("#pipeline .stage-name").all_inner_texts() == [
        "state",
        "retrieve",
        "rank",
        "dialogue",
        "respond",
    ]
    assert "turn 1" in page.inner_text("#pipeline-title")
    # Each reading of the message beside the words it came from.
    readings = page.locator("#pipeline .stage[data-stage=state] .reading")
    expect(readings.filter(has_text="color=red")).to_contain_text("red")
    expect(readings.filter(has_text="material=cotton")).to_contain_text("cotton")

    send(page, "actually in navy", 2)
    expect(page.locator("#state-constraints s")).to_contain_text(
        "red"
    )  # the replaced colour is struck through
    expect(page.locator("#pipeline-title")).to_contain_text("turn 2")
    screenshot(page, "web-chat.png")


def test_a_reload_continues_the_stored_session(page: Page) -> None:
    send(page, "wool beanie", 1)
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    expect(page.locator(".msg.user p")).to_have_text(["wool beanie"])
    expect(page.locator("#recs .card").first).to_be_visible()
    send(page, "in black", 2)
    expect(page.locator(".msg.user")).to_have_count(2)


def test_hostile_catalog_text_renders_inert(page: Page) -> None:
    send(page, "straw sun hat", 1)
    card = page.locator("#recs .card[data-asin='HOSTILE1']")
    expect(card).to_be_visible()
    assert SCRIPT_TITLE in card.inner_text()
    assert IMG_FEATURE in card.inner_text()
    assert page.locator("#recs img, #recs script, #recs a, #recs svg").count() == 0
    card.locator(".title").click()
    dialog = page.locator("#product-dialog")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("Shady Store")
    assert (
        page.locator("#product-dialog img, #product-dialog script, #product-dialog svg").count()
        == 0
    )
    page.wait_for_timeout(300)  # give any injected handler a chance to fire
    assert page.evaluate("window.__pwned") is None
    screenshot(page, "web-hostile-text.png")


def test_a_demo_session_plays_to_its_end(page: Page) -> None:
    options = page.locator("#demo-session option")
    expect(options).not_to_have_count(0)
    assert options.first.get_attribute("value")
    page.click("#demo-start")
    expect(page.locator("#demo-info")).to_contain_text("Target")
    expect(page.locator("#demo-step")).to_be_enabled()
    page.click("#demo-step")
    expect(page.locator(".msg.user")).to_have_count(1)
    expect(page.locator(".msg.user .who").first).to_have_text("Simulated customer")
    page.click("#demo-play")
    badge = page.locator("#demo-badge.hit, #demo-badge.miss")
    expect(badge).to_be_visible(timeout=60_000)
    turns = page.locator(".msg.agent").count()
    assert 1 <= turns <= 10
    expect(page.locator(".msg.user")).to_have_count(turns)
    text = badge.inner_text()
    if "found" in text and "not found" not in text:
        assert f"turn {turns}," in text
        expect(page.locator("#recs .card.target")).to_have_count(1)
    else:
        assert turns == 10
    expect(page.locator("#demo-step")).to_be_disabled()
    screenshot(page, "web-demo.png")
