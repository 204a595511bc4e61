"""The understanding benchmark: corpus loading, the reading of a state into slots, scoring."""

from __future__ import annotations

import json
import operator
from pathlib import Path

import pytest

from shopcopilot.agent import Agent
from shopcopilot.bench import understanding as U


def test_the_corpus_loads_and_both_splits_hold_utterances_and_exchanges() -> None:
    dev, test = U.load_corpus(split="dev"), U.load_corpus(split="test")
    for cases in (dev, test):
        assert sum(not c.exchange for c in cases) >= 300
        assert sum(c.exchange for c in cases) >= 75
    assert not {c.id for c in dev} & {c.id for c in test}


def test_a_bad_corpus_line_is_reported_with_file_and_line(tmp_path: Path) -> None:
    good = {"id": "u1", "split": "dev", "text": "red shoes", "expect": {"item": "Shoes"}}
    (tmp_path / "utterances.jsonl").write_text(json.dumps(good) + "\n{not json\n", encoding="utf-8")
    with pytest.raises(U.CorpusError, match=r"utterances.jsonl:2"):
        U.load_corpus(tmp_path)


@pytest.mark.parametrize("split", ["dev", "test"])
def test_the_second_annotation_covers_its_split_and_agrees_only_where_it_does(
    tmp_path: Path, split: str
) -> None:
    second = U.second_reading(U.CORPUS_DIR / "agreement" / f"second_{split}.jsonl")
    corpus = {case.id: case for case in U.load_corpus(split=split)}
    assert len(second) >= 200 and set(second) <= set(corpus)
    cases = [corpus[i] for i in second]
    itself = {case.id: [dict(t.expect) for t in case.turns] for case in cases}
    assert U.agreement(cases, itself).exact == sum(len(c.turns) for c in cases)
    summary = U.agreement(cases, second).to_dict(0, 0, "dev")
    assert 0.5 < summary["exact_match"] < 1.0  # written apart: it differs somewhere
    bad = tmp_path / "second.jsonl"
    bad.write_text('{"id": "u0001"}\n', encoding="utf-8")
    with pytest.raises(U.CorpusError, match="second.jsonl:1"):
        U.second_reading(bad)


def test_unknown_split_is_refused() -> None:
    with pytest.raises(U.CorpusError, match="unknown split"):
        U.load_corpus(split="train")


def test_nodes_resolve_to_the_deepest_node_the_words_name() -> None:
    paths = [
        ("Clothing, Shoes & Jewelry", "Women", "Jewelry", "Earrings", "Hoop"),
        ("Clothing, Shoes & Jewelry", "Women", "Shoes"),
        ("Clothing, Shoes & Jewelry", "Women", "Clothing", "Dresses"),
    ]
    nodes = U.NodeResolver(paths)
    assert nodes.resolve(["hoop", "earring"]) == "Hoop"
    assert nodes.resolve(["earring"]) == "Earrings"
    assert nodes.resolve(["dress", "shoe"]) == "Shoes"  # the head names the item
    assert nodes.resolve(["women"]) is None  # who it is for is no item


def test_scores_count_hits_misses_and_extras() -> None:
    counts = U.SlotCounts()
    counts.add({"red", "blue"}, {"red", "green"}, operator.eq)  # plain equality, as most slots
    assert (counts.tp, counts.fp, counts.fn) == (1, 1, 1)
    assert counts.scores()["f1"] == 0.5


def test_expected_budget_and_sizes_take_the_states_forms() -> None:
    want = U.expected({"budget": {"max": 1299.99}, "size": ["xl", "10.5"], "colors": ["navy"]})
    assert want["budget"] == {(None, 1299.99, None)}
    assert want["size"] == {"XL", "10.5"}
    assert want["colors"] == {"blue"}  # the vocabulary's canonical colour


def test_a_turn_read_as_not_knowing_is_no_chit_chat() -> None:
    state = {"constraints": [], "fragments": [], "rejected": []}
    nodes = U.NodeResolver([])
    assert U.predicted(state, {}, nodes)["chitchat"] == {True}
    unsure = {"read": [{"kind": "not sure", "value": "", "start": 0, "end": 3, "words": "idk"}]}
    assert U.predicted(state, unsure, nodes)["chitchat"] == set()


def test_evaluate_plays_a_case_and_reads_the_state(synthetic_index) -> None:
    agent = Agent(index=synthetic_index, warm_up=False)
    case = U.Case(
        "u1",
        "dev",
        (U.Turn("red dresses under $40", {"budget": {"max": 40}, "colors": ["red"]}),),
        exchange=False,
    )
    report = U.evaluate(agent, [case], U.NodeResolver([]))
    summary = report.to_dict(1, 0, "dev")
    assert summary["slots"]["budget"]["recall"] == 1.0
    assert summary["slots"]["colors"]["recall"] == 1.0
    assert summary["n_turns"] == 1
