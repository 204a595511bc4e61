"""The conversation cue file (state/data/conversation.json): every cue loads and matches what it
says, a malformed file is refused with the entry named, and new wordings read as their role."""

from __future__ import annotations

import ast
import itertools
import re
from pathlib import Path

import pytest

from shopcopilot.index.text import ROOT_CATEGORY as TOP
from shopcopilot.state import cues
from shopcopilot.state.cues import CONVERSATION, CueDataError, load_cues, template_pattern
from shopcopilot.state.parse import parse_message
from shopcopilot.state.requirements import requirements

STATE = Path(cues.__file__).parent


def _examples(template: str) -> list[str]:
    """Phrases a template stands for: every choice of each slot (capped), optional slots left in
    and out, '*' as a word."""
    options = []
    for slot in template.split():
        optional = slot.startswith("[")
        body = slot.strip("[]")
        if body in ("{item}", "{any}"):
            choices = ["red boots"]
        elif body == "*":
            choices = ["comfy"]
        else:
            choices = [c.replace("_", " ") for c in body.split("|")]
        options.append([*choices, ""] if optional else choices)
    phrases = (" ".join(w for w in combo if w) for combo in itertools.product(*options))
    return [p.replace(" 's", "'s") for p in itertools.islice(phrases, 200)]


ROLES = [(role, t) for role, templates in CONVERSATION.phrases.items() for t in templates]
FRAMES = [(role, t) for role, templates in CONVERSATION.frames.items() for t in templates]


@pytest.mark.parametrize("role,template", ROLES + FRAMES)
def test_every_cue_matches_each_wording_it_lists(role, template):
    pattern = re.compile(template_pattern(template), re.I)
    for example in _examples(template):
        assert pattern.fullmatch(example), (role, template, example)
        if role in CONVERSATION.phrases:  # and the role's pattern finds it inside a sentence
            found = re.search(CONVERSATION.pattern(role), f"so, {example}. ok", re.I)
            assert found, (role, example)


@pytest.mark.parametrize(
    "template,said,matches",
    [
        ("don't [really] care", "dont really care", True),
        ("don't [really] care", "don’t care", True),
        ("don't [really] care", "I don't carefully", False),  # not inside a longer word
        ("not sure", "knot sure", False),
        ("all|any [*] is|are fine", "any colour is fine", True),
        ("all|any [*] is|are fine", "all sizes are fine", True),
        ("do_not know", "do  not know", True),
        ("is|are|'s [a] no-go", "nylon's a no-go", True),
        ("wait,", "wait, no", True),
        ("wait,", "wait for it", False),
    ],
)
def test_templates_match_words_not_letters(template, said, matches):
    assert bool(re.search(template_pattern(template), said, re.I)) is matches


@pytest.mark.parametrize(
    "change,named",
    [
        (lambda raw: raw.pop("not_sure"), "not_sure"),
        (lambda raw: raw.update(not_sure="not sure"), "not_sure"),
        (lambda raw: raw["not_sure"].append("Not Sure"), "'Not Sure'"),
        (lambda raw: raw["not_sure"].append("no (idea)"), "'no (idea)'"),
        (lambda raw: raw["not_sure"].append("[maybe]"), "every slot is optional"),
        (lambda raw: raw["not_sure"].append("it is {item}"), "only frames take"),
        (lambda raw: raw["item_frames"].append("it is boots"), "a frame needs"),
        (lambda raw: raw.update(not_sur=["x"]), "unknown entries not_sur"),
        (lambda raw: raw["attribute_names"]["size"].append("colour"), "'colour' names two"),
    ],
)
def test_a_malformed_cue_file_is_refused_naming_the_entry(tmp_path, altered, change, named):
    path = altered(cues.DATA_FILE, tmp_path, change)
    with pytest.raises(CueDataError, match=re.escape(named)) as error:
        load_cues(path)
    assert str(path) in str(error.value)


def test_an_unreadable_cue_file_names_the_file(tmp_path):
    path = tmp_path / "conversation.json"
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(CueDataError, match="cannot read the conversation cues"):
        load_cues(path)


def test_cue_words_are_never_taken_for_typos(lexicon):
    assert {"dunno", "misspoke", "nevermind"} <= CONVERSATION.vocabulary()
    assert lexicon.fix_spelling("dunno, misspoke") == "dunno, misspoke"


