"""The graph index for the products nearest in meaning past the exact scan (index/ann.py):
built once, memory-mapped, fingerprinted, rebuilt when broken, never a reason to fail."""

from __future__ import annotations

import logging
import pickle
from pathlib import Path

import numpy as np
import pytest

from shopcopilot.index import ann
from shopcopilot.index import vectors as vectors_module
from shopcopilot.index.vectors import ProductVectors

pytest.importorskip("usearch", reason="usearch is not installed")


def _unit_rows(count: int, dim: int = 16, seed: int = 3) -> np.ndarray:
    rows = np.random.default_rng(seed).normal(size=(count, dim)).astype(np.float32)
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float16)


@pytest.fixture()
def saved(tmp_path: Path) -> tuple[np.ndarray, Path]:
    matrix = _unit_rows(4000)
    path = tmp_path / "vectors-test-0123456789abcdef.npy"
    np.save(path, matrix)
    return np.load(path, mmap_mode="r"), path


def test_the_graph_finds_what_the_exact_scan_finds(saved, monkeypatch) -> None:
    matrix, path = saved
    graph = ann.load_or_build(matrix, path)
    assert graph is not None and len(graph) == len(matrix)
    monkeypatch.setattr(vectors_module, "SCAN_MAX_BYTES", 0)
    approximate = ProductVectors(matrix, encoder=None, neighbours=graph)  # type: ignore[arg-type]
    exact = np.asarray(matrix, dtype=np.float32)
    found = 0
    for query in exact[:50] * 0.8 + exact[50:100] * 0.2:
        query /= np.linalg.norm(query)
        truth = np.argsort(-(exact @ query), kind="stable")[:10]
        rows = approximate.nearest(query, 10)
        assert len(rows) == 10 and len(set(rows.tolist())) == 10
        scores = exact[rows] @ query
        assert np.all(np.diff(scores) <= 1e-6)  # best first
        found += len(np.intersect1d(rows, truth))
    assert found / 500 >= 0.95


def test_past_the_scan_size_rows_are_read_from_the_file(saved, monkeypatch) -> None:
    matrix, _ = saved
    monkeypatch.setattr(vectors_module, "SCAN_MAX_BYTES", 0)
    vectors = ProductVectors(matrix, encoder=None)  # type: ignore[arg-type]
    rows = np.array([3999, 0, 17, 17, 2500])
    exact = np.asarray(matrix, dtype=np.float32)
    query = exact[5]
    assert np.array_equal(vectors.similarity(query, rows), exact[rows] @ query)
    copy = pickle.loads(pickle.dumps(vectors))  # another process opens the file anew
    assert np.array_equal(copy.similarity(query, rows), exact[rows] @ query)
    assert np.allclose(
        vectors.mean(rows[:2]), (exact[3999] + exact[0]) / np.linalg.norm(exact[3999] + exact[0])
    )


def test_a_saved_graph_is_opened_not_rebuilt(saved, monkeypatch) -> None:
    matrix, path = saved
    ann.load_or_build(matrix, path)
    graph_file = ann.ann_path(path)
    before = graph_file.stat().st_mtime_ns
    monkeypatch.setattr(ann, "_build", lambda *a, **k: pytest.fail("rebuilt a good graph"))
    assert ann.load_or_build(matrix, path) is not None
    assert graph_file.stat().st_mtime_ns == before


@pytest.mark.parametrize(
    "damage",
    [
        lambda path: path.write_bytes(b"not a graph" * 50),
        lambda path: path.write_bytes(path.read_bytes()[: path.stat().st_size // 2]),
    ],
    ids=["garbage", "truncated"],
)
def test_a_broken_graph_is_rebuilt(saved, damage) -> None:
    matrix, path = saved
    ann.load_or_build(matrix, path)
    damage(ann.ann_path(path))
    rebuilt = ann.load_or_build(matrix, path)
    assert rebuilt is not None and len(rebuilt) == len(matrix)
    assert rebuilt.search(np.asarray(matrix[7], dtype=np.float32), 1).tolist() == [7]


def test_a_graph_of_other_vectors_is_rebuilt(saved) -> None:
    matrix, path = saved
    ann.load_or_build(matrix[:1000], path)  # the same name, fewer products
    rebuilt = ann.load_or_build(matrix, path)
    assert rebuilt is not None and len(rebuilt) == len(matrix)


def test_the_fingerprint_follows_the_vectors_and_an_older_graph_goes(saved) -> None:
    matrix, path = saved
    other = path.with_name("vectors-test-fedcba9876543210.npy")
    assert ann.ann_path(other) != ann.ann_path(path)
    assert ann.ann_path(path).name.startswith("ann-test-")
    stale = path.with_name("ann-test-0000000000000000.usearch")
    other_encoder = path.with_name("ann-othermodel-0000000000000000.usearch")
    stale.write_bytes(b"old")
    other_encoder.write_bytes(b"other")
    ann.load_or_build(matrix, path)
    assert not stale.exists() and other_encoder.exists()


def test_an_unwritable_folder_is_a_notice_not_a_crash(saved, caplog) -> None:
    matrix, path = saved
    gone = path.parent / "gone" / path.name
    with caplog.at_level(logging.WARNING):
        assert ann.load_or_build(matrix, gone) is None
    assert "no nearest-in-meaning search" in caplog.text
