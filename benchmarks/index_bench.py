"""Index benchmark: build time, cold open, query latency and peak memory, per back end.

    python benchmarks/index_bench.py                      # synthetic 50k catalog, both back ends
    python benchmarks/index_bench.py --size 1000000 --backends tantivy --fts5-queries 20

Each measured step runs in a fresh child process so its time and peak RSS are its
own: "cold open" means a new process opening a built index (the OS file cache is
left warm; dropping it would disturb everyone else on a shared machine).
Queries are 5 to 40 words drawn from the title and features of random products.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from shopcopilot.catalog.loader import LoadReport, iter_products
from shopcopilot.index import open_index
from shopcopilot.index.tokenize import tokens

MIN_TERMS, MAX_TERMS = 5, 40


def main() -> None:
    args = _arguments()
    if args.step:
        print(json.dumps(_run_step(args)))
        return
    catalog = (
        Path(args.catalog) if args.catalog else _synthetic_catalog(args.work, args.size, args.seed)
    )
    queries_file = args.work / f"queries-{catalog.name}-{args.queries}.json"
    if not queries_file.exists():
        queries_file.write_text(json.dumps(make_queries(catalog, args.queries, args.seed)))
    with tempfile.TemporaryDirectory(dir=args.work, prefix="cache-") as cache:
        report = {"machine": machine(), "catalog": str(catalog), "command": " ".join(sys.argv)}
        report["build"] = _child(args, "build", catalog, cache)
        report["open"] = _child(args, "open", catalog, cache)
        for backend in args.backends.split(","):
            count = args.fts5_queries if backend == "fts5" else args.queries
            if backend == "fts5":
                report["fts5_build"] = _child(args, "fts5-build", catalog, cache)
            report[f"queries_{backend}"] = _child(
                args, "queries", catalog, cache, backend, queries_file, count
            )
    print(json.dumps(report, indent=1))


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size", type=int, default=50_000, help="synthetic catalog size")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--catalog", help="use this catalog instead of a synthetic one")
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument(
        "--fts5-queries", type=int, default=1000, help="FTS5 is slow at scale: fewer queries"
    )
    parser.add_argument("--backends", default="tantivy,fts5")
    parser.add_argument(
        "--work", type=Path, default=Path(tempfile.gettempdir()) / "shopcopilot-index-bench"
    )
    parser.add_argument(
        "--step", choices=["build", "open", "fts5-build", "queries"], help=argparse.SUPPRESS
    )
    parser.add_argument("--cache", help=argparse.SUPPRESS)
    parser.add_argument("--backend", help=argparse.SUPPRESS)
    parser.add_argument("--queries-file", help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    return args


def _synthetic_catalog(work: Path, size: int, seed: int) -> Path:
    from shopcopilot.catalog.synth import write_catalog

    path = work / f"synthetic-{size}-seed{seed}.jsonl.gz"
    if not path.exists():
        started = time.perf_counter()
        partial = path.with_name(path.name + ".partial")
        write_catalog(partial, size=size, seed=seed, progress=True)
        partial.replace(path)
        print(f"generated {path} in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    return path


def make_queries(catalog: Path, count: int, seed: int) -> list[str]:
    """`count` queries, each 5-40 words of one random product's title and features."""
    rng = random.Random(seed)
    sample: list[list[str]] = []  # reservoir of word pools, so the catalog is read once
    for seen, product in enumerate(iter_products(catalog, LoadReport(str(catalog)))):
        pool = tokens(" ".join((product.title, *product.features)))
        if seen < count:
            sample.append(pool)
        elif (slot := rng.randint(0, seen)) < count:
            sample[slot] = pool
    queries = []
    for pool in sample:
        wanted = min(len(pool), rng.randint(MIN_TERMS, MAX_TERMS))
        picked = sorted(rng.sample(range(len(pool)), wanted))
        queries.append(" ".join(pool[i] for i in picked))
    return queries


