"""Money as shoppers write it, and the numbers that are never money (state/budget.py)."""

from __future__ import annotations

import json

import pytest

from shopcopilot.state.budget import (
    DATA_PATH,
    MoneyDataError,
    load_money,
    parse_budget,
    read_numbers,
)

MONEY = json.loads(DATA_PATH.read_text(encoding="utf-8"))


def bounds(text: str, **kwargs) -> tuple[float | None, float | None, float | None] | None:
    budget = parse_budget(text, **kwargs)
    return None if budget is None else (budget.min_price, budget.max_price, budget.target)


@pytest.mark.parametrize(
    "text,expected",
    [
        ("nothing above sixty-five bucks", (None, 65.0, None)),
        ("roughly a hundred and ten dollars", (None, None, 110.0)),
        ("a hundred and fifty tops", (None, 150.0, None)),
        ("let's not go past a hundred and twenty if we can help it", (None, 120.0, None)),
        ("cant go over forty", (None, 40.0, None)),
        ("for around forty bucks, not a cent more", (None, 40.0, None)),
        ("I can spend maybe thirty five", (None, None, 35.0)),
        ("seventy dollar sandals", (None, None, 70.0)),
        ("under a grand for the ring", (None, 1000.0, None)),
        ("two grand max", (None, 2000.0, None)),
        ("cap it at sixty, he'll outgrow them", (None, 60.0, None)),
        ("twenty bucks, tops", (None, 20.0, None)),
        ("sub $40", (None, 40.0, None)),
    ],
)
def test_numbers_in_words_are_read(text, expected):
    assert bounds(text) == expected


@pytest.mark.parametrize(
    "text,expected",
    [
        ("keep it below $2,450.50", (None, 2450.5, None)),
        ("under $89.99 please", (None, 89.99, None)),
        ("around €1.099,95", (None, None, 1099.95)),
        ("49,95 € or less", (None, 49.95, None)),
        ("budget 1.5k", (None, 1500.0, None)),
    ],
)
def test_cents_and_thousands_separators_are_kept(text, expected):
    assert bounds(text) == expected


@pytest.mark.parametrize(
    "text,currency,expected",
    [
        ("£45 tops", "GBP", (None, 45.0, None)),
        ("no more than 70 euros", "EUR", (None, 70.0, None)),
        ("under a tenner", "GBP", (None, 10.0, None)),
        ("about 25 quid", "GBP", (None, None, 25.0)),
        ("EUR 80 max", "EUR", (None, 80.0, None)),
        ("under 40 dollars", "USD", (None, 40.0, None)),
        ("between twenty and thirty pounds", "GBP", (20.0, 30.0, None)),
    ],
)
def test_the_currency_is_recorded(text, currency, expected):
    budget = parse_budget(text)
    assert budget is not None
    assert budget.currency == currency
    assert (budget.min_price, budget.max_price, budget.target) == expected


def test_another_currency_is_shown_as_said_and_as_applied():
    # No exchange rates offline: the number is compared with dollar prices as it is.
    pounds = parse_budget("£45 tops")
    assert pounds is not None
    assert pounds.describe() == "<= £45 (compared as <= $45)"
    euros = parse_budget("€25-35")
    assert euros is not None
    assert euros.describe() == "€25-€35 (compared as $25-$35)"
    dollars = parse_budget("under $40")
    assert dollars is not None
    assert dollars.describe() == "<= $40"


@pytest.mark.parametrize(
    "text,expected",
    [
        ("€25-35", (25.0, 35.0, None)),
        ("from 60 to 90 bucks", (60.0, 90.0, None)),
        ("somewhere between 15 and 25", (15.0, 25.0, None)),
        ("fleece jacket 80-120", (80.0, 120.0, None)),
        ("spend at least 30 but under 70", (30.0, 70.0, None)),
        ("happy to pay 40 up to 60", (40.0, 60.0, None)),
    ],
)
def test_ranges_are_read(text, expected):
    assert bounds(text) == expected


