"""A person's list shows the kind of item the catalog's categoriser reads in the request, even
where another kind's category names repeat the shopper's word ("shoes": shoes, not shoe trees)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from shopcopilot.agent import FOR_PEOPLE, Agent
from shopcopilot.index.text import ROOT_CATEGORY as TOP

NAMES = ["Alder", "Birch", "Dune", "Ember", "Fjord", "Gale", "Heath", "Isle", "Jade", "Kelp"]
TREES = [TOP, "Shoe, Jewelry & Watch Accessories", "Shoe Care & Accessories", "Shoe & Boot Trees"]


def _kind(record, prefix: str, title: str, path: list[str]) -> list[dict]:
    return [
        record(f"{prefix}{n}", f"{title} {name}", categories=[TOP, *path])
        for n, name in enumerate(NAMES)
    ]


def _catalog(record) -> list[dict]:
    trees = [
        record(f"TR{n}", f"Shoe Tree Shoe Stretcher Shoe Shaper for Shoes {name}", categories=TREES)
        for n, name in enumerate(["Cedar", "Pine", "Oak"])
    ]
    sneakers = _kind(
        record,
        "SN",
        "Women's Casual Sneakers Walking Shoes",
        ["Women", "Shoes", "Fashion Sneakers"],
    )
    boots = _kind(record, "BT", "Men's Leather Ankle Boots Work Shoes", ["Men", "Shoes", "Boots"])
    return trees + sneakers + boots


@pytest.fixture(scope="module")
def person(person_on, catalog_record) -> Agent:
    return person_on(_catalog(catalog_record))


def _first_ids(agent: Agent, message: str, count: int = 5) -> list[str]:
    agent.reset("kind", {})
    response = agent.respond("kind", message, 1)
    return [r if isinstance(r, str) else r["parent_asin"] for r in response["recommendations"]][
        :count
    ]


def test_a_plain_request_for_shoes_shows_shoes_first(person):
    first = _first_ids(person, "I need a pair of shoes")
    assert first and not any(pid.startswith("TR") for pid in first)


def test_without_the_reading_the_words_favour_shoe_trees(person):
    words_alone = person.with_settings(
        replace(FOR_PEOPLE, ranking=replace(FOR_PEOPLE.ranking, kind=0.0, accessory=0.0))
    )
    assert _first_ids(words_alone, "I need a pair of shoes", 1)[0].startswith("TR")


def test_a_request_for_shoe_trees_still_shows_shoe_trees(person):
    assert all(pid.startswith("TR") for pid in _first_ids(person, "cedar shoe trees", 3))


def _courts(record) -> list[dict]:
    def shoes(prefix: str, who: str, department: str) -> list[dict]:
        return [
            record(
                f"{prefix}{n}",
                f"{who} Basketball Shoes High Top {name}",
                categories=[TOP, department, "Shoes", "Athletic", "Basketball"],
                details={"Department": department},
            )
            for n, name in enumerate(NAMES[:4])
        ]

    return (
        shoes("BB", "Boys'", "Boys")
        + shoes("GB", "Girls'", "Girls")
        + shoes("MB", "Men's", "Men")
        + shoes("WB", "Women's", "Women")
        + _catalog(record)
    )


@pytest.fixture(scope="module")
def courts(person_on, catalog_record) -> Agent:
    return person_on(_courts(catalog_record))


def test_a_son_of_no_stated_age_gets_boys_or_mens_never_girls_or_womens(courts):
    ids = _first_ids(courts, "basketball shoes for my son", 10)
    assert any(i.startswith("BB") for i in ids) and any(i.startswith("MB") for i in ids)
    assert not any(i.startswith(("GB", "WB")) for i in ids)
    said_age = _first_ids(courts, "basketball shoes for my 9 year old son", 10)
    assert all(i.startswith("BB") for i in said_age[:4])
    assert not any(i.startswith(("GB", "WB", "MB")) for i in said_age)


def _watches(record) -> list[dict]:
    watches = _kind(record, "WW", "Women's Quartz Watch", ["Women", "Watches", "Wrist Watches"])
    bands = _kind(
        record,
        "WB",
        "Watch Band for Women Watch Strap Watch Wrist Watches",
        ["Women", "Watches", "Watch Bands"],
    )
    return watches + bands


@pytest.fixture(scope="module")
def watch_shop(person_on, catalog_record) -> Agent:
    return person_on(_watches(catalog_record))


def test_a_watch_asked_for_comes_before_the_kinds_named_for_its_parts(watch_shop):
    """ "Watch Bands" say "watch" more often than the watches do; a shopper asking for a watch
    means the watch."""
    assert all(pid.startswith("WW") for pid in _first_ids(watch_shop, "a watch for women", 5))
    assert all(pid.startswith("WB") for pid in _first_ids(watch_shop, "a watch band", 3))


def _down(record) -> list[dict]:
    mens = _kind(
        record, "MD", "Men's Quilted Down Jacket Puffer", ["Men", "Down & Down Alternative"]
    )
    mens += _kind(record, "MP", "Men's Down Jacket Winter", ["Men", "Down & Down Alternative"])
    womens = _kind(
        record, "WD", "Women's Quilted Puffer Coat", ["Women", "Coats", "Down Jackets & Parkas"]
    )
    skis = _kind(
        record, "WS", "Women's Button Down Ski Jacket Warm", ["Women", "Sport", "Ski Jackets"]
    )
    return mens + womens + skis


@pytest.fixture(scope="module")
def down_shop(person_on, catalog_record) -> Agent:
    return person_on(_down(catalog_record))


def test_a_department_s_own_name_for_the_kind_read_stands_in_for_it(down_shop):
    """The categoriser reads the men's "Down & Down Alternative" in "down jacket"; a woman's
    down jackets are filed as "Down Jackets & Parkas", not among button-down ski jackets."""
    assert all(pid.startswith("WD") for pid in _first_ids(down_shop, "a down jacket for women", 5))


def _pumps(record) -> list[dict]:
    path = ["Women", "Shoes", "Pumps"]
    round_toes = [
        record(
            f"RT{n}",
            f"{name} Women's Round Toe Pumps Wide Width Office Shoes",
            categories=[TOP, *path],
            price=30.0,
            details={"Size": "8"},
            rating_number=500,
        )
        for n, name in enumerate(NAMES)
    ]
    pointed = [
        record(f"PT{n}", f"{name} Women's Pointed Toe Pumps", categories=[TOP, *path], price=40.0)
        for n, name in enumerate(NAMES[:4])
    ]
    arches = [
        record(f"AS{n}", f"{name} Women's Arch Support Pumps", categories=[TOP, *path], price=40.0)
        for n, name in enumerate(NAMES[4:7])
    ]
    return round_toes + pointed + arches


@pytest.fixture(scope="module")
def pump_shop(person_on, catalog_record) -> Agent:
    return person_on(_pumps(catalog_record))


def test_a_style_asked_for_comes_first_as_a_colour_would(pump_shop):
    """Round toes that list the size asked for scored above pointed toes that list none."""
    message = "pointed toe pumps, size 8, wide width"
    assert all(pid.startswith("PT") for pid in _first_ids(pump_shop, message, 4))
    scores_alone = pump_shop.with_settings(
        replace(FOR_PEOPLE, ranking=replace(FOR_PEOPLE.ranking, wishes_first=False))
    )
    assert not all(pid.startswith("PT") for pid in _first_ids(scores_alone, message, 4))


def test_a_wish_in_free_words_comes_first_as_a_style_would(pump_shop):
    """Round toes that list the size and width asked for scored above the arch support asked
    for in free words."""
    said = ("pumps, size 8, wide width", "arch support would be amazing")
    assert all(pid.startswith("AS") for pid in _after(pump_shop, said)[:3])
    scores_alone = pump_shop.with_settings(
        replace(FOR_PEOPLE, ranking=replace(FOR_PEOPLE.ranking, wishes_first=False))
    )
    assert not all(pid.startswith("AS") for pid in _after(scores_alone, said)[:3])


def _after(agent: Agent, messages: tuple[str, ...]) -> list[str]:
    agent.reset("said", {})
    response: dict = {}
    for turn, message in enumerate(messages, 1):
        response = agent.respond("said", message, turn)
    return [r["parent_asin"] for r in response["recommendations"]]
