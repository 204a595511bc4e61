"""The reactive natural shopper ("natural-reactive"): what it says about shown products is true.

Each check recomputes the truth from the products themselves (derived attributes, prices,
features), not from the customer's bookkeeping or from bench/reactions.py.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections import Counter
from pathlib import Path

import pytest
from test_natural import HAND_BUILT, converse, is_true, make_product

from shopcopilot.bench.customer import BOTH, PROTOCOLS, make_customer
from shopcopilot.bench.natural import (
    TEMPLATES_PATH,
    CustomerMessage,
    NaturalCustomer,
    NoiseSettings,
    describe_category,
    load_templates,
    templates,
)
from shopcopilot.bench.sessions_io import SCENARIOS, Session
from shopcopilot.catalog.attributes import derive
from shopcopilot.catalog.product import Product, product_from_record
from shopcopilot.catalog.vocabulary import find_measures

QUIET = NoiseSettings(0, 0, 0, 0, 5)
MM = {"mm": 1.0, "cm": 10.0, "inch": 25.4, "ft": 304.8}


def boots(asin: str, color: str, material: str, price: float, store: str, shaft: float) -> Product:
    return make_product(
        asin,
        f"{store} Women's Hiking Boots {color} {material} Lace-Up",
        ["Women", "Shoes", "Outdoor", "Hiking & Trekking", "Hiking Boots"],
        [f"100% {material}", "Lace-Up closure", f"Shaft measures approximately {shaft} inches"],
        price,
        {"Department": "Womens", "Color": color},
        store=store,
    )


# Hiking boots that differ from one another in price, brand, colour, material and shaft length,
# plus products of other kinds: every critique and every list-wide reason has a case.
FAMILY = [
    boots("RB00000001", "Navy", "Leather", 89.5, "Trailmark", 6),
    boots("RB00000002", "Black", "Leather", 149.0, "Trailmark", 6),
    boots("RB00000003", "Navy", "Suede", 92.0, "Peakwise", 6),
    boots("RB00000004", "Red", "Leather", 45.0, "Trailmark", 9),
    boots("RB00000005", "Navy", "Leather", 88.0, "Peakwise", 3),
    boots("RB00000006", "Brown", "Nylon", 60.0, "Ridgeline", 6),
    *HAND_BUILT[1:4],
]


def reactive_run(pairs: list[tuple[Session, Product]], pool: list[Product], seed: int) -> list:
    """Reactive customers talking to a random agent that shows products from the pool."""
    out = []
    for session, product in pairs:
        customer = NaturalCustomer(session, product, seed, noise=QUIET, reactions=True)
        shown = [p for p in pool if p.parent_asin != product.parent_asin]
        lists = _Recording(customer)
        converse(lists, shown, random.Random(f"agent:{session.sample_id}"))
        out.append((customer, lists.shown))
    return out


class _Recording:
    """Passes the runner's calls through to the customer, keeping each list it was shown."""

    def __init__(self, customer: NaturalCustomer) -> None:
        self.customer = customer
        self.shown: dict[int, list[Product]] = {}  # message turn -> the products listed before it

    def first_message(self) -> str:
        return self.customer.first_message()

    def override_turn(self) -> int | None:
        return self.customer.override_turn()

    def override_message(self) -> str:
        return self.customer.override_message()

    def reply(self, response: dict, turn: int) -> str:
        self.shown[turn + 1] = [
            item if isinstance(item, Product) else _product(item)
            for item in response["recommendations"]
        ]
        return self.customer.reply(response, turn)


def _product(item: dict | str) -> Product:
    if isinstance(item, str):
        return next(p for p in [*FAMILY, *_REAL] if p.parent_asin == item)
    return product_from_record(item)


_REAL: list[Product] = []


@pytest.fixture(scope="module")
def family_runs() -> list:
    pairs = [
        (
            Session(f"react_{i:04d}", SCENARIOS[i % len(SCENARIOS)], {}, FAMILY[i % 6].parent_asin),
            FAMILY[i % 6],
        )
        for i in range(120)
    ]
    return reactive_run(pairs, FAMILY, seed=3)


@pytest.fixture(scope="module")
def real_runs(shared_data: Path) -> list:
    with (shared_data / "catalog_harvest.jsonl").open(encoding="utf-8") as handle:
        real = [product_from_record(json.loads(line)) for line in handle if line.strip()]
    _REAL[:] = real
    by_leaf: dict[str, list[Product]] = {}
    for product in real:
        by_leaf.setdefault(derive(product).leaf, []).append(product)
    crowded = [group for group in by_leaf.values() if len(group) >= 4]
    rng = random.Random(5)
    runs = []
    for i, group in enumerate(rng.sample(crowded, min(40, len(crowded)))):
        target = group[0]
        session = Session(
            f"real_react_{i:04d}", SCENARIOS[i % len(SCENARIOS)], {}, target.parent_asin
        )
        pool = group[1:6] + rng.sample(real, 2)
        runs += reactive_run([(session, target)], pool, seed=i)
    return runs


