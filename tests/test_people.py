"""What a person meets (FOR_PEOPLE): requirements listed and dropped, questions about shown
products answered from their records with the list kept, replies that say what changed, and
shown products that stay, marked when new."""

from __future__ import annotations

import numpy as np
import pytest

from shopcopilot.agent import Agent, _wished
from shopcopilot.dialogue.wording import question_text
from shopcopilot.index.text import ROOT_CATEGORY as TOP
from shopcopilot.state.model import Constraint, Fragment, ShoppingState, StateDiff
from shopcopilot.state.questions import read_question
from shopcopilot.state.requirements import UnknownFacet, requirements
from shopcopilot.terms import Attribute

DRESSES = [TOP, "Women", "Clothing", "Dresses"]
SHIRTS = [TOP, "Men", "Clothing", "Shirts"]


def _catalog(record) -> list[dict]:
    colours = ["Blue", "Green", "Red", "Black", "Blue", "White", "Green", "Blue"]
    dresses = [
        record(
            f"DR{n}",
            f"Women's Summer Midi Dress {colour} Floral",
            price=20.0 + 7 * n,
            categories=DRESSES,
            details={"Department": "Womens", "Color": colour, "Material": "100% Cotton"},
            features=["Machine Wash", "Pockets on both sides"] if n % 2 else ["Hand wash only"],
            average_rating=3.5 + n / 10,
            rating_number=10 * (n + 1),
        )
        for n, colour in enumerate(colours)
    ]
    shirts = [
        record(
            f"SH{n}",
            f"Men's Oxford Dress Shirt {colour}",
            price=30.0,
            categories=SHIRTS,
            details={"Department": "Mens", "Color": colour},
        )
        for n, colour in enumerate(["Blue", "White", "Blue"])
    ]
    return dresses + shirts


@pytest.fixture(scope="module")
def person(person_on, catalog_record) -> Agent:
    return person_on(_catalog(catalog_record))


def _turns(agent: Agent, *messages: str, session: str = "p") -> list:
    agent.reset(session)
    return [agent.respond_traced(session, m, detailed=False) for m in messages]


def _ids(result) -> list[str]:
    return [r["parent_asin"] for r in result.response["recommendations"]]


def _kinds(record, *kinds: tuple) -> list[dict]:
    """Records of each kind: (code, title, categories, how many[, more fields])."""
    return [
        record(f"{code}{n}", f"{title} {n}", categories=path, **(more[0] if more else {}))
        for code, title, path, count, *more in kinds
        for n in range(count)
    ]


def _first_are(result, code: str, count: int) -> bool:
    first = _ids(result)[:count]
    return len(first) == count and all(a.startswith(code) for a in first)


def _price(agent: Agent, asin: str) -> float:
    product = agent.index.store.get(asin)
    assert product is not None and product.price is not None
    return product.price


def test_the_requirements_are_listed_in_a_shoppers_words(person):
    [*_, last] = _turns(person, "a dress for me, I'm a woman", "under $60", "not green")
    held = {(r["facet"], r["label"], r["negated"]) for r in last.response["requirements"]}
    assert ("budget", "≤ $60", False) in held
    assert ("color", "not green", True) in held
    assert ("item", "dress", False) in held


def test_a_dropped_requirement_is_gone_and_the_list_answers_it(person):
    person.reset("drop")
    for message in ("a dress", "under $30"):
        person.respond_traced("drop", message, detailed=False)
    dropped = person.respond_traced("drop", "", drop=("budget", None), detailed=False)
    assert not [r for r in dropped.response["requirements"] if r["facet"] == "budget"]
    assert "the $30 limit" in dropped.response["message"]  # said in words, not as a chip
    assert any(_price(person, a) > 30 for a in _ids(dropped))  # the limit no longer holds
    with pytest.raises(UnknownFacet, match="unknown facet 'flavour'"):
        person.respond_traced("drop", "", drop=("flavour", None))


def test_a_question_about_a_shown_product_is_answered_and_the_list_stays(person):
    shown, asked = _turns(person, "a dress", "how much is the second one?")
    assert _ids(asked) == _ids(shown)
    second = _ids(shown)[1]
    assert f"${_price(person, second):.2f}" in asked.response["message"]
    [answer] = asked.response["answers"]
    assert answer["positions"] == [2] and answer["parent_asins"] == [second]
    assert asked.response["requirements"] == shown.response["requirements"]


def test_a_yes_no_question_reads_the_listing_and_wants_nothing_new(person):
    shown, asked = _turns(person, "a dress", "is the first one machine washable?")
    first = person.index.store.get(_ids(shown)[0])
    assert first is not None
    washable = any("machine wash" in f.lower() for f in first.features)
    message = asked.response["message"]
    assert message.startswith("Yes") if washable else "doesn't say" in message
    assert not [r for r in asked.response["requirements"] if "wash" in r["value"]]


def test_the_cheapest_and_a_side_by_side_come_from_the_list_shown(person):
    shown, cheapest, compared = _turns(
        person, "a dress", "which one is the cheapest?", "what's the difference between 1 and 2?"
    )
    prices = [_price(person, a) for a in _ids(shown)]
    low = prices.index(min(prices)) + 1
    assert f"#{low}" in cheapest.response["message"]
    assert all(f"${p:.2f}" in compared.response["message"] for p in prices[:2])


def test_the_best_rated_is_named_with_its_rating_once(person):
    _, best = _turns(person, "a dress", "which one has the best reviews?")
    message = best.response["message"]
    assert "is the best rated: " in message and "is rated" not in message
    assert " out of 5" in message or "no rating yet" in message


def test_an_ordinal_past_the_list_and_a_question_before_any_list_get_a_clear_reply(person):
    _, past = _turns(person, "a dress", "how much is the 12th one?")
    assert "no #12" in past.response["message"]
    [early] = _turns(person, "how much is the second one?", session="early")
    assert "haven't shown you anything" in early.response["message"]


