"""The shopper's requirements over the web API, in-process over the real Agent on the small
hand-written catalog of test_web_api: each turn lists them, `DELETE .../requirements/{facet}`
drops one as a turn of its own, and `GET /api/examples` offers requests for the greeting."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from test_web_api import new_session, say, settings_for, write_catalog

from shopcopilot.agent import Agent
from shopcopilot.web.app import create_app

EXAMPLES = ["a red cotton t-shirt for women", "wool beanie under 40 dollars"]


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    root = tmp_path_factory.mktemp("web-requirements")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SHOPCOPILOT_CACHE", str(root / "cache"))
        patch.setattr(Agent, "examples", lambda self, n=4: EXAMPLES[:n])
        write_catalog(root / "catalog.jsonl")
        with TestClient(create_app(settings_for(root))) as test_client:
            yield test_client


def drop(client: TestClient, session_id: str, facet: str, value: str | None = None):
    params = {"value": value} if value is not None else {}
    return client.delete(f"/api/sessions/{session_id}/requirements/{facet}", params=params)


def pairs(turn: dict) -> list[tuple[str, str | None]]:
    return [(r["facet"], r["value"]) for r in turn["requirements"]]


def colour_session(client: TestClient) -> tuple[str, dict]:
    session_id = new_session(client)
    say(client, session_id, "a cotton t-shirt for women")
    turn = say(client, session_id, "not red")
    negated = [r for r in turn["requirements"] if r["negated"]]
    assert negated, turn["requirements"]
    return session_id, turn


def test_a_turn_lists_the_requirements_with_labels(client: TestClient) -> None:
    session_id, turn = colour_session(client)
    for requirement in turn["requirements"]:
        assert requirement["facet"] and requirement["label"]
        assert isinstance(requirement["negated"], bool)
    red = next(r for r in turn["requirements"] if r["negated"])
    assert "red" in red["label"]
    assert client.get(f"/api/sessions/{session_id}/turns/2").json() == turn


def test_dropping_a_requirement_answers_like_a_turn_without_it(client: TestClient) -> None:
    session_id, before = colour_session(client)
    red = next(r for r in before["requirements"] if r["negated"])
    response = drop(client, session_id, red["facet"], red["value"])
    assert response.status_code == 200, response.text
    turn = response.json()
    assert turn["turn"] == 3 and turn["message"]
    assert turn["user_message"] == f"(removed {red['label']})"
    assert turn["recommendations"], "dropping a requirement still shows products"
    assert (red["facet"], red["value"]) not in pairs(turn)
    assert client.get(f"/api/sessions/{session_id}/turns/3").json() == turn
    # ... and it stays gone on the next turn.
    after = say(client, session_id, "show me more")
    assert (red["facet"], red["value"]) not in pairs(after)
    kept = [p for p in pairs(before) if p != (red["facet"], red["value"])]
    assert set(kept) <= set(pairs(after)), "the other requirements hold"


def test_dropping_an_unknown_facet_is_422_with_a_reason(client: TestClient) -> None:
    session_id, _ = colour_session(client)
    response = drop(client, session_id, "flavour")
    assert response.status_code == 422
    assert "flavour" in response.text and "color" in response.text
    assert client.get(f"/api/sessions/{session_id}").json()["turns"] == 2  # nothing recorded


def test_dropping_in_an_unknown_session_is_404(client: TestClient) -> None:
    response = drop(client, "no-such-session", "color", "green")
    assert response.status_code == 404 and "no-such-session" in response.json()["detail"]


def test_a_demo_run_refuses_a_drop(client: TestClient) -> None:
    sample = client.get("/api/demo/sessions").json()["sessions"][0]["sample_id"]
    run = client.post("/api/demo/runs", json={"sample_id": sample}).json()
    response = drop(client, run["session_id"], "color")
    assert response.status_code == 409 and "demo run" in response.json()["detail"]


def test_the_examples_come_from_the_agent(client: TestClient) -> None:
    body = client.get("/api/examples", params={"n": 2}).json()
    assert len(body["examples"]) == 2 and all(isinstance(e, str) and e for e in body["examples"])
    assert client.get("/api/examples", params={"n": 0}).status_code == 422
    assert "/api/examples" in client.get("/openapi.json").json()["paths"]


def test_a_card_keeps_only_features_that_say_something(tmp_path: Path) -> None:
    from shopcopilot.catalog.product import product_from_record
    from shopcopilot.web.sessions import product_card

    product = product_from_record(
        {
            "parent_asin": "IMG1",
            "title": "Trail Shoe",
            "features": ["Grippy sole", "null", " ", "None", "Breathable mesh"],
            "details": {"Material": "Mesh", "Color": "null", "Weight": "300 g"},
            "images": [
                {"thumb": "https://img.example/t.jpg", "large": "https://img.example/l.jpg"},
                {"large": None, "hi_res": "javascript:alert(1)"},
            ],
        }
    )
    card = product_card(product)
    assert card["features"] == ["Grippy sole", "Breathable mesh"]
    assert card["details"] == {"Material": "Mesh"}
    assert card["images"] == ["https://img.example/l.jpg"]
    assert "images" not in product_card(product_from_record({"parent_asin": "X", "title": "Y"}))
