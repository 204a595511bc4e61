"""State-update behaviour: each rule of understanding the shopper, in several wordings."""

from __future__ import annotations

import pytest

from shopcopilot.state import Lexicon, ShoppingState
from shopcopilot.state.budget import parse_budget
from shopcopilot.state.parse import parse_message
from shopcopilot.state.requirements import requirements

# `lexicon` (a few category paths, brands Nike and Cherokee), `make_lexicon` (those paths and
# more) and `play` (messages played into a fresh state) come from conftest.py.


def values(state, facet=None, status="active"):
    return {
        (c.data.get("facet"), c.value)
        for c in state.constraints
        if c.status == status and (facet is None or c.data.get("facet") == facet)
    }


@pytest.mark.parametrize(
    "text,expected",
    [
        ("under $40", (None, 40.0, None)),
        ("I'd rather not spend more than 40 dollars", (None, 40.0, None)),
        ("no more than 50 bucks", (None, 50.0, None)),
        ("between 20 and 35 bucks", (20.0, 35.0, None)),
        ("around $40", (None, None, 40.0)),
        ("budget around $29.99", (None, None, 29.99)),
        ("$25 or less", (None, 25.0, None)),
        ("at least 100 dollars", (100.0, None, None)),
    ],
)
def test_budgets_are_read(text, expected):
    budget = parse_budget(text)
    assert budget is not None
    assert (budget.min_price, budget.max_price, budget.target) == expected


@pytest.mark.parametrize(
    "text",
    [
        "up to 30 mm wide",
        "about 5 inches long",
        "2 ft",
        "16 oz bottle",
        'Shaft measures approximately 8.37" from arch',
        "size 10 please",
        "3 Year Battery",
    ],
)
def test_measures_are_not_money(text):
    assert parse_budget(text) is None


def test_category_names_with_prices_are_not_budgets(lexicon, play):
    state, _ = play(lexicon, "I'm looking for Handbags Under $30")
    assert not state.active("budget")
    assert state.active("category")


def test_thirty_mm_wide_is_not_a_budget(lexicon, play):
    state, _ = play(
        lexicon, "I'm looking for a necklace", "For that, what matters is: up to 30 mm wide"
    )
    assert not state.active("budget")
    assert any("30 mm" in f.text for f in state.active_fragments())


def test_colour_shades_map_to_base_colours(lexicon, play):
    state, _ = play(lexicon, "looking for running shoes for women, something in navy")
    assert ("color", "blue") in values(state)
    assert ("department", "women") in values(state)


@pytest.mark.parametrize(
    "message",
    [
        "not leather please",
        "anything but leather",
        "I want to avoid leather",
        "no leather",
        "without leather",
    ],
)
def test_negation_rejects_value(lexicon, message, play):
    state, _ = play(lexicon, "I need a jacket for men", message)
    assert ("material", "leather") in {(r.attribute, r.value) for r in state.rejected}
    assert ("material", "leather") not in values(state)


@pytest.mark.parametrize(
    "message",
    [
        "I don't have a preference for color; please use your judgment.",
        "doesn't matter",
        "any color is fine",
        "whatever you think",
        "up to you",
        "no preference",
    ],
)
def test_no_preference_creates_no_filter(lexicon, message, play):
    state, diffs = play(lexicon, "I need a dress", message, asked=["color"])
    assert "color" in state.unconstrained
    assert not state.active("color")
    assert not diffs[-1].added


def test_no_preference_names_its_attribute(lexicon, play):
    state, _ = play(lexicon, "I need a dress", "I don't care about the brand", asked=["color"])
    assert "brand" in state.unconstrained and "color" not in state.unconstrained


@pytest.mark.parametrize(
    "override",
    [
        "Actually, make it leather instead of suede.",
        "scratch that, leather",
        "switch to leather",
        "change it to leather",
        "on second thought I'd rather have leather",
    ],
)
def test_override_replaces_value_and_keeps_unrelated(lexicon, override, play):
    state, diffs = play(lexicon, "I need a men's jacket in suede", "black please", override)
    assert ("material", "leather") in values(state)
    assert ("material", "suede") not in values(state)
    assert ("material", "suede") in values(state, status="replaced")
    assert ("color", "black") in values(state)  # unrelated: kept
    assert state.epoch == 1 and diffs[-1].new_epoch


def test_category_switch_drops_category_only_constraints(lexicon, play):
    state, _ = play(
        lexicon,
        "I need running shoes for women",
        "size 8",
        "Actually, now I need a necklace instead",
    )
    assert ("size", "8") not in values(state)
    assert ("department", "women") in values(state)
    categories = [c for c in state.constraints if c.attribute == "category"]
    assert categories[-1].status == "active" and "necklace" in categories[-1].value
    assert categories[0].status == "replaced"


def test_free_requirement_text_splits_into_fragments(lexicon, play):
    state, _ = play(
        lexicon,
        "I need a dress",
        "For that, what matters is: 95% Polyester, 5% Spandex; Wrap closure.",
    )
    texts = [f.text for f in state.active_fragments()]
    assert "95% Polyester, 5% Spandex" in texts and "Wrap closure" in texts


def test_override_without_attribute_archives_volunteered_preference(lexicon, play):
    state, _ = play(
        lexicon,
        "I'm looking for Jewelry Necklaces. Adjustable chain",
        "For that, what matters is: gold tone",
        "Actually, ignore my earlier preference. What I need is: pendant with moon",
        asked=["other", None],
    )
    by_text = {f.text: f.status for f in state.fragments}
    assert by_text["Adjustable chain"] == "replaced"
    assert by_text["gold tone"] == "active"
    assert by_text["pendant with moon"] == "active"