def test_the_reply_says_what_changed_and_what_holds(person):
    _, _, last = _turns(person, "a dress", "under $60", "actually make it blue")
    message = last.response["message"]
    assert "blue" in message.lower() and "$60" in message
    replies = [r.response["message"] for r in _turns(person, "a dress", "under $60", "in blue")]
    assert len({r.split(".")[0] for r in replies}) == len(replies)  # no sentence said twice


def test_the_first_item_named_is_no_item_still_looked_at(person):
    _, second = _turns(person, "a gift for my mom, she loves gardening", "maybe a dress?")
    message = second.response["message"]
    assert "dress" in message and "still" not in message.lower()


def test_negation_keeps_its_own_phrase(person):
    [last] = _turns(person, "a blue dress, not a shirt")
    held = {(r["facet"], r["value"], r["negated"]) for r in last.response["requirements"]}
    assert ("color", "blue", False) in held
    assert ("color", "blue", True) not in held
    assert all(a.startswith("DR") for a in _ids(last))


def test_a_budget_said_with_a_complaint_about_the_whole_list_is_the_budget(person):
    # $48 is a shown dress's price too; said as "up to", it is what they can spend.
    [*_, last] = _turns(
        person, "a dress", "these look kinda cheap, anything nicer? I can spend up to 48"
    )
    budgets = [r["label"] for r in last.response["requirements"] if r["facet"] == "budget"]
    assert budgets == ["≤ $48"]


def test_a_value_taken_back_is_said_to_be_off(person):
    [*_, last] = _turns(person, "a dress", "in blue", "forget blue, any colour is fine")
    assert not [r for r in last.response["requirements"] if r["facet"] == "color"]
    assert "blue" in last.response["message"].lower()


def test_a_shopper_calling_herself_a_girl_shops_for_women(person):
    [last] = _turns(person, "any cute dresses? for me, im a girl lol")
    held = {(r["facet"], r["value"]) for r in last.response["requirements"]}
    assert ("department", "women") in held and ("department", "girls") not in held


def test_shown_products_stay_and_new_ones_are_marked(person):
    first, second = _turns(person, "a dress", "with pockets")
    assert all(not r["new"] for r in first.response["recommendations"])
    kept = set(_ids(first)) & set(_ids(second))
    assert kept  # what is still best stays
    for card in second.response["recommendations"]:
        assert card["new"] == (card["parent_asin"] not in set(_ids(first)))


@pytest.mark.parametrize(
    ("message", "fact", "positions"),
    [
        ("how much is the first one?", "price", (1,)),
        ("#3 is cute how much", "price", (3,)),
        ("which is cheaper, 2 or 3?", "cheaper", (2, 3)),
        ("what's #2 made of", "material", (2,)),
        ("which one has the best reviews", "best_rated", ()),
        ("does the second one come in a medium?", "has", (2,)),
        ("is number 3 water resistant?", "has", (3,)),
        ("what does number 2 cost", "price", (2,)),
        ("which pair is rated highest", "best_rated", ()),
        ("whichever has the best reviews then", "best_rated", ()),
        ("how do the second and fourth compare?", "compare", (2, 4)),
        ("ty!! does the 1st one have an adjustable strap", "has", (1,)),
        ("between the first and second which is cheaper", "cheaper", (1, 2)),
        ("which of these do people rate best", "best_rated", ()),
        ("what's the first one of these going for?", "price", (1,)),
        ("Oh the third one is so sweet! Do people rate it well?", "rating", (3,)),
        ("just tell me which one's cheapest", "cheapest", ()),
    ],
)
def test_questions_about_shown_products_are_read(message, fact, positions):
    question = read_question(message)
    assert question is not None and question.fact == fact and question.positions == positions


@pytest.mark.parametrize(
    ("message", "values"),
    [
        ("does the first one fit a 15 inch laptop?", ("15 inch laptop",)),
        ("does it hold a 13 inch macbook", ("13 inch macbook",)),
        ("is it available in blue, size 10.5?", ("blue", "size 10.5")),
        ("the third one looks nice, does it come in black?", ("black",)),
        ("oh these are cute!! does any of them have a hood though?", ("hood",)),
        ("do any of these say waterproof?", ("waterproof",)),
    ],
)
def test_a_yes_no_question_asks_about_its_values_not_its_verb(message, values):
    question = read_question(message)
    assert question is not None and question.fact == "has" and question.values == values


@pytest.mark.parametrize("message", ["and what's it made of", "thanks! what's it made of"])
def test_a_question_after_an_interjection_points_with_its_pronoun(message):
    question = read_question(message)
    assert question is not None and question.fact == "material" and question.pronoun


@pytest.mark.parametrize(
    "message",
    [
        "I need running shoes, is that ok?",
        "do you have any red dresses?",
        "red please",
        "cheaper options?",  # asks for cheaper products, compares none
        "something cheaper?",
    ],
)
def test_requests_are_not_read_as_questions_about_shown_products(message):
    assert read_question(message) is None


def test_the_greeting_examples_name_kinds_the_catalog_holds(synthetic_index):
    from shopcopilot.index.counts import catalog_counts

    agent = Agent(index=synthetic_index, warm_up=False, resolver=None)
    examples = agent.examples(n=4)
    assert len(examples) == 4 and len(set(examples)) == 4
    leaves = {
        path[-1].lower()
        for path in catalog_counts(synthetic_index.store, synthetic_index.path).paths
    }
    assert all(any(leaf in e for leaf in leaves) for e in examples)


def test_a_correction_starting_with_no_keeps_what_it_asks_for(person):
    *_, last = _turns(
        person,
        "a dress",
        "actually make it blue",
        "no, a blue dress for me, I'm a woman. not a shirt",
    )
    held = {(r["facet"], r["value"], r["negated"]) for r in last.response["requirements"]}
    assert ("color", "blue", False) in held and ("color", "blue", True) not in held
    assert ("department", "women", False) in held


