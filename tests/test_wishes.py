"""Wishes said around the item and beside indifference are kept; what a person did not say is
not assumed: a child's product comes after a grown-up's unless someone is a child, a question
naming the kind on show asks for no other kind, and a department turned down turns down the
products titled as its."""

from __future__ import annotations

import pytest

from shopcopilot.agent import Agent
from shopcopilot.index.text import ROOT_CATEGORY as TOP
from shopcopilot.rank.hard import _held_values
from shopcopilot.retrieve.candidates import build_query
from shopcopilot.state.parse import (
    Observation,
    _right_before_the_item,
    _with_alternative,
    parse_message,
)
from shopcopilot.state.update import _left_over

SANDALS = {"Women": [TOP, "Women", "Shoes", "Sandals"], "Boys": [TOP, "Boys", "Shoes", "Sandals"]}
SLEEP = [TOP, "Men", "Clothing", "Sleep & Lounge", "Sleep Tops"]
ROBES = [TOP, "Men", "Clothing", "Sleep & Lounge", "Robes"]
HATS = [TOP, "Women", "Accessories", "Hats & Caps", "Sun Hats"]
SCRUBS = [TOP, "Men", "Clothing", "Uniforms", "Scrub Jackets"]
PUFFERS = [TOP, "Men", "Clothing", "Jackets & Coats", "Down Jackets"]
PUMPS = [TOP, "Women", "Shoes", "Pumps"]
JEANS = [TOP, "Men", "Clothing", "Jeans"]
GLOVES = [TOP, "Women", "Accessories", "Gloves & Mittens", "Cold Weather Gloves"]


# prefix, title ("{}": each name), first price, price step, path, department, names, and
# whether the names are the colours. The boys' sandals match "sandals" best: only the
# department can put them last.
GROUPS = [
    ("BS", "Boys Sandals Sandals Beach Sandals", 20.0, 1, SANDALS["Boys"], "Boys", [""] * 3, False),
    ("WS", "Strappy Sandals for Summer", 25.0, 1, SANDALS["Women"], "Womens", [""] * 6, False),
    ("BK", "Boys Sandals {}", 20.0, 1, SANDALS["Boys"], "Boys", ["Black"] * 2, True),
    ("ST", "Men's Long Sleeve Sleep Top {}", 20.0, 1, SLEEP, "Mens",
     ["for Women", "for Women", "Classic", "Soft", "Flannel"], False),
    ("RB", "Men's Plush Bathrobe {}", 30.0, 1, ROBES, "Mens", ["Grey", "Navy", "Black"], False),
    ("SH", "Women's Straw Sun Hat {}", 10.0, 5, HATS, "Womens",
     ["Solid Wide Brim", "Packable", "Floral Print", "Solid Bucket"], False),
    ("SC", "Men's Scrub Jacket {}", 30.0, 1, SCRUBS, "Mens", ["Black"] * 2, True),
    ("PF", "Men's Quilted Puffer Jacket {}", 50.0, 1, PUFFERS, "Mens",
     ["Navy", "Olive", "Grey", "Tan"], True),
    ("PU", "Women's Classic Pointed Toe Pumps {}", 40.0, 1, PUMPS, "Womens",
     ["Red", "Black", "Nude"], True),
    ("RJ", "Red Jeans Red Denim", 30.0, 1, JEANS, "Mens", ["Red"] * 6, True),
]  # fmt: skip


def _catalog(record) -> list[dict]:
    out = []
    for prefix, title, price, step, path, department, names, colours in GROUPS:
        for n, name in enumerate(names):
            details = {"Department": department, **({"Color": name} if colours else {})}
            out.append(
                record(f"{prefix}{n}", title.format(name).strip(), price=price + step * n,
                       categories=path, details=details)
            )  # fmt: skip
    return out


@pytest.fixture(scope="module")
def person(person_on, catalog_record) -> Agent:
    return person_on(_catalog(catalog_record))


def _said(agent: Agent, *messages: str) -> dict:
    agent.reset("w")
    return [agent.respond_traced("w", m, detailed=False) for m in messages][-1].response


def _titles(agent: Agent, response: dict) -> list[str]:
    return [agent.index.store.get(r["parent_asin"]).title for r in response["recommendations"]]


def test_a_childs_product_comes_after_a_grown_ups_when_nobody_is_a_child(person, say):
    ids = [r["parent_asin"] for r in say(person, "sandals")["recommendations"]]
    assert ids[:4] and all(i.startswith("WS") for i in ids[:4]), ids
    ids = [r["parent_asin"] for r in say(person, "sandals for my son")["recommendations"]]
    assert ids[0].startswith("BS"), ids


