"""Schemathesis against the OpenAPI schema: generated requests, zero server errors, responses as
documented.

Path ids are drawn from random strings and from real sessions (a chat and a demo run made
beforehand by another app instance on the same store), so the happy paths are exercised too.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
import schemathesis
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shopcopilot.agent import Agent
from shopcopilot.web.app import WebSettings, create_app

MATERIALS = ["cotton", "leather", "wool", "denim"]
KINDS = [
    ("Dress", "Women", "Dresses"),
    ("Sneaker", "Men", "Shoes"),
    ("Hoodie", "Women", "Sweatshirts"),
]


def product_record(number: int) -> dict:
    kind, department, leaf = KINDS[number % len(KINDS)]
    material = MATERIALS[number % len(MATERIALS)]
    return {
        "parent_asin": f"S{number:03d}",
        "title": f"{department}'s {material} {kind} no. {number}",
        "features": [f"Made of {material}", "Regular fit"],
        "description": [],
        "price": None if number % 5 == 0 else 20.0 + number,
        "categories": ["Clothing, Shoes & Jewelry", department, leaf],
        "details": {"Department": department},
        "average_rating": None if number % 4 == 0 else 3.5,
        "rating_number": None if number % 4 == 0 else number,
        "store": "Schema Supply",
    }


@pytest.fixture(scope="module")
def api_schema(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[schemathesis.schemas.BaseSchema]:
    root = tmp_path_factory.mktemp("web-schema")
    catalog = root / "catalog.jsonl"
    catalog.write_text(
        "".join(json.dumps(product_record(n)) + "\n" for n in range(15)), encoding="utf-8"
    )
    web_settings = WebSettings(
        catalog_path=catalog,
        session_store=root / "sessions.sqlite3",
        demo_generated=3,
        rate_limit="off",
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SHOPCOPILOT_CACHE", str(root / "cache"))
        patch.setattr(Agent, "examples", lambda self, n=4: ["cotton dress"][:n])
        real_ids, sample_ids = make_sessions(web_settings)
        schema = schemathesis.openapi.from_asgi("/openapi.json", create_app(web_settings))

        @schema.hook
        def flatmap_path_parameters(context, path_parameters):  # noqa: ANN001, ANN202 - schemathesis hook
            if not path_parameters or "session_id" not in path_parameters:
                return st.just(path_parameters)
            ids = st.sampled_from([path_parameters["session_id"], *real_ids])
            return ids.map(lambda session_id: {**path_parameters, "session_id": session_id})

        @schema.hook
        def flatmap_body(context, body):  # noqa: ANN001, ANN202 - schemathesis hook
            if isinstance(body, dict) and "sample_id" in body:
                return st.sampled_from([body["sample_id"], *sample_ids]).map(
                    lambda s: {**body, "sample_id": s}
                )
            return st.just(body)

        yield schema


def make_sessions(web_settings: WebSettings) -> tuple[list[str], list[str]]:
    """A chat with one turn and a fresh demo run, made by another app instance on the same store."""
    with TestClient(create_app(web_settings)) as client:
        chat = client.post("/api/sessions", json={}).json()["session_id"]
        client.post(
            f"/api/sessions/{chat}/messages", json={"message": "cotton dress"}
        ).raise_for_status()
        sample_ids = [s["sample_id"] for s in client.get("/api/demo/sessions").json()["sessions"]]
        demo = client.post("/api/demo/runs", json={"sample_id": sample_ids[0]}).json()["session_id"]
    return [chat, demo], sample_ids


# The operations, read from the schema without starting the app (the agent is built only at
# startup).
OPERATIONS = [
    (method.upper(), path)
    for path, item in create_app().openapi()["paths"].items()
    for method in item
]


# Driven through hypothesis directly: schemathesis' lazy pytest loader does not support this pytest.
@pytest.mark.parametrize(("method", "path"), OPERATIONS)
def test_api_conforms_to_its_schema(
    api_schema: schemathesis.schemas.BaseSchema, method: str, path: str
) -> None:
    operation = api_schema[path][method]

    @given(case=operation.as_strategy())
    @settings(
        max_examples=10,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )
    def conforms(case: schemathesis.Case) -> None:
        case.call_and_validate()

    conforms()


def test_every_operation_is_covered() -> None:
    paths = {path for _, path in OPERATIONS}
    assert {
        "/api/sessions",
        "/api/sessions/{session_id}/messages",
        "/api/products/{parent_asin}",
        "/api/demo/sessions",
        "/api/demo/runs/{session_id}/step/stream",
    } <= paths
