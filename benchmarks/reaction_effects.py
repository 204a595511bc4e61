"""What each kind of shopper reaction does to the copilot, reaction by reaction.

    python benchmarks/reaction_effects.py --real                      # public 200, padded catalog
    python benchmarks/reaction_effects.py --catalog C --sessions S -o effects.md

Plays the natural-reactive protocol (bench/natural.py with reactions on). At every message
that reacts to the shown products ("the second one is close but too expensive", "none of
these, I need leather") the copilot's state before the message is copied twice and the turn
is played from each copy: once with the message as said, once with the reaction taken out
(the rest of the message kept; a bare reaction becomes "Not quite what I had in mind.", the
plain protocol's nudge). For each it records whether the state stage read the reaction as
the critique it is (kind and position) and where the target stands afterwards: its rank in
the list shown, else behind the shown products in the copilot's own order (the ranking the
next turn would draw from). Per kind of reaction: how often it was read, and how often it
moved the target up or down against the message without it. The session itself goes on
with the message as said, as in `bench-real --protocol natural-reactive`.
"""

from __future__ import annotations

import argparse
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

from rich.console import Console

from shopcopilot.agent import Agent
from shopcopilot.bench.natural import CustomerMessage, NaturalCustomer, templates
from shopcopilot.bench.official import score_recommendations
from shopcopilot.bench.reactions import Reaction
from shopcopilot.bench.real import prepare_real_benchmark
from shopcopilot.bench.runner import BenchData, load_bench_data, product_lookup
from shopcopilot.bench.sessions_io import Session, load_sessions
from shopcopilot.trace import Tracer

MAX_TURNS, TOP_K = 10, 10
DEEP = 2000  # how far down the copilot's order the target is looked for
# The critique kind of the state stage (state/critique.py KINDS) each reaction should become.
EXPECTED = {
    "": ("pick", "more_like"),
    "cheaper": ("cheaper",),
    "pricier": ("pricier",),
    "brand": ("not_brand",),
    "color": ("not_color",),
    "material": ("not_material",),
    "shorter": ("shorter",),
    "longer": ("longer",),
    "smaller": ("smaller",),
    "bigger": ("bigger",),
}


def label(reaction: Reaction) -> str:
    if reaction.kind == "reject_list":
        return f"none of these + {reaction.aspect}"
    return f"pick + {reaction.aspect}" if reaction.aspect else "pick"


def read_as_meant(reaction: Reaction, diff: dict[str, Any]) -> bool:
    """Did the state stage make the critique the reaction is (its kind, at its position)?"""
    kinds = {(c["kind"], tuple(c["positions"])) for c in diff.get("critiques", [])}
    if reaction.kind == "reject_list":
        wanted = ("none_of_these", "cheaper") if reaction.aspect == "budget" else ("none_of_these",)
        return any(kind in wanted for kind, _ in kinds)
    return any(
        kind in EXPECTED[reaction.aspect] and reaction.position in positions
        for kind, positions in kinds
    )


def pointed_at(reaction: Reaction, diff: dict[str, Any]) -> bool:
    """Did the state stage at least resolve the pointer ("the second one") to the product?"""
    if reaction.kind == "reject_list":
        return True
    spans = [*diff.get("references", []), *diff.get("critiques", [])]
    return any(reaction.position in item.get("positions", []) for item in spans)


def standing(agent: Agent, sid: str, response: dict[str, Any], target: str, data: BenchData) -> int:
    """The target's rank after a turn: in the list shown, else behind it in the copilot's order
    (DEEP + 1 when it is not in reach)."""
    shown = score_recommendations(response.get("recommendations"), data.catalog_ids, TOP_K)
    if target in shown:
        return shown.index(target) + 1
    state = agent._session(sid)  # a diagnostic: the ranking the next turn would draw from
    tracer = Tracer(None, detailed=False)
    meaning = agent._meaning(state)
    ranked = agent._rank(tracer, state, agent._retrieve(tracer, state, meaning), DEEP, meaning)
    order = [s.parent_asin for s in ranked]
    return len(shown) + order.index(target) + 1 if target in order else DEEP + 1


def try_message(
    agent: Agent, snapshot: dict, message: str, turn: int, target: str, data: BenchData
) -> tuple[int, dict[str, Any]]:
    sid = "reaction-effects-scratch"
    agent.import_session(sid, snapshot)
    result = agent.respond_traced(sid, message, turn, TOP_K, detailed=False)
    rank = standing(agent, sid, result.response, target, data)
    agent.forget(sid)
    return rank, result.diff


