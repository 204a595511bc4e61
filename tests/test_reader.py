"""The learned reader: one Doc per message, the shipped model's loading and fingerprint, its
training being reproducible, and its data being disjoint from what it is measured on."""

from __future__ import annotations

import json
import logging
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from shopcopilot.reader import model as reader_model
from shopcopilot.reader.doc import Span, make_doc
from shopcopilot.reader.features import bio, spans_of
from shopcopilot.reader.train import TRAIN_DIR, TrainingDataError, examples, train
from shopcopilot.state.spans import talk

ROOT = Path(__file__).resolve().parents[1]


def test_doc_cuts_words_numbers_and_signs_with_their_offsets():
    doc = make_doc("Men’s trail runners, 10.5 wide, under $1,299.99 😍")
    assert [t.text for t in doc.tokens] == [
        "Men’s", "trail", "runners", ",", "10.5", "wide", ",", "under", "$", "1,299.99", "😍",
    ]  # fmt: skip
    assert all(doc.text[t.start : t.end] == t.text for t in doc.tokens)
    assert doc.tokens[2].stem == "runner"


def test_negation_scope_covers_only_what_it_governs():
    doc = make_doc("a blue dress, not a shirt")
    doc.spans += [
        Span(2, 6, "color"),
        Span(7, 12, "item"),
        Span(14, 25, "not"),
        Span(20, 25, "item"),
    ]
    assert [doc.negated(s) for s in doc.spans if s.label != "not"] == [False, False, True]


def test_bio_tags_and_spans_round_trip():
    doc = make_doc("black leather ankle boots size 9")
    tags = bio(doc, [(0, 5, "color"), (14, 25, "item"), (26, 32, "size")])
    assert tags == ["B-color", "O", "B-item", "I-item", "B-size", "I-size"]
    assert [(s, e, label) for s, e, label, _ in spans_of(doc, tags)] == [
        (0, 5, "color"), (14, 25, "item"), (26, 32, "size"),
    ]  # fmt: skip


def test_the_shipped_model_reads_an_item_a_negation_and_a_budget():
    reader = reader_model.shipped()
    assert reader is not None, "the package ships a model"
    doc = reader.read("looking for a blue dress for a wedding, nothing white, under $80")
    items = [s for s in doc.of("item") if not doc.negated(s)]
    assert items and items[0].value == "Dresses"
    assert any(doc.words(s) == "white" and doc.negated(s) for s in doc.of("color"))
    assert [doc.words(s) for s in doc.of("budget")] == ["under $80"]


def test_a_fragment_the_reader_marks_nothing_in_is_talk():
    doc = make_doc("sandals please, so proud of him!! and with a wide strap")
    doc.spans = [Span(0, 7, "item"), Span(43, 53, "feature")]
    assert talk(doc, "so proud of him!!")
    assert not talk(doc, "and with a wide strap")  # the reader marked "wide strap"
    assert not talk(doc, "a phrase not in the message") and not talk(None, "so proud")
    assert talk(doc, "and with a wide strap", read=[(50, 55)])  # its one mark read already


@pytest.mark.parametrize(
    ("message", "chatter", "wish"),
    [
        ("he's a man, these say for women. I need long sleeve ones", "these say for women", ""),
        (
            "so proud of him lol, cleats for my son with a wide toe box",
            "so proud of him lol",
            "with a wide toe box",
        ),
    ],
)
def test_the_shipped_reader_tells_talk_from_a_wish(message, chatter, wish):
    reader = reader_model.shipped()
    assert reader is not None
    doc = reader.read(message)
    women = message.find("women")
    assert talk(doc, chatter, read=[(women, women + 5)] if women >= 0 else [])
    assert not wish or not talk(doc, wish)


def test_a_broken_model_is_refused_with_the_file_named(tmp_path):
    folder = tmp_path / "model"
    shutil.copytree(reader_model.MODEL_DIR, folder)
    (folder / "items.npz").write_bytes(b"not the model")
    with pytest.raises(reader_model.ModelError, match="items.npz"):
        reader_model.load(folder)
    (folder / "items.npz").unlink()
    with pytest.raises(reader_model.ModelError, match="missing items.npz"):
        reader_model.load(folder)


def test_a_missing_model_gives_one_notice_and_the_rules_read(tmp_path, caplog):
    with caplog.at_level(logging.WARNING):
        assert reader_model.shipped(tmp_path / "nowhere") is None
        assert reader_model.shipped(tmp_path / "nowhere") is None
    notices = [r for r in caplog.records if "learned reader is off" in r.getMessage()]
    assert len(notices) == 1


