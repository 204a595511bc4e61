"""Ablations and tuning: run agent variants on the same sessions, in one process.

Each variant is the default AgentSettings with one thing changed. Variants share
one index and one product-view cache, so only the agent logic differs.

    python benchmarks/ablate.py --real --protocol official --variants all   # the bench-real catalog
    and sessions
    python benchmarks/ablate.py --catalog CATALOG --sessions SESSIONS --try 'ranking.category=5'
    python benchmarks/ablate.py --real --protocol natural-reactive --variants default
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from pathlib import Path

from rich.console import Console

from shopcopilot.agent import Agent, AgentSettings
from shopcopilot.bench.customer import PROTOCOLS
from shopcopilot.bench.metrics import summarize
from shopcopilot.bench.real import prepare_real_benchmark
from shopcopilot.bench.runner import RunSettings, load_bench_data, run_session
from shopcopilot.bench.sessions_io import load_sessions


def _with(section: str, **changes):
    def make(base: AgentSettings) -> AgentSettings:
        return dataclasses.replace(
            base, **{section: dataclasses.replace(getattr(base, section), **changes)}
        )

    return make


VARIANTS = {
    "default": lambda s: s,
    "no category evidence": _with("ranking", category=0.0),
    "no fragment evidence": _with("ranking", fragment_exact=0.0, fragment_partial=0.0),
    "no exact-phrase bonus": _with("ranking", fragment_exact=1.2),
    "no attribute values": _with("ranking", value=0.0),
    "no budget": _with("ranking", budget=0.0),
    "no rejections": _with("ranking", rejected=0.0),
    "no lexical score": _with("ranking", lexical=0.0),
    "no popularity tie-break": _with("ranking", popularity=0.0, rating=0.0),
    "no questions": _with("dialogue", ask=False),
    "no open question": _with("dialogue", open_question_value=0.0),
    "no narrow width (always 10)": _with("dialogue", first_turn_width=10, asking_width=10),
    "no prominence": _with("ranking", prominence=0.0),
    "no window deepening": _with("retrieval", window_growth=0),
    "no phrase retrieval": _with("retrieval", phrase_window=0),
    "search descriptions too": _with("retrieval", skip_fields=()),
    "search without store and description": _with(
        "retrieval", skip_fields=("store", "description")
    ),
}


def _assigned(spec: str):
    """'ranking.category=5,dialogue.asking_width=1' -> a settings transform."""
    changes = []
    for assignment in spec.split(","):
        path, value = assignment.split("=")
        section, name = path.strip().split(".")
        changes.append((section, name, float(value) if "." in value else int(value)))

    def make(base: AgentSettings) -> AgentSettings:
        for section, name, value in changes:
            base = _with(section, **{name: value})(base)
        return base

    return make


def width_variants() -> dict:
    out = {}
    for first, asking, turns in (
        (10, 10, 1),
        (3, 10, 1),
        (1, 10, 1),
        (1, 3, 2),
        (1, 1, 2),
        (1, 1, 3),
        (1, 1, 4),
        (1, 1, 5),
        (1, 2, 4),
        (3, 3, 3),
    ):
        out[f"width first={first} then={asking} for {turns} turn(s)"] = _with(
            "dialogue", first_turn_width=first, asking_width=asking, narrow_turns=turns
        )
    return out


def run_variant(agent: Agent, sessions, data, settings: RunSettings) -> dict:
    started = time.perf_counter()
    runs = [run_session(agent, session, data, settings) for session in sessions]
    latencies = sorted(t.latency_ms for r in runs for t in r.turns)
    metrics = summarize([r.outcome for r in runs])
    by_scenario = {}
    for scenario in sorted({r.scenario_type for r in runs}):
        by_scenario[scenario] = summarize([r.outcome for r in runs if r.scenario_type == scenario])
    return {
        "metrics": metrics,
        "scenarios": by_scenario,
        "p50_ms": latencies[len(latencies) // 2],
        "seconds": time.perf_counter() - started,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--real", action="store_true", help="the public sessions on the padded real catalog"
    )
    parser.add_argument("--catalog")
    parser.add_argument("--sessions")
    parser.add_argument("--protocol", default="official", choices=PROTOCOLS)
    parser.add_argument("--variants", default="all", help="all | widths | comma-separated names")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--try",
        dest="tries",
        action="append",
        default=[],
        help="a variant given as assignments, e.g. 'ranking.category=5,dialogue.asking_width=1'",
    )
    parser.add_argument("--limit", type=int, help="only the first N sessions")
    parser.add_argument("-o", "--out", type=Path)
    args = parser.parse_args()
    if args.real:
        args.catalog, args.sessions = prepare_real_benchmark(Console(stderr=True))
    if not (args.catalog and args.sessions):
        parser.error("give --real, or both --catalog and --sessions")
    sessions = load_sessions(args.sessions)[: args.limit]
    data = load_bench_data(args.catalog, sessions)
    base = Agent(args.catalog)
    if args.tries:
        table = {"default": VARIANTS["default"], **{spec: _assigned(spec) for spec in args.tries}}
    else:
        table = {"all": VARIANTS, "widths": width_variants()}.get(args.variants)
    if table is None:
        table = {name: {**VARIANTS, **width_variants()}[name] for name in args.variants.split(",")}
    settings = RunSettings(protocol=args.protocol, seed=args.seed, turn_timeout=None)
    lines = [
        f"| variant ({args.protocol}) | TechScore | HitRate | MRR | MTTC | "
        + " | ".join(f"{s} TS" for s in ("buying", "browsing", "intent_override", "boundary"))
        + " |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name, change in table.items():
        result = run_variant(base.with_settings(change(AgentSettings())), sessions, data, settings)
        m = result["metrics"]
        per = [
            result["scenarios"].get(s, {}).get("recommended_technical_score", float("nan"))
            for s in ("buying", "browsing", "intent_override", "boundary")
        ]
        line = (
            f"| {name} | {m['recommended_technical_score']:.4f} | {m['hit_rate_at_10']:.3f} "
            f"| {m['mrr']:.4f} | {m['mttc']:.2f} | " + " | ".join(f"{v:.4f}" for v in per) + " |"
        )
        lines.append(line)
        print(line, flush=True)
    if args.out:
        args.out.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
