"""Markdown table of understanding.json files side by side (slot F1 and exact match).

    python benchmarks/understanding_table.py "start:runs/u-start/understanding.json" \
        "end:runs/u-end/understanding.json"
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main() -> None:
    runs = [
        (label, json.loads(Path(path).read_text(encoding="utf-8")))
        for label, path in (arg.split(":", 1) for arg in sys.argv[1:])
    ]
    print("| slot | n | " + " | ".join(f"{label} P / R / F1 (exact)" for label, _ in runs) + " |")
    print("|---|---|" + "---|" * len(runs))
    for slot, first in runs[0][1]["slots"].items():
        cells = []
        for _, run in runs:
            s, exact = run["slots"][slot], run["slot_exact"].get(slot)
            cells.append(
                f"{s['precision']:.3f} / {s['recall']:.3f} / **{s['f1']:.3f}**"
                + (f" ({exact:.3f})" if exact is not None else "")
            )
        print(f"| {slot} | {first['n']} | " + " | ".join(cells) + " |")
    print(
        "| exact-state match | "
        + str(runs[0][1]["n_turns"])
        + " turns | "
        + " | ".join(f"**{run['exact_match']:.3f}**" for _, run in runs)
        + " |"
    )


if __name__ == "__main__":
    main()