@pytest.mark.parametrize(
    "text,expected",
    [
        ("clogs 120ish", (None, None, 120.0)),
        ("$60 or so", (None, None, 60.0)),
        ("something like 45 dollars", (None, None, 45.0)),
        ("200 max", (None, 200.0, None)),
        ("I can't spend more than 55", (None, 55.0, None)),
        ("$25 limit", (None, 25.0, None)),
        ("over $300 is fine, it's a splurge", (300.0, None, None)),
    ],
)
def test_targets_and_limits_are_read(text, expected):
    assert bounds(text) == expected


@pytest.mark.parametrize(
    "text,expected",
    [
        ("could you go cheaper, like thirty max?", (None, 30.0, None)),
        ("around 50 max", (None, 50.0, None)),
        ("stretch it to around sixty five if that gets me something nicer", (None, 65.0, None)),
        ("up to about 50", (None, 50.0, None)),
        ("about 40 bucks", (None, None, 40.0)),
    ],
)
def test_a_hedged_ceiling_is_still_a_ceiling(text, expected):
    assert bounds(text) == expected


@pytest.mark.parametrize(
    "text,expected",
    [
        ("size 11 sneakers under $75", (None, 75.0, None)),
        ("34x32 chinos below 45", (None, 45.0, None)),
        ("3xl hoodie under 35", (None, 35.0, None)),
        ("new balance 574 sneakers for 90 dollars", (None, None, 90.0)),
        ("10k gold studs under 150", (None, 150.0, None)),
        ("nike air max 90 under 100", (None, 100.0, None)),
        ("womens 7 wide boots, 60 max", (None, 60.0, None)),
    ],
)
def test_a_size_or_a_model_number_next_to_a_budget_is_not_the_budget(text, expected):
    assert bounds(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "7.5 narrow flats",
        "20 inch necklace",
        "38mm watch face",
        "raincoat for my 6 year old",
        "3-pack of ankle socks",
        "pack of 5 boxers",
        "new balance 574 sneakers",
        "10k gold studs",
        "cheap hoodie",
        "something affordable please",
        "the $29 one looks flimsy",
        "like the 30 dollar one but in black",
        "toys for kids under 6",
        "for my 9 to 5 office job",
        "is the second one over 40?",
        "if it's a good coat that lasts me ten winters I'll pay for it",
    ],
)
def test_numbers_that_are_not_money(text):
    assert parse_budget(text) is None


def test_a_bare_number_is_money_only_in_answer_to_a_budget_question():
    assert parse_budget("maybe sixty") is None
    assert bounds("maybe sixty", expecting_budget=True) == (None, None, 60.0)


@pytest.mark.parametrize(
    "text,asked,sizes,budget",
    [
        ("womens 6.5 loafers under $80", None, ["6.5"], (None, 80.0, None)),
        ("he's a 10 wide, nothing over 90", None, ["10"], (None, 90.0, None)),
        ("i wear a 40, ankle boots around 70 euros", None, ["40"], (None, None, 70.0)),
        ("mens 12 wide 100-150", None, ["12"], (100.0, 150.0, None)),
        ("a 33 waist", None, ["33"], None),
        ("a belt, his waist is 38", None, ["38"], None),
        ("9", "size", ["9"], None),
        ("trail runners 11.5", None, ["11.5"], None),
    ],
)
def test_sizes_said_as_numbers_are_sizes(text, asked, sizes, budget):
    numbers = read_numbers(text, asked)
    assert [m.value for m in numbers.sizes] == sizes
    for mention in numbers.sizes:
        assert text[mention.start : mention.end] == mention.text
    got = numbers.budget
    assert (None if got is None else (got.min_price, got.max_price, got.target)) == budget