def test_a_childs_product_comes_after_a_grown_ups_whatever_else_it_meets(person, say):
    """Only the boys' sandals are black: a grown-up's sandal still comes first."""
    ids = [r["parent_asin"] for r in say(person, "black sandals")["recommendations"]]
    assert ids[:4] and all(i.startswith("WS") for i in ids[:4]), ids
    assert any(i.startswith("BK") for i in ids), ids


def test_a_question_naming_the_kind_on_show_keeps_the_list(person, say):
    person.reset("q", {})
    shown = person.respond("q", "a sun hat", 1)
    asked = person.respond("q", "which hat is the cheapest?", 2)
    assert [r["parent_asin"] for r in asked["recommendations"]] == [
        r["parent_asin"] for r in shown["recommendations"]
    ]
    assert "cheapest" in asked["message"]
    person.reset("q", {})
    person.respond("q", "a sun hat", 1)
    asked = person.respond_traced("q", "which hat is the cheapest?", detailed=False).response
    held = [r["label"] for r in asked["requirements"]]
    assert "sun hat" in held and "hat" not in held, held


def test_a_department_turned_down_turns_down_products_titled_as_its(person, say):
    response = say(
        person, "long sleeve sleep top for my husband", "these say for women, he's a man"
    )
    titles = _titles(person, response)
    assert titles and not any("for Women" in t for t in titles), titles


def test_an_item_the_category_names_miss_is_read_by_the_categoriser(person, say):
    """No category says "bathrobe"; the catalog's categoriser files it under Robes."""
    response = _said(person, "a bathrobe for my husband, under 50", "the navy one please")
    labels = [r["label"] for r in response["requirements"]]
    assert "bathrobe" in labels, labels


@pytest.mark.parametrize(
    "message,wish",
    [
        ("women's winter gloves, touchscreen", "touchscreen"),  # a clause after the item
        ("fishnet stockings for a costume", "fishnet"),  # a word right before it
        ("whatever color, as long as it has upf", "upf"),  # beside indifference
        ("any colour is fine, it just has to be packable so I can pack it", "packable"),
    ],
)
def test_wishes_around_the_item_are_kept(make_lexicon, message, wish):
    lexicon = make_lexicon({tuple(GLOVES): 9, (TOP, "Women", "Clothing", "Stockings"): 9})
    obs = parse_message(message, lexicon, last_question=None, first_turn=True, people=True)
    assert [f for f in obs.fragments if wish in f.lower().split()], obs.fragments
    assert not [f for f in obs.fragments if {"long", "so", "just"} & set(f.lower().split())]


def test_talk_before_the_item_is_no_wish(make_lexicon):
    lexicon = make_lexicon({(TOP, "Men", "Accessories", "Neckties"): 9})
    said = "gift for my brother, he just started his first office job and owns zero ties lol"
    obs = parse_message(said, lexicon, last_question=None, first_turn=True, people=True)
    assert not obs.fragments, obs.fragments


def test_words_nothing_read_are_searched_for_when_no_item_is_named(make_lexicon):
    lexicon = make_lexicon(catalog_words=["witch"])
    obs = parse_message("she decided she wants to be a witch", lexicon, None, first_turn=True)
    obs.fragments, obs.category_text = [], ""  # as when the words named no item after all
    assert _left_over(obs, lexicon) == ["witch"]  # not "decided" or "wants": not the catalog's


def test_a_negator_before_a_comma_turns_down_only_its_clause(person, say):
    response = _said(person, "sun hat", "no prints, solid only")
    rejected = [r["label"] for r in response["requirements"] if r["label"].startswith("not ")]
    assert rejected and "not solid" not in rejected, rejected


def test_shown_products_called_a_thing_their_titles_say_turn_it_down(person):
    said = _said(person, "sun hat", "these are all packable, I want a proper one")
    assert "not packable" in [r["label"] for r in said["requirements"]]
    said = _said(person, "sun hat", "these are all cute but I need a wide brim")
    assert not [r for r in said["requirements"] if r["label"].startswith("not ")]


def test_more_like_one_puts_its_kind_first(person):
    shown = _said(person, "jacket for men")
    ids = [r["parent_asin"] for r in shown["recommendations"]]
    other = next(i for i, asin in enumerate(ids, 1) if asin[:2] != ids[0][:2])
    liked = person.respond_traced("w", f"more like #{other}", detailed=False).response
    now = [r["parent_asin"] for r in liked["recommendations"]]
    assert all(asin[:2] == ids[other - 1][:2] for asin in now[:2]), (ids, now)


