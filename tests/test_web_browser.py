"""The page in a real browser: Playwright driving Debian's Chromium against a live server.

The shopper's view (greeting, replies, requirement chips, cards, compare, answers) and the
developer detail behind the Details toggle. Screenshots go to test-artifacts/. Skipped when
/usr/bin/chromium is absent (`make browser-deps` installs it).
"""

from __future__ import annotations

import json
import re
import socket
import struct
import threading
import time
import zlib
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
from fastapi import Response  # noqa: E402
from playwright.sync_api import Browser, Page, expect, sync_playwright  # noqa: E402

from shopcopilot.agent import Agent  # noqa: E402
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
EXAMPLES = [
    "a red cotton t-shirt for women",
    "men's leather hiking boots under 60 dollars",
    "a wool beanie",
    "a rain jacket for men",
]
# Its image cannot load: the card shows the placeholder instead.
UNREACHABLE_PICTURE = {
    "parent_asin": "PIC1",
    "title": "Canvas Tote Bag with Zipper",
    "features": ["Heavy canvas", "null", "", "Inner pocket"],
    "price": 24.0,
    "categories": ["Clothing, Shoes & Jewelry", "Women", "Handbags", "Totes"],
    "details": {"Material": "Canvas", "Color": "Natural"},
    "average_rating": 4.6,
    "rating_number": 40,
    "store": "Bagworks",
    "images": [{"thumb": "http://127.0.0.1:9/t.jpg", "large": "http://127.0.0.1:9/l.jpg"}],
}
PICTURE_PATH = "/test-pictures/belt.png"


def pictured_product(port: int) -> dict:
    """A product whose image the test server serves (the Amazon layout's list of sizes)."""
    url = f"http://127.0.0.1:{port}{PICTURE_PATH}"
    return {
        "parent_asin": "PIC2",
        "title": "Braided Leather Belt",
        "features": ["Full grain leather", "Brass buckle"],
        "price": 32.0,
        "categories": ["Clothing, Shoes & Jewelry", "Men", "Accessories", "Belts"],
        "details": {"Material": "Leather", "Color": "Brown"},
        "average_rating": 4.3,
        "rating_number": 18,
        "store": "Beltsmith",
        "images": [{"thumb": url + "?thumb", "large": url, "variant": "MAIN", "hi_res": None}],
    }


def tiny_png(width: int = 8, height: int = 6) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(b"\x00" + b"\xc8\x6e\x32" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


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
    port = free_port()
    records = [product_record(n) for n in range(20)]
    records += [HOSTILE_PRODUCT, UNREACHABLE_PICTURE, pictured_product(port)]
    catalog.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SHOPCOPILOT_CACHE", str(root / "cache"))
        patch.setattr(Agent, "examples", lambda self, n=4: EXAMPLES[:n])
        app = create_app(
            WebSettings(
                catalog_path=catalog,
                session_store=root / "sessions.sqlite3",
                demo_generated=3,
                rate_limit="off",
            )
        )
        picture = tiny_png()
        app.add_api_route(PICTURE_PATH, lambda: Response(picture, media_type="image/png"))
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


def open_page(browser: Browser, server_url: str, width: int, height: int) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(server_url)
    page.wait_for_selector("body[data-ready=true]")
    yield page
    context.close()
    assert not errors, f"the page raised: {errors}"


@pytest.fixture()
def page(browser: Browser, server_url: str) -> Iterator[Page]:
    yield from open_page(browser, server_url, 1440, 900)


@pytest.fixture()
def phone(browser: Browser, server_url: str) -> Iterator[Page]:
    yield from open_page(browser, server_url, 390, 844)


def send(page: Page, message: str, turn: int) -> None:
    page.fill("#message", message)
    page.press("#message", "Enter")
    page.wait_for_selector(f".msg.agent[data-turn='{turn}']")


def show_details(page: Page) -> None:
    page.click("#details-toggle")
    expect(page.locator("#details-toggle")).to_have_attribute("aria-pressed", "true")


def chip(page: Page, label: str):
    return page.locator("#requirements .requirement", has_text=label)


def screenshot(page: Page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / name), full_page=True)


