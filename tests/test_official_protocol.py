"""The official protocol, rule by rule, against expectations worked out by hand.

Real records are read from the shared data at run time and referred to by line number;
expected strings are spelled out from the spec (or from the record's own fields, so no
real text is copied here).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path

import pytest

from shopcopilot.bench.official import (
    GENERIC_REPLY,
    OfficialCustomer,
    category_phrase,
    classify_constraint,
    clean_constraint,
    constraint_candidates,
    derive_behavior,
    derive_intent_card,
    override_turn_for,
    score_recommendations,
)
from shopcopilot.bench.sessions_io import Session

LineReader = Callable[[int], dict]


@pytest.fixture(scope="module")
def harvest_line(shared_data: Path) -> LineReader:
    """line(n): the real catalog's record on line n (from 1)."""
    with (shared_data / "catalog_harvest.jsonl").open(encoding="utf-8") as handle:
        lines = handle.readlines()

    def line(number: int) -> dict:
        assert number <= len(lines), f"catalog_harvest.jsonl has fewer than {number} lines"
        return json.loads(lines[number - 1])

    return line


def session(scenario: str, sample_id: str = "fixture_1", **extra) -> Session:
    return Session(
        sample_id=sample_id, scenario_type=scenario, user_profile={}, target_asin="T1", **extra
    )


def customer(record: dict, scenario: str, sample_id: str = "fixture_1") -> OfficialCustomer:
    return OfficialCustomer.for_session(session(scenario, sample_id), record)


def ask(attribute) -> dict:
    return {"message": "", "ask_attribute": attribute, "recommendations": []}


SOCK = {
    "parent_asin": "T1",
    "title": "  Trail   Runner Sock ",
    "features": [
        "Merino wool blend",
        "  - Cushioned heel; ",
        "Cushioned heel",
        "a" * 179 + " " + "b" * 10,
    ],
    "description": ["Bright red stripes"],
    "price": 25.0,
    "categories": ["Clothing, Shoes & Jewelry", "Men", "Socks & Hosiery", "Athletic Socks"],
    "details": {"Color": "Navy", "Size": "", "Fit": "Regular"},
    "store": "Acme",
}


# ---- cleaning ---------------------------------------------------------------------------


def test_cleaning_collapses_whitespace_and_strips_edge_characters() -> None:
    assert clean_constraint("\t--Soft,  brushed\n\nfleece;.\n") == "Soft, brushed fleece"
    assert clean_constraint(" ;-., ") == ""
    assert clean_constraint("50% off!") == "50% off!"  # only the listed characters are stripped


def test_cleaning_cuts_at_180_then_right_strips() -> None:
    text = "a" * 179 + " " + "b" * 10
    assert clean_constraint(text) == "a" * 179  # the cut keeps the space at 180, rstrip drops it
    assert clean_constraint("c" * 200) == "c" * 180


# ---- the intent card ------------------------------------------------------------------------


def test_card_of_fixture_material_first_color_second_duplicates_dropped() -> None:
    # Searchable text: title, features, details, description... -> first material word
    # "wool" (feature 1), first color word "red" (description); "Navy" is not a color word.
    candidates = constraint_candidates(SOCK)
    assert candidates[:3] == ["wool", "color: red", "Merino wool blend"]
    assert candidates[-3:] == [
        "Color: Navy",
        "Fit: Regular",
        "budget around $25.0",
    ]  # empty Size skipped
    card = derive_intent_card(SOCK)
    assert card.hard_constraints == ("wool", "color: red")
    # "  - Cushioned heel; " cleans to "Cushioned heel", so the next copy is a duplicate.
    assert card.soft_preferences == ("Merino wool blend", "Cushioned heel")
    assert card.target_category == "Trail Runner Sock"


def test_price_is_printed_as_python_prints_it() -> None:
    assert constraint_candidates({**SOCK, "price": 29.99})[-1] == "budget around $29.99"
    assert constraint_candidates({**SOCK, "price": 25.0})[-1] == "budget around $25.0"
    assert constraint_candidates({**SOCK, "price": 25})[-1] == "budget around $25"
    assert not any("budget" in c for c in constraint_candidates({**SOCK, "price": None}))
    assert not any("budget" in c for c in constraint_candidates({**SOCK, "price": ""}))