def _child(
    args: argparse.Namespace, step: str, catalog: Path, cache: str, *extra: Any
) -> dict[str, Any]:
    command = [
        sys.executable,
        __file__,
        "--step",
        step,
        "--catalog",
        str(catalog),
        "--cache",
        cache,
    ]
    if extra:
        backend, queries_file, count = extra
        command += [
            "--backend",
            backend,
            "--queries-file",
            str(queries_file),
            "--queries",
            str(count),
        ]
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    result = json.loads(done.stdout)
    print(f"{step} {extra[:1]}: {result}", file=sys.stderr)
    return result


def _run_step(args: argparse.Namespace) -> dict[str, Any]:
    os.environ["SHOPCOPILOT_CACHE"] = args.cache
    load_before = round(
        os.getloadavg()[0], 2
    )  # 1-minute average: other jobs slow a CPU-bound build
    started = time.perf_counter()
    index = open_index(args.catalog, progress=False)
    opened = time.perf_counter() - started
    result: dict[str, Any] = {"seconds": round(opened, 3)}
    if args.step == "build":
        # The build is CPU-bound on all cores: its CPU time (this process and its workers) says
        # more than its wall time on a shared machine.
        result["cpu_s"] = round(
            _cpu_seconds(resource.RUSAGE_SELF) + _cpu_seconds(resource.RUSAGE_CHILDREN), 2
        )
        result["load_average_before"] = load_before
        result["products"] = index.manifest["products"]
        result["steps"] = index.manifest["timings_s"]
        result["derive_workers"] = index.manifest["derive_workers"]
        result["index_mb"] = round(_folder_bytes(index.path) / 1e6, 1)
    elif args.step == "open":
        first = time.perf_counter()
        index.search("women cotton dress")
        result["first_query_ms"] = round((time.perf_counter() - first) * 1000, 2)
    elif args.step == "fts5-build":
        started = time.perf_counter()
        index.backend("fts5")
        result["seconds"] = round(time.perf_counter() - started, 3)
        result["fts5_mb"] = round((index.path / "fts5.sqlite").stat().st_size / 1e6, 1)
    else:
        queries = json.loads(Path(args.queries_file).read_text())[: args.queries]
        result = latencies(index, queries, args.backend)
    result["peak_rss_mb"] = _peak_rss_mb(resource.RUSAGE_SELF)
    workers_rss = _peak_rss_mb(resource.RUSAGE_CHILDREN)
    if workers_rss:
        result["worker_peak_rss_mb"] = workers_rss
    return result


def latencies(index: Any, queries: list[str], backend: str) -> dict[str, Any]:
    index.search(queries[0], backend=backend)  # the first call pays one-off setup
    timings = []
    for query in queries:
        started = time.perf_counter()
        index.search(query, limit=10, backend=backend)
        timings.append((time.perf_counter() - started) * 1000)
    cuts = statistics.quantiles(timings, n=100, method="inclusive")
    return {
        "queries": len(timings),
        "mean_terms": round(statistics.mean(len(q.split()) for q in queries), 1),
        "p50_ms": round(cuts[49], 3),
        "p99_ms": round(cuts[98], 3),
        "max_ms": round(max(timings), 3),
    }


def _cpu_seconds(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def _peak_rss_mb(who: int) -> float:
    return round(resource.getrusage(who).ru_maxrss / 1024, 1)  # Linux reports KiB


def _folder_bytes(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


def machine() -> dict[str, Any]:
    cpuinfo = Path("/proc/cpuinfo").read_text().splitlines()
    cpu = next(
        (line.split(":", 1)[1].strip() for line in cpuinfo if "model name" in line),
        platform.processor(),
    )
    meminfo = Path("/proc/meminfo").read_text().splitlines()
    memory_kb = next(int(line.split()[1]) for line in meminfo if "MemTotal" in line)
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gb": round(memory_kb / 1024**2, 1),
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


if __name__ == "__main__":
    main()
