"""The web API in-process (FastAPI TestClient) over the real Agent on a small hand-written
catalog."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient

from shopcopilot.agent import Agent
from shopcopilot.bench.official import score_recommendations
from shopcopilot.bench.runner import RunSettings, load_bench_data, run_session
from shopcopilot.cli import main
from shopcopilot.web.app import WebSettings, create_app

STAGES = ["state", "retrieve", "rank", "dialogue", "respond"]
ITEMS = [  # (kind, department, leaf, material)
    ("T-Shirt", "Women", "Tops & Tees", "cotton"),
    ("Hiking Boot", "Men", "Boots", "leather"),
    ("Winter Beanie", "Women", "Hats & Caps", "wool"),
    ("Running Shorts", "Men", "Shorts", "polyester"),
    ("Rain Jacket", "Women", "Coats & Jackets", "nylon"),
    ("Silk Scarf", "Women", "Scarves", "silk"),
]
COLORS = ["black", "red", "navy", "white"]


def product_record(number: int) -> dict:
    kind, department, leaf, material = ITEMS[number % len(ITEMS)]
    color = COLORS[number // len(ITEMS) % len(COLORS)]
    return {
        "parent_asin": f"W{number:03d}",
        "title": f"{color.title()} {department}'s {material.title()} {kind}",
        "features": [f"{material.title()} blend", f"Color: {color}", "Machine washable"],
        "description": [f"<p>A {color} {kind.lower()} for everyday wear.</p>"],
        "price": 12.0 + 3 * number,
        "categories": ["Clothing, Shoes & Jewelry", department, "Clothing", leaf],
        "details": {"Department": department, "Material": material},
        "average_rating": 4.2,
        "rating_number": 7 * number + 1,
        "store": f"Maker {number % 3}",
    }


CATALOG_SIZE = 24


def write_catalog(path: Path) -> Path:
    path.write_text(
        "".join(json.dumps(product_record(n)) + "\n" for n in range(CATALOG_SIZE)), encoding="utf-8"
    )
    return path


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("web-api")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SHOPCOPILOT_CACHE", str(root / "cache"))
        write_catalog(root / "catalog.jsonl")
        yield root


def settings_for(workdir: Path, store_name: str = "sessions.sqlite3", **overrides) -> WebSettings:
    values = {
        "catalog_path": workdir / "catalog.jsonl",
        "session_store": workdir / store_name,
        "demo_generated": 4,
        "rate_limit": "off",  # one test client sends hundreds of requests
        **overrides,
    }
    return WebSettings(**values)


@pytest.fixture(scope="module")
def client(workdir: Path) -> Iterator[TestClient]:
    with TestClient(create_app(settings_for(workdir))) as test_client:
        yield test_client


def new_session(client: TestClient, profile: dict | None = None) -> str:
    response = client.post("/api/sessions", json={"profile": profile or {}})
    assert response.status_code == 201, response.text
    return response.json()["session_id"]


def say(client: TestClient, session_id: str, message: str) -> dict:
    response = client.post(f"/api/sessions/{session_id}/messages", json={"message": message})
    assert response.status_code == 200, response.text
    return response.json()


def read_events(body: str) -> list[tuple[str, dict]]:
    events = []
    for block in body.replace("\r\n", "\n").split("\n\n"):
        lines = [line for line in block.split("\n") if line and not line.startswith(":")]
        kind = next(
            (line[len("event: ") :] for line in lines if line.startswith("event: ")), "message"
        )
        data = "\n".join(line[len("data: ") :] for line in lines if line.startswith("data: "))
        if data:
            events.append((kind, json.loads(data)))
    return events


# ---- the happy path
# ----------------------------------------------------------------------------------


def test_health_names_the_served_catalog(client: TestClient, workdir: Path) -> None:
    body = client.get("/api/health").json()
    assert body["status"] == "ok"
    assert body["catalog"] == str(workdir / "catalog.jsonl")


def test_index_page_and_static_files_are_served(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200 and "Shopping Copilot" in page.text
    assert client.get("/static/app.js").status_code == 200
    assert "/api/sessions" in client.get("/openapi.json").json()["paths"]


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
def test_the_api_pages_load_their_assets_from_this_server(client: TestClient, page: str) -> None:
    html = client.get(page)
    assert html.status_code == 200
    urls = re.findall(r"""(?:src|href)=["']([^"']+)""", html.text)
    assert urls and all(url.startswith("/") and not url.startswith("//") for url in urls), urls
    assert "http" not in html.text  # no CDN, no web font: the pages work offline
    for url in urls:
        asset = client.get(url)
        assert asset.status_code == 200 and len(asset.content) > 1000, url
    assert "/openapi.json" in html.text


def test_a_turn_returns_reply_cards_state_and_the_pipeline_in_order(client: TestClient) -> None:
    session_id = new_session(client, {"summary": "likes comfort"})
    turn = say(client, session_id, "a red cotton t-shirt for women")
    assert turn["turn"] == 1 and turn["user_message"] == "a red cotton t-shirt for women"
    assert isinstance(turn["message"], str) and turn["message"]
    assert [event["stage"] for event in turn["trace"]] == STAGES
    assert all(event["ms"] >= 0 for event in turn["trace"])
    cards = turn["recommendations"]
    assert cards, "a catalog with red cotton t-shirts should yield recommendations"
    for card in cards:
        assert card["product"]["parent_asin"] == card["parent_asin"]
        assert card["product"]["title"]
    assert "T-Shirt" in cards[0]["product"]["title"]
    assert turn["state"]["turn"] == 1
    assert client.get(f"/api/sessions/{session_id}/state").json() == turn["state"]


def test_recorded_turns_can_be_read_back(client: TestClient) -> None:
    session_id = new_session(client)
    first = say(client, session_id, "wool beanie")
    second = say(client, session_id, "in navy please")
    assert client.get(f"/api/sessions/{session_id}/turns/1").json() == first
    assert client.get(f"/api/sessions/{session_id}/turns/2").json() == second
    summary = client.get(f"/api/sessions/{session_id}").json()
    assert summary["turns"] == 2 and summary["demo"] is None
    assert [entry["user"] for entry in summary["state"]["history"]] == [
        "wool beanie",
        "in navy please",
    ]


@pytest.mark.parametrize("query", ["", "?trace=true"])
def test_a_turn_is_answered_byte_for_byte_as_fastapi_reads_it_back(
    client: TestClient, query: str
) -> None:
    """The turn routes serialize their answer themselves (web/app.py: turn_response); reading the
    turn back goes through FastAPI's own response_model path: the two bodies are the same."""
    session_id = new_session(client)
    for number, message in enumerate(["a black hiking boot", "under 60 dollars", "the second"], 1):
        answer = client.post(
            f"/api/sessions/{session_id}/messages{query}", json={"message": message}
        )
        assert answer.status_code == 200 and answer.headers["content-type"] == "application/json"
        again = client.get(f"/api/sessions/{session_id}/turns/{number}")
        assert answer.content == again.content
        assert "response" not in answer.json()  # the record's own copy of the reply stays inside


def test_the_stream_sends_each_stage_then_the_turn(client: TestClient) -> None:
    session_id = new_session(client)
    response = client.post(
        f"/api/sessions/{session_id}/messages/stream", json={"message": "leather hiking boots"}
    )
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/event-stream")
    events = read_events(response.text)
    assert [kind for kind, _ in events] == ["stage"] * len(STAGES) + ["turn"]
    assert [data["stage"] for _, data in events[:-1]] == STAGES
    turn = events[-1][1]
    assert turn["trace"] == [data for _, data in events[:-1]]
    assert client.get(f"/api/sessions/{session_id}/turns/1").json() == turn


def test_a_known_product_comes_with_its_attributes(client: TestClient) -> None:
    body = client.get("/api/products/W001").json()
    assert body["parent_asin"] == "W001" and body["title"] == product_record(1)["title"]
    assert body["attributes"], "derived attributes should be present"


# ---- bad input: a 4xx with a reason, never a 500
# ------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", "/api/sessions/{sid}"),
        ("get", "/api/sessions/{sid}/state"),
        ("get", "/api/sessions/{sid}/turns/1"),
        ("post", "/api/sessions/{sid}/messages"),
        ("post", "/api/sessions/{sid}/messages/stream"),
        ("post", "/api/demo/runs/{sid}/step"),
        ("post", "/api/demo/runs/{sid}/step/stream"),
    ],
)
def test_an_unknown_session_is_404_with_its_id(client: TestClient, method: str, path: str) -> None:
    kwargs = {"json": {"message": "hello"}} if path.endswith(("messages", "stream")) else {}
    response = getattr(client, method)(path.format(sid="no-such-session"), **kwargs)
    assert response.status_code == 404
    assert "no-such-session" in response.json()["detail"]


