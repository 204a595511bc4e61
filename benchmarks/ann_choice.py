"""Which approximate nearest-neighbour library: recall@50 against the exact scan, build time,
peak memory, size on disk and query time, over an index's product vectors.

    pip install hnswlib==0.8.0 faiss-cpu==1.15.1 usearch==2.26.6     # the candidates
    python benchmarks/ann_choice.py --vectors INDEX/vectors-wordllama-ID.npy -o runs/ann-50k.json
    python benchmarks/ann_choice.py --vectors 1M/vectors-wordllama-ID.npy --only usearch-i8

The queries are what the copilot asks the index: the dev messages of the understanding corpus
in the encoder's vectors (the shopper's words) and the vectors of 200 products drawn at random
("more like this one"). Each candidate is built and queried in its own process, so that its
peak RSS is its own; queries run one at a time on one thread, as a turn does. The exact scan
reads the float16 file in chunks, so that it fits at any size.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "benchmarks" / "data" / "understanding" / "utterances.jsonl"
K = 50
EFS = (50, 64, 96, 128, 192, 256)
# (library, storage): the graph settings are the same for all (M=16, efConstruction=128).
CANDIDATES = {
    "hnswlib-f32": ("hnswlib", "f32"),
    "faiss-hnsw-sq8": ("faiss", "sq8"),
    "usearch-f16": ("usearch", "f16"),
    "usearch-i8": ("usearch", "i8"),
}
M, EF_CONSTRUCTION = 16, 128


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--vectors", type=Path, required=True, help="an index's vectors .npy")
    parser.add_argument("--only", action="append", choices=sorted(CANDIDATES))
    parser.add_argument("--threads", type=int, default=2, help="build threads")
    parser.add_argument("-o", "--out", type=Path)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--queries", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--truth", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run_candidate(args)))
        return
    matrix = np.load(args.vectors, mmap_mode="r")
    with tempfile.TemporaryDirectory() as work:
        queries, truth = Path(work) / "queries.npy", Path(work) / "truth.npy"
        started = time.perf_counter()
        q = query_vectors(matrix)
        np.save(queries, q)
        exact, scan_ms = exact_scan(matrix, q)
        np.save(truth, exact)
        results: dict[str, Any] = {
            "vectors": str(args.vectors),
            "products": int(matrix.shape[0]),
            "queries": int(len(q)),
            "exact_scan_ms_per_query": round(scan_ms, 2),
            "truth_s": round(time.perf_counter() - started, 1),
            "candidates": {},
        }
        for name in args.only or CANDIDATES:
            command = [sys.executable, __file__, "--child", name, "--vectors", str(args.vectors)]
            command += ["--queries", str(queries), "--truth", str(truth)]
            command += ["--threads", str(args.threads)]
            done = subprocess.run(command, check=True, stdout=subprocess.PIPE, text=True)
            results["candidates"][name] = json.loads(done.stdout)
            print(name, results["candidates"][name], file=sys.stderr)
    text = json.dumps(results, indent=1)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
    print(text)


def query_vectors(matrix: np.ndarray) -> np.ndarray:
    from shopcopilot.index.vectors import load_encoder

    encoder = load_encoder("wordllama")
    assert encoder is not None, "the wordllama encoder does not load"
    lines = (json.loads(line) for line in CORPUS.read_text().splitlines() if line.strip())
    texts = [r["text"] for r in lines if r.get("split") == "dev"]
    words = encoder.encode(texts)
    rows = np.random.default_rng(11).choice(matrix.shape[0], 200, replace=False)
    products = np.asarray(matrix[np.sort(rows)], dtype=np.float32)
    return np.ascontiguousarray(np.vstack([words, products]), dtype=np.float32)


def exact_scan(matrix: np.ndarray, queries: np.ndarray) -> tuple[np.ndarray, float]:
    """The true K nearest rows of each query (inner product of unit vectors), chunk by chunk."""
    best_scores = np.full((len(queries), K), -np.inf, dtype=np.float32)
    best_rows = np.zeros((len(queries), K), dtype=np.int64)
    started = time.perf_counter()
    for first in range(0, matrix.shape[0], 200_000):
        chunk = np.asarray(matrix[first : first + 200_000], dtype=np.float32)
        scores = queries @ chunk.T
        scores = np.hstack([best_scores, scores])
        numbers = np.arange(first, first + len(chunk))[None, :].repeat(len(queries), 0)
        rows = np.hstack([best_rows, numbers])
        top = np.argpartition(-scores, K - 1, axis=1)[:, :K]
        best_scores = np.take_along_axis(scores, top, 1)
        best_rows = np.take_along_axis(rows, top, 1)
    return best_rows, (time.perf_counter() - started) * 1000 / len(queries)


# -- one candidate, in its own process ----------------------------------------------------


def run_candidate(args: argparse.Namespace) -> dict[str, Any]:
    library, storage = CANDIDATES[args.child]
    matrix = np.load(args.vectors, mmap_mode="r")
    queries, truth = np.load(args.queries), np.load(args.truth)
    with tempfile.TemporaryDirectory() as work:
        path = Path(work) / "ann.bin"
        build, cpu = time.perf_counter(), time.process_time()
        BUILDERS[library](matrix, storage, path, args.threads)
        build, cpu = time.perf_counter() - build, time.process_time() - cpu
        build_peak = _peak_mb()
        disk = path.stat().st_size
        result: dict[str, Any] = {
            "build_s": round(build, 1),
            "build_cpu_s": round(cpu, 1),
            "build_peak_rss_mb": build_peak,
            "disk_mb": round(disk / 1e6, 1),
        }
        opened = time.perf_counter()
        search = OPENERS[library](path, storage, matrix.shape[1])
        result["open_s"] = round(time.perf_counter() - opened, 2)
        result["rss_after_open_mb"] = _rss_mb()
        result["by_ef"] = {}
        for fetch in (K, 2 * K):  # 2K: twice as many, reranked by the exact vectors
            for ef in EFS:
                times, found = [], []
                for query in queries:
                    started = time.perf_counter()
                    found.append(_exact_top(matrix, query, search(query, ef, fetch)))
                    times.append((time.perf_counter() - started) * 1000)
                cases = zip(queries, found, truth, strict=True)
                recall = np.mean([_recall(matrix, *case) for case in cases])
                result["by_ef"][f"{ef}" if fetch == K else f"{ef}, {fetch} reranked"] = {
                    "recall_at_50": round(float(recall), 4),
                    "p50_ms": round(float(np.percentile(times, 50)), 3),
                    "p99_ms": round(float(np.percentile(times, 99)), 3),
                }
        result["rss_after_queries_mb"] = _rss_mb()
    return result


def _exact_top(matrix: np.ndarray, query: np.ndarray, rows: np.ndarray) -> np.ndarray:
    rows = np.sort(rows[rows >= 0])
    if len(rows) <= K:
        return rows
    scores = np.asarray(matrix[rows], dtype=np.float32) @ query
    return rows[np.argpartition(-scores, K - 1)[:K]]


def _recall(matrix: np.ndarray, query: np.ndarray, found: np.ndarray, truth: np.ndarray) -> float:
    """The share of the true K nearest found, a product tied with the K-th counting as found:
    catalogs hold products with the same text, and which of equals is listed is arbitrary."""
    kth = float((np.asarray(matrix[np.sort(truth)], dtype=np.float32) @ query).min())
    found = np.asarray(found[found >= 0], dtype=np.int64)
    scores = np.asarray(matrix[np.sort(found)], dtype=np.float32) @ query
    return min(int((scores >= kth - 1e-3).sum()), K) / K


def _chunks(matrix: np.ndarray, size: int = 100_000) -> Any:
    for first in range(0, matrix.shape[0], size):
        yield first, np.asarray(matrix[first : first + size], dtype=np.float32)


def build_hnswlib(matrix: np.ndarray, storage: str, path: Path, threads: int) -> None:
    import hnswlib

    index = hnswlib.Index(space="ip", dim=matrix.shape[1])
    index.init_index(max_elements=matrix.shape[0], ef_construction=EF_CONSTRUCTION, M=M)
    index.set_num_threads(threads)
    for first, chunk in _chunks(matrix):
        index.add_items(chunk, np.arange(first, first + len(chunk)))
    index.save_index(str(path))


def open_hnswlib(path: Path, storage: str, dim: int) -> Any:
    import hnswlib

    index = hnswlib.Index(space="ip", dim=dim)
    index.load_index(str(path))
    index.set_num_threads(1)

    def search(query: np.ndarray, ef: int, count: int) -> np.ndarray:
        index.set_ef(max(ef, count))
        return index.knn_query(query, k=count)[0][0].astype(np.int64)

    return search


def build_faiss(matrix: np.ndarray, storage: str, path: Path, threads: int) -> None:
    import faiss

    faiss.omp_set_num_threads(threads)
    index = faiss.IndexHNSWSQ(
        matrix.shape[1], faiss.ScalarQuantizer.QT_8bit, M, faiss.METRIC_INNER_PRODUCT
    )
    index.hnsw.efConstruction = EF_CONSTRUCTION
    sample = np.random.default_rng(5).choice(matrix.shape[0], min(100_000, matrix.shape[0]))
    index.train(np.asarray(matrix[np.sort(sample)], dtype=np.float32))
    for _, chunk in _chunks(matrix):
        index.add(chunk)
    faiss.write_index(index, str(path))


def open_faiss(path: Path, storage: str, dim: int) -> Any:
    import faiss

    faiss.omp_set_num_threads(1)
    index = faiss.read_index(str(path), faiss.IO_FLAG_MMAP | faiss.IO_FLAG_READ_ONLY)

    def search(query: np.ndarray, ef: int, count: int) -> np.ndarray:
        index.hnsw.efSearch = max(ef, count)
        return index.search(query[None, :], count)[1][0]

    return search


def build_usearch(matrix: np.ndarray, storage: str, path: Path, threads: int) -> None:
    from usearch.index import Index

    index = Index(
        ndim=matrix.shape[1],
        metric="ip",
        dtype=storage,
        connectivity=M,
        expansion_add=EF_CONSTRUCTION,
    )
    for first, chunk in _chunks(matrix):
        index.add(np.arange(first, first + len(chunk)), chunk, threads=threads)
    index.save(str(path))


def open_usearch(path: Path, storage: str, dim: int) -> Any:
    from usearch.index import Index

    index = Index.restore(str(path), view=True)

    def search(query: np.ndarray, ef: int, count: int) -> np.ndarray:
        index.expansion_search = max(ef, count)
        return np.asarray(index.search(query, count, threads=1).keys, dtype=np.int64)

    return search


BUILDERS = {"hnswlib": build_hnswlib, "faiss": build_faiss, "usearch": build_usearch}
OPENERS = {"hnswlib": open_hnswlib, "faiss": open_faiss, "usearch": open_usearch}


def _peak_mb() -> float:
    # VmHWM, not ru_maxrss: a child keeps its parent's ru_maxrss across exec
    return _rss_mb("VmHWM")


def _rss_mb(field: str = "VmRSS") -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


if __name__ == "__main__":
    main()
