"""Product vectors (index/vectors.py): built once, memory-mapped, fingerprinted, and never a
reason for the copilot to fail."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import numpy as np
import pytest

from shopcopilot.agent import FOR_PEOPLE, Agent
from shopcopilot.index import vectors as vectors_module
from shopcopilot.index.catalog_index import open_index
from shopcopilot.index.vectors import (
    VECTORS_PREFIX,
    ProductVectors,
    dense_enabled,
    load_encoder,
    load_or_build,
    product_texts,
    vectors_path,
)

pytest.importorskip("wordllama", reason="the dense extra (wordllama) is not installed")


@pytest.fixture(scope="module")
def encoder():
    loaded = load_encoder("wordllama")
    assert loaded is not None
    return loaded


@pytest.fixture()
def index(hand_catalog: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("SHOPCOPILOT_CACHE", str(tmp_path))
    opened = open_index(hand_catalog, progress=False)
    yield opened
    opened.close()


def test_vectors_are_unit_float16_rows_in_feature_row_order(index, encoder) -> None:
    vectors = load_or_build(index.store, index.path, encoder)
    assert vectors is not None and len(vectors) == len(index.store)
    assert isinstance(vectors.matrix, np.memmap) and vectors.matrix.dtype == np.float16
    norms = np.linalg.norm(vectors.matrix.astype(np.float32), axis=1)
    assert np.allclose(norms, 1.0, atol=1e-2)
    # Row 0 is the store's first product: its own text is nearest to itself.
    first_text = next(product_texts(index.store.path))
    assert "Quokka Canvas Tote" in first_text
    assert vectors.nearest(vectors.query(first_text), 1).tolist() == [0]


def test_a_saved_file_is_read_not_rebuilt(index, encoder) -> None:
    load_or_build(index.store, index.path, encoder)
    path = vectors_path(index.path, encoder)
    before = path.stat().st_mtime_ns
    load_or_build(index.store, index.path, encoder)
    assert path.stat().st_mtime_ns == before


@pytest.mark.parametrize(
    "damage",
    [
        lambda path: path.write_bytes(b"not an array"),
        lambda path: path.write_bytes(path.read_bytes()[:200]),  # truncated
        lambda path: np.save(path, np.zeros((3, 256), dtype=np.float16)),  # another catalog
    ],
    ids=["garbage", "truncated", "wrong-shape"],
)
def test_a_broken_file_is_rebuilt(index, encoder, damage) -> None:
    good = load_or_build(index.store, index.path, encoder)
    assert good is not None
    expected = np.array(good.matrix)
    path = vectors_path(index.path, encoder)
    damage(path)
    rebuilt = load_or_build(index.store, index.path, encoder)
    assert rebuilt is not None and np.array_equal(np.array(rebuilt.matrix), expected)


def test_an_older_build_of_the_same_model_is_removed(index, encoder) -> None:
    stale = index.path / f"{VECTORS_PREFIX}{encoder.slug}-0000000000000000.npy"
    other_model = index.path / f"{VECTORS_PREFIX}othermodel-0000000000000000.npy"
    stale.write_bytes(b"old")
    other_model.write_bytes(b"other")
    load_or_build(index.store, index.path, encoder)
    assert not stale.exists() and other_model.exists()


def test_no_encoder_or_an_unwritable_folder_means_no_vectors(index, encoder, caplog) -> None:
    assert load_or_build(index.store, index.path, None) is None
    if os.geteuid() == 0:
        missing = index.path / "gone"  # root writes anywhere: a folder that is not there
    else:
        missing = index.path
        missing.chmod(0o500)
    with caplog.at_level(logging.WARNING):
        assert load_or_build(index.store, missing, encoder) is None
    assert "dense vectors off" in caplog.text
    index.path.chmod(0o700)


def test_an_unknown_model_name_is_a_notice_not_a_crash(caplog) -> None:
    with caplog.at_level(logging.WARNING):
        assert load_encoder("no-such-model") is None
    assert "no-such-model" in caplog.text


def test_nearest_is_the_best_cosines_in_order() -> None:
    rng = np.random.default_rng(5)
    rows = rng.normal(size=(70_000, 8)).astype(np.float32)  # more than one scan slice
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    vectors = ProductVectors(rows.astype(np.float16), encoder=None)  # type: ignore[arg-type]
    probe = rows[12_345]
    scores = rows.astype(np.float16).astype(np.float32) @ probe
    assert vectors.nearest(probe, 5).tolist() == np.argsort(-scores)[:5].tolist()
    picked = np.array([3, 12_345, 9])
    assert np.allclose(vectors.similarity(probe, picked), scores[picked])


def test_past_the_scan_size_without_a_graph_meaning_only_reranks(monkeypatch) -> None:
    monkeypatch.setattr(vectors_module, "SCAN_MAX_BYTES", 1000)
    rows = np.eye(300, 8, dtype=np.float16)
    vectors = ProductVectors(rows, encoder=None)  # type: ignore[arg-type]
    assert not vectors.can_search and len(vectors.nearest(rows[0].astype(np.float32), 5)) == 0
    assert vectors.similarity(rows[0].astype(np.float32), np.array([0, 1])).tolist() == [1.0, 0.0]


def test_past_the_scan_size_the_graph_finds_the_nearest(index, encoder, monkeypatch) -> None:
    pytest.importorskip("usearch")
    exact = load_or_build(index.store, index.path, encoder)
    assert exact is not None and exact.neighbours is None  # small: the exact scan, no graph
    assert not list(index.path.glob("ann-*"))
    monkeypatch.setattr(vectors_module, "SCAN_MAX_BYTES", 1000)
    graphed = load_or_build(index.store, index.path, encoder)
    assert graphed is not None and graphed.neighbours is not None and graphed.can_search
    assert len(list(index.path.glob("ann-wordllama-*.usearch"))) == 1
    for text in ("canvas tote bag", "warm winter boots", "something to read"):
        query = graphed.query(text)
        assert graphed.nearest(query, 3).tolist() == exact.nearest(query, 3).tolist()


@pytest.mark.parametrize(
    ("value", "used", "expected"),
    [("", False, False), ("", True, True), ("0", True, False), ("1", False, True)],
)
def test_the_switch(monkeypatch, value, used, expected) -> None:
    monkeypatch.setenv("SHOPCOPILOT_DENSE", value)
    assert dense_enabled(used) is expected


def test_the_agent_uses_vectors_only_when_switched_on(hand_catalog, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("SHOPCOPILOT_CACHE", str(tmp_path))
    monkeypatch.setenv("SHOPCOPILOT_DENSE", "0")
    assert Agent(hand_catalog, settings=FOR_PEOPLE, warm_up=False).vectors is None
    monkeypatch.delenv("SHOPCOPILOT_DENSE")
    assert Agent(hand_catalog, warm_up=False).vectors is None  # the benchmark's: words alone
    assert Agent(hand_catalog, settings=FOR_PEOPLE, warm_up=False).vectors is not None
    monkeypatch.setenv("SHOPCOPILOT_DENSE", "1")
    agent = Agent(hand_catalog, settings=FOR_PEOPLE, warm_up=False)
    assert agent.vectors is not None
    agent.reset("s")
    response = agent.respond("s", "a bag to carry groceries from the market", 1)
    assert response["recommendations"]


def test_a_paraphrase_finds_what_no_word_matches(hand_catalog, tmp_path, monkeypatch) -> None:
    """No product says "hands" or "warm": only the meaning leads to the gloves."""
    monkeypatch.setenv("SHOPCOPILOT_CACHE", str(tmp_path))
    monkeypatch.setenv("SHOPCOPILOT_DENSE", "1")
    agent = Agent(hand_catalog, warm_up=False)
    assert agent.vectors is not None
    nearest = agent.vectors.nearest(agent.vectors.query("keep my hands warm"), 1)
    assert [agent.features.asins[row] for row in nearest] == ["OR01"]


def test_a_card_found_by_meaning_says_so(hand_catalog, tmp_path, monkeypatch) -> None:
    """People's settings use meaning; the benchmark's (the default) keep to the words."""
    monkeypatch.setenv("SHOPCOPILOT_CACHE", str(tmp_path))
    monkeypatch.setenv("SHOPCOPILOT_DENSE", "1")
    agent = Agent(hand_catalog, settings=FOR_PEOPLE, warm_up=False)
    agent.reset("s")
    first = agent.respond("s", "keep my hands warm", 1)["recommendations"][0]
    assert first["parent_asin"] == "OR01"
    assert first["reason"] == "close in meaning to what you described"
    monkeypatch.setenv("SHOPCOPILOT_DENSE", "0")
    words_only = Agent(hand_catalog, settings=FOR_PEOPLE, warm_up=False)
    words_only.reset("s")
    shown = words_only.respond("s", "keep my hands warm", 1)["recommendations"]
    assert "OR01" not in [card["parent_asin"] for card in shown[:1]]
    monkeypatch.setenv("SHOPCOPILOT_DENSE", "1")
    benchmark = Agent(hand_catalog, warm_up=False)
    benchmark.reset("s")
    shown = benchmark.respond("s", "keep my hands warm", 1)["recommendations"]
    assert "OR01" not in [card["parent_asin"] for card in shown[:1]]


def test_the_fingerprint_names_the_model_and_the_index() -> None:
    one = vectors_module.fingerprint("model-a", Path("index-1"))
    assert one == vectors_module.fingerprint("model-a", Path("/elsewhere/index-1"))
    assert one != vectors_module.fingerprint("model-b", Path("index-1"))
    assert one != vectors_module.fingerprint("model-a", Path("index-2"))


def test_more_like_that_one_is_read_with_meaning(hand_catalog, tmp_path, monkeypatch) -> None:
    """The pointed-at product's vector joins the words' (the turn once crashed on it)."""
    monkeypatch.setenv("SHOPCOPILOT_CACHE", str(tmp_path))
    agent = Agent(hand_catalog, settings=FOR_PEOPLE, warm_up=False)
    agent.reset("s")
    shown = [card["parent_asin"] for card in agent.respond("s", "a parka", 1)["recommendations"]]
    assert shown[:3] and all(asin.startswith("PARKA") for asin in shown[:3])
    cards = agent.respond("s", "more like the second one", 2)["recommendations"]
    state = agent.export_session("s")
    assert state["critiques"] and state["critiques"][-1]["products"] == [shown[1]]
    # A person's list keeps what is still best (marked as not new) and leads with the anchor's kind.
    assert len(cards) == 10 and cards[0]["parent_asin"].startswith("PARKA")
    assert all(card["new"] == (card["parent_asin"] not in shown) for card in cards)