def test_browsing_intent(lexicon, play):
    state, _ = play(lexicon, "I'm looking for dresses, but I'm still exploring.")
    assert state.intent == "browsing"
    state, _ = play(lexicon, "I'm looking for dresses. A key requirement is: 100% Cotton.")
    assert state.intent == "buying"


def test_state_round_trips_through_json(lexicon, play):
    import json

    state, _ = play(
        lexicon, "I need running shoes for women under $80", "not pink", asked=["color"]
    )
    again = ShoppingState.from_dict(json.loads(json.dumps(state.to_dict())))
    assert again.to_dict() == state.to_dict()


def test_override_naming_a_material_keeps_the_category(play):
    """'What I need is: wool' changes the material, not the item, even where a category says
    Wool."""
    lexicon = Lexicon(
        {
            ("Clothing, Shoes & Jewelry", "Women", "Socks & Hosiery", "Wool"): 5,
            ("Clothing, Shoes & Jewelry", "Women", "Socks & Hosiery", "Leg Warmers"): 5,
        }
    )
    state, _ = play(
        lexicon,
        "I'm looking for Socks & Hosiery Leg Warmers.",
        "cotton please",
        "Actually, ignore my earlier preference. What I need is: wool.",
    )
    category = state.active("category")
    assert category and "leg warmers" in category[0].value
    assert ("material", "wool") in values(state)
    assert ("material", "cotton") in values(state, status="replaced")


def test_category_text_is_the_item_not_the_whole_clause(lexicon, play):
    state, _ = play(lexicon, "I'm looking for women's running shoes under 60 dollars, not black")
    assert state.active("category")[0].text == "women's running shoes"
    assert state.active("budget")[0].data["max"] == 60


def test_a_size_said_inside_the_item_is_not_part_of_the_item(lexicon, play):
    state, _ = play(lexicon, "white trainers womens size 38")
    assert "38" not in state.active("category")[0].text
    assert [c.value for c in state.active("size")] == ["38"]


def test_no_preference_said_with_the_item_keeps_the_item(lexicon, play):
    """ "dresses, whatever kind": the dresses said in the same breath stay the item."""
    state, _ = play(lexicon, "a dress for me, whatever kind")
    assert [c.value for c in state.active("category")] == ["dress"]
    state, _ = play(lexicon, "a blue dress", "don't worry about the colour")
    assert "color" in state.unconstrained and not state.active("color")


def test_a_complaint_about_how_many_shown_turns_the_value_down(lexicon, play):
    state, _ = play(lexicon, "a dress", "why are half of these leather? cotton please")
    assert [r.value for r in state.rejected] == ["leather"]
    state, _ = play(lexicon, "a dress", "still lots of leather in there, cotton only")
    assert [r.value for r in state.rejected] == ["leather"]
    state, _ = play(lexicon, "a dress, nothing with a big logo or leather on it")
    assert "leather" in [r.value for r in state.rejected]


def test_no_preference_on_style_keeps_who_it_is_for(lexicon, play):
    state, _ = play(lexicon, "mens sneakers", "style I don't care")
    assert ("department", "men") in values(state)


def test_a_narrower_department_said_stays_beside_a_broader_age_word(lexicon, play):
    state, _ = play(lexicon, "girl shoes size 13 little kid")
    assert [c.value for c in state.active("style") if c.data.get("facet") == "department"] == [
        "girls"
    ]


@pytest.mark.parametrize(
    "typed,meant",
    [("earings", "earrings"), ("leggins", "leggings"), ("sandles", "sandals"), ("gril", "girl")],
)
def test_dictionary_words_far_rarer_than_a_catalog_word_are_typos(typed, meant):
    from shopcopilot.state.spelling import SpellFixer

    fixer = SpellFixer(["earrings", "leggings", "sandals", "girl", "sweater", "boots", "jane"])
    assert fixer.fix(f"{typed} please") == f"{meant} please"


@pytest.mark.parametrize("word", ["lacy", "silky", "furry"])
def test_an_adjective_of_a_known_word_is_meant(word):
    from shopcopilot.state.spelling import SpellFixer

    assert SpellFixer(["lace", "lady", "silk", "silly", "fur", "fury"]).fix(word) == word


def test_a_dictionary_word_one_slip_from_two_common_words_is_left_alone():
    from shopcopilot.state.spelling import SpellFixer

    assert SpellFixer(["hats"]).fix("hets") == "hats"
    assert SpellFixer(["hats", "bets"]).fix("hets") == "hets"  # which one was meant?
    assert SpellFixer(["girl", "grip"]).fix("gril") == "girl"  # girl is far more common


@pytest.mark.parametrize("word", ["sweeter", "bots", "squad", "janes", "threader", "haha"])
def test_common_or_known_words_are_not_taken_for_typos(word):
    from shopcopilot.state.spelling import SpellFixer

    fixer = SpellFixer(["sweater", "boots", "squat", "james", "jane", "threads", "maha"])
    assert fixer.fix(word) == word


def test_typos_in_values_are_tolerated(lexicon, play):
    state, _ = play(lexicon, "I need a dress", "somethng in nayv, ideally leathr")
    assert ("color", "blue") in values(state) and ("material", "leather") in values(state)


def test_override_with_a_word_from_a_category_name_is_not_a_category_switch(play):
    lexicon = Lexicon(
        {
            ("Clothing, Shoes & Jewelry", "Women", "Coats", "Leather & Faux Leather"): 5,
            ("Clothing, Shoes & Jewelry", "Women", "Coats", "Anoraks"): 5,
            ("Clothing, Shoes & Jewelry", "Men", "Accessories", "Belts"): 5,
        }
    )
    state, _ = play(
        lexicon,
        "I'm looking for Coats Anoraks.",
        "Drawstring closure",
        "Actually, ignore my earlier preference. What I need is: Faux Fur.",
    )
    assert "anoraks" in state.active("category")[0].value
    state, _ = play(lexicon, "I'm looking for Coats Anoraks.", "i mean belts")
    assert "belts" in state.active("category")[0].value


