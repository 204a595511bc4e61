"""Which query categoriser: each model kind trained on the same catalog, measured through the
whole understanding stage on the corpus's dev split (item P/R/F1, exact-state match), with its
training time, size and read time. "none" is the copilot without a categoriser.

    python benchmarks/categoriser_choice.py                       # the padded real catalog, dev
    python benchmarks/categoriser_choice.py --catalog CATALOG --kinds centroid nb

With --catalog only (no understanding corpus run): `--train-only` times training from a JSONL
catalog file without building an index, streaming it once (the 1M measurement):

    python benchmarks/categoriser_choice.py --catalog /tmp/synth1m.jsonl.gz --train-only
"""

from __future__ import annotations

import argparse
import json
import pickle
import resource
import time
from collections.abc import Iterator
from pathlib import Path

from rich.console import Console
from rich.table import Table

from shopcopilot.agent import Agent
from shopcopilot.bench import understanding
from shopcopilot.bench.real import prepare_real_benchmark
from shopcopilot.catalog.loader import open_text
from shopcopilot.index import categoriser

SAMPLE_READS = ["dress shoes", "sweater dress for a party", "rain boots for my son", "necklace"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--catalog", type=Path, default=None)
    parser.add_argument("--split", default="dev")
    parser.add_argument("--kinds", nargs="+", default=["none", "centroid", "nb"])
    parser.add_argument("--train-only", action="store_true")
    args = parser.parse_args()
    console = Console()
    if args.train_only:
        console.print(train_from_file(args.catalog))
        return
    catalog = args.catalog or prepare_real_benchmark(Console(stderr=True))[0]
    agent = Agent(catalog, warm_up=False)
    records = understanding.real_records()
    nodes = understanding.node_resolver(agent, records)
    cases = understanding.load_corpus(split=args.split)
    table = Table(title=f"query categoriser choices, {args.split} split, {catalog.name}")
    for column in ("model", "item P", "item R", "item F1", "exact", "train s", "MB", "read ms"):
        table.add_column(column, justify="left" if column == "model" else "right")
    for kind in args.kinds:
        table.add_row(kind, *measure(agent, nodes, records, cases, kind))
    console.print(table)


def measure(agent: Agent, nodes, records, cases, kind: str) -> list[str]:
    started = time.perf_counter()
    model = None
    if kind != "none":
        documents = categoriser.catalog_documents(agent.index.store.path)
        model = categoriser.train(documents, kind=kind)
    seconds = time.perf_counter() - started
    agent.lexicon.categoriser = model
    agent.lexicon._readings.clear()  # readings of another model must not be reused
    scores = understanding.evaluate(agent, cases, nodes, records).to_dict(0, 0, "")
    item = scores["slots"]["item"]
    size = len(pickle.dumps(model)) / 1e6 if model else 0.0
    return [
        f"{item['precision']:.3f}",
        f"{item['recall']:.3f}",
        f"{item['f1']:.3f}",
        f"{scores['exact_match']:.3f}",
        f"{seconds:.1f}",
        f"{size:.1f}",
        f"{read_ms(model):.2f}" if model else "",
    ]


def read_ms(model: categoriser.Categoriser, rounds: int = 100) -> float:
    started = time.perf_counter()
    for _ in range(rounds):
        for text in SAMPLE_READS:
            model.read(text)
    return (time.perf_counter() - started) * 1000 / (rounds * len(SAMPLE_READS))


def train_from_file(path: Path) -> dict:
    """Train from a catalog file as the index would (one stream, at most PER_PATH titles per
    path kept): the time to read, to train, the peak memory and the model's size."""
    started = time.perf_counter()
    count = 0

    def documents() -> Iterator[tuple[str, tuple[str, ...]]]:
        nonlocal count
        with open_text(path) as handle:
            for line in handle:
                record = json.loads(line)
                count += 1
                yield record.get("title") or "", tuple(record.get("categories") or ())

    model = categoriser.train(documents())
    seconds = time.perf_counter() - started
    return {
        "catalog": str(path),
        "products": count,
        "paths": len(model.paths) if model else 0,
        "features": len(model.vocabulary) if model else 0,
        "train_seconds": round(seconds, 1),
        "size_mb": round(len(pickle.dumps(model)) / 1e6, 1),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
    }


if __name__ == "__main__":
    main()