def test_a_turn_that_does_not_exist_is_404(client: TestClient) -> None:
    session_id = new_session(client)
    response = client.get(f"/api/sessions/{session_id}/turns/1")
    assert response.status_code == 404 and "no turn 1" in response.json()["detail"]


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ({"message": ""}, "at least 1 character"),
        ({"message": "   \n "}, "pattern"),
        ({"message": "x" * 2001}, "at most 2000 characters"),
        ({"message": 42}, "valid string"),
        ({"message": ["a list"]}, "valid string"),
        ({}, "Field required"),
        ({"message": "ok", "top_k": 0}, "greater than or equal to 1"),
        ({"message": "ok", "top_k": "many"}, "valid integer"),
        ({"message": "ok", "surprise": True}, "Extra inputs"),
        (["message", "ok"], "valid dictionary"),
    ],
)
def test_bad_messages_are_422_with_a_reason(client: TestClient, body: object, reason: str) -> None:
    session_id = new_session(client)
    for suffix in ("messages", "messages/stream"):
        response = client.post(f"/api/sessions/{session_id}/{suffix}", json=body)
        assert response.status_code == 422, response.text
        assert reason in response.text
    assert client.get(f"/api/sessions/{session_id}").json()["turns"] == 0


def test_a_message_of_exactly_2000_characters_is_accepted(client: TestClient) -> None:
    session_id = new_session(client)
    message = ("red cotton shirt " * 200)[:2000]
    assert len(message) == 2000
    assert say(client, session_id, message)["turn"] == 1