def test_negation_inside_a_requirement_list_describes_the_product(lexicon, play):
    state, _ = play(lexicon, "I need a dress", "For that, what matters is: Hang to dry; No bleach")
    assert not state.rejected
    assert "No bleach" in [f.text for f in state.active_fragments()]
    state, _ = play(lexicon, "I need a dress", "Hang to dry. No bleach please")
    assert ("word", "bleach") in {(r.attribute, r.value) for r in state.rejected}


@pytest.mark.parametrize(
    "message,word",
    [
        ("not charm bracelets though", "charm bracelets"),  # a kind named by two words
        ("no hoods please", "hood"),
        ("nothing with a hood", "hood"),
        ("Not jewelry boxes though.", "jewelry boxes"),
    ],
)
def test_rejected_things_are_their_head_noun_or_two_word_name(lexicon, message, word, play):
    state, _ = play(lexicon, "I'm looking for jewelry", message)
    assert ("word", word) in {(r.attribute, r.value) for r in state.rejected}
    assert not any(word[:4] in f.text.lower() for f in state.active_fragments())


def test_a_named_brand_is_remembered_and_a_skipped_value_is_not_a_requirement(lexicon, play):
    state, _ = play(lexicon, "I need a dress", "i'd skip leather. I usually buy Cherokee")
    assert ("brand", "Cherokee") in values(state)
    assert ("material", "leather") in {(r.attribute, r.value) for r in state.rejected}
    assert all("leather" not in f.text for f in state.active_fragments())


def test_a_loosely_named_brand_after_a_cue_is_guessed(lexicon, play):
    state, _ = play(lexicon, "I need a dress", "something from cherokey would be great")
    assert ("brand", "Cherokee") in values(state)


def test_a_store_named_like_a_verb_after_a_subject_is_the_verb(make_lexicon, play):
    lexicon = make_lexicon(brands=["Guess", "Cherokee"])
    state, _ = play(lexicon, "a red dress i guess")
    assert not state.active("brand")
    state, _ = play(lexicon, "a guess dress in red")
    assert [c.value for c in state.active("brand")] == ["Guess"]


def test_ordinary_words_after_from_name_no_brand(make_lexicon, play):
    lexicon = make_lexicon(brands=["David Archy", "Cherokee"])
    state, _ = play(
        lexicon, "I need boots", "Rubber sole; Shaft measures approximately 8 inches from arch."
    )
    assert not values(state, "brand")


@pytest.mark.parametrize(
    "message",
    [
        "switch the suede to leather",
        "leather rather than suede now",
        "leather beats suede",
    ],
)
def test_contrasting_a_new_value_with_an_earlier_one_replaces_it(lexicon, message, play):
    state, diffs = play(lexicon, "I need a men's jacket in suede", "black please", message)
    assert ("material", "leather") in values(state)
    assert ("material", "suede") not in values(state)
    assert ("color", "black") in values(state)
    assert diffs[-1].new_epoch


@pytest.mark.parametrize(
    "message",
    [
        "Sorry, typed the wrong thing, I want leather not suede.",
        "no suede after all, leather",
        "leather please, suede is a no-go",
    ],
)
def test_turning_down_a_value_asked_for_earlier_is_a_change_of_mind(lexicon, message, play):
    state, diffs = play(lexicon, "I need a men's jacket in suede", "black please", message)
    assert ("material", "leather") in values(state) and ("material", "suede") not in values(state)
    assert ("color", "black") in values(state)
    assert diffs[-1].new_epoch and state.epoch == 1


@pytest.mark.parametrize(
    "message",
    [
        "ok scrap suede. leather pls",
        "oh wait, let's swap suede for leather",
        "suede was wrong, I actually need leather",
        "my mistake, leather",
        "ditch the suede, go with leather",
        "no no, not suede. leather!",
        "I take that back: leather",
        "oops, meant to say leather",
    ],
)
def test_a_correction_in_other_words_replaces_the_value(lexicon, message, play):
    state, diffs = play(lexicon, "I need a men's jacket in suede", "black please", message)
    assert ("material", "leather") in values(state) and ("material", "suede") not in values(state)
    assert ("color", "black") in values(state) and diffs[-1].new_epoch


@pytest.mark.parametrize(
    "message", ["actually, black or navy would be fine", "actually black and white"]
)
def test_a_correction_listing_the_earlier_value_keeps_it(lexicon, message, play):
    state, _ = play(lexicon, "I need a dress in black", message)
    assert ("color", "black") in values(state) and len(values(state, "color")) == 2


def test_values_are_read_within_a_clause(lexicon):
    said = [
        (m.facet, m.value)
        for m in lexicon.mentions("no no, not suede. leather! suede leather boots")
    ]
    assert said == [("material", "suede"), ("material", "leather"), ("material", "suede")]
    assert [(m.facet, m.value) for m in lexicon.mentions("size 9.5, wide")] == [
        ("size", "9.5"),
        ("width", "wide"),
    ]


@pytest.mark.parametrize(
    "opening,item",
    [
        ("looking for a gift for my dad: running shoes", "running shoes"),
        ("I want a gift for my sister, a necklace", "necklace"),
        ("Gift hunting for a female coworker... a necklace maybe?", "necklace"),
    ],
)
def test_who_a_gift_is_for_is_not_the_item(lexicon, opening, item, play):
    state, _ = play(lexicon, opening)
    assert [c.value for c in state.active("category")] == [item]
    assert not any("gift" in f.text.lower() for f in state.fragments)