def test_training_is_reproducible_and_bad_data_names_its_line(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    lines = [
        json.loads(line)
        for line in (TRAIN_DIR / sorted(p.name for p in TRAIN_DIR.glob("*.jsonl"))[0])
        .read_text()
        .splitlines()[:60]
    ]
    (data / "a.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    catalog = tmp_path / "catalog.jsonl"
    catalog.write_text(
        "".join(
            json.dumps(
                {
                    "title": f"{word} number {i}",
                    "categories": ["Clothing, Shoes & Jewelry", "Women", leaf],
                }
            )
            + "\n"
            for i, (word, leaf) in enumerate([("dress", "Dresses"), ("boots", "Boots")] * 5)
        )
    )
    first = train(tmp_path / "one", data, seed=3, catalog=catalog, log=lambda *_: None)
    second = train(tmp_path / "two", data, seed=3, catalog=catalog, log=lambda *_: None)
    assert first["files"] == second["files"]
    (data / "b.jsonl").write_text(
        '{"text": "red shoes", "spans": [{"start": 4, "end": 40, "slot": "item"}]}\n'
    )
    with pytest.raises(TrainingDataError, match=r"b.jsonl:1"):
        examples(data)


def test_training_data_is_disjoint_from_every_measured_message():
    run = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "train_disjoint.py")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stdout[-2000:]
    assert " 0 too close" in run.stdout


def test_the_disjointness_check_finds_a_near_copy(tmp_path):
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import train_disjoint
    finally:
        sys.path.pop(0)
    measured = [("test.jsonl:1", "looking for womens black ankle boots under 80")]
    train = [
        ("t.jsonl:1", "Looking for women's black ankle boots, under 80!"),
        ("t.jsonl:2", "lookin for womens black ankle boot under 80"),
        ("t.jsonl:3", "a red dress for a summer wedding"),
    ]
    found = train_disjoint.clashes(train, measured, 5)
    assert [line.split(":")[1] for line in found] == ["1", "2"]


def test_what_the_reader_reads_as_a_feature_is_no_new_item():
    from types import SimpleNamespace

    from shopcopilot.state.spans import apply_spans

    reader = reader_model.shipped()
    assert reader is not None
    doc = reader.read("could you show me ones with pockets?")
    assert [(doc.words(s), s.label) for s in doc.spans] == [("pockets", "feature")]
    # The rules took "pockets" for the item; with an item known, the reader's reading wins.
    later = SimpleNamespace(category_text="pockets", item_node=None, item_p=0.0, negated_words=[])
    apply_spans(doc, later, item_known=True)
    assert later.category_text == ""
    first = SimpleNamespace(category_text="pockets", item_node=None, item_p=0.0, negated_words=[])
    apply_spans(doc, first, item_known=False)  # with no item yet, the words stay the item
    assert first.category_text == "pockets"


def test_an_item_the_rules_read_as_turned_down_is_not_the_item(lexicon):
    from shopcopilot.state.parse import parse_message

    reader = reader_model.shipped()
    said = "a hood is a must, he is never going to carry an umbrella"
    obs = parse_message(said, lexicon, None, False, frozenset({"jacket"}), reader, people=True)
    assert obs.negated_words == ["umbrella"] and "umbrella" not in obs.category_text


def test_a_kind_asked_for_instead_stays_the_item(lexicon):
    from shopcopilot.state.parse import parse_message

    said = "it's hot. make it denim shorts instead"
    reader = reader_model.shipped()
    obs = parse_message(said, lexicon, None, False, frozenset({"jean"}), reader, people=True)
    assert obs.category_text.endswith("shorts")


def test_of_several_items_the_surest_is_the_one_wanted():
    """A story names coins before the request names the wallet: the wallet is the item."""
    from types import SimpleNamespace

    from shopcopilot.reader.doc import Span, make_doc
    from shopcopilot.state.spans import apply_spans

    text = "my old wallet broke, coins all over the floor. i need a men's wallet"
    doc = make_doc(text)
    at = text.index("coins")
    doc.spans = [
        Span(at, at + 5, "item", "Coin Purses & Pouches", 0.04),
        Span(text.rindex("wallet"), len(text), "item", "Wallets", 0.49),
    ]
    obs = SimpleNamespace(
        shown_kinds=[], negated_words=[], category_text="", item_node=None, item_p=None
    )
    apply_spans(doc, obs)
    assert obs.category_text == "wallet" and obs.item_node == "Wallets"


def test_the_held_out_corpus_is_the_held_out_tenth_and_reads_as_a_corpus(tmp_path):
    from shopcopilot.bench.understanding import load_corpus
    from shopcopilot.reader.evaluate import write_held_corpus
    from shopcopilot.reader.train import split_of

    n = write_held_corpus(TRAIN_DIR, tmp_path)
    held = [e for e in examples(TRAIN_DIR) if split_of(e) == "held"]
    cases = load_corpus(tmp_path, "dev")
    assert n == len(cases) > 0
    assert {c.turns[0].user for c in cases} <= {e.text for e in held}


def test_eval_understanding_names_a_broken_reader_folder(tmp_path):
    from click.testing import CliRunner

    from shopcopilot.cli import main

    result = CliRunner().invoke(main, ["eval-understanding", "--reader", str(tmp_path)])
    assert result.exit_code != 0 and "missing meta.json" in result.output


def test_wishes_the_rules_took_into_a_longer_item_name_stay_wishes(make_lexicon):
    """The rules read "ankle boots low heel" as the item; the reader reads ankle boots, and low
    heel is still asked of them (it had vanished from the list of requirements)."""
    from shopcopilot.state.parse import parse_message

    boots = ("Clothing, Shoes & Jewelry", "Women", "Shoes", "Boots", "Ankle Boots")
    lexicon = make_lexicon({boots: 5})
    reader = reader_model.shipped()
    obs = parse_message("womens ankle boots low heel", lexicon, None, True, None, reader, True)
    assert obs.category_text == "ankle boots" and "low heel" in obs.fragments


def test_an_item_asked_for_instead_is_the_item():
    """The reader is surer of the wallet he already has; the keychain is asked for instead."""
    from types import SimpleNamespace

    from shopcopilot.reader.doc import Span, make_doc
    from shopcopilot.state.spans import apply_spans

    text = "he got a wallet for christmas. a keychain instead, not instead of a belt"
    doc = make_doc(text)
    at = text.index
    doc.spans = [
        Span(at("wallet"), at("wallet") + 6, "item", "Wallets", 0.9, "model"),
        Span(at("keychain"), at("keychain") + 8, "item", "Keychains", 0.4, "model"),
    ]
    obs = SimpleNamespace(category_text="", item_node=None, item_p=0.0, negated_words=[])
    obs.shown_kinds = []
    apply_spans(doc, obs)
    assert obs.category_text == "keychain"


def test_an_unsure_item_elsewhere_gives_way_to_the_rules_item():
    from types import SimpleNamespace

    from shopcopilot.reader.doc import Span, make_doc
    from shopcopilot.state.spans import apply_spans

    text = "she had a little girl! I want to send a cute dress"
    doc = make_doc(text)
    at = text.index("girl")
    doc.spans = [Span(at, at + 4, "item", "Girls", 0.03, "model")]

    def read(rules: str) -> str:
        obs = SimpleNamespace(category_text=rules, item_node=None, item_p=0.0, negated_words=[])
        obs.shown_kinds = []
        apply_spans(doc, obs)
        return obs.category_text

    assert read("cute dress") == "cute dress"
    assert read("") == "girl"  # with nothing else read, the reader's item stands


def test_an_unsure_item_stands_against_rules_words_that_name_no_kind():
    from types import SimpleNamespace

    from shopcopilot.reader.doc import Span, make_doc
    from shopcopilot.state.spans import apply_spans

    text = "he made the all-star team and his old cleats are falling apart"
    doc = make_doc(text)
    at = text.index("cleats")
    doc.spans = [Span(at, at + 6, "item", "Baseball & Softball", 0.04, "model")]
    kinds = {"dress", "shoes", "piece"}.__contains__

    def read(rules: str) -> str:
        obs = SimpleNamespace(category_text=rules, item_node=None, item_p=0.0, negated_words=[])
        obs.shown_kinds = []
        apply_spans(doc, obs, names_a_kind=kinds)
        return obs.category_text

    assert read("team") == "cleats"
    assert read("shoes") == "shoes"
    assert read("piece of gear") == "cleats"  # a piece of something names no kind


def _wishes_held(lexicon, *messages: str) -> list[str]:
    """The chips of free wishes after a person's messages, with the shipped reader."""
    from shopcopilot.state.model import ShoppingState
    from shopcopilot.state.requirements import requirements
    from shopcopilot.state.update import update

    state, reader = ShoppingState(), reader_model.shipped()
    for turn, message in enumerate(messages, 1):
        state, _ = update(state, message, lexicon, turn, reader=reader, people=True)
        state.questions.append((turn, "material"))  # the question asked after each turn
    return [r.label for r in requirements(state) if r.facet == "feature"]


def test_a_wish_said_to_be_non_negotiable_is_held(lexicon):
    """After a question about the material the reader marks nothing in "a hood is
    non-negotiable"; its reading of the words alone marks the hood, so it is a wish, not talk."""
    assert _wishes_held(lexicon, "a rain jacket for my son", "a hood is non-negotiable") == ["hood"]
    assert _wishes_held(lexicon, "a rain jacket for my son", "so proud of him!!") == []


def test_each_clause_of_a_wish_is_a_wish_and_a_story_after_it_is_talk(lexicon):
    said = "and it needs a shoe compartment, I refuse to put sneakers next to my clothes"
    assert _wishes_held(lexicon, "a weekender duffel bag", said) == ["shoe compartment"]
    said = "mid calf, and they need to be comfy enough to line dance in"
    assert _wishes_held(lexicon, "western boots for my girlfriend", said)[0] == "mid calf"


def test_a_wish_beside_the_budget_is_read_past_the_budgets_clause(lexicon):
    said = "ideally with a hood, and I'd rather not spend more than 50 on something he'll outgrow"
    assert _wishes_held(lexicon, "a rain jacket for my son", said) == ["hood"]


def test_a_catalog_word_no_dictionary_has_stays_in_the_chip(lexicon):
    """ "rfid" is no typo: the catalog uses it."""
    from shopcopilot.state.requirements import fragment_label

    assert fragment_label("rfid blocking", set()) == "blocking"
    assert fragment_label("rfid blocking", set(), frozenset({"rfid"})) == "rfid blocking"
