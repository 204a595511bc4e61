"""Scores of a reader alone: span F1 on the held-out tenth of the training data, and on a split
of the understanding corpus the item node and the negated values it reads."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .model import Reader
from .train import Example, examples, split_of


def span_scores(pairs: Iterable[tuple[set, set]]) -> dict[str, Any]:
    """Precision, recall and F1 per label of (start, end, label) spans, got against wanted,
    and over all labels."""
    got_n: Counter[str] = Counter()
    want_n: Counter[str] = Counter()
    hit: Counter[str] = Counter()
    for got, want in pairs:
        got_n.update(s[2] for s in got)
        want_n.update(s[2] for s in want)
        hit.update(s[2] for s in want if s in got)
    out = {label: _prf(hit[label], got_n[label], want_n[label]) for label in sorted(want_n)}
    out["all spans"] = _prf(sum(hit.values()), sum(got_n.values()), sum(want_n.values()))
    return out


def _prf(hit: int, got: int, want: int) -> dict[str, Any]:
    p, r = hit / max(got, 1), hit / max(want, 1)
    f1 = round(2 * p * r / (p + r), 3) if p + r else 0.0
    return {"p": round(p, 3), "r": round(r, 3), "f1": f1, "n": want}


def evaluate_held(reader: Reader, data_dir: Path) -> dict[str, Any]:
    pairs = []
    items = items_right = 0
    for example in (e for e in examples(data_dir) if split_of(e) == "held"):
        doc = reader.read(example.text, example.context)
        got = {(s.start, s.end, s.label) for s in doc.spans}
        pairs.append((got, {(s, e, label) for s, e, label, _ in example.spans}))
        wanted = [v for s, e, label, v in example.spans if label == "item"]
        if wanted:
            items += 1
            read = [s.value for s in doc.of("item")]
            items_right += bool(read) and read[0] == wanted[0]
    out = span_scores(pairs)
    out["item node right"] = round(items_right / max(items, 1), 3)
    return out


def evaluate_corpus(reader: Reader, split: str) -> dict[str, Any]:
    """On first messages that name an item: is the first item read the annotated node (or one of
    its alternatives)?"""
    from ..bench.understanding import load_corpus

    n = right = none = 0
    for case in load_corpus(split=split):
        if case.exchange:
            continue
        turn = case.turns[0]
        item = turn.expect.get("item")
        if not item:
            continue
        n += 1
        doc = reader.read(
            turn.user, {"asked": turn.asked} if getattr(turn, "asked", None) else None
        )
        read = [s.value for s in doc.of("item") if not doc.negated(s)]
        none += not read
        right += bool(read) and read[0] in {item, *turn.expect.get("item_alternatives", [])}
    return {
        "split": split,
        "n": n,
        "item node right": round(right / max(n, 1), 3),
        "no item read": none,
    }


def write_held_corpus(data_dir: Path, out_dir: Path) -> int:
    """The held-out tenth's single messages as an understanding corpus (its dev split), so that
    `eval-understanding --corpus OUT --reader M` scores the whole copilot, rules and a model
    trained with `--held-out`, on language neither was tuned on. Returns how many."""
    import json

    out_dir.mkdir(parents=True, exist_ok=True)
    n = 0
    with (out_dir / "utterances.jsonl").open("w", encoding="utf-8") as out:
        for path in sorted(data_dir.glob("*.jsonl")):
            for line in path.read_text(encoding="utf-8").splitlines():
                raw = json.loads(line) if line.strip() else {}
                if "text" not in raw or split_of(Example(raw["text"], [])) != "held":
                    continue
                case = {"id": raw["id"], "split": "dev", "text": raw["text"]}
                case |= {"expect": raw["expect"], "context": raw.get("context") or {}}
                out.write(json.dumps(case) + "\n")
                n += 1
    return n
