"""A vague shopper gets a spread and an invitation to pick; a pick narrows to its neighbourhood
(rank/spread.py), through the agent with FOR_PEOPLE."""

from __future__ import annotations

from dataclasses import replace

import pytest

from shopcopilot.agent import FOR_PEOPLE, Agent
from shopcopilot.index.text import ROOT_CATEGORY as TOP

WOMEN = [TOP, "Women"]
OTHERS = [  # (leaf path, title, store, price): each kind three times, rarely bought
    (["Jewelry", "Earrings", "Hoop"], "Women's Hoop Earrings", "Orbette", 45.0),
    (["Accessories", "Scarves & Wraps"], "Women's Knit Scarf", "Woolery", 8.0),
    (["Handbags & Wallets", "Totes"], "Women's Leather Tote Bag", "Carryall", 90.0),
    (["Shoes", "Boots", "Ankle"], "Women's Ankle Boots", "Stridewell", 150.0),
    (["Clothing", "Sweaters", "Cardigans"], "Women's Chunky Cardigan", "Loomhouse", 30.0),
]


def _catalog(record) -> list[dict]:
    women = {"Department": "Womens"}
    necklace = [*WOMEN, "Jewelry", "Necklaces", "Pendant Necklaces"]
    twins = [
        record(
            f"NK{n:02d}",
            f"Women's Pendant Necklace Style {n}",
            price=20.0,
            store="Gleamco",
            categories=necklace,
            details=women,
            rating_number=5000 - n,
        )
        for n in range(30)
    ]
    others = [
        record(
            f"OT{k}{n}",
            f"{title} {name}",
            price=price + n,
            store=store,
            categories=[*WOMEN, *path],
            details=women,
            rating_number=3,
        )
        for k, (path, title, store, price) in enumerate(OTHERS)
        for n, name in enumerate(["Ada", "Bea", "Cleo"])
    ]
    return twins + others


@pytest.fixture(scope="module")
def person(person_on, catalog_record) -> Agent:
    return person_on(_catalog(catalog_record))


def _leaves(agent: Agent, response: dict) -> list[str]:
    rows = [agent.features.row_of(r["parent_asin"]) for r in response["recommendations"]]
    return [agent.features.code_name("leaf", row) for row in rows]


VAGUE = ("something for women", "not sure", "whatever")


def test_blank_answers_in_a_row_get_a_spread_and_an_invitation(person, say):
    off = person.with_settings(
        replace(FOR_PEOPLE, ranking=replace(FOR_PEOPLE.ranking, spread_after=0))
    )
    assert len(set(_leaves(off, say(off, *VAGUE)))) <= 2  # near-twins without the spread
    response = say(person, *VAGUE)
    leaves = _leaves(person, response)
    assert len(set(leaves[:6])) == 6  # every kind on the first cards
    assert "Which one comes closest?" in response["message"]
    assert response["ask_attribute"] is None


def test_one_blank_answer_is_not_yet_vague(person, say):
    response = say(person, *VAGUE[:2])
    assert "Which one comes closest?" not in response["message"]


def test_a_pick_from_the_spread_narrows_to_its_neighbourhood(person, say):
    spread = say(person, *VAGUE)
    picked = _leaves(person, spread)[1]
    assert picked != "Pendant Necklaces"
    after = person.respond("s", "the second one", len(VAGUE) + 1)
    leaves = _leaves(person, after)
    assert leaves[:2] == [picked, picked]  # the other two of its kind, first
    assert "like the second one you pointed at" in after["recommendations"][0]["reason"]


def test_nothing_to_search_by_still_shows_products(person, say):
    response = say(person, "show me something nice")
    assert response["recommendations"]