def test_empty_card_falls_back_to_the_cleaned_title() -> None:
    record = {
        "parent_asin": "T2",
        "title": " Plain   Thing. ",
        "features": [],
        "details": {},
        "price": None,
    }
    card = derive_intent_card(record)
    assert card.hard_constraints == ("Plain Thing",)
    assert card.soft_preferences == ("Plain Thing",)


def test_color_without_material_lands_in_second_place() -> None:
    record = {
        "parent_asin": "T3",
        "title": "Green scarf",
        "features": ["Soft", "Long"],
        "details": {},
    }
    assert derive_intent_card(record).hard_constraints == ("Soft", "color: green")


def test_two_candidates_reuse_the_first_as_soft_preference() -> None:
    record = {"parent_asin": "T4", "title": "Thing", "features": ["Alpha", "Beta"], "details": {}}
    card = derive_intent_card(record)
    assert card.hard_constraints == ("Alpha", "Beta")
    assert card.soft_preferences == ("Alpha",)


@pytest.mark.shared
def test_real_scrub_pants_card(harvest_line: LineReader) -> None:
    # Line 1: the first material word is "Polyester" in the first feature; the first color
    # word in the searchable text is "White", near the end of the last feature.
    record = harvest_line(1)
    card = derive_intent_card(record)
    assert card.hard_constraints == ("polyester", "color: white")
    assert card.soft_preferences == (record["features"][0], record["features"][1])
    assert [classify_constraint(c) for c in card.hard_constraints + card.soft_preferences] == [
        "material",
        "color",
        "material",
        "feature",
    ]


@pytest.mark.shared
def test_real_bra_card_has_no_material_or_color(harvest_line: LineReader) -> None:
    # Line 63: no material or color word anywhere, one feature, then the details in order.
    record = harvest_line(63)
    details = record["details"]
    card = derive_intent_card(record)
    assert card.hard_constraints == (
        record["features"][0],
        f"Item model number: {details['Item model number']}",
    )
    assert card.soft_preferences == (
        f"Department: {details['Department']}",
        f"Date First Available: {details['Date First Available']}",
    )
    assert constraint_candidates(record)[-1] == f"budget around ${record['price']}"


@pytest.mark.shared
def test_real_record_with_a_dash_price_and_one_detail(harvest_line: LineReader) -> None:
    # Line 420: price is the string "—" (printed as stored), one detail, no material/color.
    record = harvest_line(420)
    assert record["price"] == "—"
    card = derive_intent_card(record)
    weight = f"Item Weight: {record['details']['Item Weight']}"
    assert card.hard_constraints == (weight, "budget around $—")
    assert card.soft_preferences == (weight,)
    assert classify_constraint("budget around $—") == "budget"


@pytest.mark.shared
def test_real_record_with_only_a_color_in_the_title(harvest_line: LineReader) -> None:
    # Line 1428: no features or details; "Black" ends the title; dash price.
    card = derive_intent_card(harvest_line(1428))
    assert card.hard_constraints == ("color: black", "budget around $—")
    assert card.soft_preferences == ("color: black",)


@pytest.mark.shared
def test_real_record_with_nothing_but_a_title(harvest_line: LineReader) -> None:
    record = harvest_line(1034)  # no features, details or price
    card = derive_intent_card(record)
    assert card.hard_constraints == (record["title"],)
    first = customer(record, "buying").first_message()
    assert first == f"I'm looking for Luggage Carry-Ons. A key requirement is: {record['title']}."


# ---- category phrase -----------------------------------------------------------------------


