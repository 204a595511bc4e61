"""The conversation suite: its files, the checks' judgements, feasibility and a played run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shopcopilot.bench import conversations as suite
from shopcopilot.bench.conversations import Check, Facts, TurnSeen, judge
from shopcopilot.catalog.product import Product
from shopcopilot.index.text import ROOT_CATEGORY as TOP


def _product(asin: str, title: str, price: float | None, path: list[str], **more) -> Facts:
    return Facts.of(Product(asin, title, price=price, categories=(TOP, *path), **more))


DRESS = _product("D1", "Women's Blue Floral Midi Dress", 24.99, ["Women", "Clothing", "Dresses"],
                 details={"Material": "95% Cotton, 5% Spandex"}, average_rating=4.3)  # fmt: skip
RED = _product("D2", "Women's Red Wrap Dress", 31.5, ["Women", "Clothing", "Dresses"])
SHIRT = _product("S1", "Men's White Oxford Shirt", 19.0, ["Men", "Clothing", "Shirts"])


def _seen(shown, before=(), reply="", held=()) -> TurnSeen:
    return TurnSeen(list(shown), list(before), reply, list(held))


def test_the_shipped_suite_reads_and_is_split():
    everything = suite.load_suite(split="all")
    dev, test = suite.load_suite(split="dev"), suite.load_suite(split="test")
    fresh, fresh2 = suite.load_suite(split="fresh"), suite.load_suite(split="fresh2")
    fresh3, fresh4 = suite.load_suite(split="fresh3"), suite.load_suite(split="fresh4")
    fresh5 = suite.load_suite(split="fresh5")
    fresh6 = suite.load_suite(split="fresh6")
    fresh7, fresh8 = suite.load_suite(split="fresh7"), suite.load_suite(split="fresh8")
    fresh9 = suite.load_suite(split="fresh9")
    slices = [fresh, fresh2, fresh3, fresh4, fresh5, fresh6, fresh7, fresh8, fresh9]
    assert len(dev) + len(test) >= 300 and dev and test
    assert all(len(f) >= 60 for f in slices)
    assert len(everything) == len(dev + test) + sum(map(len, slices))
    for n, later in enumerate(slices[1:], 1):
        earlier = dev + test + [c for s in slices[:n] for c in s]
        assert not {c.id for c in later} & {c.id for c in earlier}
    assert all(2 <= len(c.turns) <= 6 for c in everything)
    assert {c.catalog for c in everything} == {"embedded", "real"}


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("not json", "Expecting value"),
        ('{"id": "x", "catalog": "moon", "split": "dev", "turns": []}', "'catalog'"),
        (
            '{"id": "x", "catalog": "embedded", "split": "dev", "turns": '
            '[{"user": "hi", "checks": [{"check": "vibes"}]}]}',
            "unknown check 'vibes'",
        ),
        (
            '{"id": "x", "catalog": "embedded", "split": "dev", "turns": '
            '[{"user": "hi", "checks": [{"check": "still_shows", "product": 1}]}]}',
            "nothing has been shown",
        ),
    ],
)
def test_a_bad_line_names_its_file_and_line(tmp_path: Path, line: str, problem: str):
    first = {"user": "a dress", "checks": [{"check": "kind", "path": ["Dresses"]}]}
    good = {"id": "ok", "catalog": "embedded", "split": "dev", "turns": [first]}
    path = tmp_path / "suite.jsonl"
    path.write_text(json.dumps(good) + "\n" + line + "\n", encoding="utf-8")
    with pytest.raises(suite.SuiteError, match=rf"suite.jsonl:2: .*{problem}"):
        suite.read_conversations(path)


def test_kind_has_none_and_price_are_decided_from_the_records():
    kind = Check("kind", {"path": ["Women", "Dresses"], "first": 2})
    assert judge(kind, _seen([DRESS, RED, SHIRT]))
    assert not judge(kind, _seen([DRESS, SHIRT]))
    assert not judge(kind, _seen([]))
    either = Check("kind", {"path": [["Men", "Shirts"], ["Dresses"]], "first": "all"})
    assert judge(either, _seen([DRESS, SHIRT]))
    assert judge(Check("has", {"words": ["blue", "navy"], "first": 1}), _seen([DRESS, RED]))
    assert not judge(Check("has", {"words": ["blue"], "first": 2}), _seen([DRESS, RED]))
    assert judge(Check("none", {"words": ["white"]}), _seen([DRESS, RED]))
    assert not judge(Check("none", {"path": ["Men"]}), _seen([DRESS, SHIRT]))
    assert judge(Check("price_at_most", {"value": 31.5}), _seen([DRESS, RED]))
    assert not judge(Check("price_at_most", {"value": 30}), _seen([DRESS, RED]))


def test_requirements_held_and_dropped():
    held = [{"facet": "budget", "value": "<= $60", "high": 60.0, "negated": False},
            {"facet": "color", "value": "green", "negated": True}]  # fmt: skip
    seen = _seen([DRESS], held=held)
    assert judge(Check("keeps", {"facet": "budget", "value": 60}), seen)
    assert not judge(Check("keeps", {"facet": "budget", "value": 50}), seen)
    assert judge(Check("keeps", {"facet": "color", "value": "green", "negated": True}), seen)
    assert not judge(Check("keeps", {"facet": "color", "value": "green"}), seen)
    assert judge(Check("dropped", {"facet": "size"}), seen)
    assert not judge(Check("dropped", {"facet": "color", "value": "green"}), seen)


def test_answers_are_decided_from_the_product_asked_about():
    before = [DRESS, RED]

    def answered(fields: dict, reply: str) -> bool:
        return judge(Check("answers", fields), _seen(before, before, reply))

    assert answered({"fact": "price", "product": 1}, "#1 costs $24.99.")
    assert answered({"fact": "price", "product": 2}, "That one is about $32")
    assert not answered({"fact": "price", "product": 2}, "#2 costs $24.99.")
    assert answered({"fact": "cheaper", "products": [1, 2]}, "The first is cheaper.")
    assert not answered({"fact": "cheaper", "products": [1, 2]}, "#2 is cheaper.")
    assert answered({"fact": "has", "product": 1, "value": ["blue"]}, "Yes, #1 is blue.")
    assert not answered({"fact": "has", "product": 1, "value": ["blue"]}, "No, #1 isn't blue.")
    assert answered({"fact": "has", "product": 2, "value": ["blue"]}, "#2 is not blue.")
    assert answered({"fact": "material", "product": 1}, "#1 is cotton with some spandex.")
    assert answered({"fact": "material", "product": 2}, "The listing doesn't say.")
    assert answered({"fact": "rating", "product": 1}, "#1 is rated 4.3 out of 5.")
    assert answered({"fact": "compare", "products": [1, 2]}, "#1: $24.99; #2: $31.50")


def test_still_shows_and_like_look_at_the_list_before():
    assert judge(Check("still_shows", {"product": 2}), _seen([RED, DRESS], [DRESS, RED]))
    assert not judge(Check("still_shows", {"product": 2}), _seen([DRESS], [DRESS, RED]))
    assert judge(Check("like", {"product": 1, "first": 2}), _seen([RED, DRESS], [DRESS]))
    assert not judge(Check("like", {"product": 1}), _seen([SHIRT], [DRESS]))


def test_a_turn_no_products_can_meet_is_infeasible():
    catalog = [DRESS, RED, SHIRT]
    assert suite.feasible([Check("kind", {"path": ["Dresses"], "first": 2})], catalog)
    blue_two = [Check("kind", {"path": ["Dresses"], "first": 2}), Check("has", {"words": ["blue"]})]
    assert not suite.feasible(blue_two, catalog)
    assert suite.feasible([Check("mentions", {"words": ["x"]})], [])


def test_a_conversation_is_played_and_reported(person_on, catalog_record):
    records = [
        catalog_record(
            f"DR{n}",
            f"Women's Midi Dress {c}",
            price=20.0 + n,
            categories=[TOP, "Women", "Clothing", "Dresses"],
            details={"Department": "Womens", "Color": c},
        )  # fmt: skip
        for n, c in enumerate(["Blue", "Red", "Blue", "Green", "Black", "Blue"])
    ]
    agent = person_on(records)
    raw = {"id": "t-1", "catalog": "embedded", "split": "dev", "register": "terse", "turns": [
        {"user": "a dress", "checks": [{"check": "kind", "path": ["Dresses"]}]},
        {"user": "under $23", "checks": [{"check": "price_at_most", "value": 23},
                                         {"check": "keeps", "facet": "budget", "value": 23}]},
        {"user": "how much is the first one?", "checks": [
            {"check": "answers", "fact": "price", "product": 1},
            {"check": "still_shows", "product": 1}]},
    ]}  # fmt: skip
    conversation = suite.parse_conversation(raw)
    report = suite.evaluate({"embedded": agent}, [conversation], "dev").to_dict()
    assert report["n_conversations"] == 1 and report["n_turns"] == 3
    assert report["turn_pass_rate"] == 1.0, report
    assert set(report["by_check"]) == {"kind", "price_at_most", "keeps", "answers", "still_shows"}
    skipped = suite.evaluate({}, [conversation], "dev").to_dict()
    assert skipped["skipped"] == ["t-1"] and skipped["n_conversations"] == 0


def test_grey_and_gray_are_one_word_to_the_judge():
    assert suite.mentions("a Heather Gray hoodie", ["grey"])
    assert suite.mentions("charcoal grey", ["gray"])
    assert not suite.mentions("greyhound print", ["grey"])