def test_gift_hunting_is_no_outdoor_use(lexicon, play):
    state, _ = play(lexicon, "Gift hunting for a female coworker... a necklace maybe?")
    assert not values(state, "use_case") and ("department", "women") in values(state)


def test_turning_down_a_value_never_asked_for_is_no_change_of_mind(lexicon, play):
    state, diffs = play(lexicon, "I need a men's jacket in suede", "not black")
    assert ("material", "suede") in values(state) and not diffs[-1].new_epoch and state.epoch == 0


def test_state_copy_is_equal_and_independent(lexicon, play):
    state, _ = play(
        lexicon,
        "I need a men's jacket in suede under $80",
        "not black. what matters is: two pockets",
    )
    state.shown[state.epoch] = ["A1"]
    state.profile = {"preference_tags": ["fit"]}
    twin = state.copy()
    assert twin.to_dict() == state.to_dict()
    twin.constraints[0].status = "replaced"
    twin.constraints[0].data.setdefault("words", {})["extra"] = 1.0
    twin.fragments[0].status = "replaced"
    twin.shown[state.epoch].append("A2")
    twin.profile["preference_tags"].append("style")
    twin.history[0].agent = "changed"
    assert state.constraints[0].status == "active" and "extra" not in state.constraints[0].data.get(
        "words", {}
    )
    assert state.fragments[0].status == "active"
    assert state.shown[state.epoch] == ["A1"] and state.profile == {"preference_tags": ["fit"]}
    assert state.history[0].agent == ""


@pytest.mark.parametrize(
    "said,brand", [("sauconey", "Saucony"), ("celersport", "CS Celersport"), ("mom", None)]
)
def test_a_misspelled_or_partial_brand_is_guessed(said, brand, make_lexicon):
    lexicon = make_lexicon(brands=["Saucony", "CS Celersport", "David Archy", "Cherokee"])
    guess = lexicon.guess_brand(said)
    assert (guess.value if guess else None) == brand


NARROWING_PATHS = {  # beyond the paths every lexicon here has
    ("Clothing, Shoes & Jewelry", "Women", "Accessories", "Hats & Caps", "Cowboy Hats"): 20,
    ("Clothing, Shoes & Jewelry", "Women", "Jewelry", "Body Jewelry", "Barbells"): 10,
}


def item(state):
    return [c.value for c in state.active("category")]


def test_an_answer_naming_a_narrower_kind_of_item_narrows_it_and_keeps_the_rest(make_lexicon, play):
    lexicon = make_lexicon(NARROWING_PATHS)
    state, _ = play(
        lexicon,
        "just browsing accessories",
        "for hiking",
        "Cowboy hats.",
        asked=["use_case", "other"],
    )
    assert item(state) == ["cowboy hats"]
    assert ("use_case", "hiking") in values(state)
    state, _ = play(lexicon, "show me something nice", "Dresses.", asked=["other"])
    assert item(state) == ["dresses"]


def test_a_sibling_or_a_closure_does_not_replace_the_item(make_lexicon, play):
    lexicon = make_lexicon(NARROWING_PATHS)
    state, _ = play(
        lexicon,
        "I need body jewelry barbells",
        "A piece that layers with other necklaces.",
        asked=["other"],
    )
    assert item(state) == ["body jewelry barbells"]
    state, _ = play(lexicon, "show me something nice", "no laces, slip on please.", asked=["other"])
    assert item(state) == []


SWITCH_PATHS = {  # beyond the paths every lexicon here has
    ("Clothing, Shoes & Jewelry", "Women", "Clothing", "Sweaters"): 40,
    ("Clothing, Shoes & Jewelry", "Women", "Clothing", "Coats", "Down Jackets"): 20,
    ("Clothing, Shoes & Jewelry", "Women", "Shoes", "Slippers"): 20,
    ("Clothing, Shoes & Jewelry", "Women", "Clothing", "Socks & Hosiery", "Leg Warmers"): 10,
}


@pytest.mark.parametrize(
    "switch",
    [
        "On reflection, what I need is a down jacket.",
        "on further thought i want down jackets",
        "Come to think of it, a down jacket would be better.",
        "hmm, make that a down jacket",
        "Let's try down jackets instead.",
        "ok let's switch from sweaters to down jackets please",
        "Changing it from the sweater to a down jacket.",
        "You know what, I need a down jacket.",
    ],
)
def test_a_change_of_item_is_read_in_many_wordings(switch, make_lexicon, play):
    state, _ = play(
        make_lexicon(SWITCH_PATHS),
        "I'm after a women's sweater",
        "in wool",
        switch,
        asked=["material", "use_case"],
    )
    assert len(item(state)) == 1 and "jacket" in item(state)[0]
    assert ("department", "women") in values(state)  # unrelated: kept


def test_wanting_it_for_a_use_does_not_rename_the_item(make_lexicon, play):
    lexicon = make_lexicon(
        SWITCH_PATHS, {("Clothing, Shoes & Jewelry", "Women", "Clothing", "Winter"): 5}
    )
    state, _ = play(
        lexicon,
        "could you find me women's leg warmers",
        "I want it for winter. Not in spandex.",
        asked=["use_case"],
    )
    assert item(state) == ["women's leg warmers"]
    assert ("material", "spandex") in values(state, status="negated") or state.rejected


def test_the_item_name_stops_where_the_description_starts(make_lexicon, play):
    state, _ = play(
        make_lexicon(SWITCH_PATHS), "In the market for slippers - something made from wool."
    )
    assert item(state) == ["slippers"]
    assert ("material", "wool") in values(state)


