"""Reranker on small hand-built candidate sets; dialogue policy rules."""

from __future__ import annotations

import numpy as np
import pytest

from shopcopilot.catalog.attributes import derive
from shopcopilot.catalog.product import product_from_record
from shopcopilot.dialogue import decide
from shopcopilot.dialogue.wording import compose_message
from shopcopilot.index.features_build import from_products
from shopcopilot.rank import rerank
from shopcopilot.state import update
from shopcopilot.state.model import ShoppingState


def product(
    asin,
    title,
    features=(),
    price=None,
    categories=("Clothing, Shoes & Jewelry", "Men", "Clothing", "Jackets & Coats"),
    rating_number=10,
    details=None,
):
    return product_from_record(
        {
            "parent_asin": asin,
            "title": title,
            "features": list(features),
            "price": price,
            "categories": list(categories),
            "details": details or {},
            "rating_number": rating_number,
            "average_rating": 4.3,
            "store": "Store" + asin,
        }
    )


@pytest.fixture()
def views():
    items = [
        product(
            "A1", "Men's Leather Biker Jacket Black", ["100% Leather", "Zipper closure"], 120.0
        ),
        product("A2", "Men's Suede Trucker Jacket Brown", ["100% Suede", "Button closure"], 90.0),
        product(
            "A3",
            "Men's Quilted Puffer Jacket Navy",
            ["100% Nylon", "Water resistant shell"],
            60.0,
            rating_number=50_000,
        ),
        product("A4", "Men's Denim Jacket Blue", ["100% Cotton"], None),
        product(
            "D1",
            "Women's Floral Wrap Dress",
            ["95% Polyester, 5% Spandex", "Wrap closure"],
            30.0,
            categories=("Clothing, Shoes & Jewelry", "Women", "Clothing", "Dresses"),
        ),
    ]
    return from_products((p, derive(p)) for p in items)


def rerank_all(state, views):
    """Every product a candidate, all with the same lexical score."""
    return rerank(state, views, np.arange(len(views)), np.ones(len(views)))


def order(state, views):
    return [s.parent_asin for s in rerank_all(state, views)]


def test_category_evidence_ranks_the_category_first(lexicon, views, play):
    state, _ = play(lexicon, "I need a jacket for men")
    assert order(state, views)[-1] == "D1"


def test_exact_fragment_beats_popularity(lexicon, views, play):
    state, _ = play(
        lexicon, "I need a jacket for men", "For that, what matters is: Water resistant shell"
    )
    assert order(state, views)[0] == "A3"
    state, _ = play(lexicon, "I need a jacket for men", "what matters is: Button closure")
    assert order(state, views)[0] == "A2"


def test_rejected_value_is_demoted(lexicon, views, play):
    state, _ = play(lexicon, "I need a jacket for men", "not leather")
    ranked = order(state, views)
    assert ranked.index("A1") > ranked.index("A2")


def test_budget_limit_demotes_over_budget_and_missing_price_is_unknown(lexicon, views, play):
    state, _ = play(lexicon, "I need a jacket for men under $70")
    ranked = order(state, views)
    assert ranked.index("A3") < ranked.index("A1")
    assert ranked.index("A4") < ranked.index("A1")  # no price: unknown, not a violation


def test_hard_constraint_dominates_popularity(lexicon, views, play):
    state, _ = play(lexicon, "I need a jacket for men in suede")
    ranked = order(state, views)
    assert ranked[0] == "A2"


def test_reason_lists_matched_evidence(lexicon, views, play):
    from shopcopilot.rank import reason

    state, _ = play(lexicon, "I need a jacket for men", "what matters is: Water resistant shell")
    top = rerank_all(state, views)[0]
    assert "Water resistant shell" in reason(top)


def test_explanations_on_demand_equal_eager_ones(lexicon, views, play):
    state, _ = play(
        lexicon, "I need a jacket for men under $100", "what matters is: Button closure"
    )
    eager = rerank(state, views, np.arange(len(views)), np.ones(len(views)), explain_top=10)
    lazy = rerank(state, views, np.arange(len(views)), np.ones(len(views)), explain_top=0)
    assert [s.parent_asin for s in lazy] == [s.parent_asin for s in eager]
    assert all(not s.evidence and not s.parts for s in lazy)
    lazy.explain(2)
    assert [(s.evidence, s.parts) for s in lazy[:2]] == [(s.evidence, s.parts) for s in eager[:2]]
    assert eager[0].evidence and not lazy[2].evidence
    lazy.explain(2)  # explaining again adds nothing twice
    assert lazy[0].evidence == eager[0].evidence


def test_dialogue_never_reasks_and_message_agrees(lexicon, views, play):
    state, _ = play(lexicon, "I need a jacket for men")
    asked = []
    for turn in range(1, 9):
        ranked = rerank_all(state, views)
        decision = decide(state, ranked, views, turn, 10)
        if decision.ask_attribute is None:
            break
        assert decision.ask_attribute not in asked or decision.ask_attribute == "other"
        asked.append(decision.ask_attribute)
        state.questions.append((turn, decision.ask_attribute))
        assert decision.message.endswith("?")
        state, _ = update(state, "no preference", lexicon, turn + 1)
    assert asked, "the policy should ask something while it knows little"