@pytest.fixture(scope="module", params=["family", pytest.param("real", marks=pytest.mark.shared)])
def runs(request: pytest.FixtureRequest) -> list:
    return request.getfixturevalue(f"{request.param}_runs")


def reactions(runs: list) -> list[tuple[NaturalCustomer, CustomerMessage, object, list[Product]]]:
    return [
        (customer, message, reaction, shown[message.turn])
        for customer, shown in runs
        for message in customer.transcript
        for reaction in message.reactions
    ]


# ---- truth, recomputed ------------------------------------------------------------------------


def kind(product: Product) -> tuple[str, str]:
    attrs = derive(product)
    category = describe_category(attrs, product.title)
    return attrs.leaf, category.head if category else ""


def measures(product: Product) -> list[tuple[str, float]]:
    """(feature text, millimetres) of each single measure in the features."""
    return [
        (feature.lower(), m.measure.values[0] * MM[m.measure.unit])
        for feature in product.features
        for m in find_measures(feature)
        if len(m.measure.values) == 1 and m.measure.unit in MM
    ]


def critique_holds(aspect: str, shown: Product, target: Product, said: str) -> bool:
    mine, theirs = derive(target), derive(shown)
    if aspect == "cheaper":
        return theirs.price > mine.price
    if aspect == "pricier":
        return theirs.price < mine.price
    if aspect == "brand":
        return theirs.brand.lower() != mine.brand.lower()
    if aspect == "color":
        return not set(theirs.colors) & set(mine.colors) and said in theirs.colors
    if aspect == "material":
        return not set(theirs.material_names) & set(mine.material_names)
    longer_shown = aspect in ("shorter", "smaller")  # "too long": the shown one is longer
    if said in theirs.styles:  # a length style: maxi / knee high against mini / cropped
        long_styles, short_styles = {"maxi", "knee high"}, {"mini", "cropped"}
        first, second = (theirs, mine) if longer_shown else (mine, theirs)
        return bool(set(first.styles) & long_styles and set(second.styles) & short_styles)
    pairs = [
        (a, b)
        for text_a, a in measures(shown)
        for text_b, b in measures(target)
        if said in text_a and said in text_b
    ]
    return any((a > b) if longer_shown else (a < b) for a, b in pairs)


def has_value(product: Product, attribute: str, value: str) -> bool:
    attrs = derive(product)
    if attribute == "category":
        return kind(product)[1] == value
    return value in {"color": attrs.colors, "material": attrs.material_names}[attribute]


# ---- tests --------------------------------------------------------------------------------------


def test_reactions_happen_of_every_kind(family_runs: list) -> None:
    found = Counter(
        (r.kind, r.aspect if r.kind == "reject_list" or r.aspect else "plain")
        for _, _, r, _ in reactions(family_runs)
    )
    kinds = {aspect for (k, aspect) in found if k == "pick"}
    assert {"plain", "cheaper", "pricier", "brand", "color", "material"} <= kinds, found
    assert {"shorter", "longer"} & kinds, found
    assert {a for (k, a) in found if k == "reject_list"} >= {"category", "material"}, found


def test_a_pick_names_the_shown_product_at_its_position_and_it_is_the_same_kind(
    runs: list,
) -> None:
    picks = [(c, m, r, s) for c, m, r, s in reactions(runs) if r.kind == "pick"]
    assert picks
    ordinals = templates()["reactions"]["ordinals"]
    for customer, message, reaction, shown in picks:
        assert shown[reaction.position - 1].parent_asin == reaction.asin
        assert reaction.asin != customer.product.parent_asin
        target_leaf, target_head = kind(customer.product)
        leaf, head = kind(shown[reaction.position - 1])
        assert leaf == target_leaf or head == target_head, message.clean_text
        text = message.clean_text.lower()
        position = reaction.position
        assert (
            len(shown) == 1
            or ordinals[position - 1] in text
            or re.search(rf"(#|\b){position}\b", text)
            or (position == len(shown) and re.search(r"\b(last|bottom|end|final)\b", text))
        ), (message.clean_text, position)


def test_every_critique_is_true_of_the_product_it_names(runs: list) -> None:
    critiques = [(c, m, r, s) for c, m, r, s in reactions(runs) if r.kind == "pick" and r.aspect]
    assert critiques
    for customer, message, reaction, shown in critiques:
        product = shown[reaction.position - 1]
        said = reaction.shown.lower() if reaction.aspect != "brand" else reaction.shown
        assert critique_holds(reaction.aspect, product, customer.product, said), (
            message.clean_text,
            reaction,
        )


