"""How far two annotators agree on the reader's training data: a second annotator labelled a
sample of it blind (benchmarks/data/understanding/train/agreement/second.jsonl).

    python benchmarks/train_agreement.py [--reader]

Per slot, span F1 between the two annotations: exact (same characters and slot) and loose
(overlapping characters, same slot); for items, whether the two name the same catalog node.
`--reader` scores the shipped reader against the first annotation on the same messages (it
was trained on them: an upper bound of its fit, not a test).
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

TRAIN = Path(__file__).resolve().parent / "data" / "understanding" / "train"


def first_annotation() -> dict[str, list]:
    out = {}
    for name in ("messages.jsonl", "exchanges.jsonl"):
        for line in (TRAIN / name).read_text(encoding="utf-8").splitlines():
            raw = json.loads(line)
            turns = raw.get("turns", [raw])
            out[raw["id"]] = [
                (t.get("user", t.get("text")), t.get("asked"), t["spans"], len(t.get("shown", [])))
                for t in turns
            ]
    return out


def second_annotation() -> dict[str, list]:
    out = {}
    for line in (TRAIN / "agreement" / "second.jsonl").read_text(encoding="utf-8").splitlines():
        raw = json.loads(line)
        out[raw["id"]] = [t["spans"] for t in raw["turns"]] if "turns" in raw else [raw["spans"]]
    return out


def spans(annotation: list[dict]) -> set[tuple[int, int, str, str | None]]:
    return {
        (s["start"], s["end"], s["slot"], s.get("value") if s["slot"] == "item" else None)
        for s in annotation
    }


class Scores:
    def __init__(self) -> None:
        self.a, self.b, self.exact, self.loose_a, self.loose_b = (Counter() for _ in range(5))
        self.items = self.same_node = 0

    def add(self, one: set, two: set) -> None:
        for s in one:
            self.a[s[2]] += 1
            self.exact[s[2]] += any(t[:3] == s[:3] for t in two)
            self.loose_a[s[2]] += any(t[2] == s[2] and t[0] < s[1] and s[0] < t[1] for t in two)
        for t in two:
            self.b[t[2]] += 1
            self.loose_b[t[2]] += any(s[2] == t[2] and s[0] < t[1] and t[0] < s[1] for s in one)
        for s in (s for s in one if s[2] == "item"):
            match = [t for t in two if t[2] == "item" and t[0] < s[1] and s[0] < t[1]]
            if match:
                self.items += 1
                self.same_node += match[0][3] == s[3]

    def table(self) -> dict:
        out = {}
        for slot in sorted(self.a | self.b):
            exact = 2 * self.exact[slot] / max(self.a[slot] + self.b[slot], 1)
            loose = (self.loose_a[slot] + self.loose_b[slot]) / max(self.a[slot] + self.b[slot], 1)
            out[slot] = {
                "exact F1": round(exact, 3),
                "overlap F1": round(loose, 3),
                "n": self.a[slot],
            }
        total = sum(self.a.values()) + sum(self.b.values())
        out["all"] = {
            "exact F1": round(2 * sum(self.exact.values()) / total, 3),
            "overlap F1": round(
                (sum(self.loose_a.values()) + sum(self.loose_b.values())) / total, 3
            ),
        }
        out["item node, where both mark the item"] = round(self.same_node / max(self.items, 1), 3)
        return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reader", action="store_true")
    args = parser.parse_args()
    first, second = first_annotation(), second_annotation()
    agreement, reader_scores = Scores(), Scores()
    reader = None
    if args.reader:
        from shopcopilot.reader.model import shipped

        reader = shipped()
    turns = 0
    for case, second_turns in second.items():
        for (text, asked, gold, shown), other in zip(first[case], second_turns, strict=True):
            turns += 1
            agreement.add(spans(gold), spans(other))
            if reader is not None:
                doc = reader.read(text, {"asked": asked, "shown": shown})
                got = [
                    {"start": s.start, "end": s.end, "slot": s.label, "value": s.value}
                    for s in doc.spans
                ]
                reader_scores.add(spans(gold), spans(got))
    result = {"cases": len(second), "turns": turns, "second annotator": agreement.table()}
    if reader is not None:
        result["shipped reader (trained on these)"] = reader_scores.table()
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
