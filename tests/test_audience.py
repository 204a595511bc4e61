"""Who the item is for: recipients and ages read into the state, and the department they give
(soft when guessed, hard when stated), in phrasings of our own."""

from __future__ import annotations

import json

import pytest

from shopcopilot.bench.understanding import NodeResolver, predicted
from shopcopilot.catalog.vocabulary import find_mentions
from shopcopilot.rank.rerank import requirements
from shopcopilot.state import ShoppingState
from shopcopilot.state.audience import read_audience
from shopcopilot.state.audience_cues import DATA_PATH, AudienceError, cues, load_cues
from shopcopilot.terms import Level, Status

TOP = "Clothing, Shoes & Jewelry"
MORE_PATHS = {
    (TOP, "Boys", "Clothing", "Jackets & Coats"): 20,
    (TOP, "Girls", "Accessories", "Backpacks"): 10,
    (TOP, "Women", "Shoes", "Boots", "Rain Boots"): 15,
    (TOP, "Men", "Watches", "Wrist Watches"): 25,
    (TOP, "Women", "Clothing", "Sweaters", "Cardigans"): 12,
    (TOP, "Women", "Accessories", "Scarves & Wraps"): 9,
    (TOP, "Men", "Shoes", "Oxfords"): 11,
}


@pytest.fixture(scope="module")
def shop(make_lexicon):
    return make_lexicon(MORE_PATHS)


def departments(state: ShoppingState) -> dict[str, Level]:
    return {c.value: c.level for c in state.active() if c.data.get("facet") == "department"}


def who(state: ShoppingState) -> tuple[str | None, str | None]:
    audience = state.audience
    return (
        audience.recipient.value if audience.recipient else None,
        audience.age_group.value if audience.age_group else None,
    )


# -- the data file ------------------------------------------------------------------------------


def test_every_recipient_word_in_the_file_is_read_as_that_person():
    data = cues()
    for words, term in data.terms.items():
        said = f"I need a present for my {' '.join(words)}"
        reading = read_audience(said)
        assert reading is not None and reading.recipient is not None, said
        assert reading.recipient.value == term.person.name, said


def test_every_age_word_in_the_file_is_read_as_its_age_group():
    for words, group in cues().age_words.items():
        said = f"some shoes, {' '.join(words)} sizes please"
        reading = read_audience(said)
        assert reading is not None and reading.age_group is not None, said
        assert reading.age_group.value == group, said


@pytest.mark.parametrize(
    "change,entry",
    [
        (lambda raw: raw["recipients"]["wife"].update(gender="woman"), "recipients.wife.gender"),
        (lambda raw: raw["recipients"]["son"].update(terms=["son", ""]), "recipients.son.terms"),
        (lambda raw: raw["recipients"]["aunt"].update(terms=["mum"]), "recipients.aunt"),
        (lambda raw: raw["ages"]["bands"].append(["elder", 60, 200]), "ages.bands"),
        (lambda raw: raw["departments"]["teen"].update(male=["boys"]), "departments.teen.male"),
        (lambda raw: raw.pop("age_words"), "age_words"),
    ],
)
def test_a_malformed_file_is_refused_naming_the_file_and_the_entry(
    tmp_path, altered, change, entry
):
    path = altered(DATA_PATH, tmp_path, change)
    with pytest.raises(AudienceError) as error:
        load_cues(path)
    assert str(path) in str(error.value) and entry in str(error.value)