@pytest.mark.parametrize(
    "opening", ["I need a jacket for men", "show me something", "red leather boots"]
)
def test_skipping_questions_that_cannot_win_picks_the_same_question(lexicon, views, opening, play):
    state, _ = play(lexicon, opening)
    skipped = 0
    for turn in range(1, 7):
        ranked = rerank_all(state, views)
        full = decide(state, ranked, views, turn, 10)
        quick = decide(state, ranked, views, turn, 10, alternatives=False)
        assert (quick.ask_attribute, quick.message, quick.width, quick.options) == (
            full.ask_attribute,
            full.message,
            full.width,
            full.options,
        )
        assert len(quick.alternatives) <= len(full.alternatives)
        skipped += len(quick.alternatives) < len(full.alternatives)
        state.questions.append((turn, full.ask_attribute))
        state, _ = update(state, "no preference", lexicon, turn + 1)
    assert skipped  # the open question led at least once


def test_no_preference_attribute_is_not_asked(lexicon, views, play):
    state, _ = play(lexicon, "I need a jacket for men")
    state.questions.append((1, "color"))
    state, _ = update(state, "any color is fine", lexicon, 2)
    decision = decide(state, rerank_all(state, views), views, 2, 10)
    assert decision.ask_attribute != "color"
    assert all(alt["attribute"] != "color" for alt in decision.alternatives)


def test_a_declined_open_question_returns_once_a_specific_one_draws_a_blank(lexicon, views, play):
    state, _ = play(lexicon, "I'm looking for a jacket, just browsing")
    asked = []
    for turn, reply in enumerate(
        ["I don't have a preference; please use your judgment.", "no preference", "no preference"],
        start=1,
    ):
        decision = decide(state, rerank_all(state, views), views, turn, 10)
        asked.append(decision.ask_attribute)
        state.questions.append((turn, decision.ask_attribute))
        state, _ = update(state, reply, lexicon, turn + 1)
    # The open question, declined; a specific one, declined too; then the open question again.
    assert asked[0] == "other" and asked[1] != "other" and asked[2] == "other"
    assert "other" in state.unconstrained


def test_a_declined_open_question_is_not_asked_while_specific_ones_are_answered(
    lexicon, views, play
):
    state, _ = play(lexicon, "I'm looking for a jacket, just browsing")
    state.questions.append((1, "other"))
    state, _ = update(state, "I don't have a preference; please use your judgment.", lexicon, 2)
    state.questions.append((2, "material"))
    state, _ = update(state, "leather please", lexicon, 3)
    decision = decide(state, rerank_all(state, views), views, 3, 10)
    assert decision.ask_attribute not in ("other", "material")


def test_last_turn_only_recommends(lexicon, views, play):
    state, _ = play(lexicon, "I need a jacket for men")
    decision = decide(state, rerank_all(state, views), views, 10, 10)
    assert decision.ask_attribute is None and decision.width == 10


def test_word_presence_counts_plural_forms_and_forms_two_stems_share():
    from shopcopilot.rank.evidence import Batch

    items = [
        product("B1", "Travel Bus Tote", ["Roomy pockets"]),
        product("B2", "Canvas Bus Print Bag", ["Zipper"]),
        product("B3", "Leather Pocket Wallet", ["Slim"]),
    ]
    store = from_products((p, derive(p)) for p in items)
    # "bu" and "bus" both take the form "bus"; "pocket" takes "pockets".
    batch = Batch(store, np.arange(3), {"bu", "bus", "pocket", "zipper", "absent"}, ())
    assert batch.has["bus"].tolist() == [True, True, False]
    assert batch.has["bu"].tolist() == [True, True, False]
    assert batch.has["pocket"].tolist() == [True, False, True]
    assert batch.has["zipper"].tolist() == [False, True, False]
    assert batch.has["absent"].tolist() == [False, False, False]
    one_each = Batch(store, np.array([2, 0]), {"pocket", "zipper"}, ())
    assert one_each.has["pocket"].tolist() == [True, True]
    assert one_each.has["zipper"].tolist() == [False, False]


def test_with_no_item_known_the_open_question_asks_what_they_are_looking_for():
    assert compose_message(ShoppingState(), "other", [], 10).endswith("What are you looking for?")
    assert compose_message(ShoppingState(), "color", ["red"], 10).endswith(
        "Do you have a color in mind (for example: red)?"
    )


@pytest.mark.parametrize(
    ("word", "also"),
    [("padding", "padded"), ("hoods", "hooded"), ("lace", "lacy"), ("wires", "wired"),
     ("strappy", "strapped"), ("fur", "furry")],
)  # fmt: skip
def test_a_word_turned_down_turns_down_its_inflections(word, also):
    from shopcopilot.index.forms import inflections
    from shopcopilot.index.text import stem

    assert stem(also) in inflections(word)
    assert stem("wool") not in inflections("woo")  # nothing is read into a short word