def test_a_list_is_turned_down_only_for_what_no_shown_product_has(runs: list) -> None:
    rejections = [(c, m, r, s) for c, m, r, s in reactions(runs) if r.kind == "reject_list"]
    assert rejections
    for customer, message, reaction, shown in rejections:
        target = customer.product
        top = [p for p in shown if p.parent_asin != target.parent_asin]
        (told,) = message.disclosures[-1:]
        assert told.stance == "want" and is_true(
            target, told.attribute, told.value, told.low, told.high
        )
        if reaction.aspect == "budget":
            assert all(p.price and p.price > told.high for p in top), message.clean_text
        elif reaction.aspect == "category":
            head = kind(target)[1]
            assert all(kind(p)[1] != head for p in top), message.clean_text
        else:
            assert has_value(target, reaction.aspect, reaction.wanted)
            assert not any(has_value(p, reaction.aspect, reaction.wanted) for p in top), (
                message.clean_text
            )


def test_disclosed_values_stay_true_and_the_target_is_never_named(runs: list) -> None:
    for customer, _ in runs:
        for message in customer.transcript:
            assert customer.product.parent_asin.lower() not in message.text.lower()
            assert customer.product.title.lower() not in message.text.lower()
            for d in message.disclosures:
                if d.stance == "want":
                    assert is_true(customer.product, d.attribute, d.value, d.low, d.high), (
                        message.text
                    )


def test_before_an_override_the_shopper_does_not_react(family_runs: list) -> None:
    overrides = [c for c, _ in family_runs if c.session.scenario_type == "intent_override"]
    assert overrides
    for customer in overrides:
        switch = customer.override_turn()
        assert all(not m.reactions for m in customer.transcript if m.turn < switch)


def _pattern(template: str) -> re.Pattern[str]:
    parts = re.split(r"\{[a-z_]+\}", template.lower())
    return re.compile(".+".join(re.escape(p) for p in parts))


def test_reaction_wording_comes_from_the_templates(family_runs: list) -> None:
    section = templates()["reactions"]
    for _, message, reaction, _ in reactions(family_runs):
        key = (
            f"reject_list_{reaction.aspect}"
            if reaction.kind == "reject_list"
            else f"pick_{reaction.aspect}"
            if reaction.aspect
            else "pick"
        )
        text = message.clean_text.lower()
        assert any(_pattern(t).search(text) for t in section[key]), (key, message.clean_text)


def test_another_phrasing_file_changes_the_reactions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = json.loads(json.dumps(templates()))
    for key in other["reactions"]:
        if key.startswith(("pick", "reject_list")):
            other["reactions"][key] = ["zebra " + t for t in other["reactions"][key]]
    path = tmp_path / "held_out.json"
    path.write_text(json.dumps(other), encoding="utf-8")
    monkeypatch.setenv("SHOPCOPILOT_NATURAL_TEMPLATES", str(path))
    pairs = [
        (Session(f"zebra_{i}", "buying", {}, FAMILY[0].parent_asin), FAMILY[0]) for i in range(20)
    ]
    said = [m for c, _ in reactive_run(pairs, FAMILY, seed=1) for m in c.transcript if m.reactions]
    assert said and all("zebra" in m.clean_text.lower() for m in said)


# The plain protocol's transcripts over the hand-built sessions of tests/test_natural.py, as
# they were before reactions existed (sha256 of every message, in order). A change here is a
# change of the plain natural protocol, to be measured as one (docs/benchmarks.md).
PLAIN_DIGEST = "48745d2d3096bc730f39db4aa5acecdead992ecf56d6a1c22fe3a2e2593eaa9e"


def test_with_reactions_off_the_plain_protocol_is_unchanged() -> None:
    from test_natural import hand_built_pairs, run_all

    customers = run_all(hand_built_pairs(), seed=5)
    texts = "\n".join(m.text for c in customers for m in c.transcript)
    assert hashlib.sha256(texts.encode()).hexdigest() == PLAIN_DIGEST
    assert not any(m.reactions or m.intent == "reaction" for c in customers for m in c.transcript)


def test_the_protocols_by_name() -> None:
    assert "natural-reactive" in PROTOCOLS and BOTH == ("official", "natural")
    session, product = Session("p", "buying", {}, FAMILY[0].parent_asin), FAMILY[0]
    plain = make_customer("natural", session, product, 1)
    reactive = make_customer("natural-reactive", session, product, 1)
    assert isinstance(plain, NaturalCustomer) and not plain.reactions
    assert isinstance(reactive, NaturalCustomer) and reactive.reactions
    with pytest.raises(ValueError, match="natural-reactive"):
        make_customer("reactive", session, product, 1)


@pytest.mark.parametrize(
    "path",
    sorted((Path(__file__).parent.parent / "benchmarks" / "data").glob("natural_templates_*.json")),
    ids=lambda p: p.stem,
)
def test_every_held_out_phrasing_file_reacts_in_its_own_words(path: Path) -> None:
    default = load_templates(TEMPLATES_PATH)["reactions"]
    phrasing = load_templates(path)["reactions"]
    assert set(phrasing) == set(default)
    for key in phrasing:
        if key.startswith(("pick", "reject_list")):
            assert len(phrasing[key]) >= 2, key
            assert not set(phrasing[key]) & set(default[key]), key