# -- reading a message ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "said,recipient,age",
    [
        ("waterproof jacket for my 8 year old son", "son", "kid"),
        ("a backpack for my eight-year-old daughter", "daughter", "kid"),
        ("hoodie for my lad, he's 11", "son", "kid"),
        ("my daughter is 15 and wants a denim jacket", "daughter", "teen"),
        ("easter dress for my 9 month old granddaughter", "granddaughter", "baby"),
        ("bracelet for my 12yo niece", "niece", "kid"),
        ("slippers for my nan, she's 84", "grandma", "adult"),
        ("slippers for my nan", "grandma", None),  # an adult, but the message says no age
        ("a cardigan for the missus", "wife", None),
        ("trainers for my hubby", "husband", None),
        ("jewellery for my gf", "girlfriend", None),
        ("rain boots for our little one", "child", None),
        ("sandals for my 4 yo", "child", "kid"),
        ("first shoes for our 14 month old", "baby", "toddler"),
        ("a gift for my friend's new baby", "baby", "baby"),
        ("onesie for my newborn nephew", "nephew", "baby"),
        ("braclet for my daugther", "daughter", None),
        ("teen girls leggings", None, "teen"),
        ("toddler rain boots in 3T", None, "toddler"),
        ("girls leggings, 4T", None, "toddler"),
        ("a backpack for my daughter, she's in 2nd grade", "daughter", "kid"),  # no chip "grade"
        ("a dress for my daughter, she is in 8th grade", "daughter", "teen"),
        ("bf bday 2moro, wallet??", "boyfriend", None),  # whose day the gift is for
        ("dad's birthday is next week, a watch", "dad", None),
        ("my niece was born last week, a snowsuit", "niece", "baby"),
    ],
)
def test_who_and_how_old_are_read(said, recipient, age):
    reading = read_audience(said, find_mentions(said))
    assert reading is not None
    assert (reading.recipient.value if reading.recipient else None) == recipient
    assert (reading.age_group.value if reading.age_group else None) == age


@pytest.mark.parametrize(
    "said",
    [
        "black dress shoes for my brother's wedding",  # the shopper goes to it
        "not for my wife, these are for me",
        "my dad swears by these boots",
        "hiking boots to wear with my husband on trips",
        "boyfriend jeans, high rise",  # a style, not a person
        "baby blue cardigan",  # a colour, not an age
        "a dad hat in black",
        "he's 12 wide in most brands",  # a size, not an age
        "my budget is 50",
        "nothing scary, the ceo brings his little kids by",  # kids the shopper will be around
    ],
)
def test_words_that_are_not_about_who_the_item_is_for(said):
    reading = read_audience(said, find_mentions(said))
    assert reading is None or (reading.recipient is None and reading.age_group is None)


# -- the state ----------------------------------------------------------------------------------


def test_a_gendered_child_gives_a_hard_department_and_an_age(shop, play):
    state, _ = play(shop, "looking for a waterproof jacket for my 8 year old son")
    assert departments(state) == {"boys": Level.HARD}
    assert who(state) == ("son", "kid")
    assert state.audience.age_group.text == "8 year old"
    assert state.audience.recipient.source_turn == 1


def test_a_guessed_department_is_soft_and_the_recipient_is_no_item(shop, play):
    state, _ = play(shop, "a necklace for my wife's birthday")
    assert departments(state) == {"women": Level.SOFT}
    assert who(state) == ("wife", "adult")
    assert [c.value for c in state.active("category")] == ["necklace"]


def test_something_for_my_wife_names_no_item_and_keeps_no_words(shop, play):
    state, _ = play(shop, "something for my wife")
    assert not state.active("category")
    assert not state.active_fragments()
    assert departments(state) == {"women": Level.SOFT}


def test_the_item_after_a_gift_for_someone_is_kept(shop, play):
    state, _ = play(shop, "gift for my dad: running shoes")
    assert [c.value for c in state.active("category")] == ["running shoes"]
    assert departments(state) == {"men": Level.SOFT}


def test_a_stated_department_wins_over_a_guessed_one(shop, play):
    state, _ = play(shop, "mens watch for my wife")
    assert departments(state) == {"men": Level.HARD}
    assert who(state) == ("wife", "adult")
    state, _ = play(shop, "womens rain boots", "they're for my husband")
    assert departments(state) == {"women": Level.HARD}


def test_a_change_of_mind_about_who_it_is_for_replaces_the_department(shop, play):
    state, _ = play(shop, "mens oxfords", "actually they're for my wife")
    assert departments(state) == {"women": Level.SOFT}
    assert any(c.value == "men" and c.status == Status.REPLACED for c in state.constraints)


def test_a_new_person_without_a_department_drops_the_guess(shop, play):
    state, _ = play(shop, "a scarf for my mum", "oh wait, it's for a colleague")
    assert not departments(state)
    assert who(state) == ("coworker", "adult")


