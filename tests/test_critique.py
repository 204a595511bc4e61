"""References to shown products and critiques of them: reading, resolving, state, ranking."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from shopcopilot.catalog.vocabulary import find_mentions
from shopcopilot.rank.rerank import Scored, reason
from shopcopilot.state import ShoppingState
from shopcopilot.state.critique import (
    DATA_FILE,
    CritiqueDataError,
    Shown,
    load_cues,
    read_shown_talk,
    resolve,
    words_with_spans,
)
from shopcopilot.state.update import update

# Three wallets as the agent would hand them over after looking them up.
WALLETS = [
    Shown(1, "W1", 54.0, "Nike", ("red",), ("leather",), (), "Wallets", frozenset({"wallet"})),
    Shown(2, "W2", 19.5, "Fossil", ("black",), ("canvas",), (), "Wallets", frozenset({"slim"})),
    Shown(3, "W3", 31.0, "Cherokee", ("red",), ("nylon",), ("maxi",), "Wallets", frozenset()),
]


def read(text, shown=WALLETS):
    """The message against `shown`, with the colours and materials it names."""
    return resolve(read_shown_talk(text), shown, text, find_mentions(text))


def kinds(reading):
    return {c.kind for c in reading.critiques}


def played(lexicon, *messages, shown=WALLETS):
    """The messages played in turn, the wallets shown before every one but the first."""
    state, diffs = ShoppingState(), []
    for turn, message in enumerate(messages, start=1):
        state, diff = update(state, message, lexicon, turn, shown if turn > 1 else ())
        diffs.append(diff)
    return state, diffs


@pytest.mark.parametrize(
    "text,positions",
    [
        ("the second one looks great", [2]),
        ("ok 2nd", [2]),
        ("#3 please", [3]),
        ("I'll go with no. 2", [2]),
        ("the last one", [3]),
        ("first one, in black if you have it", [1]),
        ("the first two are nice", [1, 2]),
    ],
)
def test_ordinals_point_at_positions_in_the_last_list(text, positions):
    assert read(text).positions() == positions


@pytest.mark.parametrize(
    "text",
    [
        "it's for her first birthday",
        "first time buying one of these for myself",
        "she's in second grade",
    ],
)
def test_ordinals_that_count_something_else_point_at_nothing(text):
    assert not any(r.kind == "ordinal" for r in read(text).references)


def test_descriptions_name_products_by_brand_colour_and_price():
    assert read("the nike one is lovely").positions() == [1]
    assert read("the red ones").positions() == [1, 3]
    assert read("the cheapest one will do").positions() == [2]
    assert read("the $31 one").positions() == [3]


def test_a_description_that_fits_every_product_points_at_none():
    assert read("the wallet").positions() == [1]  # only the first says wallet
    shown = [Shown(i, f"X{i}", 10.0 * i, words=frozenset({"wallet"})) for i in (1, 2)]
    assert read("the wallet", shown).positions() == []


def test_these_and_those_point_at_the_whole_list():
    reading = read("none of these, sorry")
    assert reading.positions() == [1, 2, 3]
    assert kinds(reading) == {"none_of_these"}


def test_a_plain_choice_is_a_pick_and_a_question_is_not():
    assert kinds(read("the fossil one, I'll take it")) == {"pick"}
    assert kinds(read("is the first one real leather?")) == set()


def test_liking_one_but_wanting_a_change_is_more_like_it():
    assert kinds(read("more like the second one but in navy")) == {"more_like"}
    assert kinds(read("the nike one looks good but I want it in brown")) == {"more_like"}


@pytest.mark.parametrize(
    "text,kind",
    [
        ("not the nike one", "not_brand"),
        ("the red one? no thanks", "not_color"),
        ("the third one is too long", "shorter"),
        ("the first one is way too big", "smaller"),
        ("the second one looks flimsy", "pricier"),
        ("the nike one is too pricey", "cheaper"),
        ("the slim one is a bit boring", "not_style"),
    ],
)
def test_critique_kinds(text, kind):
    assert kind in kinds(read(text))


def test_nothing_is_read_when_nothing_was_shown():
    assert not read("the second one, cheaper", shown=[]).critiques


def test_cheaper_than_a_product_caps_the_budget_at_its_price(lexicon):
    state, diffs = played(lexicon, "I need a wallet", "cheaper than the nike one")
    budget = state.active("budget")
    assert [(c.data["max"], c.data["min"]) for c in budget] == [(54.0, None)]
    assert budget[0].data["critique"]["kind"] == "cheaper"
    assert diffs[-1].references[0]["positions"] == [1]
    assert diffs[-1].critiques[0]["kind"] == "cheaper"
    assert "$54" in state.critiques[-1].effect


def test_cheaper_than_a_product_with_no_price_is_read_against_the_middle_shown_price(lexicon):
    unpriced = [replace(WALLETS[0], price=None), *WALLETS[1:], replace(WALLETS[2], position=4)]
    state, _ = played(lexicon, "I need a wallet", "the first one but cheaper", shown=unpriced)
    budget = state.active("budget")
    assert [c.data["max"] for c in budget] == [31.0]  # of 19.5, 31 and 31
    assert budget[0].data["critique"]["middle"] and not budget[0].data["critique"]["pointed"]
    assert "middle price shown ($31;" in state.critiques[-1].effect
    # Nothing shown has a price: no budget to set.
    no_prices = [replace(w, price=None) for w in WALLETS]
    state, _ = played(lexicon, "I need a wallet", "the first one but cheaper", shown=no_prices)
    assert not state.active("budget")


def test_more_upscale_starts_the_budget_at_the_price(lexicon):
    state, _ = played(lexicon, "I need a wallet", "hmm, a bit more upscale than the second one?")
    assert [c.data["min"] for c in state.active("budget")] == [19.5]


def test_a_number_stated_with_the_critique_wins(lexicon):
    state, _ = played(
        lexicon, "I need a wallet", "the nike one is steep, anything like it under 40?"
    )
    assert [c.data["max"] for c in state.active("budget")] == [40.0]
    assert {r["kind"] for r in state.to_dict()["critiques"]} >= {"cheaper", "more_like"}


def test_a_tighter_budget_said_before_is_kept(lexicon):
    state, _ = played(lexicon, "a wallet under $30", "the nike one is too expensive")
    assert [c.data["max"] for c in state.active("budget")] == [30.0]


def test_not_that_brand_rejects_the_products_brand(lexicon):
    state, _ = played(lexicon, "I need a wallet", "not the fossil one")
    assert ("brand", "fossil") in {(r.attribute, r.value) for r in state.rejected}


def test_too_long_turns_down_long_lengths(lexicon):
    state, diffs = played(lexicon, "I need a wallet", "the third one is too long")
    assert ("length", "long") in {(r.attribute, r.value) for r in state.rejected}
    assert diffs[-1].critiques[0]["kind"] == "shorter"


def test_more_like_sets_a_soft_anchor_until_the_list_is_turned_down(lexicon):
    state, _ = played(lexicon, "I need a wallet", "more like the first one")
    anchor = state.anchor()
    assert anchor is not None and anchor.anchor["leaf"] == "Wallets"
    assert anchor.anchor["price"] == 54.0
    state, _ = update(state, "none of these", lexicon, 3, WALLETS)
    assert state.anchor() is None
    assert state.turned_down() == ["W1", "W2", "W3"]


def test_the_critique_record_survives_a_round_trip(lexicon):
    state, _ = played(lexicon, "I need a wallet", "more like #2")
    state.last_shown = ["W1", "W2", "W3"]
    again = ShoppingState.from_dict(json.loads(json.dumps(state.to_dict())))
    assert again.critiques == state.critiques
    assert again.last_shown == state.last_shown
    assert again.copy().critiques == state.critiques


def test_the_reason_says_what_the_card_answers_first():
    answer = "$20, cheaper than the $54 one you pointed at"
    scored = Scored("X", 1.0, answers=[answer], evidence=["in Wallets"])
    assert reason(scored) == f"{answer}; matches in Wallets"
    assert reason(Scored("Y", 1.0)) == "closest overall match to what you described"


def test_every_cue_in_the_data_file_is_read_as_its_kind():
    raw = json.loads(DATA_FILE.read_text(encoding="utf-8"))
    cues = load_cues()
    for kind, phrases in raw["cues"].items():
        for phrase in phrases:
            words = [w for w, _, _ in words_with_spans(phrase)]
            assert cues.cues.find(words) == [(0, len(words), kind)], phrase


def test_a_cue_of_an_unknown_kind_is_refused(tmp_path):
    raw = json.loads(DATA_FILE.read_text(encoding="utf-8"))
    raw["cues"]["cheapish"] = ["a bit cheap"]
    path = tmp_path / "critiques.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    with pytest.raises(CritiqueDataError, match="cheapish"):
        load_cues(path)


@pytest.fixture(scope="module")
def agent(synthetic_index):
    from shopcopilot.agent import Agent

    return Agent(index=synthetic_index, warm_up=False)


def _prices(agent, response):
    rows = agent.features.rows([r["parent_asin"] for r in response["recommendations"]])
    return [float(agent.features.price[row]) for row in rows]


def _liked_but_cheaper(agent, session: str, said: str) -> dict:
    """A jacket, then `said` of the first one shown: more like it, under its price, and the
    first card says so. That card."""
    agent.reset(session, {})
    first = agent.respond_traced(session, "I'm looking for a jacket", 1).response
    price = _prices(agent, first)[0]
    turn = agent.respond_traced(session, said, 2)
    assert {c["kind"] for c in turn.diff["critiques"]} == {"more_like", "cheaper"}
    shown = turn.response["recommendations"]
    assert shown and all(p <= price for p in _prices(agent, turn.response))
    assert f"cheaper than the ${price:g} one you liked" in shown[0]["reason"]
    return shown[0]


def test_cheaper_than_the_first_one_shows_cheaper_products_and_says_so(agent):
    _liked_but_cheaper(agent, "cheaper", "nice, but cheaper than the first one please")


def test_more_like_the_first_one_stays_near_it(agent):
    agent.reset("like", {})
    first = agent.respond_traced("like", "I'm looking for a jacket", 1).response
    turn = agent.respond_traced("like", "more like the first one", 2)
    assert turn.diff["critiques"][0]["kind"] == "more_like"
    state = agent.export_session("like")
    assert (
        state["critiques"][-1]["anchor"]["parent_asin"]
        == first["recommendations"][0]["parent_asin"]
    )
    assert "like the first one you pointed at" in turn.response["recommendations"][0]["reason"]


def test_none_of_these_never_shows_them_again(agent):
    agent.reset("none", {})
    first = agent.respond_traced("none", "I'm looking for a jacket", 1).response
    turned_down = {r["parent_asin"] for r in first["recommendations"]}
    agent.respond_traced("none", "none of these", 2)
    later = agent.respond_traced("none", "actually, show me shoes instead", 3).response
    later_ids = {r["parent_asin"] for r in later["recommendations"]}
    assert not turned_down & later_ids
    assert agent.export_session("none")["critiques"][-1]["kind"] == "none_of_these"


def test_a_frame_without_its_determiners_is_refused(tmp_path):
    raw = json.loads(DATA_FILE.read_text(encoding="utf-8"))
    del raw["frame"]["determiners"]
    path = tmp_path / "critiques.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    with pytest.raises(CritiqueDataError, match="determiners"):
        load_cues(path)


def test_a_card_at_the_anchors_price_is_not_called_cheaper() -> None:
    from shopcopilot.rank.rerank import _price_answer

    said = {"kind": "cheaper", "price": 7.0}
    assert _price_answer(6.5, said) == "$6.5, cheaper than the $7 one you pointed at"
    assert _price_answer(7.0, said) == "$7, about the price of the $7 one you pointed at"


@pytest.mark.parametrize(
    "text",
    [
        "the second one is nearly it",
        "#2 is pretty much what I'm after",
        "the second looks about right",
    ],
)
def test_more_ways_to_pick_a_shown_product(text):
    reading = read(text)
    assert kinds(reading) == {"pick"}
    assert {p for r in reading.references for p in r.positions} == {2}


# -- readings shoppers use that were once misread ------------------------------------------


def replayed(lexicon, *turns):
    """(message, shown list) per turn, the products spoken of last handed over as the agent
    does (`ShoppingState.pointed_at`)."""
    state, diffs = ShoppingState(), []
    facts = {s.parent_asin: s for s in [*WALLETS, *OTHER_WALLETS]}
    for turn, (message, shown) in enumerate(turns, start=1):
        recent = [facts[i] for i in state.pointed_at()]
        state, diff = update(state, message, lexicon, turn, shown, recent=recent)
        diffs.append(diff)
    return state, diffs


# A second list, shown after the first: none of the first list's wallets is in it.
OTHER_WALLETS = [
    Shown(1, "V1", 25.0, "Cherokee", ("blue",), ("nylon",), (), "Wallets", frozenset({"zip"})),
    Shown(2, "V2", 12.0, "Nike", ("black",), ("canvas",), (), "Wallets", frozenset({"card"})),
]


@pytest.mark.parametrize(
    "text,position,change",
    [
        ("the second one is close but too expensive", 2, "cheaper"),
        ("the nike one is close but pricey", 1, "cheaper"),
        ("the first one is nearly it, just too pricey", 1, "cheaper"),
        ("the second one but cheaper", 2, "cheaper"),
        ("the last one but longer", 3, "longer"),
        ("#2 looks right but it looks a bit cheap", 2, "pricier"),
    ],
)
def test_liking_a_product_with_a_change_is_more_like_it_and_the_change(text, position, change):
    reading = read(text)
    assert {(c.kind, c.positions) for c in reading.critiques} == {
        ("more_like", (position,)),
        (change, (position,)),
    }


def test_close_but_too_expensive_anchors_on_it_and_caps_the_budget_below_its_price(lexicon):
    state, diffs = played(lexicon, "I need a wallet", "the first one is close but too expensive")
    anchor = state.anchor()
    assert anchor is not None and anchor.products == ["W1"]
    budget = state.active("budget")
    assert [(c.data["min"], c.data["max"]) for c in budget] == [(None, 54.0)]
    assert budget[0].data["critique"]["liked"] is True
    assert {c["kind"] for c in diffs[-1].critiques} == {"more_like", "cheaper"}


def test_the_card_says_cheaper_than_the_one_you_liked() -> None:
    from shopcopilot.rank.rerank import _anchor_answer, _price_answer

    liked = {"kind": "cheaper", "price": 54.0, "positions": [2], "liked": True}
    assert _price_answer(29.99, liked) == "$29.99, cheaper than the $54 one you liked"
    merely = {**liked, "liked": False}
    assert _price_answer(29.99, merely) == "$29.99, cheaper than the $54 one you pointed at"
    import numpy as np

    from shopcopilot.rank.rerank import Critiques

    near = {part: np.array([1.0]) for part in ("leaf", "shared", "price")}
    critique = Critiques(anchor={"position": 2})
    # after the price answer, what else the card shares with it; "similar price" would contradict
    assert _anchor_answer(critique, near, 0, priced=True) == [
        "otherwise like it: same category, shared details"
    ]
    assert _anchor_answer(critique, near, 0) == [
        "like the second one you pointed at: same category, shared details, similar price"
    ]


def test_a_cheaper_critique_keeps_the_floor_of_the_range_said_before(lexicon):
    state, _ = played(
        lexicon, "a wallet between $15 and $60", "the nike one is nearly it, just too pricey"
    )
    assert [(c.data["min"], c.data["max"]) for c in state.active("budget")] == [(15.0, 54.0)]
    assert state.active("budget")[0].value == "$15-$54"


def test_a_shown_price_said_with_the_critique_is_no_budget(lexicon):
    state, _ = played(
        lexicon, "a wallet between $15 and $60", "the nike one is nearly it, just too pricey at $54"
    )
    assert [(c.data["min"], c.data["max"]) for c in state.active("budget")] == [(15.0, 54.0)]


def test_something_cheaper_than_those_is_under_the_lowest_shown_price(lexicon):
    state, diffs = played(lexicon, "I need a wallet", "something cheaper than those")
    assert [c.data["max"] for c in state.active("budget")] == [19.5]
    assert diffs[-1].critiques[0]["positions"] == [1, 2, 3]


def test_something_cheaper_of_a_persons_long_list_is_under_its_middle_price(lexicon):
    """An $8 wallet among $40 ones: "under $8" would leave nothing to show."""
    prices = (8.0, 35.0, 39.0, 42.0, 45.0, 50.0)
    shown = [
        Shown(n, f"L{n}", price, None, (), (), (), "Wallets", frozenset())
        for n, price in enumerate(prices, 1)
    ]
    state = ShoppingState()
    for turn, message in enumerate(("I need a wallet", "something cheaper"), start=1):
        state, _ = update(state, message, lexicon, turn, shown if turn > 1 else (), people=True)
    assert [c.data["max"] for c in state.active("budget")] == [39.0]


def test_a_number_pick_that_looks_good_is_a_pick():
    reading = read("#2 looks good")
    assert [(c.kind, c.positions) for c in reading.critiques] == [("pick", (2,))]


def test_like_the_black_one_but_in_brown_anchors_on_it_and_asks_for_brown(lexicon):
    state, _ = played(lexicon, "I need a wallet", "like the black one but in brown")
    anchor = state.anchor()
    assert anchor is not None and anchor.products == ["W2"]
    assert [c.value for c in state.active("color")] == ["brown"]


@pytest.mark.parametrize("said", ["not that brand", "hmm, not that brand though"])
def test_not_that_brand_after_a_pick_turns_down_the_picked_brand(lexicon, said):
    state, _ = replayed(
        lexicon, ("I need a wallet", ()), ("the second one looks good", WALLETS), (said, WALLETS)
    )
    assert ("brand", "fossil") in {(r.attribute, r.value) for r in state.rejected}
    assert state.critiques[-1].kind == "not_brand"


def test_not_that_brand_speaks_of_the_pick_even_after_a_new_list(lexicon):
    state, diffs = replayed(
        lexicon,
        ("I need a wallet", ()),
        ("the first one is close", WALLETS),
        ("not that colour", OTHER_WALLETS),  # the red Nike wallet is no longer listed
    )
    assert ("color", "red") in {(r.attribute, r.value) for r in state.rejected}
    assert diffs[-1].references == []  # no position in the list shown to report


def test_just_not_a_brand_after_liking_one_turns_the_brand_down_not_the_style(lexicon):
    state, _ = played(lexicon, "I need a wallet", "the first one looks right, just not Nike")
    assert ("brand", "nike") in {(r.attribute, r.value) for r in state.rejected}
    assert {c.kind for c in state.critiques} == {"more_like", "not_brand"}


@pytest.mark.parametrize(
    "text",
    [
        "these aren't what I want, I'm after running shoes",
        "none of these, I need running shoes",
    ],
)
def test_turning_the_list_down_for_another_item_replaces_the_item(lexicon, text):
    state, diffs = played(lexicon, "I need a wallet", text)
    assert state.critiques[-1].kind == "none_of_these"
    assert state.turned_down() == ["W1", "W2", "W3"]
    assert "running" in state.active("category")[-1].value


def test_more_like_them_is_said_of_the_list():
    assert [(c.kind, c.positions) for c in read("more like them").critiques] == [
        ("more_like", (1, 2, 3))
    ]


def test_a_length_cue_with_no_pointer_is_said_of_the_products_of_that_length():
    shown = [
        Shown(1, "L1", 30.0, styles=("maxi",), words=frozenset({"legging"})),
        Shown(2, "L2", 30.0, styles=("cropped",), words=frozenset({"capri", "legging"})),
    ]
    reading = read("not capri, full length pls", shown)
    assert [(c.kind, c.positions) for c in reading.critiques] == [("longer", (2,))]


def test_a_number_mark_opening_a_sentence_points(lexicon):
    text = "Around the 55 dollar mark. Number 3 is close, but not that brand."
    reading = read(text)
    assert {(c.kind, c.positions) for c in reading.critiques} == {
        ("more_like", (3,)),
        ("not_brand", (3,)),
    }
    assert [(c.kind, c.positions) for c in read("No. 2 is fine").critiques] == [("pick", (2,))]


def test_a_store_name_before_a_full_stop_is_read(lexicon):
    found = lexicon.mentions("This one looks right, just not Nike.")
    assert [(m.facet.value, m.value, m.text) for m in found] == [("brand", "Nike", "Nike")]
    state, _ = played(lexicon, "I need a wallet", "This one looks right, just not Nike.")
    assert ("brand", "nike") in {(r.attribute, r.value) for r in state.rejected}
    assert {c.kind for c in state.critiques} == {"more_like", "not_brand"}


def test_close_but_too_expensive_shows_cheaper_ones_like_it_and_says_so(agent):
    card = _liked_but_cheaper(agent, "close", "the first one is close but too expensive")
    assert "similar price" not in card["reason"]  # it is cheaper, not the same price


def test_an_amount_said_as_a_budget_stays_one_even_at_a_shown_price(lexicon):
    state, _ = played(lexicon, "I need a wallet", "somewhere near $54.")
    assert [c.data["target"] for c in state.active("budget")] == [54.0]


def test_a_kind_of_product_turned_down_points_at_the_shown_ones_of_that_kind(lexicon):
    shown = [
        Shown(1, "F1", 20.0, words=frozenset({"flip", "flop"}), leaf="Flip-Flops"),
        Shown(2, "S2", 30.0, words=frozenset({"sandal"}), leaf="Sandals"),
    ]
    state, _ = update(ShoppingState(), "summer sandals", lexicon, 1)
    state, diff = update(state, "no flip flops. more like #2", lexicon, 2, shown)
    assert {(c["kind"], tuple(c["positions"])) for c in diff.critiques} == {
        ("not_style", (1,)),
        ("more_like", (2,)),
    }


def test_a_kind_turned_down_alone_is_a_change_of_mind_not_a_critique(lexicon):
    shown = [Shown(1, "F1", 20.0, words=frozenset({"flip", "flop"}), leaf="Flip-Flops")]
    state, _ = update(ShoppingState(), "summer sandals", lexicon, 1)
    state, diff = update(state, "no flip flops", lexicon, 2, shown)
    assert diff.critiques == []


def test_the_price_of_the_product_pointed_at_is_no_second_pointer():
    shown = [*WALLETS[:2], Shown(3, "W4", 54.0, "Cherokee", words=frozenset({"wallet"}))]
    reading = read("the first one is nearly it, just too pricey at $54", shown)
    assert {(c.kind, c.positions) for c in reading.critiques} == {
        ("more_like", (1,)),
        ("cheaper", (1,)),
    }


def test_the_last_one_but_longer_turns_short_lengths_down_and_stays_near_it(lexicon):
    state, _ = played(lexicon, "I need a wallet", "the last one but longer")
    assert ("length", "short") in {(r.attribute, r.value) for r in state.rejected}
    anchor = state.anchor()
    assert anchor is not None and anchor.products == ["W3"]


def test_a_question_about_one_shown_product_leaves_no_words_to_search(lexicon):
    state, diffs = played(lexicon, "I need a wallet", "do you have the second one in a medium?")
    assert diffs[-1].fragments == []
    assert [r["positions"] for r in diffs[-1].references] == [[2]]


@pytest.mark.parametrize(
    ("said", "kept"),
    [
        ("the third one but in black", {"black"}),  # instead of red
        ("#3 but black", {"black"}),
        ("the third one, and black is fine too", {"red", "black"}),  # no change to #3: both
    ],
)
def test_a_value_said_as_the_change_to_a_product_replaces_that_facet(lexicon, said, kept):
    state, _ = played(lexicon, "I need a red wallet", said)
    assert {c.value for c in state.active() if c.data.get("facet") == "color"} == kept


def test_a_size_word_said_of_a_person_is_no_critique():
    talk = read_shown_talk("these are way too big, he's tiny")
    assert [c.kind for c in talk.cues] == ["smaller"]


def test_a_description_ends_at_a_word_with_s_that_opens_a_clause():
    talk = read_shown_talk("tie first. the suit's sorted and shoes can wait")
    assert [p.words for p in talk.pointers] == [("suit",)]