def test_bad_json_is_422(client: TestClient) -> None:
    session_id = new_session(client)
    response = client.post(
        f"/api/sessions/{session_id}/messages",
        content=b'{"message": "unclosed',
        headers={"Content-Type": "application/json"},
    )
    assert response.status_code == 422 and "JSON" in response.text
    bad_profile = client.post("/api/sessions", json={"profile": "not an object"})
    assert bad_profile.status_code == 422 and "valid dictionary" in bad_profile.text


def test_an_unknown_product_is_404(client: TestClient) -> None:
    response = client.get("/api/products/NOPE123")
    assert response.status_code == 404 and "NOPE123" in response.json()["detail"]


# ---- the store: restarts, workers, expiry, the cap
# ---------------------------------------------------------


def test_a_restart_loses_no_completed_turn(workdir: Path) -> None:
    settings = settings_for(workdir, "restart.sqlite3")
    with TestClient(create_app(settings)) as before:
        session_id = new_session(before, {"summary": "restart"})
        say(before, session_id, "a red cotton t-shirt")
        last = say(before, session_id, "under 40 dollars")
    with TestClient(create_app(settings)) as after:
        summary = after.get(f"/api/sessions/{session_id}").json()
        assert summary["turns"] == 2 and summary["profile"] == {"summary": "restart"}
        assert summary["state"] == last["state"]
        third = say(after, session_id, "in navy")
        assert third["turn"] == 3
        assert [entry["user"] for entry in third["state"]["history"]] == [
            "a red cotton t-shirt",
            "under 40 dollars",
            "in navy",
        ]


def test_two_workers_on_one_store_take_turns_on_one_session(workdir: Path) -> None:
    settings = settings_for(workdir, "workers.sqlite3")
    with TestClient(create_app(settings)) as first, TestClient(create_app(settings)) as second:
        session_id = new_session(first)
        messages = ["wool beanie", "in black", "for women", "under 50 dollars"]
        for number, (worker, message) in enumerate(
            zip([first, second, first, second], messages, strict=True), start=1
        ):
            turn = say(worker, session_id, message)
            assert turn["turn"] == number
            assert [entry["user"] for entry in turn["state"]["history"]] == messages[:number]


