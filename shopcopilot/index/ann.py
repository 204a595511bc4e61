"""The products nearest in meaning in a catalog too large to scan: an HNSW graph (usearch).

Past the exact scan's size (`vectors.SCAN_MAX_BYTES`) the product vectors get a graph index,
built from them once and saved beside them (`ann-<encoder>-<fingerprint>.usearch`), then
opened memory-mapped: the kernel pages in only the nodes a search walks, so a million products
cost memory for what is asked, not for the whole graph. The graph keeps its vectors as 8-bit
integers (a quarter of float32); a search fetches twice as many products as asked and the
float16 vectors put them in exact order, which brings recall@50 back to that of float32
(docs/scaling.md, "Nearest in meaning at a million products").

The fingerprint covers the vectors' own fingerprint and `SETTINGS`; a missing, stale, truncated
or unreadable file is rebuilt, and any failure leaves the copilot with words alone and a
one-line notice.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from pathlib import Path
from typing import Any

import numpy as np

from ..workers import progress_counter

log = logging.getLogger(__name__)

ANN_PREFIX = "ann-"
# What the graph is: part of the fingerprint (bump `version` when the build changes).
SETTINGS = {"metric": "ip", "dtype": "i8", "connectivity": 16, "expansion_add": 128, "version": 1}
# Searched this deep, a million products give recall@50 0.86 against the exact scan in about
# 1.2 ms a query (0.82 at 256, 0.89 at 768: docs/scaling.md).
EXPANSION_SEARCH = 512
FETCH = 2  # fetched per product asked for, then ordered by the exact vectors
CHUNK = 16384  # vectors added at once: bounds the float32 copy at any catalog size


class NeighbourIndex:
    """A read-only, memory-mapped HNSW graph whose keys are feature rows."""

    def __init__(self, graph: Any) -> None:
        self._graph = graph
        self._graph.expansion_search = EXPANSION_SEARCH

    def __len__(self) -> int:
        return int(self._graph.size)

    def search(self, vector: np.ndarray, count: int) -> np.ndarray:
        """Feature rows near `vector` (about `count` of them, in no particular order)."""
        found = self._graph.search(np.asarray(vector, dtype=np.float32), count, threads=1)
        return np.asarray(found.keys, dtype=np.int64)


def ann_path(vectors_file: Path) -> Path:
    """The graph's file for a vectors file (`vectors-<slug>-<fingerprint>.npy`)."""
    digest = json.dumps([vectors_file.name, SETTINGS], sort_keys=True).encode()
    slug = vectors_file.stem.removeprefix("vectors-").rsplit("-", 1)[0]
    return vectors_file.with_name(
        f"{ANN_PREFIX}{slug}-{hashlib.sha256(digest).hexdigest()[:16]}.usearch"
    )


def load_or_build(
    matrix: np.ndarray, vectors_file: Path, progress: bool = False
) -> NeighbourIndex | None:
    """The graph over `matrix` (the vectors in `vectors_file`), built and saved on first use;
    None, with a notice, when usearch is missing or the graph can be neither read nor built."""
    try:
        from usearch.index import Index
    except ImportError as exc:
        log.warning("no nearest-in-meaning search past the scan size (%s)", exc)
        return None
    path = ann_path(vectors_file)
    graph = _open(Index, path, matrix.shape)
    if graph is None:
        try:
            _build(Index, matrix, path, progress)
        except (OSError, RuntimeError, ValueError) as exc:
            log.warning("no nearest-in-meaning search: cannot build %s (%s)", path, exc)
            return None
        graph = _open(Index, path, matrix.shape)
    if graph is None:
        log.warning("no nearest-in-meaning search: %s is unreadable after a rebuild", path)
        return None
    slug = path.stem.rsplit("-", 1)[0]
    for stale in path.parent.glob(f"{slug}-*"):  # this encoder's older graphs
        if stale not in (path, path.with_suffix(".json")):
            stale.unlink(missing_ok=True)
    return NeighbourIndex(graph)


def _open(index_class: Any, path: Path, shape: tuple[int, ...]) -> Any | None:
    """The saved graph, memory-mapped, if it is whole and holds one node per vector."""
    if not path.exists():
        return None
    try:
        graph = index_class.restore(str(path), view=True)
    except (RuntimeError, ValueError, OSError):
        return None  # truncated or not a graph: rebuild
    if graph is None or graph.size != shape[0] or graph.ndim != shape[1]:
        return None  # another catalog's or model's graph under the same name: rebuild
    return graph


def _build(index_class: Any, matrix: np.ndarray, path: Path, progress: bool) -> None:
    started = time.perf_counter()
    graph = index_class(
        ndim=matrix.shape[1],
        metric=SETTINGS["metric"],
        dtype=SETTINGS["dtype"],
        connectivity=SETTINGS["connectivity"],
        expansion_add=SETTINGS["expansion_add"],
    )
    threads = os.cpu_count() or 1
    with progress_counter("nearest-in-meaning graph", progress, len(matrix)) as advance:
        for first in range(0, len(matrix), CHUNK):
            chunk = np.asarray(matrix[first : first + CHUNK], dtype=np.float32)
            keys = np.arange(first, first + len(chunk), dtype=np.uint64)
            graph.add(keys, chunk, threads=threads, log=False)
            advance(len(chunk))
    temp = path.with_name(f".{path.name}.{os.getpid()}")
    try:
        graph.save(str(temp))
        temp.replace(path)  # atomic: readers see no file or the whole new one
    finally:
        temp.unlink(missing_ok=True)
    manifest = {
        "settings": SETTINGS,
        "rows": len(matrix),
        "seconds": round(time.perf_counter() - started, 1),
    }
    path.with_suffix(".json").write_text(json.dumps(manifest, indent=1))
