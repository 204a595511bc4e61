"""The server's limits and the lighter API turn, in-process over the real Agent: the per-client
rate limit (429 with Retry-After), the message length (422), the body size (413), an
unreachable store (503), and `?trace` (the same answer, with or without the stages' details)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from shopcopilot.agent import FOR_PEOPLE, Agent
from shopcopilot.bench.local_redis import LocalRedis
from shopcopilot.web.app import WebSettings, create_app

STAGES = ["state", "retrieve", "rank", "dialogue", "respond"]


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("web-limits")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SHOPCOPILOT_CACHE", str(root / "cache"))
        yield root


def app_client(hand_catalog: Path, root: Path, name: str, **settings) -> TestClient:
    values = {
        "catalog_path": hand_catalog,
        "session_store": root / f"{name}.sqlite3",
        "demo_generated": 0,
        "rate_limit": "off",
        **settings,
    }
    return TestClient(create_app(WebSettings(**values)))


def start(client: TestClient) -> str:
    response = client.post("/api/sessions", json={})
    assert response.status_code == 201, response.text
    return response.json()["session_id"]


def test_a_client_over_its_rate_limit_gets_429_with_retry_after(
    hand_catalog: Path, cache: Path
) -> None:
    with app_client(hand_catalog, cache, "rate", rate_limit="4/minute") as client:
        session_id = start(client)
        for _ in range(3):
            assert client.get(f"/api/sessions/{session_id}").status_code == 200
        refused = client.post(f"/api/sessions/{session_id}/messages", json={"message": "shoes"})
        assert refused.status_code == 429
        assert "the limit is 4/minute" in refused.json()["detail"]
        assert 1 <= int(refused.headers["retry-after"]) <= 60
        assert client.get("/api/health").status_code == 200  # health checks are not counted
        assert client.get(f"/api/sessions/{session_id}").status_code == 429


def test_clients_are_counted_apart(hand_catalog: Path, cache: Path) -> None:
    with app_client(hand_catalog, cache, "apart", rate_limit="2/minute") as client:
        start(client)
        start(client)
        assert client.post("/api/sessions", json={}).status_code == 429
        other = TestClient(client.app, client=("203.0.113.9", 4000))
        assert other.post("/api/sessions", json={}).status_code == 201


def test_a_bad_rate_limit_is_refused_by_name() -> None:
    from shopcopilot.web.guards import RateLimit

    with pytest.raises(ValueError, match="not of the form COUNT/PERIOD"):
        RateLimit.parse("lots")
    assert RateLimit.parse("off").item is None


def test_the_message_limit_is_configurable(hand_catalog: Path, cache: Path) -> None:
    with app_client(hand_catalog, cache, "chars", max_message_chars=40) as client:
        session_id = start(client)
        for suffix in ("messages", "messages/stream"):
            long = client.post(f"/api/sessions/{session_id}/{suffix}", json={"message": "x" * 41})
            assert long.status_code == 422
            assert "at most 40 characters" in long.text
        assert (
            client.post(
                f"/api/sessions/{session_id}/messages", json={"message": "red shirt " * 4}
            ).status_code
            == 200
        )
    with pytest.raises(ValueError, match="max_message_chars must be 1 to 20000"):
        WebSettings(max_message_chars=0)


def test_a_body_over_the_limit_is_413(hand_catalog: Path, cache: Path) -> None:
    with app_client(
        hand_catalog, cache, "body", max_body_bytes=2048, max_message_chars=20000
    ) as client:
        session_id = start(client)
        path = f"/api/sessions/{session_id}/messages"
        declared = client.post(path, json={"message": "y" * 3000})
        assert declared.status_code == 413
        assert "the limit is 2048 bytes" in declared.json()["detail"]

        def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it arrives
            yield b'{"message": "'
            for _ in range(10):
                yield b"z" * 500
            yield b'"}'

        chunked = client.post(path, content=chunks(), headers={"content-type": "application/json"})
        assert chunked.status_code == 413
        assert client.get(f"/api/sessions/{session_id}").json()["turns"] == 0


def test_an_unreachable_redis_store_is_503_with_retry_after(
    hand_catalog: Path, cache: Path, tmp_path: Path, redis_server: LocalRedis
) -> None:
    with LocalRedis(tmp_path / "redis") as private:
        client = app_client(hand_catalog, cache, "unused", session_store=private.url)
        with client:
            session_id = start(client)
            private.kill()
            response = client.get(f"/api/sessions/{session_id}")
            assert response.status_code == 503
            assert "unreachable" in response.json()["detail"]
            assert response.headers["retry-after"] == "1"


def test_a_turn_without_trace_answers_the_same_as_with_it(hand_catalog: Path, cache: Path) -> None:
    messages = ["a red cotton t-shirt", "under 40 dollars", "not black", "the second one"]
    with app_client(hand_catalog, cache, "trace") as client:
        light, full = start(client), start(client)
        for message in messages:
            plain = client.post(f"/api/sessions/{light}/messages", json={"message": message})
            traced = client.post(
                f"/api/sessions/{full}/messages?trace=true", json={"message": message}
            )
            assert plain.status_code == traced.status_code == 200
            a, b = plain.json(), traced.json()
            for key in ("message", "ask_attribute", "options", "recommendations", "state", "diff"):
                assert a[key] == b[key], key
            assert [e["stage"] for e in a["trace"]] == [e["stage"] for e in b["trace"]] == STAGES
            assert len(json.dumps(a["trace"])) < len(json.dumps(b["trace"]))
            retrieve = next(e for e in a["trace"] if e["stage"] == "retrieve")
            assert retrieve["output"] == {} and retrieve["summary"]


def test_the_agent_answers_the_same_with_or_without_details(
    hand_catalog: Path, cache: Path
) -> None:
    agent = Agent(hand_catalog, settings=FOR_PEOPLE, warm_up=False)
    agent.reset("a", {})
    agent.reset("b", {})
    for message in ["warm wool hat", "in black please", "cheaper", "not that brand"]:
        full = agent.respond_traced("a", message, detailed=True)
        light = agent.respond_traced("b", message, detailed=False)
        assert (light.response, light.state, light.diff) == (full.response, full.state, full.diff)
