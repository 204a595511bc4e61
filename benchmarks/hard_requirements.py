"""How many cards a person is shown break a hard requirement of the shopper's state?

    python benchmarks/hard_requirements.py --split dev      # tune on this
    python benchmarks/hard_requirements.py --split test     # report only (no misses printed)

Plays the understanding corpus (benchmarks/data/understanding/: utterances and exchanges,
with the exchanges' shown products put into the session) through the agent with the
settings a person gets (FOR_PEOPLE), once with hard requirements held in the list
(`hold_hard`, rank/hard.py) and once as before (without it and without the vague shopper's
spread), on the same index. After each turn, each
card shown (up to 10) is checked against the hard requirements of the state the turn left,
from the product's own catalog values, not through the ranking's code: department, size,
width, brand, colour, material (stated at the hard level; any of a facet's values will
do; a colour or material the card's title names counts), a hard budget's limits, and values
turned down. Unknown is never a violation.

Prints per setting: cards shown, the share breaking a requirement (and by kind), turns with
at least one such card, turns whose reply says a requirement was relaxed, cards per turn.
`--show N` prints N violating cards of the dev split (never of test or fresh).
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from dataclasses import replace

from rich.console import Console

from shopcopilot.agent import FOR_PEOPLE, Agent
from shopcopilot.bench import understanding
from shopcopilot.bench.real import prepare_real_benchmark
from shopcopilot.catalog.vocabulary import accepted_departments
from shopcopilot.index.text import tokens
from shopcopilot.state.critique import CUES
from shopcopilot.terms import Level

RELAXED = "so I relaxed that"  # what the reply says when a requirement was relaxed
OWNED = "(nothing found is)"  # what a card failing a relaxed requirement says
_LISTS = {"size": "sizes", "width": "sizes", "color": "colors", "material": "materials"}


def broken(agent: Agent, state: dict, asin: str) -> list[str]:
    """The kinds of hard requirement of `state` (as JSON) the product contradicts."""
    features = agent.features
    row = features.row_of(asin)
    if row is None:
        return []
    facets = features.facets([row])[0]
    brands = {features.code_name("brand_key", row), features.code_name("store_key", row)}
    product = agent.index.store.get(asin)
    title = set(tokens(product.title)) if product else set()
    out = []
    hard = [c for c in state["constraints"] if c["status"] == "active" and c["level"] == Level.HARD]
    for facet in ("department", "size", "width", "brand", "color", "material"):
        wanted = [c["value"] for c in hard if c["data"].get("facet") == facet]
        if wanted and _contradicts(facet, wanted, facets, brands, title):
            out.append(facet)
    price = float(features.price[row])
    for c in hard:
        if c["attribute"] == "budget" and price == price:  # NaN: unknown
            low, high = c["data"].get("min"), c["data"].get("max")
            if (low is not None and price < low) or (high is not None and price > high):
                out.append("budget")
    if any(_has(r["attribute"], r["value"], facets, brands) for r in state["rejected"]):
        out.append("negation")
    return out


def _contradicts(facet: str, wanted: list[str], facets, brands: set, title: set) -> bool:
    if facet == "department":
        accepted = {d for value in wanted for d in accepted_departments(value)}
        return facets.department is not None and facets.department not in accepted
    if facet == "brand":
        return not {w.lower() for w in wanted} & brands
    listed = getattr(facets, _LISTS[facet])
    if facet in ("color", "material") and any(set(tokens(w)) <= title for w in wanted):
        return False  # the card's own title names it ("Denim Jacket" listing cotton)
    return bool(listed) and not set(wanted) & set(listed)


def _has(facet: str, value: str, facets, brands: set) -> bool:
    """Does the product hold a value the shopper turned down? (free words are not checked)"""
    if facet in ("color", "material", "size", "style", "use_case"):
        return value in getattr(facets, {"use_case": "use_cases"}.get(facet, facet + "s"))
    if facet == "department":
        return facets.department == value
    if facet == "brand":
        return value.lower() in brands
    if facet == "length":
        return bool(set(CUES.length_styles.get(value, (value,))) & set(facets.styles))
    return False


def play(agent: Agent, cases, records, show: int) -> dict:
    ids = [record["parent_asin"] for record in records]
    kinds: Counter[str] = Counter()
    silent_kinds: Counter[str] = Counter()
    cards = bad_cards = silent_cards = turns = bad_turns = owned = 0
    for number, case in enumerate(cases):
        played = understanding.play_case(agent, case, f"hard-{number}", ids, detailed=False)
        for turn_number, turn, result in played:
            recommendations = result.response["recommendations"]
            found = [broken(agent, result.state, r["parent_asin"]) for r in recommendations]
            silent = [
                [] if OWNED in r["reason"] else f
                for r, f in zip(recommendations, found, strict=True)
            ]
            turns += 1
            cards += len(recommendations)
            bad_cards += sum(bool(f) for f in found)
            silent_cards += sum(bool(f) for f in silent)
            bad_turns += any(found)
            owned += RELAXED in result.response["message"]
            kinds.update(kind for f in found for kind in f)
            silent_kinds.update(kind for f in silent for kind in f)
            for r, f in zip(recommendations, silent, strict=True):
                if f and show > 0:
                    show -= 1
                    print(f"  {case.id}.{turn_number} {turn.user!r}: {r['parent_asin']} {f}")
    return {
        "turns": turns,
        "cards": cards,
        "cards_per_turn": round(cards / max(turns, 1), 2),
        "violating_cards": bad_cards,
        "violating_share": round(bad_cards / max(cards, 1), 4),
        "silent_violating_cards": silent_cards,
        "silent_share": round(silent_cards / max(cards, 1), 4),
        "turns_with_a_violation": bad_turns,
        "turns_saying_relaxed": owned,
        "by_kind": dict(sorted(kinds.items())),
        "silent_by_kind": dict(sorted(silent_kinds.items())),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--split", choices=[s for s in understanding.SPLITS if s != "all"], default="dev"
    )
    parser.add_argument("--show", type=int, default=0, help="violating cards to print (dev)")
    parser.add_argument("-o", "--out", help="write the numbers as JSON here")
    args = parser.parse_args()
    catalog = prepare_real_benchmark(Console(stderr=True))[0]
    held = Agent(catalog, settings=FOR_PEOPLE, warm_up=False)
    # Before: the settings as they were (no held requirements, no vague-shopper spread).
    loose_ranking = replace(FOR_PEOPLE.ranking, hold_hard=False, spread_after=0)
    loose = held.with_settings(replace(FOR_PEOPLE, ranking=loose_ranking))
    cases = understanding.load_corpus(understanding.CORPUS_DIR, args.split)
    records = understanding.real_records()
    show = args.show if args.split == "dev" else 0
    results = {}
    for label, agent in (("before", loose), ("after", held)):
        print(f"{label} (hold_hard={agent.settings.ranking.hold_hard}):")
        results[label] = play(agent, cases, records, show)
        print(json.dumps(results[label]))
    if args.out:
        with open(args.out, "w", encoding="utf-8") as handle:
            json.dump({"split": args.split, **results}, handle, indent=1)


if __name__ == "__main__":
    main()
