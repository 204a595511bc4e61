"""What product vectors cost to build: seconds, size on disk and peak memory, for one index store.

    python benchmarks/dense_build.py --store ~/.cache/shopcopilot/index/ID/store.sqlite
    [--model wordllama|minilm] [--limit N]

Past the exact scan's size the graph index over the vectors (index/ann.py) is built too, and
its share of the time printed. The vectors are written to a temporary folder (the index's own
folder is left alone), then the folder is removed. Peak RSS is this process's (the encoder,
the texts of one chunk, the graph and the memory-mapped output: its pages count while dirty).
"""

from __future__ import annotations

import argparse
import json
import resource
import tempfile
import time
from pathlib import Path

from shopcopilot.index.store import ProductStore
from shopcopilot.index.vectors import load_encoder, load_or_build


class _Limited:
    """A store that says it holds only its first `limit` rows (the texts stop there too)."""

    def __init__(self, store: ProductStore, limit: int | None) -> None:
        self.path, self._len = store.path, min(limit or len(store), len(store))

    def __len__(self) -> int:
        return self._len


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--store", type=Path, required=True)
    parser.add_argument("--model", default="wordllama")
    parser.add_argument("--limit", type=int)
    args = parser.parse_args()
    started = time.perf_counter()
    encoder = load_encoder(args.model)
    if encoder is None:
        raise SystemExit(f"the {args.model} encoder does not load")
    loaded = time.perf_counter() - started
    store = _Limited(ProductStore(args.store), args.limit)
    with tempfile.TemporaryDirectory() as folder:
        started, cpu = time.perf_counter(), time.process_time()
        vectors = load_or_build(store, Path(folder), encoder, progress=True)
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
        size = sum(p.stat().st_size for p in Path(folder).iterdir())
        parts = {
            p.name.split("-")[0]: json.loads(p.read_text()) for p in Path(folder).glob("*.json")
        }
    assert vectors is not None and len(vectors) == len(store)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    graph = f", of which the graph {parts['ann']['seconds']:.1f} s" if "ann" in parts else ""
    print(
        f"{args.model}: {len(store):,} products in {seconds:.1f} s{graph} ({cpu:.1f} s CPU, "
        f"{len(store) / seconds:,.0f} a second), {size / 1e6:.1f} MB, peak RSS {peak:.0f} MB, "
        f"model loaded in {loaded:.1f} s"
    )


if __name__ == "__main__":
    main()
