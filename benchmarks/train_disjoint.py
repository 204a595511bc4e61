"""Is the reader's training data disjoint from every message it is measured on?

    python benchmarks/train_disjoint.py [--train DIR] [--max-distance N]

Compares each training message with every message of the understanding corpus (dev, test, the
fresh slices, the second annotation's sample) and of the conversation suite, after lowercasing
and folding spaces and punctuation: none may be equal, and none within a small edit distance
(at most `--max-distance` characters, and at most a tenth of the shorter message). Prints each
offending pair with file and line and exits 1 when there is one.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import unicodedata
from collections.abc import Iterator
from pathlib import Path

from rapidfuzz import process
from rapidfuzz.distance import Levenshtein

DATA = Path(__file__).resolve().parent / "data"
UNDERSTANDING = DATA / "understanding"
MEASURED = [
    *sorted(UNDERSTANDING.glob("*.jsonl")),
    *sorted((DATA / "conversations").glob("*.jsonl")),
]


def fold(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).lower()
    return " ".join(re.sub(r"[\W_]+", " ", text).split())


def messages(path: Path) -> Iterator[tuple[str, str]]:
    """(where, message) for every shopper message of a JSON Lines file of any of the layouts."""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        raw = json.loads(line)
        if "text" in raw:
            yield f"{path.name}:{number}", raw["text"]
        for turn in raw.get("turns", []):
            for key in ("user", "text", "say"):
                if isinstance(turn.get(key), str):
                    yield f"{path.name}:{number}", turn[key]


def clashes(
    train: list[tuple[str, str]], measured: list[tuple[str, str]], max_distance: int
) -> list[str]:
    folded = [fold(text) for _, text in measured]
    exact = {f: where for f, (where, _) in zip(folded, measured, strict=True)}
    out = []
    for where, text in train:
        key = fold(text)
        if key in exact:
            out.append(f"{where}: equal to {exact[key]}: {text!r}")
            continue
        limit = min(max_distance, len(key) // 10)
        if limit == 0:
            continue
        hit = process.extractOne(key, folded, scorer=Levenshtein.distance, score_cutoff=limit)
        if hit is not None:
            out.append(f"{where}: within {hit[1]} edits of {measured[hit[2]][0]}: {text!r}")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", type=Path, default=UNDERSTANDING / "train")
    parser.add_argument("--max-distance", type=int, default=5)
    args = parser.parse_args(argv)
    train = [m for path in sorted(args.train.glob("*.jsonl")) for m in messages(path)]
    measured = [m for path in MEASURED for m in messages(path)]
    found = clashes(train, measured, args.max_distance)
    for line in found:
        print(line)
    print(
        f"{len(train)} training messages, {len(measured)} measured messages, {len(found)} too close"
    )
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