def test_category_phrase_rules() -> None:
    assert (
        category_phrase(["Clothing, Shoes & Jewelry", "Women", "Shoes", "Athletic", "Running"])
        == "Athletic Running"
    )
    assert category_phrase(["Clothing, Shoes & Jewelry"]) == "Shoes & Jewelry"
    assert (
        category_phrase(["Clothing, Shoes & Jewelry", "Men", "Clothing"]) == "Shoes & Jewelry Men"
    )
    assert category_phrase(["CLOTHING", " clothing shoes & jewelry ", ","]) == "clothing item"
    assert category_phrase([]) == "clothing item"
    assert category_phrase(SOCK["categories"]) == "Socks & Hosiery Athletic Socks"


@pytest.mark.shared
def test_real_category_phrases(harvest_line: LineReader) -> None:
    assert category_phrase(harvest_line(1)["categories"]) == "Medical Scrub Bottoms"
    assert category_phrase(harvest_line(63)["categories"]) == "Bras Everyday Bras"
    assert category_phrase(harvest_line(420)["categories"]) == "Shoes & Jewelry Novelty & More"


# ---- constraint classes -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("budget around $25.0", "budget"),
        ("Price: $ 19", "budget"),
        ("<=40", "budget"),
        ("Under 30 dollars", "budget"),
        ("under thirty", "feature"),
        ("Red leather", "material"),  # material is checked before color
        ("fabric: jersey", "material"),
        ("Colorfast dye", "color"),
        ("Redwood print", "color"),  # substring, not whole word
        ("Wide calf", "size"),
        ("Sizing runs small", "size"),
        ("Crew neck", "style"),
        ("Department: Womens", "style"),
        ("Fitted waist", "style"),
        ("Workout ready", "use_case"),
        ("Hiking", "use_case"),
        ("Imported", "feature"),
    ],
)
def test_constraint_classes(text: str, expected: str) -> None:
    assert classify_constraint(text) == expected


# ---- override ------------------------------------------------------------------------------------


def test_override_turn_is_seeded_by_sample_id_and_scenario() -> None:
    assert override_turn_for("fixture_override_a", "intent_override") == 4
    assert override_turn_for("fixture_override_b", "intent_override") == 3
    picks = {override_turn_for(f"id{n}", "intent_override") for n in range(40)}
    assert picks == {3, 4}
    assert override_turn_for("x", "intent_override") == random.Random("x\0intent_override").choice(
        [3, 4]
    )


def test_override_behavior_uses_last_soft_and_first_hard() -> None:
    behavior = derive_behavior("fixture_override_b", "intent_override", derive_intent_card(SOCK))
    assert behavior["override"] == {
        "turn": 3,
        "old_value": "Cushioned heel",
        "new_value": "wool",
        "message": "Actually, ignore my earlier preference. What I need is: wool.",
    }
    assert "override" not in derive_behavior(
        "fixture_override_b", "buying", derive_intent_card(SOCK)
    )


# ---- first messages and replies
# -------------------------------------------------------------------


def test_first_messages_per_scenario() -> None:
    assert customer(SOCK, "buying").first_message() == (
        "I'm looking for Socks & Hosiery Athletic Socks. A key requirement is: wool."
    )
    assert customer(SOCK, "browsing").first_message() == (
        "I'm looking for Socks & Hosiery Athletic Socks, but I'm still exploring."
    )
    assert customer(SOCK, "boundary").first_message() == (
        "I'm looking for Socks & Hosiery Athletic Socks, but I'm still exploring."
    )
    assert customer(SOCK, "intent_override", "fixture_override_a").first_message() == (
        "I'm looking for Socks & Hosiery Athletic Socks. Cushioned heel"
    )


def test_buying_reply_to_other_skips_the_disclosed_requirement() -> None:
    shopper = customer(SOCK, "buying")
    shopper.first_message()  # discloses "wool"
    assert (
        shopper.reply(ask("other"), 1)
        == "For that, what matters is: color: red; Merino wool blend."
    )
    assert shopper.reply(ask("other"), 2) == "For that, what matters is: Cushioned heel."
    assert shopper.reply(ask("other"), 3) == "I don't have an additional preference for other."


