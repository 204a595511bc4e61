"""The query categoriser: learnt from a catalog's titles and category paths, it reads which kind
of item a shopper's words name; the state stage keeps its reading with the item."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from shopcopilot.bench.understanding import NodeResolver, item_node
from shopcopilot.index import categoriser as K
from shopcopilot.state import ShoppingState, update
from shopcopilot.state.lexicon import Lexicon
from shopcopilot.terms import Attribute

TOP = "Clothing, Shoes & Jewelry"
SHOES = (TOP, "Women", "Shoes")
# Each path's product titles, written the way sellers title things.
TITLES: dict[tuple[str, ...], list[str]] = {
    (TOP, "Men", "Shoes", "Oxfords"): [
        "Men's Leather Oxford Dress Shoes Lace Up",
        "Classic Oxford Dress Shoes for Men Wedding",
        "Cap Toe Oxford Shoes Formal Leather",
    ],
    (*SHOES, "Pumps"): [
        "Women's Classic Pointed Toe Pumps Dress Shoes",
        "Stiletto High Heel Pumps for Women Party",
        "Block Heel Pumps Dress Shoes Office",
    ],
    (*SHOES, "Boots", "Rain Boots"): [
        "Women's Waterproof Rain Boots Mid Calf",
        "Rubber Rain Boots for Women Garden",
        "Short Rain Boots Chelsea Waterproof",
    ],
    (*SHOES, "Boots", "Ankle Boots"): [
        "Women's Ankle Boots Chunky Heel Zip",
        "Suede Ankle Boots Booties for Women",
        "Western Ankle Boots Pointed Toe",
    ],
    (TOP, "Women", "Clothing", "Dresses"): [
        "Women's Sweater Dress Long Sleeve Knit",
        "Floral Summer Dress for Women Casual",
        "Wrap Dress Midi Party Dress",
        "Shirt Dress Button Down Casual Dress",
    ],
    (TOP, "Women", "Clothing", "Sweaters"): [
        "Women's Cable Knit Sweater Pullover",
        "Oversized Crewneck Sweater Soft Knit",
        "Cardigan Sweater Open Front Knit",
    ],
    (TOP, "Women", "Clothing", "Coats, Jackets & Vests"): [
        "Women's Rain Jacket Waterproof Hooded",
        "Quilted Puffer Jacket Lightweight",
        "Denim Jacket Classic Jean Jacket",
    ],
    (TOP, "Women", "Jewelry", "Necklaces", "Pendant Necklaces"): [
        "Sterling Silver Heart Pendant Necklace for Women",
        "Gold Initial Pendant Necklace Dainty",
        "Birthstone Pendant Necklace Gift for Mom",
    ],
    (TOP, "Free One-Day Shipping on Jewelry, Watches, & More"): [
        "Free Shipping Deal Bracelet Gift Set",
        "Free Shipping Watch Deal Gift",
    ],
}


def documents() -> list[tuple[str, tuple[str, ...]]]:
    return [(title, path) for path, titles in TITLES.items() for title in titles]


@pytest.fixture(scope="module")
def model() -> K.Categoriser:
    trained = K.train(documents())
    assert trained is not None
    return trained


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("dress shoes", {"Shoes", "Oxfords", "Pumps"}),  # the head is shoes, "dress" qualifies it
        ("dress shoes for a wedding", {"Shoes", "Oxfords", "Pumps"}),
        ("sweater dress", {"Dresses"}),  # ... and here the head is a dress
        ("shirt dress", {"Dresses"}),
        ("rain boots", {"Rain Boots"}),  # not a rain jacket
        ("ankle booties", {"Ankle Boots"}),
        ("a pendant necklace for my wife", {"Pendant Necklaces"}),
    ],
)
def test_the_head_of_the_request_decides_the_item(model, text, kind):
    assert model.read(text).node in kind


def test_a_general_word_reads_the_general_node_not_one_of_its_kinds(model):
    # "boots" names Boots in full: which kind of boot is not said.
    assert model.read("boots").node == "Boots"
    assert model.read("boots").path[-1] in {"Rain Boots", "Ankle Boots"}


def test_a_store_page_is_never_read_as_the_item(model):
    reading = model.read("free shipping deal")
    assert reading.leaf.startswith("Free One-Day Shipping")  # the likeliest path is the page
    assert reading.node is None  # but it names no kind of item


BAGS: dict[tuple[str, ...], list[str]] = {
    (TOP, "Women", "Handbags & Wallets", "Shoulder Bags"): [
        "Women's Leather Shoulder Bag Large Hobo",
        "Canvas Shoulder Bag Tote for Women",
    ],
    (TOP, "Women", "Accessories", "Handbag Accessories", "Handbag Hangers"): [
        "Handbag Hanger Hook for Table",
        "Foldable Handbag Hanger Gift",
    ],
    (TOP, "Designer Shoes & Handbags"): [
        "Designer Leather Handbag for Women",
        "Luxury Handbag Satchel Designer",
        "Designer Handbag Crossbody Chain",
        "Italian Handbag Designer Tote",
    ],
    (TOP, "Tactical Boots"): ["Tactical Boots Military Combat", "Tactical Boots Desert Zip"],
    (TOP, "Men", "Shoes", "Boots"): ["Men's Chelsea Boots Leather", "Men's Work Boots Steel Toe"],
}


def test_a_kind_the_shopper_names_wins_over_a_store_page_that_holds_the_mass():
    bags = K.train([(t, path) for path, titles in BAGS.items() for t in titles])
    assert bags is not None
    reading = bags.read("handbag")
    assert reading.leaf == "Designer Shoes & Handbags"  # the page holds most of the mass
    assert reading.node == "Handbags & Wallets" and reading.node_p > 0.9  # the kind named
    # A page that says more of the shopper's words than any kind leaves them to speak.
    assert bags.read("tactical boots").node is None


def test_the_distribution_covers_every_department_free_path(model):
    probabilities = model.distribution("warm knit sweater")
    assert probabilities.shape == (len(model.paths),)
    assert probabilities.sum() == pytest.approx(1.0)
    assert all("Women" not in path and "Men" not in path for path in model.paths)
    assert model.paths[int(np.argmax(probabilities))][-1] == "Sweaters"


@pytest.mark.parametrize("text", ["rain boots rain", "sweater dress for a party", "zzz", ""])
def test_a_read_vectorises_a_text_exactly_as_the_fitted_vectorizer_does(model, text):
    fast = dict(model._vector(text))
    slow = model.vectorizer.transform([text]).tocoo()
    assert fast.keys() == set(slow.col.tolist())
    for column, value in zip(slow.col.tolist(), slow.data.tolist(), strict=True):
        assert fast[column] == pytest.approx(value, rel=1e-5)


def test_naive_bayes_can_be_trained_to_compare_against(monkeypatch):
    nb = K.train(documents(), kind="nb")
    assert nb is not None and nb.kind == "nb"
    assert nb.read("rain boots").node == "Rain Boots"
    assert nb.distribution("rain boots").sum() == pytest.approx(1.0)


def test_a_catalog_with_one_kind_of_item_has_no_categoriser():
    assert K.train([("Plain Tee", (TOP, "Women", "T-Shirts"))] * 5) is None


@pytest.mark.parametrize(
    ("text", "head"),
    [
        ("sweater dress", "dress"),
        ("dress shoes for a wedding", "shoe"),
        ("Women's Rain Boots - Waterproof, Size 8", "boot"),
        ("warm and cozy", None),
    ],
)
def test_the_head_noun_is_the_last_item_word_before_the_qualifiers(text, head):
    analyzer = K.Analyzer(K.head_nouns(K.item_path(p) for p in TITLES))
    assert analyzer.head(text) == head
    assert (f"^{head}" in analyzer(text)) == (head is not None)


def test_kinds_of_item_leave_out_departments_shop_sections_and_store_pages():
    kinds = K.kinds_of_item(
        [
            (TOP, "Women", "Shoes", "Boots"),
            (TOP, "Boot Shop", "Women", "Fashion", "Chelsea"),
            (TOP, "Free One-Day Shipping on Jewelry, Watches, & More"),
            (TOP, "Luggage & Travel Gear", "Luggage", "Carry-Ons"),
        ]
    )
    assert kinds == {"Shoes", "Boots", "Fashion", "Chelsea", "Luggage & Travel Gear", "Luggage",
                     "Carry-Ons"}  # fmt: skip


def test_training_reads_at_most_a_fixed_number_of_titles_per_path_the_same_way_each_time(
    monkeypatch,
):
    monkeypatch.setattr(K, "PER_PATH", 2)
    many = [(f"Rain boot number {n}", (*SHOES, "Boots")) for n in range(50)]
    titles, labels, _ = K._sample(itertools.chain(many, documents()))
    assert labels.count(("Shoes", "Boots")) == 2
    assert max(labels.count(path) for path in set(labels)) == 2
    assert K._sample(itertools.chain(many, documents()))[0] == titles


# -- saved beside the index -----------------------------------------------------------------------


def test_the_model_is_trained_once_per_index_and_reloaded(synthetic_index, monkeypatch):
    first = K.load_or_train(synthetic_index.store, synthetic_index.path)
    saved = K.model_path(synthetic_index.path)
    assert first is not None and saved.is_file()

    def no_training(*args, **kwargs):
        raise AssertionError("a saved model matching the index must be reused")

    monkeypatch.setattr(K, "train", no_training)
    again = K.load_or_train(synthetic_index.store, synthetic_index.path)
    assert again is not None and again.paths == first.paths


def test_a_model_saved_for_other_inputs_is_trained_again(synthetic_index, monkeypatch):
    K.load_or_train(synthetic_index.store, synthetic_index.path)
    monkeypatch.setattr(K, "RECIPE", {**K.RECIPE, "per_path": 1})  # another recipe
    trained = []
    real_train = K.train

    def counted(documents):
        trained.append(1)
        return real_train(documents)

    monkeypatch.setattr(K, "train", counted)
    K.load_or_train(synthetic_index.store, synthetic_index.path)
    assert trained == [1]


def test_a_damaged_model_file_is_trained_again(synthetic_index):
    K.model_path(synthetic_index.path).write_bytes(b"not a pickle")
    assert K.load_or_train(synthetic_index.store, synthetic_index.path) is not None


# -- read by the state stage ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def lexicon(model) -> Lexicon:
    return Lexicon({path: len(titles) for path, titles in TITLES.items()}, categoriser=model)


def item(lexicon: Lexicon, *messages: str) -> dict | None:
    state = ShoppingState()
    for turn, message in enumerate(messages, 1):
        state, _ = update(state, message, lexicon, turn)
    found = state.active(Attribute.CATEGORY)
    return {"text": found[-1].text, **found[-1].data} if found else None


def test_the_item_keeps_the_categorisers_reading(lexicon):
    found = item(lexicon, "looking for a sweater dress in green")
    assert found is not None and found["node"] == "Dresses"
    assert 0.5 <= found["node_p"] <= 1 and found["leaf"] == "Dresses"


def test_an_item_named_by_its_head_after_an_occasion_word(lexicon):
    found = item(lexicon, "birthday coming up, want to get my wife a pendant necklace")
    assert found is not None and found["node"] == "Pendant Necklaces"


def test_a_message_naming_no_kind_of_item_sets_none(lexicon):
    assert item(lexicon, "free shipping would be nice") is None


def test_without_a_categoriser_the_words_speak_alone(model):
    plain = Lexicon({path: len(titles) for path, titles in TITLES.items()})
    found = item(plain, "looking for a sweater dress in green")
    assert found is not None and "node" not in found


def test_a_reading_that_shares_no_word_with_the_shoppers_is_not_kept(lexicon, monkeypatch):
    wrong = K.Reading("Pumps", 0.9, ("Shoes", "Pumps"), 0.9)
    monkeypatch.setattr(lexicon, "read_item", lambda text: wrong)
    found = item(lexicon, "i need rain boots")
    assert found is not None and "node" not in found


def test_the_understanding_benchmark_reads_the_stored_node_first():
    nodes = NodeResolver([(TOP, "Women", "Shoes", "Boots"), (TOP, "Women", "Shoes", "Pumps")])
    assert item_node({"words": {"boot": 1.0}}, nodes) == "Boots"
    assert item_node({"words": {"boot": 1.0}, "node": "Rain Boots"}, nodes) == "Rain Boots"


def test_a_shoppers_word_for_an_item_is_read_as_the_catalogs(lexicon):
    # The titles say "sweater", never "jumper": the categoriser reads the catalog's word.
    found = item(lexicon, "a warm jumper for winter")
    assert found is not None and found["node"] == "Sweaters"


def test_half_a_value_phrase_at_the_items_edge_is_not_the_item():
    from shopcopilot.catalog.vocabulary import find_mentions
    from shopcopilot.state.parse import _without_cut_values

    text = "cotton nightgown short sleeve"
    values = find_mentions(text)  # "short sleeve" is a style
    assert _without_cut_values("cotton nightgown short", text, values) == "cotton nightgown"
    text = "white v neck tees"
    assert _without_cut_values("neck tees", text, find_mentions(text)) == "tees"
    assert _without_cut_values("tees", text, find_mentions(text)) == "tees"