HEAD_PATHS = {
    **SWITCH_PATHS,
    ("Clothing, Shoes & Jewelry", "Women", "Clothing", "Active", "Active Sweatshirts"): 10,
    ("Clothing, Shoes & Jewelry", "Women", "Clothing", "Sweaters", "Wool & Blends"): 10,
    ("Clothing, Shoes & Jewelry", "Women", "Clothing", "Plus-Size"): 10,
}


@pytest.mark.parametrize(
    "opening,said,asked,expected",
    [
        # A plural head noun names the new item when the old one is set aside in the same breath...
        (
            "I'm after a women's sweater",
            "Correction: hooded sweatshirts, not sweaters.",
            "use_case",
            ["sweatshirts"],
        ),
        # ...and alone it is only a requirement.
        (
            "I'm after a women's sweater",
            "Actually, hooded sweatshirts.",
            "use_case",
            ["women's sweater"],
        ),
        ("what clothes do you have?", "a polyester blend is fine", "other", []),
        # Sizes never name the item.
        ("I'm after a women's sweater", "I need plus sizes", "size", ["women's sweater"]),
        ("just browsing for my sister", "I need plus sizes", "other", []),
    ],
)
def test_which_answers_name_a_new_item(opening, said, asked, expected, make_lexicon, play):
    state, _ = play(make_lexicon(HEAD_PATHS), opening, said, asked=[asked])
    assert item(state) == expected


def test_an_item_after_only_a_department_narrows_it(make_lexicon, play):
    lexicon = make_lexicon(HEAD_PATHS)
    state, _ = play(
        lexicon,
        "Browsing clothes for women.",
        "in wool",
        "dresses, to be exact.",
        asked=["material", "other"],
    )
    assert item(state) == ["dresses"]
    assert ("material", "wool") in values(state)


def test_the_item_said_for_emphasis_is_the_item(make_lexicon, play):
    more = {
        ("Clothing, Shoes & Jewelry", "Women", "Clothing", "Lingerie"): 10,
        ("Clothing, Shoes & Jewelry", "Women", "Clothing", "Sleep & Lounge", "Sets"): 10,
    }
    lexicon = make_lexicon(HEAD_PATHS, more)
    for said in (
        "It's down jackets I'm after",
        "yeah, it's down jackets I'm after",
        "down jackets are what I want",
        "Down jackets is what I'm looking for.",
    ):
        state, _ = play(lexicon, "Just browsing for lingerie", said, asked=["other"])
        assert item(state) == ["down jackets"], said
    state, _ = play(lexicon, "Just browsing for lingerie", "It's for work", asked=["other"])
    assert item(state) == ["lingerie"]


def test_the_item_span_keeps_hyphenated_names_and_stops_at_a_comma(make_lexicon, play):
    lexicon = make_lexicon(
        {
            ("Clothing, Shoes & Jewelry", "Women", "Clothing", "Tops & Tees", "T-Shirts"): 10,
            ("Clothing, Shoes & Jewelry", "Women", "Shoes", "Flats"): 10,
            ("Clothing, Shoes & Jewelry", "Women", "Clothing", "Plus-Size"): 10,
        }
    )
    state, _ = play(lexicon, "hi! shopping for women's t-shirts today.")
    assert item(state) == ["women's t-shirts"]
    state, _ = play(lexicon, "i'm looking for women's flats, i wear a plus size 9.")
    assert item(state) == ["women's flats"]


def test_a_kind_of_the_item_narrows_it_whoever_it_is_for(make_lexicon, play):
    lexicon = make_lexicon(
        {
            ("Clothing, Shoes & Jewelry", "Women", "Shoes", "Athletic", "Walking"): 10,
            ("Clothing, Shoes & Jewelry", "Novelty", "Women's Shoes"): 3,
        }
    )
    state, _ = play(lexicon, "Any shoes for women?", "Walking shoes, to be exact", asked=["other"])
    assert item(state) == ["walking shoes"]


def test_a_new_item_set_against_the_current_one_is_a_change_of_mind_without_a_cue(
    make_lexicon, play
):
    lexicon = make_lexicon(
        {
            ("Clothing, Shoes & Jewelry", "Men", "Accessories", "Belts"): 10,
            ("Clothing, Shoes & Jewelry", "Men", "Accessories", "Wallets"): 10,
        }
    )
    for said in (
        "belts, not wallets",
        "ok different idea: belts, not wallets.",
        "My bad, it's belts i need, not wallets",
    ):
        state, _ = play(lexicon, "I'm looking for wallets", said, asked=["material"])
        assert item(state) == ["belts"], said


def test_a_use_or_a_feature_said_with_a_seeking_verb_is_not_an_item(make_lexicon, play):
    more = {
        ("Clothing, Shoes & Jewelry", "Sports", "Hiking & Trekking"): 5,
        ("Clothing, Shoes & Jewelry", "Accessories", "Eyewear", "Lenses"): 5,
    }
    lexicon = make_lexicon(SWITCH_PATHS, more)
    state, _ = play(
        lexicon,
        "I am searching ladies down jackets",
        "Need something for trekking, basically.",
        "want it with polarized lenses, that's a must.",
        asked=["other", "style"],
    )
    assert item(state) == ["down jackets"]


def test_who_it_is_for_before_a_comma_does_not_end_the_item_name(make_lexicon, play):
    lexicon = make_lexicon({("Clothing, Shoes & Jewelry", "Novelty", "Costumes", "Masks"): 5})
    state, _ = play(lexicon, "I'm looking for a present for either a guy or a girl, thinking masks")
    assert "masks" in item(state)[0]


def test_a_fragment_of_words_read_otherwise_is_marked_covered(lexicon, play):
    state, _ = play(lexicon, "I need a jacket for men under fifty bucks")
    assert [(f.text, f.covered) for f in state.fragments] == [("fifty bucks", True)]
    state, _ = play(lexicon, "I need a jacket with a hidden inner pocket for my passport")
    assert state.fragments and not any(f.covered for f in state.fragments)