def test_the_item_is_searched_in_the_forms_titles_use(make_lexicon, play):
    """The index keeps words as written: "heels" are filed as Pumps, which "pump" never meets."""
    lexicon = make_lexicon({tuple(PUMPS): 9})
    state, _ = play(lexicon, "red heels")
    said = {w for c in build_query(state, item_forms=True).clauses for w in c.words}
    assert "pumps" in said and "pumps" not in {
        w for c in build_query(state).clauses for w in c.words
    }


def test_an_item_said_with_another_kind_keeps_both(make_lexicon):
    lexicon = make_lexicon({(TOP, "Women", "Accessories", "Wraps & Pashminas"): 9})
    said = "a wrap or pashmina for an evening wedding"
    assert _with_alternative("wrap", said, lexicon) == "wrap or pashmina"
    assert _with_alternative("wrap", "a wrap or something", lexicon) == "wrap"


def test_a_toddlers_things_may_be_filed_under_baby(lexicon, play):
    """ "Toddler Girls' Dress" is filed under Baby as often as under Girls: either will do."""
    state, _ = play(lexicon, "a dress for my 2 year old daughter")
    held = [c for c in state.active() if c.data.get("facet") == "department"]
    assert [(c.value, c.data.get("also"), c.data.get("gender")) for c in held] == [
        ("girls", "baby", "female")
    ]
    assert _held_values(held[0]) == ("girls", "baby")
    state, _ = play(lexicon, "a dress for my 8 year old daughter")
    assert not [c for c in state.active() if c.data.get("also")]


def test_a_babys_gender_said_in_the_departments_name_is_held(lexicon, play):
    """ "a baby boy": the baby department with the boys' things, not the girls'."""
    state, _ = play(lexicon, "footie pajamas for a baby boy, 6 months")
    held = [c for c in state.active() if c.data.get("facet") == "department"]
    assert [(c.value, c.data.get("gender")) for c in held] == [("baby", "male")]


def test_a_toddlers_age_in_months_shows_the_babys_department_first(lexicon, play):
    """Baby sizes go up to 24 months: an 18 month old daughter's things, baby's first."""
    state, _ = play(lexicon, "a dress for my daughter, the flower girl. she's 18 months")
    held = [c for c in state.active() if c.data.get("facet") == "department"]
    assert [(c.data.get("also"), c.data.get("first")) for c in held] == [("baby", "baby")]


def test_the_wish_right_before_the_item_as_finally_read(make_lexicon):
    """The reader may read a shorter item than the rules ("ring" of "statement ring")."""
    lexicon = make_lexicon({(TOP, "Women", "Jewelry", "Rings"): 9})
    obs = Observation(text="a statement ring", category_text="ring")
    assert _right_before_the_item(obs.text, obs, lexicon) == ["statement"]
    obs.fragments = ["statement"]
    assert _right_before_the_item(obs.text, obs, lexicon) == []
    obs = Observation(text="my son needs a proper rain jacket", category_text="rain jacket")
    assert _right_before_the_item(obs.text, obs, lexicon) == []


def test_a_value_the_first_cards_do_not_name_is_said_to_be_unconfirmed(person, say):
    """Only the boys' sandals name black, and they come last: the reply says which cards do."""
    response = say(person, "sandals", "black")
    ids = [r["parent_asin"] for r in response["recommendations"]]
    places = [f"#{n}" for n, i in enumerate(ids, 1) if i.startswith("BK")]
    assert ids[0].startswith("WS") and places, ids
    assert places[0] in response["message"] and "black" in response["message"], response["message"]
    response = say(person, "a bathrobe for my husband", "black")
    assert "don't state" not in response["message"], response["message"]  # #1 is black


def test_a_story_told_is_searched_but_listed_as_no_requirement(make_lexicon, play):
    lexicon = make_lexicon(catalog_words=["slip", "tummy", "control"])
    state, _ = play(lexicon, "shoes", "non slip, the floor gets wet by the sink")
    told = [f for f in state.active_fragments() if "sink" in f.text]
    assert told and all(f.covered for f in told)  # searched, never a chip
    state, _ = play(lexicon, "a swimsuit", "with tummy control")
    assert [f for f in state.active_fragments() if "tummy" in f.text and not f.covered]
