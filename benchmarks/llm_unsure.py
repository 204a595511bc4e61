"""How often the model resolver WOULD be asked: the share of turns the rules are unsure of.

    python benchmarks/llm_unsure.py                  # understanding corpus (dev) + public 200
    python benchmarks/llm_unsure.py --split test     # report only: the test split

No model is called: a census stands where the resolver would (state.update's `consult`), records
why the rules are unsure (state/resolver.py `unsure`) and changes nothing, so every answer is the
rules-only answer. On the understanding corpus it also says how often the rules' reading was
wrong on the turns flagged and on the others: a signal worth its cost flags the misses.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from rich.console import Console

from shopcopilot.agent import Agent
from shopcopilot.bench import understanding
from shopcopilot.bench.real import prepare_real_benchmark
from shopcopilot.bench.runner import RunSettings, load_bench_data, run_session
from shopcopilot.bench.sessions_io import load_sessions
from shopcopilot.state.critique import Shown
from shopcopilot.state.lexicon import Lexicon
from shopcopilot.state.model import ShoppingState
from shopcopilot.state.parse import Observation
from shopcopilot.state.resolver import REASONS, unread_words, unsure
from shopcopilot.state.update import read_critiques


class Census:
    """A `consult` that only counts: the reasons of every turn, in order."""

    def __init__(self) -> None:
        self.turns: list[list[str]] = []
        self.words: list[tuple[int, int]] = []  # (content words, uncovered) per turn
        self.seconds: list[float] = []  # what deciding cost per turn (no model is called)

    def __call__(
        self, state: ShoppingState, obs: Observation, shown: Sequence[Shown], lexicon: Lexicon
    ) -> tuple[Observation, dict[str, Any]]:
        start = time.perf_counter()
        self.turns.append(unsure(obs, shown, read_critiques(state, obs, shown)))
        self.seconds.append(time.perf_counter() - start)
        words, uncovered = unread_words(obs)
        self.words.append((len(words), len(uncovered)))
        return obs, {}

    def flagged_with(self, least: int, share: float) -> list[bool]:
        """Would each turn be asked with another "unread" threshold?"""
        return [
            bool(set(reasons) - {"unread"}) or (gone >= least and gone >= share * words)
            for reasons, (words, gone) in zip(self.turns, self.words, strict=True)
        ]

    def summary(self) -> dict[str, Any]:
        n = len(self.turns)
        flagged = sum(bool(r) for r in self.turns)
        by_reason = Counter(reason for reasons in self.turns for reason in reasons)
        return {
            "turns": n,
            "asked": flagged,
            "asked_share": round(flagged / n, 4) if n else 0.0,
            "by_reason": {r: round(by_reason[r] / n, 4) for r in REASONS},
            "decide_ms_p50": round(1000 * float(np.percentile(self.seconds, 50)), 3),
            "decide_ms_p99": round(1000 * float(np.percentile(self.seconds, 99)), 3),
        }


def corpus(agent: Agent, split: str) -> dict[str, Any]:
    census = Census()
    agent.resolver = census
    cases = understanding.load_corpus(understanding.CORPUS_DIR, split)
    records = understanding.real_records()
    nodes = understanding.node_resolver(agent, records)
    report = understanding.evaluate(agent, cases, nodes, records)
    keys = [(case.id, number) for case in cases for number in range(1, len(case.turns) + 1)]
    missed = {(m["id"], m["turn"]) for m in report.misses}
    flagged = [key for key, reasons in zip(keys, census.turns, strict=True) if reasons]
    calm = [key for key, reasons in zip(keys, census.turns, strict=True) if not reasons]
    out = census.summary()
    out["split"] = split
    out["miss_rate_when_asked"] = _rate(flagged, missed)
    out["miss_rate_otherwise"] = _rate(calm, missed)
    out["misses_flagged"] = round(len(missed & set(flagged)) / len(missed), 4) if missed else 0.0
    out["unread_thresholds"] = [
        _threshold(census, keys, missed, least, share)
        for least in (1, 2, 3)
        for share in (0.34, 0.5, 0.75)
    ]
    return out


def _threshold(
    census: Census,
    keys: list[tuple[str, int]],
    missed: set[tuple[str, int]],
    least: int,
    share: float,
) -> dict[str, Any]:
    asked = [k for k, flag in zip(keys, census.flagged_with(least, share), strict=True) if flag]
    return {
        "min_words": least,
        "min_share": share,
        "asked_share": round(len(asked) / len(keys), 4),
        "miss_rate_when_asked": _rate(asked, missed),
        "misses_flagged": round(len(missed & set(asked)) / len(missed), 4) if missed else 0.0,
    }


def _rate(keys: list[tuple[str, int]], missed: set[tuple[str, int]]) -> float:
    return round(sum(k in missed for k in keys) / len(keys), 4) if keys else 0.0


def public(agent: Agent, catalog: Path, sessions_path: Path, protocol: str) -> dict[str, Any]:
    census = Census()
    sibling = agent.with_settings(agent.settings)
    sibling.resolver = census
    sessions = load_sessions(sessions_path)
    data = load_bench_data(catalog, sessions)
    for session in sessions:
        run_session(sibling, session, data, RunSettings(protocol=protocol, turn_timeout=None))
    out = census.summary()
    out["protocol"] = protocol
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--split", default="dev", choices=["dev", "test", "fresh", "all"])
    parser.add_argument("-o", "--out", type=Path, default=Path("runs/llm-unsure.json"))
    args = parser.parse_args()
    catalog, sessions_path = prepare_real_benchmark(Console(stderr=True))
    agent = Agent(catalog, warm_up=False, resolver=None)
    agent.warm_up()
    results = {
        "corpus": corpus(agent, args.split),
        "public_natural": public(agent, catalog, sessions_path, "natural"),
        "public_official": public(agent, catalog, sessions_path, "official"),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1), encoding="utf-8")
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
