"""The Agent end to end: the official contract, session isolation, determinism, the trace,
real-record conversations and the `starter.agent` shim the official evaluator imports."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

from shopcopilot.agent import Agent
from shopcopilot.bench.official import OfficialCustomer, score_recommendations
from shopcopilot.bench.sessions_io import load_sessions
from shopcopilot.terms import Attribute


@pytest.fixture(scope="module")
def agent(synthetic_index):
    # The generated catalog always: the real records get their own agent and marked test.
    return Agent(index=synthetic_index)


@pytest.fixture(scope="module")
def real_agent(shared_data, tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SHOPCOPILOT_CACHE", str(tmp_path_factory.mktemp("real-cache")))
        return Agent(shared_data / "catalog_harvest.jsonl")


def test_response_follows_the_official_contract(agent):
    agent.reset("c1", {"preference_tags": ["fit"]})
    response = agent.respond(
        "c1", "I'm looking for a women's dress, but I'm still exploring.", 1, 10
    )
    assert isinstance(response["message"], str) and response["message"]
    assert response["ask_attribute"] is None or response["ask_attribute"] in set(Attribute)
    assert 1 <= len(response["recommendations"]) <= 10
    for rec in response["recommendations"]:
        assert agent.index.store.get(rec["parent_asin"]) is not None
        assert rec["reason"]
    assert set(response["usage"]) == {"prompt_tokens", "completion_tokens"}
    json.dumps(response)


def test_question_text_matches_ask_attribute(agent):
    agent.reset("c2", {})
    response = agent.respond("c2", "I need shoes", 1, 10)
    if response["ask_attribute"]:
        assert response["message"].rstrip().endswith("?")


def test_sessions_are_isolated_and_deterministic(agent):
    script = ["I need a men's jacket", "black please", "under $80"]
    agent.reset("a", {})
    agent.reset("b", {})
    first, second = [], []
    for turn, message in enumerate(script, start=1):
        first.append(agent.respond("a", message, turn, 10))
        agent.respond("b", "I'm looking for jewelry necklaces", turn, 10)  # interleaved, unrelated
    agent.reset("a", {})
    for turn, message in enumerate(script, start=1):
        second.append(agent.respond("a", message, turn, 10))
    assert first == second
    assert agent.export_session("b")["constraints"] != agent.export_session("a")["constraints"]


def test_products_are_not_repeated_within_an_epoch(agent):
    agent.reset("r", {})
    seen = []
    for turn in range(1, 6):
        response = agent.respond("r", "I need a dress" if turn == 1 else "no preference", turn, 10)
        ids = [r["parent_asin"] for r in response["recommendations"]]
        assert not set(ids) & set(seen)
        seen += ids


def test_last_turn_recommends_without_asking(agent):
    agent.reset("l", {})
    for turn in range(1, 11):
        response = agent.respond("l", "I need a dress" if turn == 1 else "no preference", turn, 10)
    assert response["ask_attribute"] is None and len(response["recommendations"]) == 10


def test_trace_has_every_stage_in_order(agent):
    agent.reset("t", {})
    events = []
    result = agent.respond_traced(
        "t", "I need running shoes for women under $60", 1, 10, on_event=events.append
    )
    assert [e["stage"] for e in events] == ["state", "retrieve", "rank", "dialogue", "respond"]
    assert events == result.trace
    assert all(e["ms"] >= 0 and e["summary"] for e in events)
    assert any(c["attribute"] == "budget" for c in result.state["constraints"])


def test_session_export_import_continues_identically(agent):
    agent.reset("x", {})
    agent.respond("x", "I need a men's jacket", 1, 10)
    saved = json.loads(json.dumps(agent.export_session("x")))
    expected = agent.respond("x", "in black", 2, 10)
    agent.import_session("y", saved)
    assert agent.respond("y", "in black", 2, 10) == expected


@pytest.mark.shared
def test_official_conversations_on_real_records_find_their_targets(real_agent, shared_data):
    """Ten public sessions on the real records alone: the copilot finds each target."""
    agent = real_agent
    sessions = load_sessions(shared_data / "public_set.jsonl")[:10]
    records = {}
    with open(shared_data / "catalog_harvest.jsonl", encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            records[record["parent_asin"]] = record
    ids = frozenset(records)
    found = 0
    for session in sessions:
        customer = OfficialCustomer.for_session(session, records[session.target_asin])
        agent.reset(session.sample_id, session.user_profile)
        message, override_sent = customer.first_message(), customer.override_turn() is None
        for turn in range(1, 11):
            response = agent.respond(session.sample_id, message, turn, 10)
            if override_sent and session.target_asin in score_recommendations(
                response["recommendations"], ids
            ):
                found += 1
                break
            if not override_sent and turn + 1 == customer.override_turn():
                message, override_sent = customer.override_message(), True
            else:
                message = customer.reply(response, turn)
    assert found >= 9


def test_starter_shim_is_the_agent(synthetic_catalog, synthetic_cache, monkeypatch):
    """The evaluator runs from a folder holding starter/ and calls Agent(catalog_path)."""
    monkeypatch.setenv("SHOPCOPILOT_CACHE", str(synthetic_cache))  # reopens the built index
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parent.parent))
    module = importlib.import_module("starter.agent")
    assert module.Agent is Agent
    shim = module.Agent(synthetic_catalog)
    shim.reset("s", {})
    assert shim.respond("s", "I need a dress", 1, 10)["recommendations"]


def test_people_see_the_whole_list_while_the_benchmark_policy_shows_one(agent) -> None:
    from dataclasses import replace

    from shopcopilot.agent import FOR_PEOPLE

    person = agent.with_settings(FOR_PEOPLE)
    # The same ranking with the benchmark's narrow policy: only the list's width differs.
    narrowed = agent.with_settings(
        replace(FOR_PEOPLE, dialogue=replace(FOR_PEOPLE.dialogue, narrow=True))
    )
    for who in (agent, person, narrowed):
        who.reset("list", {})
    narrow = agent.respond("list", "I need a pair of shoes", 1)
    full = person.respond("list", "I need a pair of shoes", 1)
    one = narrowed.respond("list", "I need a pair of shoes", 1)
    assert narrow["ask_attribute"] is not None and len(narrow["recommendations"]) == 1
    assert len(full["recommendations"]) == 10 and len(one["recommendations"]) == 1
    assert full["recommendations"][0]["parent_asin"] == one["recommendations"][0]["parent_asin"]