def test_answers_say_what_the_record_says_and_when_it_does_not():
    from shopcopilot.catalog.product import Product
    from shopcopilot.dialogue.answers import answer
    from shopcopilot.state.questions import Question

    titled = Product("A", "Trail Runner Shoes, Light Blue, 7.5", price=30.0)
    listed = Product("B", "Trail Runner", price=None, details={"Color": "Navy, Red"})
    bare = Product("C", "Trail Runner", price=20.0, features=("Mesh upper",))
    shown = [titled, listed, bare]
    colours = [answer(Question("colors", (p,)), shown, None).text for p in (1, 2, 3)]
    assert "light blue" in colours[0] and "Navy, Red" in colours[1]
    assert "doesn't say" in colours[2]
    cheaper = answer(Question("cheaper", (1, 2)), shown, None).text
    assert "#2 doesn't list a price" in cheaper
    cheapest = answer(Question("cheapest"), shown, None)
    assert cheapest.positions == (3,) and "$20.00" in cheapest.text
    assert "no #7" in answer(Question("price", (7,)), shown, None).text


def test_a_yes_no_answer_finds_the_listings_own_words():
    from shopcopilot.catalog.product import Product
    from shopcopilot.dialogue.answers import answer
    from shopcopilot.state.questions import Question

    dress = Product("A", "Summer Dress", features=("Lined skirt and 4 handy pockets.",))
    socks = Product("B", "Crew Socks, Pack of 6", features=("Moisture-wicking yarn",))
    bare = Product("C", "Crew Socks")
    shown = [dress, socks, bare]

    def says(position: int, *values: str) -> str:
        return answer(Question("has", (position,), values), shown, None).text

    assert says(1, "pockets").startswith("Yes")  # the sentence's full stop is no part of it
    assert says(2, "multipack").startswith("Yes") and "pack of" in says(2, "multipack")
    assert says(2, "wick sweat").startswith("Yes")
    assert "(moisture wicking)" in says(3, "wick sweat")  # what was looked for, when missing


def test_a_short_follow_up_asks_the_question_before_of_another_product(person):
    shown, _, first, third = _turns(
        person, "a dress", "how much is the second one?", "and the first?", "what about #3"
    )
    ids = _ids(shown)
    assert f"${_price(person, ids[0]):.2f}" in first.response["message"]
    assert f"${_price(person, ids[2]):.2f}" in third.response["message"]
    assert _ids(third) == ids


def test_a_short_follow_up_asks_another_thing_of_the_product_before(person):
    shown, _, price = _turns(person, "a dress", "what's the second one made of?", "and the price?")
    assert f"${_price(person, _ids(shown)[1]):.2f}" in price.response["message"]
    assert "#2" in price.response["message"]


def test_places_in_the_list_asked_about_are_no_budget(person):
    shown, compared, cheaper = _turns(
        person,
        "a dress under $60",
        "what's the difference between 1 and 2?",
        "which is cheaper, 2 or 3?",
    )
    for turn in (compared, cheaper):
        assert turn.response["requirements"] == shown.response["requirements"]
        assert _ids(turn) == _ids(shown)


def test_what_still_holds_names_each_requirement_once_and_rightly():
    from shopcopilot.dialogue.replies import _held
    from shopcopilot.state.requirements import Requirement

    held = [
        Requirement("color", "blue", "blue", False, 1),
        Requirement("budget", "<= $60", "≤ $60", False, 1, None, 60.0),
        Requirement("department", "women", "women", False, 1),
    ]
    # "blue" is in the item's own words: left out, and the others keep their own phrasing.
    assert _held(held, "blue dresses") == "under $60 and for women"
    assert _held(held, "dresses") == "under $60, in blue and for women"


@pytest.mark.parametrize(
    ("item", "many"),
    [
        ("scarf", "scarves"),
        ("silk scarf", "silk scarves"),
        ("dress", "dresses"),
        ("hiking", "hiking options"),
        ("soccer", "soccer options"),  # a sport, not a thing counted
    ],
)
def test_the_item_said_as_many(item, many):
    from shopcopilot.dialogue.replies import plural

    assert plural(item) == many


def test_a_material_asked_about_is_answered_with_the_listings_material():
    from shopcopilot.catalog.product import Product
    from shopcopilot.dialogue.answers import answer
    from shopcopilot.state.questions import Question

    faux = Product("A", "Crossbody Bag", features=("Faux Leather", "Imported", "Fabric lining"))
    real = Product("B", "Crossbody Bag", details={"Material": "Genuine Leather"})
    lined = Product("C", "Crossbody Bag", features=("Cotton lining",))
    lace = Product("D", "Lace Midi Dress", features=("60% Polyester, 40% Spandex",))
    shown = [faux, real, lined, lace]

    def says(position: int, value: str) -> str:
        return answer(Question("has", (position,), (value,)), shown, None).text

    assert says(1, "real leather") == (
        "No, #1 isn't real leather: going by its listing it is made of Faux Leather."
    )
    assert says(2, "leather") == "Yes, #2 is made of Genuine Leather."
    assert "made of" not in says(3, "cotton")  # a lining's material is not the bag's
    assert "says lace" in says(4, "lace") and "60% Polyester" in says(4, "lace")


@pytest.mark.parametrize(
    ("messages", "budget"),
    [
        (("a dress, fifteen bucks tops", "meh. fine, twenty then"), "≤ $20"),
        (("a dress under 100", "honestly sixty would sit better"), "≤ $60"),
        (("a dress under 30", "size 10 please", "11 then"), "≤ $30"),  # nearer the size held
        (("a dress for my daughter under 40", "she's 12 now"), "≤ $40"),  # an age
    ],
)
def test_a_bare_amount_near_the_budget_held_revises_it(person, messages, budget):
    [*_, last] = _turns(person, *messages)
    budgets = [r["label"] for r in last.response["requirements"] if r["facet"] == "budget"]
    assert budgets == [budget]