@pytest.mark.parametrize(
    "text,sizes",
    [
        ("toddler boy pajamas 2t", ["2T"]),
        ("girls 4T leggings under $15", ["4T"]),
        ("onesie 0-3 months", ["0-3 months"]),
        ("3 to 6 months sleeper", ["3-6 months"]),
        ("18m romper $20", ["18 months"]),
        ("sports bra 36dd", ["36DD"]),
        ("bra 34b under 40", ["34B"]),
        ("my 6 month old needs a hat", []),
        ("a 35b bra", []),  # bands are even
        ("40mm watch", []),
        ("S or M, I'm between sizes", ["S", "M"]),  # one capital letter alone is a size
        ("the M&S one", []),
        ("Levi's jeans", []),
        ("in size 7-8 toddler", ["7-8"]),  # a kids' size sold as a range
        ("10-12 years", ["10-12"]),
    ],
)
def test_toddler_baby_and_bra_sizes_are_sizes_never_money(text, sizes):
    numbers = read_numbers(text)
    assert [m.value for m in numbers.sizes] == sizes
    for mention in numbers.sizes:
        assert text[mention.start : mention.end] == mention.text
    assert numbers.budget is None or numbers.budget.max_price in (15.0, 40.0, None)


@pytest.mark.parametrize(
    "text",
    [
        "she's 9 and loves unicorns",
        "girls 7-16 jeans",
        "for my 4 year old",
        "9",
        "jacket for my nephew aged 11 size medium",
    ],
)
def test_ages_ranges_and_bare_numbers_are_not_sizes(text):
    assert read_numbers(text).sizes == ()


def test_the_budget_constraint_records_its_currency(lexicon, play):
    state, _ = play(lexicon, "I'm looking for a necklace", "£30-40 would be ideal")
    (budget,) = state.active("budget")
    assert budget.data["currency"] == "GBP"
    assert (budget.data["min"], budget.data["max"]) == (30.0, 40.0)
    assert budget.value.startswith("£30-£40")


def test_an_amount_in_answer_to_the_budget_question_is_not_indifference(lexicon, play):
    state, _ = play(
        lexicon, "I'm looking for a necklace", "whatever's under fifty", asked=["budget"]
    )
    assert state.active("budget")[0].data["max"] == 50.0
    assert "budget" not in state.unconstrained


def test_a_size_said_as_a_number_becomes_a_size_constraint(lexicon, play):
    state, _ = play(lexicon, "running shoes for women, womens 8.5, under $90")
    assert [c.value for c in state.active("size")] == ["8.5"]
    assert state.active("budget")[0].data["max"] == 90.0


# -- every phrase of the data file does what its list says ----------------------------------------

CUES = MONEY["cues"]
NEVER = MONEY["not_money"]


@pytest.mark.parametrize("cue", CUES["max_strong_before"])
def test_every_strong_limit_cue(cue):
    assert bounds(f"{cue} 40") == (None, 40.0, None)


@pytest.mark.parametrize("cue", CUES["max_before"] + CUES["budget_before"])
def test_every_limit_cue_with_money(cue):
    assert bounds(f"{cue} 40 dollars") == (None, 40.0, None)


@pytest.mark.parametrize("cue", CUES["max_after"])
def test_every_limit_cue_after(cue):
    assert bounds(f"40 {cue}") == (None, 40.0, None)


@pytest.mark.parametrize("cue", CUES["min_before"])
def test_every_lower_bound_cue(cue):
    assert bounds(f"{cue} 40 dollars") == (40.0, None, None)


@pytest.mark.parametrize("cue", CUES["min_after"])
def test_every_lower_bound_cue_after(cue):
    assert bounds(f"40 dollars {cue}") == (40.0, None, None)


@pytest.mark.parametrize("cue", CUES["around_before"])
def test_every_target_cue(cue):
    assert bounds(f"{cue} 40 dollars") == (None, None, 40.0)


@pytest.mark.parametrize("cue", CUES["around_after"])
def test_every_target_cue_after(cue):
    assert bounds(f"40 dollars {cue}") == (None, None, 40.0)


@pytest.mark.parametrize("joiner", CUES["range_joiners"])
def test_every_range_joiner(joiner):
    assert bounds(f"$40 {joiner} $60") == (40.0, 60.0, None)