def test_an_idle_session_expires(workdir: Path) -> None:
    settings = settings_for(workdir, "expiry.sqlite3", idle_ttl_seconds=0.5)
    with TestClient(create_app(settings)) as client:
        session_id = new_session(client)
        time.sleep(0.7)
        expired = client.post(f"/api/sessions/{session_id}/messages", json={"message": "hello"})
        assert expired.status_code == 410 and "expired" in expired.json()["detail"]
        assert client.get(f"/api/sessions/{session_id}").status_code == 404


def test_the_session_idle_longest_is_evicted_at_the_cap(workdir: Path) -> None:
    settings = settings_for(workdir, "cap.sqlite3", max_sessions=2)
    with TestClient(create_app(settings)) as client:
        oldest, middle = new_session(client), new_session(client)
        assert (
            client.get(f"/api/sessions/{oldest}").status_code == 200
        )  # now middle is idle longest
        newest = new_session(client)
        assert client.get(f"/api/sessions/{middle}").status_code == 404
        assert client.get(f"/api/sessions/{oldest}").status_code == 200
        assert client.get(f"/api/sessions/{newest}").status_code == 200


# ---- demo mode
# ------------------------------------------------------------------------------------------


def demo_sessions(client: TestClient) -> list[dict]:
    listing = client.get("/api/demo/sessions").json()
    generated = [s for s in listing["sessions"] if s["source"] == "generated"]
    assert len(generated) == 4
    return generated


def play(client: TestClient, sample_id: str) -> tuple[dict, list[dict]]:
    start = client.post("/api/demo/runs", json={"sample_id": sample_id, "protocol": "official"})
    assert start.status_code == 201, start.text
    run = start.json()
    turns = []
    while not run["demo"]["done"]:
        response = client.post(f"/api/demo/runs/{run['session_id']}/step")
        assert response.status_code == 200, response.text
        turns.append(response.json())
        number = len(turns)  # read back through FastAPI's response_model: the same body
        assert client.get(f"/api/sessions/{run['session_id']}/turns/{number}").content == (
            response.content
        )
        run = {**run, "demo": turns[-1]["demo"]}
        assert len(turns) <= 10
    return run, turns


def test_a_demo_run_reproduces_the_benchmark_session(client: TestClient, workdir: Path) -> None:
    """Stepping in the web gives the same messages and outcome as the benchmark runner's loop."""
    sample = demo_sessions(client)[0]
    run, turns = play(client, sample["sample_id"])
    demo = run["demo"]
    assert demo["turns"] == len(turns)
    assert [turn["turn"] for turn in turns] == list(range(1, len(turns) + 1))

    from shopcopilot.bench.sessions import generate_sessions

    sessions = generate_sessions(workdir / "catalog.jsonl", "iid", 4, 0)
    session = next(s for s in sessions if s.sample_id == sample["sample_id"])
    assert session.target_asin == demo["target_asin"]
    data = load_bench_data(workdir / "catalog.jsonl", [session])
    reference = run_session(
        Agent(workdir / "catalog.jsonl"), session, data, RunSettings(turn_timeout=None)
    )
    assert [turn["user_message"] for turn in turns] == [t.customer_message for t in reference.turns]
    expected_hit = (
        {"turn": reference.first_hit_turn, "rank": reference.best_rank}
        if reference.first_hit_turn
        else None
    )
    assert demo["hit"] == expected_hit
    if demo["hit"]:
        ranked = score_recommendations(turns[-1]["recommendations"], data.catalog_ids)
        assert ranked[demo["hit"]["rank"] - 1] == demo["target_asin"]


def test_a_finished_demo_run_refuses_another_step(client: TestClient) -> None:
    run, _ = play(client, demo_sessions(client)[1]["sample_id"])
    for suffix in ("step", "step/stream"):
        response = client.post(f"/api/demo/runs/{run['session_id']}/{suffix}")
        assert response.status_code == 409 and "finished" in response.json()["detail"]