def test_a_department_whose_products_are_titled_the_item_keeps_who_it_is_for(
    person_on, catalog_record
):
    """Flip-flops are filed for women only; the men's sandals titled "Flip Flops" are what
    "men's flip flops" asks for, not the women's leaf with the men's relaxed."""
    flip = [TOP, "Women", "Shoes", "Sandals", "Flip-Flops"]
    sandals = [TOP, "Men", "Shoes", "Sandals"]
    agent = person_on(
        _kinds(
            catalog_record,
            ("WF", "Women's Beach Flip-Flops Flip Flops", flip, 8),
            ("MS", "Men's Adjustable Sandals Flip Flops", sandals, 4),
        )
    )
    [result] = _turns(agent, "men's flip flops")
    assert _first_are(result, "MS", 4)
    assert "relaxed" not in result.response["message"]


def test_words_turned_down_are_named_as_the_change(person):
    """They had been left out of the reply ("Still looking at dresses")."""
    *_, last = _turns(person, "a dress", "no lace, nothing with ruffles")
    assert "not lace or ruffle" in last.response["message"]


def _boots_and_dresses(record) -> list[dict]:
    kinds = {  # code: path, title, how many
        "HB": ([TOP, "Women", "Shoes", "Boots", "Hiking Boots"], "Women's Lace Up Boots", 4),
        "MB": ([TOP, "Women", "Shoes", "Boots", "Mid-Calf"], "Women's Mid Calf Boots Boots", 12),
        "WD": ([TOP, "Women", "Clothing", "Wedding Dresses"], "Wedding Dress Dress", 12),
        "GD": ([TOP, "Women", "Clothing", "Dresses"], "Women's Floral Dress Wedding Guest", 4),
    }
    return [
        record(f"{code}{n}", f"{title} {n}", categories=path, price=30.0 + n)
        for code, (path, title, many) in kinds.items()
        for n in range(many)
    ]


def test_an_item_for_a_use_is_the_kind_named_by_both(person_on, catalog_record):
    agent = person_on(_boots_and_dresses(catalog_record))
    [result] = _turns(agent, "boots for hiking")
    assert all(a.startswith("HB") for a in _ids(result)[:4])
    assert "hiking boots" in [r["label"] for r in result.response["requirements"]]


def test_a_dress_for_a_wedding_is_a_guests(person_on, catalog_record):
    agent = person_on(_boots_and_dresses(catalog_record))
    [guest] = _turns(agent, "a dress for a wedding in june")
    assert _ids(guest) and all(a.startswith("GD") for a in _ids(guest))
    [bride] = _turns(agent, "a wedding dress for my wedding in june")
    assert all(a.startswith("WD") for a in _ids(bride)[:5])
    # A dress said plainly is an everyday one; a friend getting married makes no bride.
    [plain] = _turns(agent, "a dress")
    assert _first_are(plain, "GD", 4)
    [maid] = _turns(agent, "my best friend is getting married, I'm a bridesmaid. need a dress")
    assert _first_are(maid, "GD", 4)


def test_a_cards_reason_reads_as_plain_words(person):
    [*_, last] = _turns(person, "a dress for me, I'm a woman", "under $60")
    reason = last.response["recommendations"][0]["reason"]
    assert "for women" in reason and "under $60" in reason
    assert "<=" not in reason and "matches" not in reason


def test_which_of_those_two_is_cheaper_asks_of_the_pair_compared(person):
    *_, last = _turns(
        person,
        "a dress",
        "what's the difference between 2 and 3",
        "so which of those two is cheaper",
    )
    prices = {n: _price(person, _ids(last)[n - 1]) for n in (2, 3)}
    cheaper = min(prices, key=prices.__getitem__)
    assert last.response["message"].startswith(f"#{cheaper} is cheaper: ")
    held = [r["facet"] for r in last.response["requirements"]]
    assert "budget" not in held  # a question, not "show me cheaper ones"


def test_a_grown_ups_guessed_department_is_never_a_childs(person_on, catalog_record):
    girls = [TOP, "Girls", "Clothing", "Sleepwear & Robes", "Robes"]
    men = [TOP, "Men", "Clothing", "Sleep & Lounge", "Robes"]
    records = [
        catalog_record(f"GR{n}", f"Fleece Bathrobe {n}", categories=girls, price=20.0)
        for n in range(6)
    ] + [
        catalog_record(f"MR{n}", f"Plush Robe {n}", categories=men, price=25.0 + n)
        for n in range(3)
    ]
    [result] = _turns(person_on(records), "a fleece bathrobe for my husband")
    assert _ids(result) and all(a.startswith("MR") for a in _ids(result))


def test_a_word_no_category_uses_can_decide_the_kind(person_on, catalog_record):
    """ "stud" names the earrings' leaf; "nose" is in no category name, yet the piercing studs
    it reads are what "nose stud" asks for."""
    jewelry = [TOP, "Women", "Jewelry"]
    records = [
        catalog_record(
            f"ER{n}", f"Women's Gold Stud Earrings {n}", categories=[*jewelry, "Earrings", "Stud"]
        )
        for n in range(12)
    ] + [
        catalog_record(
            f"NS{n}", f"Silver Nose Stud Screw {n}", categories=[*jewelry, "Body Jewelry", "Screws"]
        )
        for n in range(6)
    ]
    agent = person_on(records)
    [nose] = _turns(agent, "nose stud")
    assert _ids(nose)[:4] and all(a.startswith("NS") for a in _ids(nose)[:4])
    [ears] = _turns(agent, "stud earrings", session="e")
    assert all(a.startswith("ER") for a in _ids(ears)[:4])


