"""How far two blind annotators agree on the understanding corpus: the ceiling of its scores.

    python benchmarks/annotator_agreement.py [--split dev|test] [--copilot] [-o OUT.json]

A second annotator, blind to the parser and to the first annotation, annotated a sample of
each split from the same written conventions (benchmarks/data/understanding/agreement/).
Its reading is scored against the corpus's exactly as the copilot's state is (same slots,
same matchers): the first annotator is the gold, the second the reader. Where two careful
readers of the same conventions differ, a reader's score cannot tell right from wrong, so
these numbers bound what the corpus can measure. `--copilot` plays the copilot on the same
turns (the padded real catalog, the people's settings) for a side-by-side table.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from shopcopilot.bench import understanding as u

AGREEMENT = u.CORPUS_DIR / "agreement"


def copilot(cases: list[u.Case]) -> u.Report:
    from shopcopilot.agent import FOR_PEOPLE, Agent
    from shopcopilot.bench.commands import _understanding_catalog

    agent = Agent(_understanding_catalog(None), settings=FOR_PEOPLE, warm_up=False)
    records = u.real_records()
    return u.evaluate(agent, cases, u.node_resolver(agent, records), records)


def row(name: str, summary: dict[str, Any]) -> str:
    f1 = summary["slots"]
    cells = [f"{f1[s]['f1']:.3f}" for s in ("item", "not", "reference", "critique")]
    cells += [f"{summary['slot_exact'].get(s, 0):.3f}" for s in ("budget", "size")]
    cells.append(f"{summary['exact_match']:.3f}")
    return f"| {name} | " + " | ".join(cells) + " |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("dev", "test"), default="dev")
    parser.add_argument("--copilot", action="store_true", help="score the copilot on the sample")
    parser.add_argument("-o", "--out", type=Path)
    args = parser.parse_args()
    second = u.second_reading(AGREEMENT / f"second_{args.split}.jsonl")
    cases = [c for c in u.load_corpus(split=args.split) if c.id in second]
    n_utt, n_ex = sum(not c.exchange for c in cases), sum(c.exchange for c in cases)
    results = {
        "second annotator": u.agreement(cases, second).to_dict(n_utt, n_ex, f"{args.split} sample")
    }
    if args.copilot:
        results["copilot"] = copilot(cases).to_dict(n_utt, n_ex, f"{args.split} sample")
    print(f"{n_utt} utterances, {n_ex} exchanges of the {args.split} split")
    print(
        "| reader | item F1 | not F1 | reference F1 | critique F1 | budget exact | size exact "
        "| exact-state |"
    )
    print("|---" * 8 + "|")
    for name, summary in results.items():
        print(row(name, summary))
    if args.out:
        args.out.write_text(json.dumps(results, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