@pytest.mark.parametrize(
    "message,expected",
    [
        ("honestly i dont really mind", ["color"]),
        ("any colour is fine", ["color"]),
        ("not fussy about the brand", ["brand"]),
        ("your call on the material", ["material"]),
        ("any brand", ["brand"]),
        ("whichever colour", ["color"]),
    ],
)
def test_no_preference_in_other_words(lexicon, message, expected):
    obs = parse_message(message, lexicon, last_question="color", first_turn=False)
    assert obs.no_preference == expected


def test_a_value_wanted_beside_indifference_is_no_indifference(lexicon):
    obs = parse_message(
        "any colour is fine but preferably black", lexicon, last_question="color", first_turn=False
    )
    assert obs.no_preference == [] and "black" in {m.value for m in obs.values}
    obs = parse_message(
        "any colour except yellow", lexicon, last_question="color", first_turn=False
    )
    assert obs.no_preference == ["color"] and "yellow" in {m.value for m in obs.negated}


@pytest.mark.parametrize(
    "message,item",
    [
        ("hmm ok so I'd like a dress", "dress"),
        ("yeah it's running shoes I'm after", "running shoes"),
        ("necklaces are what we need", "necklaces"),
        ("can you show me some dresses", "dresses"),
        ("on second thoughts, I need a jacket", "jacket"),
    ],
)
def test_the_item_after_a_request_in_other_words(lexicon, message, item):
    obs = parse_message(message, lexicon, last_question=None, first_turn=True)
    assert obs.category_text.lower() == item


@pytest.mark.parametrize(
    "message,override",
    [
        ("on second thoughts make it black", True),
        ("my mistake, I meant red", True),
        ("black please", False),
        ("I'd wait for a sale", False),
    ],
)
def test_a_change_of_mind_in_other_words(lexicon, message, override):
    obs = parse_message(message, lexicon, last_question="color", first_turn=False)
    assert obs.override is override