def test_a_shade_is_listed_as_said_and_shown_first(person_on, catalog_record):
    """ "navy" is searched as blue, but the chip and the reply say navy, and navy blue comes
    before sky blue."""
    dresses = [TOP, "Women", "Clothing", "Dresses"]
    records = [
        catalog_record(f"SB{n}", f"Women's Swing Dress Dress {n}, Blue", categories=dresses)
        for n in range(6)
    ] + [
        catalog_record(
            f"NB{n}", f"Women's Wrap {n}", categories=dresses, details={"Color": "Navy Blue"}
        )
        for n in range(2)
    ]
    agent = person_on(records)
    [result] = _turns(agent, "a navy dress")
    colours = [r for r in result.response["requirements"] if r["facet"] == "color"]
    assert [(r["value"], r["label"]) for r in colours] == [("blue", "navy")]
    assert "in navy" in result.response["message"]
    assert {a[:2] for a in _ids(result)[:2]} == {"NB"}


def test_a_use_only_grown_ups_have_shows_no_childs_first(person_on, catalog_record):
    kids = [TOP, "Girls", "Shoes", "Sneakers"]
    grown = [TOP, "Women", "Shoes", "Fashion Sneakers"]
    agent = person_on(
        _kinds(
            catalog_record,
            ("GS", "Soft Sneakers", kids, 10, {"average_rating": 4.9}),
            ("WS", "Lace Up Fashion Sneakers Shoes", grown, 3),
        )
    )
    [result] = _turns(agent, "sneakers for a nurse")
    assert _first_are(result, "WS", 3)


def test_a_wish_no_product_shown_names_is_owned_up_to(person_on, catalog_record):
    dresses = [TOP, "Women", "Clothing", "Dresses"]
    skirts = [TOP, "Women", "Clothing", "Skirts"]
    records = [
        catalog_record(f"DR{n}", f"Women's Wrap Dress {n}", categories=dresses) for n in range(8)
    ] + [catalog_record(f"SK{n}", f"Unicorn Skirt {n}", categories=skirts) for n in range(3)]
    agent = person_on(records)
    *_, last = _turns(agent, "a dress", "something with unicorns on it")
    assert all(a.startswith("DR") for a in _ids(last)[:3])
    assert "unicorns" in last.response["message"]
    # Talk the catalog never says is no wish to own up to.
    *_, last = _turns(agent, "a dress", "something my grandpa would call groovy", session="t")
    assert "groovy" not in last.response["message"]


def test_a_childs_list_keeps_unisex_kids_kinds_and_no_unrelated_kind(person_on, catalog_record):
    """Kids' backpacks filed unisex are a child's; past them no boys' costume comes in for
    being a boy's."""
    kids = [TOP, "Luggage & Travel Gear", "Backpacks", "Kids' Backpacks"]
    costumes = [TOP, "Costumes & Accessories", "Kids & Baby", "Boys", "Costumes"]
    records = [
        catalog_record(f"KB{n}", f"Unisex Adult Kids' Backpack {n}", categories=kids)
        for n in range(4)
    ] + [
        catalog_record(f"BC{n}", f"Boys Deluxe Costume {n}", categories=costumes) for n in range(6)
    ]
    agent = person_on(records)
    [result] = _turns(agent, "a backpack for my son, he's in 1st grade")
    assert {a[:2] for a in _ids(result)} == {"KB"}


def _shoes_and_clothes(record) -> list[dict]:
    kinds = {
        "BO": ([TOP, "Women", "Shoes", "Boots"], "Women's Ankle Boots"),
        "SN": ([TOP, "Women", "Shoes", "Fashion Sneakers"], "Women's Canvas Sneakers"),
        "DR": ([TOP, "Women", "Clothing", "Dresses"], "Women's Wrap Dress"),
        "JE": ([TOP, "Women", "Clothing", "Jeans"], "Women's Skinny Jeans"),
    }
    return [
        record(f"{code}{n}", f"{title} {n}", categories=path, price=30.0 + n)
        for code, (path, title) in kinds.items()
        for n in range(6)
    ]


def test_another_kind_of_shoe_keeps_the_shoe_size(person_on, catalog_record):
    agent = person_on(_shoes_and_clothes(catalog_record))
    *_, sneakers = _turns(agent, "boots size 9", "actually sneakers instead")
    assert "size 9" in [r["label"] for r in sneakers.response["requirements"]]
    *_, jeans = _turns(agent, "a dress size 8", "actually jeans instead", session="j")
    assert "size 8" not in [r["label"] for r in jeans.response["requirements"]]
    assert "Size 8 no longer applies" in jeans.response["message"]  # not a bare "8"
    *_, boots = _turns(agent, "a dress size 8, midi", "actually boots instead", session="b")
    assert " no longer apply " in boots.response["message"]  # two of them


def test_a_pick_is_answered_as_the_choice(person_on, catalog_record):
    agent = person_on(_shoes_and_clothes(catalog_record))
    first, picked = _turns(agent, "sneakers", "I'll go with the second one")
    second = _ids(first)[1]
    assert _ids(picked)[0] == second
    assert "#2" in picked.response["message"] and "still" not in picked.response["message"].lower()


def test_a_narrower_kind_asked_instead_keeps_the_size(person_on, catalog_record):
    coats = [TOP, "Women", "Clothing", "Jackets"]
    records = [
        catalog_record(f"JA{n}", f"Women's Denim Jacket {n}", categories=[*coats, "Denim Jackets"])
        for n in range(6)
    ] + [
        catalog_record(f"RJ{n}", f"Women's Rain Jacket {n}", categories=[*coats, "Rain Jackets"])
        for n in range(6)
    ]
    agent = person_on(records)
    *_, rain = _turns(agent, "a jacket, women's size M", "actually rain jackets instead")
    assert "size M" in [r["label"] for r in rain.response["requirements"]]
    assert _ids(rain)[0].startswith("RJ")


