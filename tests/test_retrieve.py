"""The retrieval stage: which products of the hand-written catalog a state brings to the reranker.

The states are built by hand (or by `update` where the point is what a message leads to), and
the candidates are read back as product ids.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from shopcopilot.index import CatalogIndex, open_index
from shopcopilot.index.features import FeatureStore
from shopcopilot.index.features_build import load_or_build
from shopcopilot.index.query import Occur, RowHits
from shopcopilot.retrieve import Candidates, RetrievalSettings, retrieve
from shopcopilot.retrieve.candidates import (
    build_query,
    quote_searches,
    quotes_cap,
    split_common,
    with_common_words,
)
from shopcopilot.retrieve.facts import fact_rows
from shopcopilot.state import Constraint, Fragment, ShoppingState
from shopcopilot.terms import Attribute, Level, Status

DEFAULT = RetrievalSettings()
# One row from the main search: whatever else comes back came from another search.
ONE_ROW = RetrievalSettings(base_window=1, browsing_window_bonus=0)
PARKAS = {"PARKA1", "PARKA2", "PARKA3"}  # priced 10, 50 and not at all


def category(value: str, **fields: Any) -> Constraint:
    return Constraint(attribute=Attribute.CATEGORY, value=value, **fields)


def budget(low: float | None = None, high: float | None = None, **fields: Any) -> Constraint:
    return Constraint(
        attribute=Attribute.BUDGET, value=f"{low}-{high}", data={"min": low, "max": high}, **fields
    )


def state_of(
    *constraints: Constraint, fragments: tuple[Fragment, ...] = (), **fields: Any
) -> ShoppingState:
    return ShoppingState(constraints=list(constraints), fragments=list(fragments), **fields)


def ids(index: CatalogIndex, candidates: Candidates) -> list[str]:
    return index.store.asins_for_rows(candidates.rows.tolist())


def found(
    index: CatalogIndex, state: ShoppingState, settings: RetrievalSettings = DEFAULT
) -> set[str]:
    return set(ids(index, retrieve(state, index, settings)))


def test_a_category_brings_the_products_of_that_kind_and_no_others(hand_index):
    assert found(hand_index, state_of(category("parka"))) == PARKAS


def test_a_price_limit_keeps_products_within_it_and_those_without_a_price(hand_index):
    assert found(hand_index, state_of(category("parka"), budget(high=20))) == {"PARKA1", "PARKA3"}
    assert found(hand_index, state_of(category("parka"), budget(low=20))) == {"PARKA2", "PARKA3"}


@pytest.mark.parametrize(
    ("low", "high", "keeps_the_50_dollar_parka"),
    [
        (None, 47, False),  # 50 is more than 5% over
        (None, 48, True),  # 50 is within 5% of 48: a near miss, kept
        (55, None, True),  # 50 is within 10% under 55
        (56, None, False),
    ],
)
def test_price_limits_allow_a_near_miss(hand_index, low, high, keeps_the_50_dollar_parka):
    kept = found(hand_index, state_of(category("parka"), budget(low, high)))
    assert ("PARKA2" in kept) == keeps_the_50_dollar_parka
    assert "PARKA3" in kept  # no price: never filtered out


def test_what_a_shopper_says_reaches_the_search(hand_index, lexicon, play):
    state, _ = play(lexicon, "I need a parka under $20")
    assert found(hand_index, state) == {"PARKA1", "PARKA3"}
    state, _ = play(lexicon, "a parka for around $15")  # a price to come close to, not a limit
    assert any(c.level == Level.GOAL for c in state.active(Attribute.BUDGET))
    assert found(hand_index, state) == PARKAS


def test_only_active_requirements_steer_the_search(hand_index):
    state = state_of(
        category("parka"),
        category("quokka", status=Status.REPLACED),
        budget(high=20, status=Status.NEGATED),
        fragments=(Fragment("zephyr lantern", 1, 0, status=Status.REPLACED),),
    )
    assert found(hand_index, state) == PARKAS
    assert found(hand_index, state_of(category("parka", status=Status.NEGATED))) == set()


def test_a_state_with_nothing_to_search_for_brings_no_candidates(hand_index):
    empty = retrieve(ShoppingState(), hand_index, DEFAULT)
    assert len(empty) == 0 and empty.query_text == "" and empty.best_rows(5) == []
    assert empty.window == DEFAULT.base_window + DEFAULT.browsing_window_bonus
    # A price limit alone names nothing to look for.
    assert found(hand_index, state_of(budget(high=20))) == set()


def test_descriptions_are_searched_only_when_the_settings_say_so(hand_index):
    # DESC01 says "quokka" in its description only.
    assert found(hand_index, state_of(category("quokka"))) == {"TITLE01"}
    every_field = RetrievalSettings(skip_fields=())
    both = retrieve(state_of(category("quokka")), hand_index, every_field)
    assert hand_index.store.asins_for_rows(both.best_rows(2)) == ["TITLE01", "DESC01"]


def test_the_window_bounds_the_search_and_widens_as_turns_make_no_progress(hand_index):
    narrow = RetrievalSettings(base_window=5, browsing_window_bonus=0)
    everyday = state_of(category("everyday"))  # 24 products say it
    assert len(retrieve(everyday, hand_index, narrow)) == 5
    windows = [
        retrieve(
            state_of(category("x"), turns_without_progress=n, intent=intent), hand_index, DEFAULT
        ).window
        for n, intent in ((0, "buying"), (0, "browsing"), (2, "buying"), (50, "buying"))
    ]
    assert windows == [150, 200, 300, DEFAULT.max_window]


def test_a_named_brand_is_among_the_candidates_beyond_the_window(hand_index):
    everyday = category("everyday")
    assert "STORE01" not in found(hand_index, state_of(everyday), ONE_ROW)
    brand = Constraint(attribute=Attribute.BRAND, value="Wombatwear")
    candidates = retrieve(state_of(everyday, brand), hand_index, ONE_ROW)
    found_ids = ids(hand_index, candidates)
    assert "STORE01" in found_ids and len(found_ids) == 2
    # Found by the brand search alone: no lexical score of its own.
    assert candidates.scores[found_ids.index("STORE01")] == 0.0


def test_a_requirement_of_two_words_or_more_is_also_searched_word_for_word(hand_index):
    everyday = category("everyday")
    two_words = state_of(everyday, fragments=(Fragment("ribbed cuffs", 1, 0),))
    assert "STORE01" in found(hand_index, two_words, ONE_ROW)  # "Ribbed cuffs" is its feature
    one_word = state_of(everyday, fragments=(Fragment("ribbed", 1, 0),))
    assert "STORE01" not in found(hand_index, one_word, ONE_ROW)


def test_a_product_found_by_several_searches_is_listed_once_with_its_main_score(hand_index):
    brand = Constraint(attribute=Attribute.BRAND, value="Wombatwear")
    state = state_of(category("cardigan"), brand, fragments=(Fragment("ribbed cuffs", 1, 0),))
    candidates = retrieve(state, hand_index, DEFAULT)
    assert ids(hand_index, candidates) == ["STORE01"]
    assert candidates.scores.tolist()[0] > 0


# --- a large category: the products holding every requirement ----------------------------------

FORMAL = ["Clothing, Shoes & Jewelry", "Women", "Clothing", "Dresses", "Formal"]
# A two-product window: any category holding more than it counts as large (facts_ratio 1, as
# by default).
FACTS = RetrievalSettings(base_window=2, browsing_window_bonus=0, facts_ratio=1.0)


@pytest.fixture(scope="module")
def look_alikes(
    tmp_path_factory: pytest.TempPathFactory,
    catalog_record: Callable[..., dict[str, object]],
    write_catalog: Callable[[Path, list[dict[str, object]]], Path],
) -> Iterator[tuple[CatalogIndex, FeatureStore]]:
    """Twelve formal dresses saying "100% viscose" and "zip" in their short titles, and TARGET,
    the one whose long features also say "back"; and sundresses in another category saying
    "viscose zip back"."""
    dresses = [
        catalog_record(
            f"ALIKE{n:02d}",
            "100% Viscose Zip, 100% Viscose Zip",
            categories=FORMAL,
            features=["Zip"],
        )
        for n in range(12)
    ]
    target = catalog_record(
        "TARGET",
        "Long Sleeve Evening Gown With Crew Neck",
        categories=FORMAL,
        features=["100% Viscose", "Zip back closure for an easy fit, imported"],
        price=60.0,
    )
    elsewhere = [
        catalog_record(
            f"SUN{n:02d}",
            "Viscose Zip Back Sundress",
            categories=["Clothing, Shoes & Jewelry", "Women", "Clothing", "Dresses", "Casual"],
            features=["Viscose zip back"],
        )
        for n in range(18)
    ]
    folder = tmp_path_factory.mktemp("look-alikes")
    catalog = write_catalog(folder / "catalog.jsonl", [*dresses, target, *elsewhere])
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SHOPCOPILOT_CACHE", str(folder / "cache"))
        index = open_index(catalog, progress=False)
    yield index, load_or_build(index.store, index.path)
    index.close()


def formal_dress(*fragments: str) -> ShoppingState:
    formal = category("dresses formal", text="Dresses Formal", data={"words": {"formal": 1.0}})
    return state_of(formal, fragments=tuple(Fragment(text, 1, 0) for text in fragments))


def test_the_products_holding_every_requirement_join_a_large_category_unscored(look_alikes):
    index, features = look_alikes
    state = formal_dress("viscose", "back")
    searched = retrieve(state, index, FACTS)
    assert "TARGET" not in ids(index, searched)  # the look-alikes outscore it
    candidates = retrieve(state, index, FACTS, features)
    found_ids = ids(index, candidates)
    assert "TARGET" in found_ids and candidates.scores[found_ids.index("TARGET")] == 0.0
    assert found_ids[: len(searched)] == ids(index, searched)  # the search's order comes first
    # Not in a category no larger than facts_ratio windows, nor under a word no path holds.
    for state_, settings in (
        (state, replace(FACTS, facts_ratio=20.0)),
        (state, replace(FACTS, facts_ratio=0.0)),
        (
            state_of(
                category("gowns", text="Gowns"),
                fragments=(Fragment("viscose", 1, 0), Fragment("back", 1, 0)),
            ),
            FACTS,
        ),
    ):
        with_features = retrieve(state_, index, settings, features)
        assert ids(index, with_features) == ids(index, retrieve(state_, index, settings))
    # Within the budget only.
    cheap = formal_dress("viscose", "back")
    cheap.constraints.append(budget(high=5))
    assert "TARGET" not in ids(index, retrieve(cheap, index, FACTS, features))


def test_requirements_held_by_more_products_than_the_window_add_nothing(look_alikes):
    index, features = look_alikes
    assert len(fact_rows(formal_dress("viscose"), features, 20)) == 13  # the twelve and TARGET
    assert not len(fact_rows(formal_dress("viscose"), features, 12))  # more than the limit
    assert not len(fact_rows(formal_dress("viscose", "velvet"), features, 20))  # no one says both
    assert not len(fact_rows(formal_dress(), features, 20))  # no requirement: no lookup
    # Only products in the category: the sundresses say every word too.
    rows = fact_rows(formal_dress("viscose zip back"), features, 20)
    assert index.store.asins_for_rows((rows + 1).tolist()) == ["TARGET"]


# --- two passes: common words score the candidates the selective words find -----------------


def test_words_more_products_hold_than_the_bound_leave_the_search_with_their_boosts(look_alikes):
    _, features = look_alikes
    query = build_query(formal_dress("viscose zip back"))
    selective, common = split_common(query, features, 20)  # every product says viscose and zip
    kept = {word for clause in selective.clauses for word in clause.words}
    assert "back" in kept and "formal" in kept
    assert not kept & {"viscose", "zip"}
    assert common["viscose"] == common["zip"] == 0.7  # one soft fragment's boost each
    # Nothing selective to search with, no bound, or a catalog within it: the whole query.
    only_common = build_query(state_of(fragments=(Fragment("viscose zip", 1, 0),)))
    for args in ((only_common, features, 20), (query, features, None), (query, features, 31)):
        assert split_common(*args) == (args[0], {})


def test_a_candidate_holding_the_common_words_gains_their_share(look_alikes):
    index, features = look_alikes
    target, sundress = (features.row_of(a) + 1 for a in ("TARGET", "SUN00"))  # store rows
    hits = RowHits([sundress, target], [1.0, 1.0])
    # Only TARGET's text says "imported"; both say "viscose".
    assert list(with_common_words(hits, {"imported": 1.0}, features, 6.0, 2).rows) == [
        target,
        sundress,
    ]
    assert with_common_words(hits, {"viscose": 1.0}, features, 6.0, 1).rows == [sundress]


def test_two_passes_find_what_one_search_finds_where_the_words_allow(look_alikes):
    index, features = look_alikes
    state = formal_dress("viscose zip back")
    wide = replace(DEFAULT, base_window=40, facts_ratio=0.0)
    one_pass = retrieve(state, index, replace(wide, common_holders=None), features)
    two_passes = retrieve(state, index, replace(wide, common_holders=20), features)
    assert set(ids(index, two_passes)) == set(ids(index, one_pass))
    # The look-alikes lead both (the common words add the same to each), then the same order.
    assert ids(index, two_passes) == ids(index, one_pass)


def test_the_rows_holding_a_word_are_found_in_any_order(look_alikes):
    _, features = look_alikes
    rows = np.array([30, 2, 17, 0, 12, 5], dtype=np.int64)
    postings = features.postings("words")
    ids_ = features.word_ids("back")
    expected = [bool(set(ids_) & set(features.words.row(r).tolist())) for r in rows]
    assert postings.held_by([ids_], rows)[0].tolist() == expected
    assert any(expected) and not all(expected)
    assert features.holder_count("back") == 19 and features.holder_count("dresses") == 31


def test_only_a_catalog_past_the_bound_caps_the_quotes(look_alikes):
    _, features = look_alikes  # 31 products
    assert quotes_cap(DEFAULT, features) is None
    assert quotes_cap(DEFAULT, None) is None
    assert quotes_cap(replace(DEFAULT, common_holders=20), features) == DEFAULT.max_quotes == 3


def test_past_the_bound_a_quote_is_looked_for_among_the_kind_of_item_asked_for(look_alikes):
    index, features = look_alikes
    state = formal_dress("zip back")  # TARGET and the sundresses quote it; only TARGET is formal
    scale = replace(DEFAULT, common_holders=20)
    (query, limit), *_ = quote_searches(state, scale, features)
    assert {c.text for c in query.clauses} == {"zip back", "formal"}
    assert all(c.occur is Occur.MUST for c in query.clauses) and limit == 150
    quoting = {h.parent_asin for h in index.search(query, limit=50)}
    assert quoting == {"TARGET"}
    # Within the bound, one query of every quote, anywhere.
    (within, _), *more = quote_searches(state, DEFAULT, features)
    assert not more and [c.occur for c in within.clauses] == [Occur.SHOULD]
    assert any(h.parent_asin.startswith("SUN") for h in index.search(within, limit=50))


def test_past_the_bound_a_quote_of_words_too_many_products_hold_is_not_looked_for(look_alikes):
    _, features = look_alikes
    state = formal_dress("zip back")
    held = min(features.holder_count("zip"), features.holder_count("back"))
    kept = replace(DEFAULT, common_holders=20, quote_holders=held)
    assert len(quote_searches(state, kept, features)) == 1
    assert quote_searches(state, replace(kept, quote_holders=held - 1), features) == []
    # Within the bound every quote is searched, however common its words.
    assert quote_searches(state, replace(DEFAULT, quote_holders=0), features)


def test_the_item_search_asks_for_the_head_in_the_forms_the_catalog_has():
    """The index keeps words as written: "pump" alone missed every "Pumps" (a list for "black
    heels for a wedding" held one pump among wedding bands)."""
    from types import SimpleNamespace

    from shopcopilot.retrieve.candidates import _of_the_item

    state = state_of(category("heels", data={"words": {"pump": 5.0}}))
    features = SimpleNamespace(word_id={"pump": 0, "pumps": 1, "heels": 2})
    asked = [c.words for c in _of_the_item(state, features) if c.occur is Occur.MUST]  # type: ignore[arg-type]
    assert ("pumps",) in asked and ("pump",) not in asked
    assert ("pump",) in [c.words for c in _of_the_item(state)]  # without forms, as before