@pytest.mark.parametrize(
    "said", ["Prefer to stay away from suede.", "I dislike suede", "steer clear of suede please"]
)
def test_more_ways_to_reject_a_value(lexicon, said, play):
    state, _ = play(lexicon, "I need a men's jacket", said)
    assert ("material", "suede") in {(r.attribute, r.value) for r in state.rejected}


@pytest.mark.parametrize(
    "said,rejected",
    [
        ("Green? no thanks.", ("color", "green")),
        ("Nylon is a no-go.", ("material", "nylon")),
        ("Suede isn't my style", ("material", "suede")),
    ],
)
def test_a_rejection_said_after_the_value(lexicon, said, rejected, play):
    state, _ = play(lexicon, "I need a men's jacket", said)
    assert rejected in {(r.attribute, r.value) for r in state.rejected}
    assert rejected not in values(state)
    assert not state.active_fragments()  # nothing of it became a wish


def test_the_item_is_and_looking_at_name_the_item(make_lexicon, play):
    lexicon = make_lexicon(SWITCH_PATHS)
    for said in ("the item is down jackets.", "I'm looking at down jackets"):
        state, _ = play(lexicon, "Just browsing for my sister", said, asked=["other"])
        assert item(state) == ["down jackets"], said


def test_brand_guesses_are_the_same_from_memory(monkeypatch, make_lexicon):
    from shopcopilot.state import lexicon as lexicon_module

    lexicon = make_lexicon(brands=["Saucony", "CS Celersport", "David Archy", "Cherokee"])
    said = ("sauconey", "celersport", "mom", "sauconey")
    first = [lexicon.guess_brand(text) for text in said]
    assert [m and m.value for m in first] == ["Saucony", "CS Celersport", None, "Saucony"]
    assert [m and m.value for m in (lexicon.guess_brand(text) for text in said)] == [
        m and m.value for m in first
    ]
    monkeypatch.setattr(lexicon_module, "NEAR_CACHE_SIZE", 1)  # evicts on every new word
    assert [m and m.value for m in (lexicon.guess_brand(t) for t in said)] == [
        m and m.value for m in first
    ]


def test_a_compound_of_category_words_names_the_item(make_lexicon, play):
    lexicon = make_lexicon(
        {
            ("Clothing, Shoes & Jewelry", "Men", "Watches", "Wrist Watches"): 10,
            ("Clothing, Shoes & Jewelry", "Men", "Jewelry", "Bracelets"): 10,
        }
    )
    assert set(lexicon.category_tokens("wristwatches")) == {"wrist", "watch"}
    assert lexicon.category_tokens("zzzzzzzz") == {}
    state, _ = play(
        lexicon,
        "I'm trying to find gents bracelets",
        "Ugh, forget bracelets. show me wristwatches pls.",
        asked=["material"],
    )
    assert item(state) == ["wristwatches"]
    assert not state.active_fragments()


@pytest.mark.parametrize(
    "plural,singular",
    [
        ("scarves", "scarf"),
        ("knives", "knife"),
        ("gloves", "glove"),
        ("sleeves", "sleeve"),
        ("hoodies", "hoody"),
        ("dresses", "dress"),
    ],
)
def test_plurals_fold_to_the_singular_shoppers_say(plural, singular):
    from shopcopilot.index.forms import word_forms
    from shopcopilot.index.text import stem

    assert stem(plural) == stem(singular) == singular
    assert plural in word_forms(stem(singular))  # and product text in the plural matches it


def test_a_scarf_names_the_scarves_category(play):
    lexicon = Lexicon(
        {("Clothing, Shoes & Jewelry", "Women", "Accessories", "Scarves & Wraps"): 20}, []
    )
    state, _ = play(lexicon, "I need a scarf for my wife")
    assert [c.value for c in state.active("category")] == ["scarf"]


@pytest.mark.parametrize(
    "said,words",
    [
        ("I want a hoodie", {"hoody"}),
        ("some trousers for work", {"pant"}),
        ("a wool jumper", {"sweater"}),
        ("trainers for running", {"sneaker", "running"}),
        ("cosy pyjamas", {"pajama"}),
        ("black heels", {"pump"}),
    ],
)
def test_shoppers_words_for_items_read_as_the_catalogs(said, words, play):
    lexicon = Lexicon(
        {
            ("Clothing, Shoes & Jewelry", "Men", "Clothing", "Fashion Hoodies & Sweatshirts"): 10,
            ("Clothing, Shoes & Jewelry", "Men", "Clothing", "Pants"): 10,
            ("Clothing, Shoes & Jewelry", "Women", "Clothing", "Sweaters"): 10,
            ("Clothing, Shoes & Jewelry", "Women", "Shoes", "Fashion Sneakers"): 10,
            ("Clothing, Shoes & Jewelry", "Women", "Shoes", "Athletic", "Running"): 10,
            (
                "Clothing, Shoes & Jewelry",
                "Women",
                "Clothing",
                "Sleep & Lounge",
                "Sleepwear",
                "Pajama Sets",
            ): 10,
            ("Clothing, Shoes & Jewelry", "Women", "Shoes", "Pumps"): 10,
        },
        [],
    )
    assert set(lexicon.category_tokens(said)) == words
    state, _ = play(lexicon, said)
    assert state.active("category")


def test_a_shoppers_word_the_catalog_has_itself_is_kept():
    # "Heels" as the catalog's own node wins over the table's "pumps".
    lexicon = Lexicon(
        {
            ("Clothing, Shoes & Jewelry", "Women", "Shoes", "Heels"): 10,
            ("Clothing, Shoes & Jewelry", "Women", "Shoes", "Pumps"): 10,
        },
        [],
    )
    assert set(lexicon.category_tokens("black heels")) == {"heel"}