def _coats_and_more(record) -> list[dict]:
    girls, women = [TOP, "Girls", "Clothing"], [TOP, "Women", "Clothing"]
    rain = [*women, "Coats, Jackets & Vests", "Trench, Rain & Anoraks", "Raincoats"]
    kinds = (
        ("WR", "Women's Hooded Raincoat", rain, 6),
        ("GC", "Girls Double Breasted Dress Coat", [*girls, "Jackets & Coats", "Dress Coats"], 6),
        ("GB", "Girls Rain Boots", [TOP, "Girls", "Shoes", "Boots", "Rain Boots"], 6),
        ("GD", "Girls Party Dress", [*girls, "Dresses"], 90),
        ("WD", "Women's Wrap Dress", [*women, "Dresses"], 90),
        ("MS", "Men's Oxford Shirt", [TOP, "Men", "Clothing", "Shirts"], 90),
    )
    return _kinds(record, *kinds)


def test_a_childs_department_without_the_item_shows_its_nearest_kind(person_on, catalog_record):
    """No raincoat here is a girl's: a girls' coat fits her, a woman's raincoat does not, and a
    coat is nearer a raincoat than rain boots are. The reply says so."""
    agent = person_on(_coats_and_more(catalog_record))
    first, cheaper = _turns(agent, "a raincoat for my 9 year old daughter", "under $100")
    assert _first_are(first, "GC", 4) and _first_are(cheaper, "GC", 4)
    said = first.response["message"]
    assert "raincoats for girls" in said and "dress coats" in said
    held = [r["label"] for r in cheaper.response["requirements"] if r["facet"] == "item"]
    assert held == ["raincoat"]  # what was asked for stays asked for


def test_a_toddler_of_either_gender_gets_a_childs_list(person_on, catalog_record):
    agent = person_on(_coats_and_more(catalog_record))
    [result] = _turns(agent, "a dress for my 2 year old")
    assert _first_are(result, "GD", 5)
    assert "kids" in [r["value"] for r in result.response["requirements"]]


def test_who_it_is_for_alone_is_one_chip_and_asks_what():
    """ "something for my kids": the catalog may read "kids" as the item too; it is who."""
    kids = {"facet": "department", "from": "audience"}
    state = ShoppingState(
        constraints=[
            Constraint(attribute=Attribute.CATEGORY, value="kids", data={"words": {"kid": 1.0}}),
            Constraint(attribute=Attribute.STYLE, value="kids", data=kids),
        ]
    )
    assert [r.label for r in requirements(state)].count("kids") == 1
    assert question_text(state, "other", []) == "What are you looking for?"


def test_a_kind_mostly_grown_ups_in_the_catalog_puts_a_childs_after(person_on, catalog_record):
    """Candidates can be mostly a child's by chance ("15 inch" of kids' sizes); whether the kind
    is a child's is read from the catalog."""
    from shopcopilot.rank.evidence import Batch
    from shopcopilot.rank.rerank import _young

    packs = [TOP, "Luggage & Travel Gear", "Backpacks"]
    agent = person_on(
        _kinds(
            catalog_record,
            ("KB", "Unisex Kids' Backpack 15 Inch", [*packs, "Kids' Backpacks"], 4),
            ("DB", "Laptop Backpack", [*packs, "Casual Daypacks"], 12),
        )
    )
    kids = agent.features.rows([f"KB{n}" for n in range(4)] + ["DB0"])
    batch = Batch(agent.features, kids, set(), ())
    assert list(_young(batch, np.ones(len(kids)), False, ("backpack",))) == [1, 1, 1, 1, 0]


def test_a_wish_counts_more_where_the_card_shows_it(person_on, catalog_record):
    """ "laptop" in a title or a first feature line is on the card; deep in a description it
    is not."""
    from shopcopilot.rank.evidence import Batch, prepare_fragments, shown_coverage
    from shopcopilot.state.model import Fragment

    packs = [TOP, "Luggage & Travel Gear", "Backpacks", "Casual Daypacks"]
    features = ["Water resistant", "Two side pockets", "Padded straps", "Zip closure"]
    shown = {"features": features}
    agent = person_on(
        _kinds(
            catalog_record,
            (
                "DS",
                "Unisex Travel Backpack",
                packs,
                2,
                {"description": ["Fits a laptop."], **shown},
            ),
            ("TS", "Unisex Laptop Backpack", packs, 2, {"features": features}),
            ("FS", "Unisex Day Backpack", packs, 2, {"features": ["Laptop sleeve", *features]}),
        )
    )
    rows = agent.features.rows(["DS0", "TS0", "FS0"])
    batch = Batch(agent.features, rows, {"laptop"}, ())
    [probe] = prepare_fragments([Fragment("for my laptop", 1, 0)], batch)
    wanted = np.ones(len(rows), dtype=bool)
    assert list(shown_coverage(probe, batch, wanted, ("laptop",))) == [0.0, 1.0, 1.0]


def test_a_material_is_listed_in_the_shoppers_words():
    foam = Constraint(
        attribute=Attribute.MATERIAL,
        value="eva foam",
        text="memory foam",
        data={"facet": "material"},
    )
    assert [r.label for r in requirements(ShoppingState(constraints=[foam]))] == ["memory foam"]


def test_a_cue_word_said_as_a_wish_is_listed(person):
    """ "long" is a word of the cue "as long as", and a wish in "a dress, long"."""
    [result] = _turns(person, "a dress for me, long, not red")
    assert "long" in [r["label"] for r in result.response["requirements"]]


def test_cheap_said_without_an_amount_puts_the_cheaper_first(person):
    [result] = _turns(person, "a cheap dress for me")
    prices = [_price(person, a) for a in _ids(result) if a.startswith("DR")]
    assert prices == sorted(prices) and len(prices) > 3
    assert "low price" in [r["label"] for r in result.response["requirements"]]
    [looks] = _turns(person, "a dress that doesn't look cheap", session="l")
    assert "low price" not in [r["label"] for r in looks.response["requirements"]]


def test_a_critique_of_the_shape_is_said(person):
    *_, last = _turns(person, "a dress for me", "these are too bulky")
    assert last.response["message"].startswith(("Slimmer", "OK, less bulky"))