def test_an_age_group_alone_names_no_gender(shop, play):
    for said in ("teen hoodie", "an adult onesie"):
        state, _ = play(shop, said)
        assert not departments(state), said
        assert state.audience.age_group is not None
    # A toddler wears a child's things of either gender, filed as a baby's as often.
    state, _ = play(shop, "toddler rain boots")
    assert departments(state) == {"kids": Level.HARD}
    assert [c.data.get("also") for c in state.active() if c.value == "kids"] == ["baby"]


def test_an_age_said_later_refines_the_department(shop, play):
    state, diffs = play(shop, "a cardigan for my daughter", "she's only 10 months")
    assert departments(state) == {"baby": Level.HARD}
    assert who(state) == ("daughter", "baby")
    assert diffs[1].audience == {"age_group": "baby"}


def test_a_pronoun_gives_a_soft_department_for_a_person_of_unknown_gender(shop, play):
    state, _ = play(shop, "secret santa for a coworker, I don't know her well, maybe a scarf")
    assert departments(state) == {"women": Level.SOFT}
    # A child's age said holds: the pronoun only says which child's department.
    state, _ = play(shop, "running shoes for my 9 year old", "he likes blue")
    assert departments(state) == {"boys": Level.HARD}


def test_a_person_named_only_in_passing_changes_nothing(shop, play):
    state, _ = play(
        shop, "clip on earrings for my 9 year old daughter", "she'd share them with her best friend"
    )
    assert who(state) == ("daughter", "kid")
    assert departments(state) == {"girls": Level.HARD}


def test_kids_narrowed_by_a_son(shop, play):
    state, _ = play(shop, "my son is 7, is there a kids watch that is easy to read")
    assert departments(state) == {"boys": Level.HARD}


def test_a_number_age_is_not_undone_by_an_age_word(shop, play):
    state, _ = play(shop, "rain boots for my daughter, she's 6", "size 11 toddler")
    assert who(state) == ("daughter", "kid")


def test_the_audience_round_trips_and_copies_independently(shop, play):
    state, _ = play(shop, "a jacket for my 8 year old son")
    again = ShoppingState.from_dict(json.loads(json.dumps(state.to_dict())))
    assert again.audience == state.audience
    copied = state.copy()
    copied.audience.recipient = None
    assert state.audience.recipient is not None
    assert ShoppingState.from_dict({}).audience.recipient is None


def test_the_ranking_weighs_a_guessed_department_less_than_a_stated_one(shop, play):
    guessed, _ = play(shop, "a cardigan for my mum")
    stated, _ = play(shop, "a womens cardigan")
    strength = {
        name: [w for c, _, w in requirements(state).values if c.data.get("facet") == "department"]
        for name, state in (("guessed", guessed), ("stated", stated))
    }
    assert strength["guessed"] and strength["stated"]
    assert strength["guessed"][0] < strength["stated"][0]


def test_the_understanding_benchmark_reads_who_from_the_state(shop, play):
    state, diffs = play(shop, "trainers for my 12 year old nephew")
    got = predicted(state.to_dict(), diffs[-1].to_dict(), NodeResolver([]))
    assert got["recipient"] == {"nephew"} and got["age_group"] == {"kid"}
    assert got["department"] == {"boys"}


def test_children_the_shopper_minds_are_not_who_it_is_for(shop, play):
    for said in (
        "a stick umbrella for walking the kids to school",
        "comfy shoes, I teach kindergarten",
        "sneakers for chasing toddlers around",
        "a raincoat for the school run with the kids",
    ):
        state, _ = play(shop, said)
        assert not departments(state), said
    for said in ("pajamas for the kids", "running kids shoes", "a coat for my kids"):
        state, _ = play(shop, said)
        assert departments(state) == {"kids": Level.HARD}, said


def test_a_child_said_again_as_another_keeps_the_age_said(shop, play):
    """ "a 9 year old girl", then "I said girl but it's actually for my son": the boy is 9."""
    state, _ = play(shop, "a winter coat for a 9 year old girl", "I said girl but it's for my son")
    departments = [c.value for c in state.active() if c.data.get("facet") == "department"]
    assert departments == ["boys"]
    assert state.audience.age_group is not None and state.audience.age_group.value == "kid"
