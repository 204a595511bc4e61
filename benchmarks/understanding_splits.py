"""One row per corpus split: the headline slots of two runs, before -> after.

    python benchmarks/understanding_splits.py runs/u-start runs/u-end dev test fresh3

reads START-SPLIT/understanding.json and END-SPLIT/understanding.json (as written by
`shopcopilot eval-understanding --split SPLIT -o DIR-SPLIT`).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

F1_SLOTS = ("item", "not", "brands", "reference", "critique")
EXACT_SLOTS = ("budget", "size")


def _read(folder: str, split: str) -> dict:
    return json.loads(Path(f"{folder}-{split}", "understanding.json").read_text(encoding="utf-8"))


def _row(split: str, before: dict, after: dict) -> str:
    cells = [f"{before['slots'][k]['f1']:.3f} -> {after['slots'][k]['f1']:.3f}" for k in F1_SLOTS]
    cells += [f"{before['slot_exact'][k]:.3f} -> {after['slot_exact'][k]:.3f}" for k in EXACT_SLOTS]
    cells.append(f"{before['exact_match']:.3f} -> {after['exact_match']:.3f}")
    first, then = before["first_item_right_kind"], after["first_item_right_kind"]
    cells.append(f"{first['copilot']:.3f} -> **{then['copilot']:.3f}** ({then['bm25']:.3f})")
    return f"| {split} | " + " | ".join(cells) + " |"


def main() -> None:
    start, end, *splits = sys.argv[1:]
    heads = [f"{k} F1" for k in F1_SLOTS] + [f"{k} exact" for k in EXACT_SLOTS]
    heads += ["exact-state", "first card right kind (plain BM25)"]
    print("| split | " + " | ".join(heads) + " |")
    print("|---" * (len(heads) + 1) + "|")
    for split in splits:
        print(_row(split, _read(start, split), _read(end, split)))


if __name__ == "__main__":
    main()