def test_which_of_the_list_has_a_value_is_answered_and_turns_nothing_down(person):
    first, asked = _turns(person, "a dress for me", "which of these are machine washable?")
    said = asked.response["message"]
    places = [n for n, a in enumerate(_ids(first), 1) if a.startswith("DR") and int(a[2:]) % 2]
    # Those that say so come first, and the reply says where they are now.
    assert said.startswith(str(len(places))) and f"#1 to #{len(places)}" in said
    assert not [r for r in asked.response["requirements"] if r["negated"]]
    assert set(_ids(asked)) == set(_ids(first))  # the list stays


def test_a_question_of_the_list_opens_as_one():
    for asked in ("which ones are waterproof?", "do any of these come in black?"):
        question = read_question(asked)
        assert question is not None and question.every, asked
    assert read_question("ooh these are pretty. could you show me ones with sleeves?") is None


def test_plus_size_is_listed_as_said():
    plus = Constraint(
        attribute=Attribute.STYLE, value="plus", text="plus size", data={"facet": "fit"}
    )
    assert [r.label for r in requirements(ShoppingState(constraints=[plus]))] == ["plus size"]


def test_colours_either_of_which_will_do_are_said_with_or(person):
    *_, colours = _turns(person, "a dress for me", "blue or green")
    assert "blue or green" in colours.response["message"]


@pytest.mark.parametrize("said", ["nothing too expensive please", "not too pricey pls"])
def test_nothing_too_expensive_leans_low_without_a_limit(person, said):
    *_, last = _turns(person, "a dress for me", said)
    held = [r for r in last.response["requirements"] if r["facet"] == "budget"]
    assert [r["label"] for r in held] == ["low price"]


def test_a_department_on_an_assumed_age_is_listed_as_either():
    """ "my daughter", age unsaid: she may be grown, and the chip says so."""
    data = {"facet": "department", "from": "audience", "assumed": True}
    girls = Constraint(attribute=Attribute.STYLE, value="girls", data=data)
    assert [r.label for r in requirements(ShoppingState(constraints=[girls]))] == ["girls or women"]
    men = Constraint(attribute=Attribute.STYLE, value="men", data=data)  # "my husband"
    assert [r.label for r in requirements(ShoppingState(constraints=[men]))] == ["men"]


def test_a_value_taken_back_leaves_the_item_named_without_it(person):
    """ "a cotton dress", then "cotton doesn't matter": still a dress, said in fewer words."""
    *_, last = _turns(person, "a cotton dress for me", "cotton doesn't matter")
    labels = [r["label"] for r in last.response["requirements"]]
    assert "cotton" not in " ".join(labels) and "dress" in labels
    assert "instead" not in last.response["message"]


def test_after_a_question_of_the_whole_list_a_place_is_a_pick(person):
    _, asked, picked = _turns(
        person, "a dress for me", "which of these have pockets?", "the third one"
    )
    assert _ids(picked)[0] == _ids(asked)[2]  # of the list as the answer left it
    assert "#3" in picked.response["message"]


def test_a_wish_said_with_though_after_a_list_is_a_wish(person):
    """ "though" concedes; after products were shown it had turned the pockets down."""
    *_, last = _turns(person, "a dress for me", "pockets though, I need somewhere for my phone")
    held = {(r["label"], r["negated"]) for r in last.response["requirements"]}
    assert ("pockets", False) in held and ("not pockets", True) not in held


@pytest.mark.parametrize(
    "later",
    [
        "a blue one, my sister says that suits her",
        "one she can take when she's off visiting my sister",
    ],
)
def test_someone_only_spoken_of_is_no_new_recipient(person, later):
    """ "my sister says ..." and "visiting my sister": the dress is still for mum."""
    *_, last = _turns(person, "a dress for my mom", later)
    labels = [r["label"] for r in last.response["requirements"]]
    assert "for your mom" in labels and "for your sister" not in labels
    assert not [
        r for r in last.response["requirements"] if r["negated"] and r["facet"] == "department"
    ]


def test_starting_over_sets_aside_everything_said(person):
    *_, last = _turns(person, "a blue dress for my mom under $60", "start over, I need a shirt")
    labels = [r["label"] for r in last.response["requirements"]]
    assert labels == ["shirt"]


def test_asking_for_more_shows_other_products(person):
    first, more = _turns(person, "a dress for me", "show me more")
    assert _ids(more) and not set(_ids(more)) & set(_ids(first)[:3])


def test_a_part_a_product_has_is_said_with_with(person):
    *_, last = _turns(person, "a dress for me", "with pockets", "under $60")
    assert "with pockets" in last.response["message"]


def test_a_wish_said_with_too_is_as_well(person):
    """ "waterproof too, the site is mud": as well, not too much of it."""
    *_, last = _turns(person, "a dress for me", "and it needs to be blue too, it's for a party")
    held = {(r["label"], r["negated"]) for r in last.response["requirements"]}
    assert ("blue", False) in held and ("not blue", True) not in held


def test_a_grown_up_said_counts_a_childs_kind_as_a_childs():
    """ "a backpack for my wife", "men's": kids' backpacks filed as unisex luggage still come
    after the grown-ups' (rank/rerank.py `_grown_up`)."""
    from shopcopilot.rank.rerank import _grown_up

    women = Constraint(attribute=Attribute.STYLE, value="women", data={"facet": "department"})
    girls = Constraint(attribute=Attribute.STYLE, value="girls", data={"facet": "department"})
    assert _grown_up(ShoppingState(constraints=[women]))
    assert not _grown_up(ShoppingState(constraints=[girls]))
    assert not _grown_up(ShoppingState())