def test_a_message_brings_cards_state_and_pipeline(page: Page) -> None:
    show_details(page)
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
    assert card.locator("img, script, a, svg").count() == 0
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
    show_details(page)
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
    turns = page.locator(".msg.agent[data-turn]").count()
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


# ---- the shopper's page
# -------------------------------------------------------------------------------------------


def test_the_page_greets_with_examples_that_send_when_clicked(page: Page) -> None:
    greeting = page.locator("#greeting")
    expect(greeting).to_be_visible()
    assert "shopping for" in greeting.inner_text()
    examples = greeting.locator("button.example")
    expect(examples).to_have_text(EXAMPLES)
    examples.nth(1).click()
    page.wait_for_selector(".msg.agent[data-turn='1']")
    expect(page.locator(".msg.user p")).to_have_text([EXAMPLES[1]])
    expect(page.locator("#recs .card").first).to_be_visible()
    screenshot(page, "web-greeting.png")


def test_a_four_turn_conversation_shows_plain_replies_chips_and_cards(page: Page) -> None:
    messages = ["a cotton t-shirt for women", "under 40 dollars", "not green", "in red please"]
    for number, message in enumerate(messages, 1):
        send(page, message, number)
        reply = page.locator(f".msg.agent[data-turn='{number}'] .reply")
        assert reply.inner_text().strip() and "null" not in reply.inner_text()
        if number == 1:  # a first list is all new: no badge says so
            expect(page.locator("#recs .tag.new")).to_have_count(0)
    expect(page.locator(".msg.user p")).to_have_text(messages)
    expect(page.locator("#requirements .requirement").first).to_be_visible()
    expect(chip(page, "not green")).to_be_visible()
    cards = page.locator("#recs .card")
    expect(cards.first).to_be_visible()
    first = cards.first.inner_text()
    assert "$" in first and "★" in first
    # Only the shopper's view: no scores, ids, epochs or question names.
    for hidden in [
        "#pipeline-panel",
        "#state-panel",
        "#demo-controls",
        "#recs .score",
        "#recs .asin",
    ]:
        expect(page.locator(hidden).first).to_be_hidden()
    assert "epoch" not in page.inner_text("main") and "Asks about" not in page.inner_text("main")
    bullets = page.locator("#recs .features li").all_inner_texts()
    assert all(b.strip() and b.strip().lower() != "null" for b in bullets)
    screenshot(page, "web-conversation.png")


def test_a_chip_is_removed_by_keyboard_as_a_turn(page: Page) -> None:
    send(page, "a cotton t-shirt for women", 1)
    send(page, "not green", 2)
    green = chip(page, "not green")
    expect(green).to_be_visible()
    green.focus()
    page.keyboard.press("Enter")
    page.wait_for_selector(".msg.agent[data-turn='3']")
    expect(page.locator(".msg.user p").last).to_have_text("(removed not green)")
    expect(chip(page, "not green")).to_have_count(0)
    expect(page.locator("#recs .card").first).to_be_visible()


def test_an_answer_about_a_product_highlights_its_card(page: Page) -> None:
    send(page, "a cotton t-shirt for women", 1)
    first = page.locator("#recs .card").first
    price = first.locator(".price").inner_text()
    asin = first.get_attribute("data-asin")
    send(page, "how much is the first one?", 2)
    expect(page.locator(".msg.agent[data-turn='2'] .reply")).to_contain_text(price)
    answered = page.locator("#recs .card.answered")
    expect(answered).to_have_count(1)
    assert answered.get_attribute("data-asin") == asin
    expect(answered).to_be_in_viewport()