VERB_PATHS = {
    ("Clothing, Shoes & Jewelry", "Men", "Accessories", "Collar Stays"): 5,
    ("Clothing, Shoes & Jewelry", "Women", "Clothing", "Underwear", "Slips"): 5,
    ("Clothing, Shoes & Jewelry", "Women", "Shoes", "Slippers"): 5,
    ("Clothing, Shoes & Jewelry", "Women", "Clothing", "Dresses", "Cocktail"): 5,
    ("Clothing, Shoes & Jewelry", "Women", "Clothing", "Dresses"): 5,
    ("Clothing, Shoes & Jewelry", "Women", "Shoes", "Pumps"): 5,
}


@pytest.mark.parametrize(
    ("said", "wanted"),
    [
        ("i'd like to stay under $100 for a cocktail dress", "cocktail dress"),  # no Collar Stays
        ("my grandma needs slippers she won't slip in", "slippers"),  # no Slips
    ],
)
def test_a_verb_never_names_the_item(make_lexicon, play, said, wanted):
    lexicon = make_lexicon(VERB_PATHS)
    state, _ = play(lexicon, said)
    assert item(state) == [wanted]


@pytest.mark.parametrize(
    ("said", "refused", "kept"),
    [
        ("no spandex yoga pants", {"spandex"}, {"yoga"}),  # the negator's scope ends at a value
        ("nothing in red, blue or green", {"red", "blue", "green"}, set()),  # a list refused
        ("no red, green is fine", {"red"}, {"green"}),  # a comma alone does not carry it on
    ],
)
def test_how_far_a_negator_reaches(lexicon, said, refused, kept):
    obs = parse_message(said, lexicon, None, True)
    assert {m.text for m in obs.negated} == refused
    assert {m.text for m in obs.values} >= kept


@pytest.mark.parametrize("said", ["the last one is way too tall", "too formal for me"])
def test_a_value_after_too_is_a_complaint_never_a_wish(lexicon, said):
    assert parse_message(said, lexicon, None, False).values == []


@pytest.mark.parametrize(
    ("said", "refused", "kept"),
    [
        ("can't stand ruffles", {"ruffles"}, set()),
        ("she hates anything with sequins", {"sequins"}, set()),
        ("allergic to wool", {"wool"}, set()),
        ("latex free please", {"latex"}, set()),
        ("no hood but with pockets", set(), {"with pockets"}),  # a "but" ends the negator's reach
        ("she doesnt like pink", {"pink"}, set()),  # it had been read as a wish
        ("i don't really like polyester", {"polyester"}, set()),
    ],
)
def test_more_ways_to_refuse_a_value(lexicon, said, refused, kept):
    obs = parse_message(said, lexicon, None, True)
    assert {m.text for m in obs.negated} == refused
    assert {m.text for m in obs.values} >= kept


def test_a_dislike_refuses_words_the_vocabulary_has_no_name_for(lexicon):
    assert parse_message("he doesn't like big chunky ones", lexicon, None, False).negated_words == [
        "chunky"
    ]


def test_each_negator_governs_its_own_words(lexicon):
    obs = parse_message("no denim and nothing with a hood please", lexicon, None, True)
    assert {m.text for m in obs.negated} == {"denim"}
    assert obs.negated_words == ["hood"]  # it had gone with the denim's words


@pytest.mark.parametrize("said", ["these are not wedding appropriate", "not wedding-ready"])
def test_a_value_the_shown_do_not_suit_is_still_wanted(lexicon, said):
    obs = parse_message(said, lexicon, None, False)
    assert [m.value for m in obs.values] == ["wedding"] and not obs.negated


def test_free_shipping_refuses_nothing(lexicon):
    assert parse_message("red dress free shipping", lexicon, None, True).negated_words == []


@pytest.mark.parametrize("said", ["idk", "idc", "brb", "omg idk tbh"])
def test_shopper_shorthand_for_not_knowing_or_minding_leaves_no_search_words(lexicon, said, play):
    state, _ = play(lexicon, "I need a men's jacket", said, asked=["color"])
    assert not state.active_fragments(), said


def test_a_value_turned_down_twice_is_held_and_shown_once():
    from shopcopilot.state.model import Rejection, ShoppingState, StateDiff
    from shopcopilot.state.update import _reject

    state = ShoppingState()
    state.rejected.append(Rejection("style", "maxi", 1))
    assert not _reject(state, "length", "maxi", StateDiff())  # "no maxi ones": one "not maxi"
    assert _reject(state, "length", "midi", StateDiff())
    assert [r.value for r in state.rejected] == ["maxi", "midi"]


def test_of_two_departments_the_one_said_before_the_item_holds(lexicon):
    said = "last year I lost to a guy dressed as a cone. this year: women's dress, witchy?"
    obs = parse_message(said, lexicon, None, True, people=True)
    assert {m.value for m in obs.values if m.facet == "department"} == {"women"}
    both = parse_message("mens and womens matching hoodies", lexicon, None, True, people=True)
    assert {m.value for m in both.values if m.facet == "department"} == {"men", "women"}


def test_birthday_and_family_words_as_people_write_them_are_no_typos(lexicon):
    """ "bday" had been corrected to "bay" (bay outfits: boys' lounge sets)."""
    assert lexicon.fix_spelling("a bday outfit for my hubby") == "a bday outfit for my hubby"