@pytest.mark.parametrize(
    "code,word,side",
    [
        (code, word, side)
        for code, entry in MONEY["currencies"].items()
        for side in ("before", "after")
        for word in entry[side]
    ],
)
def test_every_currency_word(code, word, side):
    text = f"under {word} 40" if side == "before" else f"under 40 {word}"
    budget = parse_budget(text)
    assert budget is not None
    assert (budget.max_price, budget.currency) == (40.0, code)


@pytest.mark.parametrize("word", MONEY["amount_words"])
def test_every_amount_word(word):
    entry = MONEY["amount_words"][word]
    budget = parse_budget(f"under a {word}")
    assert budget is not None
    assert budget.max_price == entry["value"]
    assert budget.currency == entry.get("currency", MONEY["default_currency"])


@pytest.mark.parametrize("word", NEVER["after"])
def test_every_word_after_a_number_that_is_not_money(word):
    assert parse_budget(f"under 40 {word}") is None


@pytest.mark.parametrize("word", NEVER["before"])
def test_every_word_before_a_number_that_is_not_money(word):
    assert parse_budget(f"{word} 40, spend wisely") is None


@pytest.mark.parametrize("word", NEVER["reference_after"])
def test_every_word_naming_a_shown_product(word):
    assert parse_budget(f"the $40 {word}") is None


@pytest.mark.parametrize("word", NEVER["karat_after"])
def test_every_karat_word(word):
    assert bounds(f"14k {word} ring, budget 300") == (None, 300.0, None)


@pytest.mark.parametrize("noun", NEVER["ages_before_cue"])
@pytest.mark.parametrize("cue", NEVER["age_cues"])
def test_every_age_limit(noun, cue):
    assert parse_budget(f"for {noun} {cue} 5") is None


@pytest.mark.parametrize("word", MONEY["sizes"]["before"])
def test_every_size_word_before_a_number(word):
    numbers = read_numbers(f"{word} 9")
    assert [m.value for m in numbers.sizes] == ["9"]
    assert numbers.budget is None


@pytest.mark.parametrize("word", MONEY["sizes"]["after"])
def test_every_size_word_after_a_number(word):
    assert [m.value for m in read_numbers(f"9 {word}").sizes] == ["9"]


def test_a_malformed_data_file_names_its_entry(tmp_path):
    broken = dict(MONEY, money_words=["Budget"])
    path = tmp_path / "money.json"
    path.write_text(json.dumps(broken), encoding="utf-8")
    with pytest.raises(MoneyDataError, match="money_words"):
        load_money(path)
    path.write_text("{", encoding="utf-8")
    with pytest.raises(MoneyDataError, match="cannot read"):
        load_money(path)


def test_the_s_of_sizes_is_no_size_small():
    # "i'm a 39 in euro sizes, boots around 80 euros": 39 is the size, 80 the budget, no "S".
    from shopcopilot.catalog.vocabulary import find_mentions

    assert [m.value for m in find_mentions("comes in several sizes.") if m.facet == "size"] == []
    assert [m.value for m in find_mentions("Sizes: M") if m.facet == "size"] == ["M"]
    numbers = read_numbers("i'm a 39 in euro sizes, boots around 80 euros")
    assert [m.value for m in numbers.sizes] == ["39"]
    assert numbers.budget is not None and numbers.budget.target == 80.0


def test_a_shoe_size_with_its_width_glued_on_is_both():
    numbers = read_numbers("8W please")
    assert [(m.facet, m.value) for m in numbers.sizes] == [("size", "8"), ("width", "wide")]
    assert [m.facet for m in read_numbers("jeans 32w 30l").sizes if m.facet == "width"] == []


@pytest.mark.parametrize(
    ("text", "high"),
    [
        ("I can spend about eighty dollars, no more", 80),
        ("around 30 each at the most, I need four", 30),
        ("it's about to be 90 degrees. denim shorts, same budget", None),
    ],
)
def test_how_people_bound_a_budget_in_passing(text, high):
    budget = read_numbers(text).budget
    assert (budget.max_price if budget else None) == high