def test_two_cards_compare_side_by_side(page: Page) -> None:
    send(page, "leather hiking boots", 1)
    cards = page.locator("#recs .card")
    expect(cards.nth(2)).to_be_visible()
    titles = [cards.nth(n).locator(".title").inner_text() for n in range(2)]
    expect(page.locator("#compare-bar")).to_be_hidden()
    cards.nth(0).get_by_label("Compare").check()
    expect(page.locator("#compare")).to_be_hidden()
    cards.nth(1).get_by_label("Compare").check()
    table = page.locator("#compare-table")
    expect(table).to_be_visible()
    expect(table.locator("thead th")).to_have_text(titles)
    rows = table.locator("tbody th").all_inner_texts()
    assert {"Price", "Rating", "Store", "Category", "Material", "Colour", "Key features"} <= set(
        rows
    )
    assert "$" in table.locator("tbody tr").first.inner_text()
    if cards.count() > 3:
        cards.nth(2).get_by_label("Compare").check()
        expect(cards.nth(3).get_by_label("Compare")).to_be_disabled()  # three at most
    screenshot(page, "web-compare.png")
    page.click("#compare-clear")
    expect(page.locator("#compare")).to_be_hidden()
    expect(page.locator("#recs .compare-check:checked")).to_have_count(0)
    expect(page.locator("#compare-bar")).to_be_hidden()


def test_developer_detail_hides_behind_one_remembered_toggle(page: Page) -> None:
    send(page, "wool beanie", 1)
    toggle = page.locator("#details-toggle")
    expect(toggle).to_have_attribute("aria-pressed", "false")
    for detail in ["#pipeline-panel", "#state-panel", "#demo-controls", "#recs .score"]:
        expect(page.locator(detail).first).to_be_hidden()
    toggle.click()
    for detail in ["#pipeline-panel", "#state-panel", "#demo-controls", "#recs .score"]:
        expect(page.locator(detail).first).to_be_visible()
    expect(page.locator("#pipeline .stage")).to_have_count(5)
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    expect(page.locator("#pipeline-panel")).to_be_visible()
    page.click("#details-toggle")
    expect(page.locator("#pipeline-panel")).to_be_hidden()


def test_a_missing_image_shows_a_placeholder_not_a_broken_icon(page: Page) -> None:
    send(page, "canvas tote bag", 1)
    card = page.locator("#recs .card[data-asin='PIC1']")
    expect(card).to_be_visible()
    expect(card.locator(".card-image.placeholder .initial")).to_have_text("T")
    expect(card.locator("img")).to_have_count(0)
    expect(card.locator(".features li")).to_have_text(["Heavy canvas", "Inner pocket"])


def test_a_product_image_loads_lazily_on_its_card(page: Page) -> None:
    send(page, "braided leather belt", 1)
    image = page.locator("#recs .card[data-asin='PIC2'] .card-image img")
    expect(image).to_have_attribute("loading", "lazy")
    expect(image).to_have_attribute("src", re.compile(re.escape(PICTURE_PATH) + "$"))  # "large"
    page.wait_for_function(
        "(img) => img.complete && img.naturalWidth === 8", arg=image.element_handle()
    )


def test_the_page_works_at_390_pixels_by_keyboard(phone: Page) -> None:
    expect(phone.locator("#greeting button.example")).to_have_count(len(EXAMPLES))
    phone.focus("#message")
    phone.keyboard.type("a cotton t-shirt for women")
    phone.keyboard.press("Enter")
    phone.wait_for_selector(".msg.agent[data-turn='1']")
    send(phone, "not green", 2)
    width = phone.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the page is {width} px wide at 390"
    cards = phone.locator("#recs .card")
    first, second = cards.nth(0).bounding_box(), cards.nth(1).bounding_box()
    assert first and second and second["y"] > first["y"] + first["height"] - 1  # one column
    chat, recs = (
        phone.locator("#chat-panel").bounding_box(),
        phone.locator("#recs-panel").bounding_box(),
    )
    assert chat and recs and recs["y"] >= chat["y"] + chat["height"]
    # The compare toggles are real checkboxes reached by Tab and switched by Space.
    box = cards.nth(0).locator(".compare-check")
    box.focus()
    phone.keyboard.press("Space")
    expect(box).to_be_checked()
    chip(phone, "not green").focus()
    phone.keyboard.press("Space")
    phone.wait_for_selector(".msg.agent[data-turn='3']")
    expect(chip(phone, "not green")).to_have_count(0)
    assert phone.evaluate("document.documentElement.scrollWidth") <= 390
    screenshot(phone, "web-390.png")