def without_reaction(said: CustomerMessage, reaction: Reaction) -> str:
    rest = said.clean_text.replace(reaction.text, "").strip()
    return rest or "Not quite what I had in mind."


def play(agent: Agent, session: Session, data: BenchData, seed: int) -> list[dict[str, Any]]:
    target = session.target_asin
    customer = NaturalCustomer(
        session,
        data.target_product(target),
        seed,
        lookup=product_lookup(data.catalog_path),
        reactions=True,
    )
    sid = f"effects-{session.sample_id}"
    agent.reset(sid, dict(session.user_profile))
    override_turn = customer.override_turn()
    override_sent = override_turn is None
    message = customer.first_message()
    rows = []
    for turn in range(1, MAX_TURNS + 1):
        said = customer.transcript[-1]
        for reaction in said.reactions:
            snapshot = agent.export_session(sid)
            with_rank, diff = try_message(agent, snapshot, said.clean_text, turn, target, data)
            plain = without_reaction(said, reaction)
            without_rank, _ = try_message(agent, snapshot, plain, turn, target, data)
            rows.append(
                {
                    "sample": session.sample_id,
                    "scenario": session.scenario_type,
                    "turn": turn,
                    "label": label(reaction),
                    "text": said.clean_text,
                    "read": read_as_meant(reaction, diff),
                    "pointed": pointed_at(reaction, diff),
                    "with": with_rank,
                    "without": without_rank,
                }
            )
        response = agent.respond(sid, message, turn, TOP_K)
        shown = score_recommendations(response.get("recommendations"), data.catalog_ids, TOP_K)
        if (override_sent and target in shown) or turn == MAX_TURNS:
            break
        if not override_sent and turn + 1 == override_turn:
            override_sent, message = True, customer.override_message()
        else:
            message = customer.reply(response, turn)
    agent.forget(sid)
    return rows


def table(rows: list[dict[str, Any]]) -> list[str]:
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        groups[row["label"]].append(row)
    lines = [
        "| reaction | n | pointer resolved | read as meant | target up | target down | same "
        "| median rank with / without | in the list with / without |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name in sorted(groups, key=lambda n: -len(groups[n])):
        group = groups[name]
        up = sum(r["with"] < r["without"] for r in group)
        down = sum(r["with"] > r["without"] for r in group)
        listed_with = sum(r["with"] <= TOP_K for r in group)
        listed_without = sum(r["without"] <= TOP_K for r in group)
        lines.append(
            f"| {name} | {len(group)} | {sum(r['pointed'] for r in group) / len(group):.2f} "
            f"| {sum(r['read'] for r in group) / len(group):.2f} "
            f"| {up} | {down} | {len(group) - up - down} "
            f"| {statistics.median(r['with'] for r in group):g} / "
            f"{statistics.median(r['without'] for r in group):g} "
            f"| {listed_with} / {listed_without} |"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--real", action="store_true", help="public sessions, padded catalog")
    parser.add_argument("--catalog")
    parser.add_argument("--sessions")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--limit", type=int)
    parser.add_argument("-o", "--out", type=Path, help="write the table (markdown) here")
    parser.add_argument("--worst", type=int, default=15, help="list this many worst reactions")
    args = parser.parse_args()
    if args.real:
        args.catalog, args.sessions = prepare_real_benchmark(Console(stderr=True))
    if not (args.catalog and args.sessions):
        parser.error("give --real, or both --catalog and --sessions")
    templates()  # a broken phrasing file fails before the agent loads
    sessions = load_sessions(args.sessions)[: args.limit]
    data = load_bench_data(args.catalog, sessions)
    agent = Agent(args.catalog)
    rows = [row for session in sessions for row in play(agent, session, data, args.seed)]
    lines = table(rows)
    worst = sorted(rows, key=lambda r: r["without"] - r["with"])[: args.worst]
    lines += ["", "Reactions that moved the target furthest down (rank with / without):", ""]
    lines += [
        f"- {r['sample']} turn {r['turn']} ({r['label']}, read: {r['read']}): "
        f"{r['with']} / {r['without']}: {r['text']}"
        for r in worst
        if r["with"] > r["without"]
    ]
    misread = [r for r in rows if not r["read"]]
    lines += ["", f"Not read as meant ({len(misread)} of {len(rows)}):", ""]
    lines += [f"- {r['label']}: {r['text']}" for r in misread]
    print("\n".join(lines))
    if args.out:
        args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