def test_a_question_of_the_whole_list_brings_the_products_that_say_it_first(person):
    shown, asked = _turns(person, "a dress", "do any of them have pockets?")
    assert set(_ids(asked)) == set(_ids(shown))
    having = [
        a for a in _ids(shown) if "Pockets on both sides" in person.index.store.get(a).features
    ]
    assert having and _ids(shown)[: len(having)] != having
    assert _ids(asked)[: len(having)] == having
    assert not [r for r in asked.response["requirements"] if "pocket" in r["value"]]
    assert f"{len(having)} " in asked.response["message"]
    [answer] = asked.response["answers"]  # what the page shows beside the cards says the same
    assert answer["text"] == asked.response["message"]


def test_asking_whether_any_comes_in_a_colour_none_shown_has_looks_for_it(person):
    shown, asked = _turns(person, "a blue dress", "do any of these come in red?")
    assert "DR2" not in _ids(shown)
    assert asked.response["message"].startswith("None of these")
    assert _ids(asked)[0] == "DR2"
    assert any(r["value"] == "red" for r in asked.response["requirements"])


def test_a_wish_in_a_few_free_words_is_named_as_the_turns_news(person):
    *_, last = _turns(person, "a dress for me", "machine wash would be amazing")
    assert "machine wash" in last.response["message"].split(".")[0]


def test_a_two_year_old_sees_the_babys_department_first_and_a_four_year_old_the_girls(
    person_on, catalog_record
):
    kinds = (
        ("GD", "Girls Party Dress", [TOP, "Girls", "Clothing", "Dresses"], 12),
        ("BD", "Baby Girls Party Dress", [TOP, "Baby", "Baby Girls", "Clothing", "Dresses"], 6),
    )
    agent = person_on(_kinds(catalog_record, *kinds))
    [two] = _turns(agent, "a party dress for my 2 year old daughter")
    assert _first_are(two, "BD", 5)
    [four] = _turns(agent, "a party dress for my 4 year old daughter", session="four")
    assert _first_are(four, "GD", 5)


def _outfits(record) -> list[dict]:
    kinds = (
        ("BB", "Women's Ski Bibs Snow Pants", [TOP, "Women", "Sport", "Skiing", "Bibs"], 8),
        ("GL", "Women's Winter Gloves", [TOP, "Women", "Accessories", "Gloves"], 8),
        ("OX", "Men's Oxford Dress Shoes Wedding", [TOP, "Men", "Shoes", "Oxfords"], 8),
        ("TI", "Men's Silk Tie Wedding", [TOP, "Men", "Accessories", "Ties"], 8),
        ("PU", "Women's Purse Work", [TOP, "Women", "Handbags", "Shoulder Bags"], 8),
        ("TO", "Women's Tote Bag Work", [TOP, "Women", "Handbags", "Totes"], 8),
    )
    return _kinds(record, *kinds)


@pytest.mark.parametrize(
    ("first", "then", "code"),
    [
        ("womens ski bibs", "and gloves, mine have a hole", "GL"),
        ("a purse for work", "a tote is probably the way to go", "TO"),
        ("mens oxfords for a wedding", "actually, tie first. the suit's sorted", "TI"),
    ],
)
def test_a_new_item_brought_in_or_put_first_is_shown(person_on, catalog_record, first, then, code):
    agent = person_on(_outfits(catalog_record))
    *_, last = _turns(agent, first, then)
    assert _first_are(last, code, 3)


def test_the_occasion_stays_with_a_new_item(person_on, catalog_record):
    agent = person_on(_outfits(catalog_record))
    *_, ties = _turns(agent, "mens oxfords for a wedding", "actually, a tie instead")
    assert _first_are(ties, "TI", 3)
    assert "wedding" in [r["value"] for r in ties.response["requirements"]]


def test_no_then_another_kind_of_item_changes_the_item(person_on, catalog_record):
    agent = person_on(_outfits(catalog_record))
    *_, last = _turns(agent, "a purse for work", "sorry no, a tote. the purse won't fit")
    assert _first_are(last, "TO", 3)


def test_a_new_value_for_the_new_item_is_no_requirement_left_out(person):
    *_, shirts = _turns(person, "a dress under $60", "actually a shirt instead, under 40")
    assert "60" not in shirts.response["message"]


def test_a_budget_with_cents_is_shown_as_a_price_is(person):
    [last] = _turns(person, "a dress under $55.60")
    budgets = [r["label"] for r in last.response["requirements"] if r["facet"] == "budget"]
    assert budgets == ["≤ $55.60"]


def test_what_none_of_the_list_has_is_held_as_a_wish_when_asked_for(person):
    *_, asked = _turns(person, "a dress", "do any of these have ruffles?")
    assert asked.response["message"].startswith("None of these")
    assert any("ruffle" in r["label"] for r in asked.response["requirements"])


def test_a_value_asked_of_the_list_is_held_once_however_the_message_was_read():
    """The message's reading may hold it already, or (when the reader marks nothing in "any
    with a hood?") as talk only: then it is held as a wish of its own."""
    state = ShoppingState(fragments=[Fragment("do any have a hood", 2, 0, covered=True)])
    state.turn = 2
    diff = StateDiff()
    _wished(state, diff, ("hood",))
    _wished(state, diff, ("hood",))
    assert [f.text for f in state.active_fragments() if not f.covered] == ["hood"]
    assert diff.fragments == ["hood"]


def test_a_thing_a_story_says_is_worn_out_is_the_item(person_on, catalog_record):
    """ "his old cleats are falling apart": new cleats, not the team he just made."""
    kinds = (
        ("CL", "Boys Baseball Cleats", [TOP, "Boys", "Shoes", "Athletic", "Baseball"], 12),
        ("TS", "Boys Team Sports Jersey", [TOP, "Boys", "Clothing", "Team Sports"], 12),
    )
    agent = person_on(_kinds(catalog_record, *kinds))
    said = "my son just made the all-star team and his old cleats are falling apart. he's 11"
    [result] = _turns(agent, said)
    assert _first_are(result, "CL", 5)
    assert "team" not in [r["label"] for r in result.response["requirements"]]