def test_reply_by_class_unknown_name_and_no_question() -> None:
    shopper = customer(SOCK, "browsing")
    assert (
        shopper.reply(ask("material"), 1) == "For that, what matters is: wool; Merino wool blend."
    )
    assert (
        shopper.reply(ask("material"), 2) == "I don't have an additional preference for material."
    )
    assert shopper.reply(ask("size"), 3) == "I don't have an additional preference for size."
    assert (
        shopper.reply(ask("budget"), 4) == "I don't have an additional preference for budget."
    )  # not in the card
    assert (
        shopper.reply(ask("fabric_type"), 5)
        == "For that, what matters is: color: red; Cushioned heel."
    )
    assert shopper.reply(ask(None), 6) == GENERIC_REPLY
    assert shopper.reply(ask(""), 7) == GENERIC_REPLY
    assert shopper.reply(ask(7), 8) == GENERIC_REPLY  # not a string: as if nothing was asked


def test_boundary_reply_is_used_once_and_discloses_nothing() -> None:
    shopper = customer(SOCK, "boundary")
    assert shopper.reply(ask(None), 1) == GENERIC_REPLY  # no question: the boundary reply is kept
    assert (
        shopper.reply(ask("material"), 2)
        == "I don't have a preference for material; please use your judgment."
    )
    assert (
        shopper.reply(ask("material"), 3) == "For that, what matters is: wool; Merino wool blend."
    )


@pytest.mark.shared
def test_real_replies_for_the_bra(harvest_line: LineReader) -> None:
    record = harvest_line(63)
    shopper = customer(record, "browsing")
    assert shopper.first_message() == "I'm looking for Bras Everyday Bras, but I'm still exploring."
    assert (
        shopper.reply(ask("style"), 1)
        == f"For that, what matters is: Department: {record['details']['Department']}."
    )
    assert shopper.reply(ask("color"), 2) == "I don't have an additional preference for color."
    hard = derive_intent_card(record).hard_constraints
    assert shopper.reply(ask("feature"), 3) == f"For that, what matters is: {hard[0]}; {hard[1]}."


def test_override_message_discloses_the_new_value() -> None:
    shopper = customer(SOCK, "intent_override", "fixture_override_a")
    assert shopper.override_turn() == 4
    assert (
        shopper.override_message()
        == "Actually, ignore my earlier preference. What I need is: wool."
    )
    assert shopper.reply(ask("material"), 4) == "For that, what matters is: Merino wool blend."
    assert customer(SOCK, "buying").override_turn() is None


def test_precomputed_card_and_behavior_override_derived_ones() -> None:
    card = {"hard_constraints": ["color: teal", "size: 9"], "soft_preferences": ["wide toe box"]}
    behavior = {
        "override": {
            "turn": 5,
            "old_value": "wide toe box",
            "new_value": "color: teal",
            "message": "Switch: teal please.",
        }
    }
    shopper = OfficialCustomer.for_session(
        session("intent_override", intent_card=card, behavior=behavior), SOCK
    )
    assert shopper.override_turn() == 5
    assert shopper.first_message() == "I'm looking for Socks & Hosiery Athletic Socks. wide toe box"
    assert shopper.override_message() == "Switch: teal please."
    assert shopper.reply(ask("size"), 5) == "For that, what matters is: size: 9; wide toe box."


# ---- scoring
# ------------------------------------------------------------------------------------------


def test_scoring_strips_dedupes_and_skips_ids_not_in_catalog() -> None:
    catalog = {"A", "B", "C", "None"}
    payload = [
        {"parent_asin": " A "},
        "A",
        "Z",
        "",
        {"title": "no id"},
        "B",
        {"parent_asin": "C"},
        None,
    ]
    # None -> "None" is in this catalog on purpose: items are turned into text first.
    assert score_recommendations(payload, catalog) == ["A", "B", "C", "None"]
    assert score_recommendations({"parent_asin": "A"}, catalog) == []
    assert score_recommendations(None, catalog) == []


def test_scoring_keeps_only_the_first_ten_valid() -> None:
    catalog = {f"P{n}" for n in range(20)}
    payload = ["missing"] + [f"P{n}" for n in range(20)]
    assert score_recommendations(payload, catalog) == [f"P{n}" for n in range(10)]
