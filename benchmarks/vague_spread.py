"""A vague shopper's lists: how varied is the spread, and does a pick narrow?

    python benchmarks/vague_spread.py [-o FILE]

Scripted sessions on the padded real catalog with the settings a person gets (FOR_PEOPLE):
an opening ("I need a gift for my sister"), three blank answers in a row ("not sure",
"whatever", "no idea", in varied words), then a pick ("the second one"). Played once with
the spread and picks off (`spread_after=0`) and once as shipped, on the same index.

On the turns after two or more blank answers: distinct leaf categories, brands (else store)
and price bands (under $15, $15-30, 30-60, 60-120, 120-250, over $250) among the cards
shown, as means per turn; how often the reply invites a pick. On the pick's turn: the share
of cards in the picked product's leaf, and the median price ratio (larger / smaller) between
each card and the picked product.
"""

from __future__ import annotations

import argparse
import json
import statistics
from dataclasses import replace
from itertools import cycle

import numpy as np
from rich.console import Console

from shopcopilot.agent import FOR_PEOPLE, Agent
from shopcopilot.bench.real import prepare_real_benchmark

OPENINGS = (
    "I need a gift for my sister",
    "looking for shoes",
    "something for my dad's birthday",
    "I want a new outfit",
    "show me some jewelry",
    "I need a bag",
    "something to wear to a wedding",
    "clothes for my 8 year old son",
    "I need a present for a friend",
    "show me something nice",
    "my wife's birthday is coming up",
    "something warm for winter",
    "I need a new pair of trainers",
    "a necklace maybe",
    "stuff for the gym",
    "something for my mum",
)
BLANKS = (
    "not sure",
    "whatever",
    "no idea",
    "dunno, you pick",
    "I don't mind",
    "hmm no idea really",
    "whatever you think",
    "not sure tbh",
)
PICKS = ("the second one", "I like the third one", "#4", "the first one looks nice")
INVITATION = "Which one comes closest?"
BANDS = np.array([15.0, 30.0, 60.0, 120.0, 250.0])


def play(agent: Agent) -> dict:
    features = agent.features
    spread_turns: dict[str, list[float]] = {"leaves": [], "brands": [], "price_bands": []}
    invited = 0
    same_leaf, price_ratio = [], []
    blanks, picks = cycle(BLANKS), cycle(PICKS)
    for number, opening in enumerate(OPENINGS):
        session = f"vague-{number}"
        agent.reset(session, {})
        agent.respond(session, opening, 1)
        for turn in (2, 3, 4):
            response = agent.respond(session, next(blanks), turn)
            if turn < 3:
                continue  # one blank answer is not yet a vague shopper
            rows = _rows(agent, response)
            spread_turns["leaves"].append(len({features.code_name("leaf", r) for r in rows}))
            spread_turns["brands"].append(len({_brand(features, r) for r in rows}))
            spread_turns["price_bands"].append(len(_bands(features, rows)))
            invited += INVITATION in response["message"]
        shown = [r["parent_asin"] for r in response["recommendations"]]
        pick = next(picks)
        position = {"the second one": 2, "I like the third one": 3, "#4": 4}.get(pick, 1)
        if len(shown) < position:
            continue
        chosen = features.row_of(shown[position - 1])
        after = _rows(agent, agent.respond(session, pick, 5))
        leaf = features.code_name("leaf", chosen)
        same_leaf.append(sum(features.code_name("leaf", r) == leaf for r in after) / len(after))
        price_ratio += _ratios(features, chosen, after)
        agent.forget(session)
    turns = len(spread_turns["leaves"])
    return {
        "sessions": len(OPENINGS),
        "spread_turns": turns,
        **{f"distinct_{k}": round(statistics.mean(v), 2) for k, v in spread_turns.items()},
        "invited_to_pick": f"{invited}/{turns}",
        "pick_turns": len(same_leaf),
        "pick_same_leaf_share": round(statistics.mean(same_leaf), 3),
        "pick_median_price_ratio": round(statistics.median(price_ratio), 2),
    }


def _rows(agent: Agent, response: dict) -> list[int]:
    ids = [r["parent_asin"] for r in response["recommendations"]]
    return [row for row in map(agent.features.row_of, ids) if row is not None]


def _brand(features, row: int) -> str | None:
    return features.code_name("brand_key", row) or features.code_name("store_key", row)


def _bands(features, rows: list[int]) -> set[int]:
    prices = features.price[rows]
    return {int(b) for b in np.searchsorted(BANDS, prices[~np.isnan(prices)])}


def _ratios(features, chosen: int, rows: list[int]) -> list[float]:
    base = float(features.price[chosen])
    prices = [float(features.price[r]) for r in rows]
    if np.isnan(base):
        return []
    return [max(p, base) / max(min(p, base), 0.01) for p in prices if not np.isnan(p)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-o", "--out", help="write the numbers as JSON here")
    args = parser.parse_args()
    catalog = prepare_real_benchmark(Console(stderr=True))[0]
    shipped = Agent(catalog, settings=FOR_PEOPLE, warm_up=False)
    off = shipped.with_settings(
        replace(FOR_PEOPLE, ranking=replace(FOR_PEOPLE.ranking, spread_after=0))
    )
    results = {}
    for label, agent in (("before", off), ("after", shipped)):
        results[label] = play(agent)
        print(label, json.dumps(results[label]))
    if args.out:
        with open(args.out, "w", encoding="utf-8") as handle:
            json.dump(results, handle, indent=1)


if __name__ == "__main__":
    main()