def _regex_text(path: Path) -> int:
    """Characters of pattern text in a module: string literals passed to `re` and any literal
    with regex syntax in it (docstrings aside)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.FunctionDef | ast.ClassDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
    }
    in_re = {
        id(constant)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and getattr(node.func.value, "id", "") == "re"
        for argument in node.args[:1]
        for constant in ast.walk(argument)
    }
    syntax = re.compile(r"\\[swdbSWDB]|\(\?|\[\^|\{\d*,\d*\}")
    return sum(
        len(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
        and (id(node) in in_re or syntax.search(node.value))
    )


def test_state_keeps_only_the_clause_structure_in_code():
    """The wordings live in data files; what is left in state/*.py is structure. It was about
    6,000 characters before the cue lists moved out."""
    total = sum(_regex_text(path) for path in STATE.glob("*.py"))
    assert total <= 2500, total


@pytest.mark.parametrize(
    "message",
    ["good morning!", "are you a bot? lol 🤖", "hi, are you there?", "thank you so much!!"],
)
def test_small_talk_asks_nothing_of_the_product(lexicon, play, message):
    state, diffs = play(lexicon, message)
    assert not state.fragments and not diffs[0].read


def test_small_talk_before_a_request_leaves_the_request(lexicon, play):
    state, _ = play(lexicon, "good morning! are you a bot? I need a men's jacket")
    assert any(c.attribute == "category" for c in state.active())


def test_each_reading_names_the_words_it_came_from(lexicon, play):
    message = "hi, I need running shoes for my wife, no wool, under forty bucks, dunno the size"
    _, diffs = play(lexicon, message)
    read = {(r["kind"], r["value"]): r for r in diffs[0].read}
    for key, words in [
        (("item", "running shoes"), "running shoes"),
        (("not", "material=wool"), "wool"),
        (("budget", "<= $40"), "under forty bucks"),
        (("who", "recipient=wife"), "my wife"),
        (("not sure", ""), "dunno"),
    ]:
        reading = read[key]
        assert reading["words"] == words
        assert message[reading["start"] : reading["end"]] == words
    assert [r["start"] for r in diffs[0].read] == sorted(r["start"] for r in diffs[0].read)


@pytest.mark.parametrize(
    "retraction",
    [
        "ignore what I said about the budget",
        "forget the price limit",
        "scrap the budget, it's a gift",
        "get rid of the price cap",
        "skip the budget",
        "i can spend more actually",  # no floor of a "pricier" either
        "i could stretch the budget a bit",  # "stretch" is no fabric here
    ],
)
def test_taking_back_what_was_said_about_an_attribute_lifts_it(lexicon, play, retraction):
    state, diffs = play(lexicon, "a dress under $40", retraction)
    assert not state.active("budget")
    assert diffs[1].unconstrained == ["budget"] and not diffs[1].fragments


def test_forgetting_an_item_is_no_indifference_to_the_question(lexicon):
    obs = parse_message("forget the jacket", lexicon, last_question="color", first_turn=False)
    assert obs.no_preference == []


@pytest.mark.parametrize(
    "message,rejected",
    [
        ("office pants that don't look like leggings", "leggings"),
        ("nickel free earrings", "nickel"),
        ("a swimsuit that isn't a bikini pls", "bikini"),
        ("nothing over sixty dollars please", None),
        ("nothing over a tenner please", None),
        ("briefs in cotton, nothing lacy because it itches", "lacy"),
        ("earrings, no chain needed", "chain"),
        ("he hates tying his shoes", None),
        ("summer here is no joke, i need shorts", None),
    ],
)
def test_rejections_in_relative_clauses_and_free_of(lexicon, message, rejected):
    obs = parse_message(message, lexicon, last_question=None, first_turn=True)
    assert obs.negated_words == ([rejected] if rejected else [])


@pytest.mark.parametrize(
    "message,rejected",
    [
        ("a blouse, no puff sleeves either", "puff sleeves"),
        ("a bra, no push-up", "push up"),
        ("a hoodie, no big logos", "logos"),
    ],
)
def test_a_thing_named_by_two_words_is_turned_down_whole(lexicon, message, rejected):
    """Turning down "sleeves" alone would turn down every shirt; "big" is how much, not what."""
    obs = parse_message(message, lexicon, last_question=None, first_turn=True)
    assert obs.negated_words == [rejected]


@pytest.mark.parametrize(
    "lift",
    [
        "forget blue, any colour",
        "it doesn't have to be blue",
        "i dont need it to be blue",  # it had been read as asking for blue again
        "it doesn't need to be blue",
        "it needn't be blue",
        "blue doesn't matter",  # said after the value
        "blue is not a must",
        "the blue isn't that important",  # had turned blue down
        "blue is optional",
        "take off the blue",
        "no need for blue",
    ],
)
def test_taking_back_a_value_asked_for_drops_it_and_turns_nothing_down(lexicon, play, lift):
    state, _ = play(lexicon, "a blue dress", lift)
    assert not state.active("color")
    assert not [r for r in state.rejected if r.value == "blue"]
    assert not [f for f in state.active_fragments() if "blue" in f.text]  # nor a wish in words


def test_shown_products_called_a_kind_turn_that_kind_down_and_keep_the_item(make_lexicon, play):
    luggage = {(TOP, "Luggage", "Suitcases"): 40, (TOP, "Luggage", "Carry-Ons"): 40}
    lexicon = make_lexicon(luggage)
    state, _ = play(lexicon, "suitcases", "these are all carry-ons, I need a big one")
    assert state.active("category")[-1].value == "suitcases"
    assert [r.value for r in state.rejected] == ["carry ons"]
    state, _ = play(lexicon, "suitcases", "these are all great")
    assert not state.rejected


def test_a_value_taken_back_in_the_words_after_it_is_never_wished(lexicon):
    obs = parse_message(
        "a dress, blue doesn't matter", lexicon, last_question=None, first_turn=True
    )
    assert not [m for m in obs.values if m.value == "blue"] and not obs.negated


def test_forgetting_a_value_never_asked_for_turns_it_down(lexicon, play):
    state, _ = play(lexicon, "a dress", "forget blue")
    assert [r.value for r in state.rejected if r.attribute == "color"] == ["blue"]


def test_a_request_lead_in_names_no_value_and_a_pronoun_names_no_item(make_lexicon, play):
    lexicon = make_lexicon(
        {("Clothing, Shoes & Jewelry", "Women", "Shoes", "Boots", "Ankle & Bootie"): 9}
    )
    hunting = parse_message("hunting boots", lexicon, last_question=None, first_turn=True)
    assert [m.value for m in hunting.values if m.facet == "use_case"]  # a use when it describes
    state, _ = play(lexicon, "hey there, I'm hunting for boots", "I'd like it ankle")
    assert [c.value for c in state.active("category")] == ["boots"]
    assert not state.active("use_case")


@pytest.mark.parametrize(
    "message,refused,wanted",
    [
        ("a bikini, any color but white", {"white"}, set()),
        ("leather, any colour except tan or red", {"tan", "red"}, {"leather"}),
        ("any colour but preferably black", set(), {"black"}),
        ("summer in phoenix is no joke, linen shorts", set(), {"linen"}),
        ("a dress for the party, nothing too formal", {"formal"}, set()),
        ("a dress, way too formal", set(), set()),
    ],
)
def test_one_value_taken_out_of_an_open_choice_is_turned_down(lexicon, message, refused, wanted):
    obs = parse_message(message, lexicon, last_question=None, first_turn=True)
    assert {m.text.lower() for m in obs.negated} == refused
    assert {m.text.lower() for m in obs.values} >= wanted


@pytest.mark.parametrize(
    "message,refused",
    [
        ("why is there still a short sleeve one in there? long sleeve only", "short sleeve"),
        ("slip on please, she still can't tie laces", "laces"),
        ("there's way too much lace on these", "lace"),
    ],
)
def test_complaints_and_what_someone_cannot_do_turn_a_value_down(lexicon, message, refused):
    obs = parse_message(message, lexicon, last_question=None, first_turn=False)
    assert refused in {m.text.lower() for m in obs.negated}
    assert refused not in {m.text.lower() for m in obs.values}


def test_a_value_someone_never_wears_is_turned_down(lexicon):
    obs = parse_message("a ring in silver, she never wears gold", lexicon, None, True)
    assert [m.value for m in obs.negated] == ["gold"]


FOOTWEAR = {
    (TOP, "Women", "Shoes", "Pumps"): 30,
    (TOP, "Women", "Shoes", "Platforms & Wedges"): 30,
    (TOP, "Women", "Shoes", "Boots"): 30,
    (TOP, "Women", "Shoes", "Walking"): 30,
    (TOP, "Women", "Shoes", "Sneakers"): 30,
    (TOP, "Luggage", "Backpacks"): 30,
}


@pytest.mark.parametrize(
    ("first", "then", "item"),
    [
        (
            "sneakers for her",
            "oh wait she has sneakers, what she needs is boots for winter",
            "boots",
        ),
        (
            "black pumps",
            "it's on a lawn, thin heels would sink. wedges instead? still black",
            "wedges",
        ),
        (
            "sneakers",
            "I'm going to be walking around all day, a backpack makes more sense",
            "backpack",
        ),
    ],
)
def test_a_new_item_said_in_a_frame_at_the_end_of_a_clause(make_lexicon, play, first, then, item):
    """ "walking" after "be" is what the shopper does, no kind of shoe."""
    state, _ = play(make_lexicon(FOOTWEAR), first, then)
    assert state.active("category")[-1].value == item


def test_a_value_said_instead_is_no_item(make_lexicon, play):
    state, _ = play(make_lexicon(FOOTWEAR), "black pumps", "leather instead")
    assert state.active("category")[-1].value == "pumps"


@pytest.mark.parametrize(
    ("message", "kept", "needed"),
    [
        ("I have not bought a dress in six years, I need one for a party", "dress", False),
        ("I won't survive without a proper dress for the gala", "dress", True),
    ],
)
def test_a_story_or_a_need_after_a_negator_turns_nothing_down(lexicon, message, kept, needed):
    obs = parse_message(message, lexicon, last_question=None, first_turn=True)
    assert kept not in obs.negated_words and not obs.negated
    assert not needed or kept in obs.category_text


@pytest.mark.parametrize(
    ("message", "refused"),
    [
        ("a dress for a party, polyester makes her sweat", "polyester"),
        ("a dress, wool gives me a rash", "wool"),
    ],
)
def test_a_value_said_to_do_harm_is_turned_down(lexicon, message, refused):
    obs = parse_message(message, lexicon, last_question=None, first_turn=True)
    assert [m.value for m in obs.negated] == [refused]


def test_a_run_of_years_is_no_running(lexicon):
    obs = parse_message(
        "I have lost the costume contest three years running, need a dress", lexicon, None, True
    )
    assert not [m for m in obs.values if m.value == "running"]


def test_a_word_after_a_possessive_names_no_brand(make_lexicon):
    lexicon = make_lexicon(brands=["Head", "Nike"])
    obs = parse_message("a cap that fits his giant head", lexicon, None, True)
    assert not [m for m in obs.values if m.facet == "brand"]
    obs = parse_message("a cap from head", lexicon, None, True)
    assert [m.value.lower() for m in obs.values if m.facet == "brand"] == ["head"]


def test_how_it_packs_is_no_size(lexicon):
    obs = parse_message("a dress that packs small for travel", lexicon, None, True)
    assert not [m for m in obs.values if m.facet == "size"]


def test_a_verb_after_be_and_its_particle_name_no_item():
    """ "her prom is coming up" had read Cover-Ups; "I'll be walking" had read Walking shoes."""
    from shopcopilot.state.parse import _without_verbs

    assert _without_verbs("her prom is coming up").split() == ["her", "prom", "is"]
    assert "walking" not in _without_verbs("I'm going to be walking all day")


def test_an_intensifier_after_a_refused_thing_is_no_part_of_it(lexicon):
    obs = parse_message(
        "sandals for work, no heels whatsoever", lexicon, last_question=None, first_turn=True
    )
    assert obs.negated_words in (["heels"], ["heel"])


def test_praise_after_a_wish_is_no_part_of_its_chip(lexicon, play):
    state, _ = play(lexicon, "a dress", "side slits would be amazing")
    labels = [r.label for r in requirements(state) if r.facet == "feature"]
    assert labels and not any("amazing" in label for label in labels)


def test_a_short_wish_after_the_item_is_counted_without_its_praise(lexicon):
    obs = parse_message(
        "a dress, side slits would be great", lexicon, None, first_turn=True, people=True
    )
    assert any("side slits" in fragment for fragment in obs.fragments)


def test_a_store_named_by_a_very_common_word_is_the_word_unless_said_as_a_store(make_lexicon):
    lexicon = make_lexicon(brands=["Start", "Guess"])
    brands = lambda said: [  # noqa: E731
        m.value.lower()
        for m in parse_message(said, lexicon, None, True).values
        if m.facet == "brand"
    ]
    assert brands("where do I even start? maybe a cap") == []
    assert brands("a cap from start") == ["start"]
    assert brands("a cap by Start") == ["start"]
    assert brands("a guess cap") == ["guess"]


def test_these_being_for_someone_turns_nobody_down(lexicon):
    obs = parse_message("these are for my wife actually", lexicon, None, False, shown=10)
    assert not obs.negated


def test_what_someone_does_not_need_is_refused(lexicon, play):
    state, _ = play(lexicon, "a backpack, he doesn't need a laptop sleeve")
    assert any("sleeve" in r.value for r in state.rejected)


def test_a_value_said_not_to_be_needed_and_never_asked_for_is_no_wish(lexicon, play):
    state, _ = play(lexicon, "a backpack", "it doesn't need to be waterproof")
    assert not [r for r in requirements(state) if "waterproof" in r.label]


def test_laces_someone_refuses_to_tie_are_turned_down_and_no_dealbreaker_is_refused(lexicon, play):
    state, _ = play(lexicon, "sneakers", "she refuses to tie laces, so slip on ones")
    assert any("lace" in r.value for r in state.rejected)
    state, _ = play(lexicon, "sneakers", "pink would be nice but not a dealbreaker")
    assert not any("deal" in r.value for r in state.rejected)


@pytest.mark.parametrize(
    "message",
    [
        "a dress for my daughter, she loves unicorns",
        "a dress for my daughter. she's so into unicorns",
        "a dress for my daughter, she wants to be a unicorn",
    ],
)
def test_what_someone_loves_is_what_to_look_for(lexicon, message):
    obs = parse_message(message, lexicon, None, first_turn=True, people=True)
    assert any("unicorn" in fragment for fragment in obs.fragments)


def test_a_free_word_listed_after_a_refused_value_is_refused_too(lexicon):
    said = "a dress, nothing satin or silky please"
    obs = parse_message(said, lexicon, None, first_turn=True, people=True)
    assert "silky" in obs.negated_words


def test_a_slip_between_two_words_goes_to_the_one_a_shopper_asks_for(make_lexicon):
    lexicon = make_lexicon(brands=["Kate Spade"])
    assert lexicon.fix_spelling("suade would be nice") == "suede would be nice"
    assert lexicon.fix_spelling("kate spade") == "kate spade"


def test_a_word_a_slip_from_its_phrase_is_read_as_the_phrase(lexicon):
    fixed = lexicon.fix_spelling("womens jeans high wasted", phrases=True)
    assert fixed == "womens jeans high waisted"
    assert lexicon.fix_spelling("pointed toes please", phrases=True) == "pointed toes please"


def test_a_noun_before_the_item_s_noun_qualifies_it(make_lexicon):
    from shopcopilot.state.parse import _head_phrase

    lexicon = make_lexicon({(TOP, "Men", "Clothing", "Pants"): 30})
    assert _head_phrase("and dress pants to go with it", lexicon) == "dress pants"


def test_a_number_in_words_is_no_wish_of_its_own():
    """ "around forty bucks" is the budget's; "two piece" counts the pieces."""
    from shopcopilot.state.requirements import fragment_label

    assert "forty" not in fragment_label("around forty bucks", set())
    assert fragment_label("two piece", set()) == "two piece"
