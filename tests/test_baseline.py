"""The reimplemented organiser starter: tokenizing, stateless search, the response shape."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shopcopilot.bench.baseline import MESSAGE, BaselineAgent, query_tokens


def record(asin: str, title: str, description: str = "", features: tuple[str, ...] = ()) -> dict:
    return {
        "parent_asin": asin,
        "title": title,
        "features": list(features),
        "description": [description],
        "price": 20.0,
        "categories": ["Clothing, Shoes & Jewelry", "Women"],
        "details": {},
        "store": "Fixture",
    }


@pytest.fixture()
def agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> BaselineAgent:
    monkeypatch.setenv("SHOPCOPILOT_CACHE", str(tmp_path / "cache"))
    records = [
        record("TITLE", "Zebra print scarf"),
        record("DESC", "Plain scarf", description="zebra zebra zebra pattern inside"),
        record("FEAT", "Wool hat", features=("zebra lining",)),
        *(record(f"F{n}", f"Filler sock {n}") for n in range(20)),
    ]
    path = tmp_path / "catalog.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return BaselineAgent(path)


def test_tokens_lowercase_drop_short_and_stopwords() -> None:
    message = "I'm looking for a Red-Cotton T shirt, size 10; please!"
    assert query_tokens(message) == ["red", "cotton", "shirt", "size", "10"]


def test_tokens_are_unique_and_capped_at_forty() -> None:
    words = [f"w{n}" for n in range(50)]
    tokens = query_tokens(" ".join(["w0", "W0", *words]))
    assert tokens == words[:40]


def test_tokens_keep_only_ascii_letters_and_digits() -> None:
    assert query_tokens("café naïve 2-pack") == ["caf", "na", "ve", "pack"]


def test_title_weight_beats_description_and_features(agent: BaselineAgent) -> None:
    response = agent.respond("s", "zebra", 1, 10)
    ids = [item["parent_asin"] for item in response["recommendations"]]
    assert ids[0] == "TITLE"
    assert set(ids) == {"TITLE", "DESC", "FEAT"}  # an OR query: only products holding the word
    assert ids.index("FEAT") < ids.index("DESC")  # features weigh 2.5, description 1.0


def test_response_shape_and_top_k(agent: BaselineAgent) -> None:
    response = agent.respond("s", "filler sock", 1, 5)
    assert response["message"] == MESSAGE
    assert response["ask_attribute"] is None
    assert response["usage"] == {"prompt_tokens": 0, "completion_tokens": 0}
    assert len(response["recommendations"]) == 5


def test_stateless_and_empty_queries(agent: BaselineAgent) -> None:
    agent.reset("s", {"summary": "ignored"})
    first = agent.respond("s", "zebra scarf", 1, 10)
    agent.respond("s", "wool hat", 2, 10)
    assert agent.respond("s", "zebra scarf", 7, 10) == first  # earlier turns change nothing
    assert agent.respond("s", "I would like it, please", 3, 10)["recommendations"] == []