def test_a_demo_run_continues_after_a_restart(workdir: Path, client: TestClient) -> None:
    sample_id = demo_sessions(client)[2]["sample_id"]
    reference_run, reference_turns = play(client, sample_id)
    settings = settings_for(workdir, "demo-restart.sqlite3")
    with TestClient(create_app(settings)) as server:
        session_id = server.post("/api/demo/runs", json={"sample_id": sample_id}).json()[
            "session_id"
        ]
    messages = []
    for (
        _
    ) in reference_turns:  # a fresh server for every step: the customer is rebuilt from the store
        with TestClient(create_app(settings)) as server:
            messages.append(server.post(f"/api/demo/runs/{session_id}/step").json()["user_message"])
    assert messages == [turn["user_message"] for turn in reference_turns]


def test_demo_bad_input(client: TestClient) -> None:
    unknown = client.post("/api/demo/runs", json={"sample_id": "nope"})
    assert unknown.status_code == 404 and "nope" in unknown.json()["detail"]
    bad_protocol = client.post("/api/demo/runs", json={"sample_id": "x", "protocol": "psychic"})
    assert bad_protocol.status_code == 422
    chat = new_session(client)
    not_demo = client.post(f"/api/demo/runs/{chat}/step")
    assert not_demo.status_code == 409 and "not a demo run" in not_demo.json()["detail"]


def test_a_demo_step_streams_stages_then_the_turn_with_the_run(client: TestClient) -> None:
    sample_id = demo_sessions(client)[3]["sample_id"]
    run = client.post("/api/demo/runs", json={"sample_id": sample_id}).json()
    first_message = run["demo"]["next_message"]
    assert first_message
    events = read_events(client.post(f"/api/demo/runs/{run['session_id']}/step/stream").text)
    assert [data["stage"] for kind, data in events if kind == "stage"] == STAGES
    kind, turn = events[-1]
    assert kind == "turn" and turn["user_message"] == first_message
    assert turn["demo"]["turns"] == 1


# ---- the command and its settings
# ------------------------------------------------------------------


def test_settings_survive_the_trip_through_the_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    settings = WebSettings(
        catalog_path=tmp_path / "c.jsonl",
        session_store="redis://127.0.0.1:6390/2",
        idle_ttl_seconds=90.0,
        max_sessions=7,
        demo_sessions_path=tmp_path / "d.jsonl",
        demo_generated=5,
        demo_seed=3,
        rate_limit="20/second",
        max_message_chars=500,
        max_body_bytes=4096,
    )
    for key, value in settings.to_env().items():
        monkeypatch.setenv(key, value)
    assert WebSettings.from_env() == settings


def test_serve_reports_a_bad_demo_session_file_by_line(workdir: Path, tmp_path: Path) -> None:
    sessions = tmp_path / "sessions.jsonl"
    good = {
        "sample_id": "a",
        "scenario_type": "buying",
        "user_profile": {},
        "ground_truth": {"parent_asin": "W001"},
    }
    sessions.write_text(
        json.dumps(good) + "\n" + json.dumps({"sample_id": "b"}) + "\n", encoding="utf-8"
    )
    result = CliRunner().invoke(
        main,
        [
            "serve",
            "--no-browser",
            "--catalog",
            str(workdir / "catalog.jsonl"),
            "--demo-sessions",
            str(sessions),
        ],
    )
    assert result.exit_code == 1
    assert f"{sessions}:2:" in result.output and "scenario_type" in result.output


def test_serve_refuses_an_empty_catalog(workdir: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    result = CliRunner().invoke(main, ["serve", "--no-browser", "--catalog", str(empty)])
    assert result.exit_code == 1 and "empty" in result.output


@pytest.mark.parametrize(
    ("arguments", "reason"),
    [
        (["--session-store", "postgres://db/sessions"], "unknown session store scheme 'postgres'"),
        (["--session-store", "redis://127.0.0.1:1/0"], "unreachable"),
        (["--rate-limit", "lots"], "not of the form COUNT/PERIOD"),
        (["--max-message-chars", "0"], "--max-message-chars"),
    ],
)
def test_serve_refuses_a_bad_store_or_limit_by_name(
    workdir: Path, arguments: list[str], reason: str
) -> None:
    result = CliRunner().invoke(main, ["serve", "--no-browser", *arguments])
    assert result.exit_code == 2 and reason in result.output, result.output