def test_a_count_before_a_wish_stays_in_its_chip():
    from shopcopilot.state.requirements import fragment_label

    assert fragment_label("6 pack", set()) == "6 pack"
    assert fragment_label("12-pack black", {"black"}) == "12 pack"
    assert fragment_label("size 10", set()) == ""  # a number alone is no wish
    assert fragment_label("two piece", set()) == "two piece"


def test_a_count_in_words_before_a_wish_after_the_item_is_searched(lexicon):
    obs = parse_message("I need a dress for my trip, two piece", lexicon, None, True, people=True)
    assert "two piece" in obs.fragments


@pytest.mark.parametrize("said", ["hmm ok stretch it to 55 if needed", "stretch to sixty"])
def test_a_budget_cue_asks_nothing_of_the_product(lexicon, said):
    obs = parse_message(said, lexicon, None, False, frozenset({"jean"}))
    assert obs.budget is not None and obs.budget.max_price in (55, 60)
    assert not [v for v in obs.values if v.value == "stretch"]
    assert [v.value for v in parse_message("stretch jeans", lexicon, None, True).values] == [
        "stretch"
    ]


def test_the_word_after_something_describes_and_names_no_item(make_lexicon):
    lexicon = make_lexicon({("Clothing, Shoes & Jewelry", "Women", "Leg Warmers"): 5})
    said = "make it a hundred if that gets me something warmer"
    obs = parse_message(said, lexicon, None, False, frozenset({"jacket"}))
    assert "warmer" not in obs.category_text


@pytest.mark.parametrize(
    ("said", "turned_down"),
    [
        ("half of these look like wool coats. it has to be waterproof", "wool"),
        ("that's a lot of beige", "beige"),
    ],
)
def test_what_the_shown_products_are_said_to_be_is_turned_down(lexicon, said, turned_down):
    obs = parse_message(said, lexicon, None, False, frozenset({"coat"}))
    assert turned_down in {m.value for m in obs.negated}
    assert turned_down not in {m.value for m in obs.values}


def test_of_a_compound_the_head_names_the_kind(make_lexicon):
    """ "sundress" is a dress: its "sun" had outweighed it (sun hats)."""
    lexicon = make_lexicon(
        {("Clothing, Shoes & Jewelry", "Women", "Accessories", "Hats & Caps", "Sun Hats"): 5},
        {("Clothing, Shoes & Jewelry", "Women", "Clothing", "Dresses"): 50},
    )
    said = lexicon.category_tokens("wristwatch sunhat")
    assert said["sun"] <= said["hat"]
    assert set(lexicon.category_tokens("sundress")) == {"dress"}


def test_a_slip_nearer_a_common_word_than_a_catalog_word_is_that_word(lexicon):
    """ "slipery" had become "slippers" (an item) rather than "slippery"."""
    assert lexicon.fix_spelling("the rocks are slipery") == "the rocks are slippery"
    assert lexicon.fix_spelling("realy warm") == "really warm"


@pytest.mark.parametrize("said", ["wellies, nothing fancy", "not totally sure what kind"])
def test_modesty_and_doubt_turn_nothing_down(lexicon, said):
    obs = parse_message(said, lexicon, None, True)
    assert not obs.negated_words and not obs.negated


def test_no_then_a_correction_asks_for_what_follows(lexicon):
    obs = parse_message("a gold chain, no actually silver, sorry", lexicon, None, True)
    assert [m.value for m in obs.values if m.facet == "color"] == ["silver"]
    assert not obs.negated


def test_a_verb_and_its_particle_turned_down_are_one_thing(lexicon, play):
    for said in ("leggings that aren't see through", "leggings, not see-through"):
        state, _ = play(lexicon, said)
        assert [r.value for r in state.rejected] == ["see through"], said


def test_a_word_of_a_cue_may_be_a_wish(lexicon, play):
    """ "sensitive" is a cue's word ("sensitive to wool"), and a wish in "for sensitive ears"."""
    state, _ = play(lexicon, "earrings for sensitive ears")
    assert any("sensitive" in r.label for r in requirements(state) if r.facet == "feature")


def test_a_number_worn_is_a_size(lexicon, play):
    for said, size in (
        ("she wears an 8", "8"),
        ("he wears a 10.5", "10.5"),
        ("I wear an 11", "11"),
    ):
        state, _ = play(lexicon, "running shoes", said)
        assert [c.value for c in state.active("size")] == [size], said


def test_a_texted_for_is_for():
    from shopcopilot.state.parse import _untexted

    assert _untexted("need black heels 4 a wedding") == "need black heels for a wedding"
    assert _untexted("a gift 4 my bf") == "a gift for my bf"
    for kept in ("size 4 a dress", "a 4 pack of socks", "under 4 a pair"):
        assert _untexted(kept) == kept


def test_a_later_long_clause_that_asks_for_something_is_a_wish(lexicon):
    message = "my feet hurt in my running shoes, need something really cushioned for all day"
    obs = parse_message(message, lexicon, None, True, people=True)
    assert any("cushioned" in f for f in obs.fragments)


def test_what_follows_a_gift_request_is_read(lexicon):
    obs = parse_message(
        "a gift for my boyfriend, he loves gaming", lexicon, None, True, people=True
    )
    assert any("gaming" in f for f in obs.fragments)


def test_a_wish_said_as_what_i_want_after_the_item_is_read(lexicon):
    message = "running shoes for a race, I want to be fast"
    obs = parse_message(message, lexicon, None, True, people=True)
    assert any("fast" in f for f in obs.fragments)


@pytest.mark.parametrize("said", ["any price", "money is no object", "budget isn't an issue"])
def test_indifference_to_the_price_takes_the_budget_off(lexicon, play, said):
    state, _ = play(lexicon, "running shoes under 40", said)
    assert not state.active("budget")
    assert not state.rejected  # "no object" is no refusal of objects
