"""The shared vocabulary: lookups, mention finding, measures, and a malformed file."""

from __future__ import annotations

import json
import random
import re
import sys
from pathlib import Path

import pytest

from shopcopilot.bench.official import ALLOWED_ATTRIBUTES
from shopcopilot.catalog import vocabulary as vocabulary_module
from shopcopilot.catalog.vocabulary import (
    FACETS,
    JOIN,
    VOCABULARY_PATH,
    VocabularyError,
    accepted_departments,
    canonical_department,
    canonical_size,
    find_measures,
    find_measures_in_each,
    find_mentions,
    find_mentions_in_each,
    letter_size_range,
    load_vocabulary,
    normalize_phrase,
    vocabulary,
)
from shopcopilot.terms import QUESTION_FOR, Facet


def _found(text: str, attribute: str) -> list[str]:
    return [m.value for m in find_mentions(text) if m.facet == attribute]


@pytest.mark.parametrize(
    ("word", "color"),
    [
        ("navy", "blue"),
        ("Charcoal", "gray"),
        ("grey", "gray"),
        ("burgundy", "red"),
        ("Maroon", "red"),
        ("ivory", "white"),
        ("cream", "beige"),
        ("khaki", "beige"),
        ("camel", "brown"),
        ("olive", "green"),
        ("fuchsia", "pink"),
        ("rose gold", "gold"),
        ("multi-color", "multicolor"),
        ("Navy Blue", "blue"),
    ],
)
def test_color_shades_map_to_base_colors(word: str, color: str) -> None:
    assert vocabulary().canonical(Facet.COLOR, word) == color


def test_unknown_words_have_no_canonical_value() -> None:
    assert vocabulary().canonical(Facet.COLOR, "sandwich") is None
    assert vocabulary().canonical(Facet.MATERIAL, "blue") is None
    assert canonical_department("") is None


@pytest.mark.parametrize(
    ("word", "material"),
    [
        ("Lycra", "spandex"),
        ("elastane", "spandex"),
        ("PU leather", "faux leather"),
        ("vegan leather", "faux leather"),
        ("925 sterling silver", "sterling silver"),
        ("merino wool", "wool"),
        ("polyamide", "nylon"),
        ("aluminium", "aluminum"),
    ],
)
def test_material_synonyms(word: str, material: str) -> None:
    assert vocabulary().canonical(Facet.MATERIAL, word) == material


@pytest.mark.parametrize(
    ("word", "department"),
    [
        ("Womens", "women"),
        ("woman's", "women"),
        ("ladies", "women"),
        ("female", "women"),
        ("Mens", "men"),
        ("gentleman", "men"),
        ("toddler", "baby"),
        ("infant", "baby"),
        ("Baby-girls", "baby"),
        ("unisex-adult", "unisex"),
        ("Unisex-child", "kids"),
        ("girl's", "girls"),
        ("boys", "boys"),
    ],
)
def test_department_synonyms(word: str, department: str) -> None:
    assert canonical_department(word) == department


def test_other_tables_look_up() -> None:
    assert vocabulary().canonical(Facet.CLOSURE, "Velcro") == "hook and loop"
    assert vocabulary().canonical(Facet.CLOSURE, "Lace-Up") == "lace up"
    assert (
        vocabulary().canonical(Facet.CLOSURE, "tie") == "tie"
    )  # a canonical name looks itself up even when not scanned for
    assert vocabulary().canonical(Facet.USE_CASE, "workout") == "gym"
    assert vocabulary().canonical(Facet.USE_CASE, "cold weather") == "winter"
    assert vocabulary().canonical(Facet.STYLE, "V-Neck") == "v-neck"
    assert canonical_size("xxl") == "2XL"
    assert canonical_size("X-Large") == "XL"
    assert canonical_size("m") == "M"
    assert canonical_size("9.5") == "9.5"
    assert canonical_size("9.3") is None
    assert canonical_size("medium rare") is None


def test_canonical_rejects_unknown_facet() -> None:
    with pytest.raises(KeyError, match="unknown vocabulary facet"):
        vocabulary().canonical("flavour", "vanilla")


def test_every_facet_is_asked_about_under_an_official_attribute() -> None:
    assert set(FACETS) <= set(QUESTION_FOR)
    assert set(QUESTION_FOR.values()) <= ALLOWED_ATTRIBUTES


def test_mentions_prefer_longest_phrase_and_report_spans() -> None:
    text = "Women's navy blue wide leg pants in faux leather, pull-on"
    mentions = find_mentions(text)
    pairs = [(m.facet, m.value) for m in mentions]
    assert pairs == [
        ("department", "women"),
        ("color", "blue"),
        ("style", "wide leg"),
        ("material", "faux leather"),
        ("closure", "pull on"),
    ]
    for mention in mentions:
        assert text[mention.start : mention.end] == mention.text
    assert mentions[1].text == "navy blue"
    assert ("width", "wide") not in pairs  # "wide leg" is a cut, not a shoe width
    assert ("material", "leather") not in pairs


def test_mentions_match_whole_words_only() -> None:
    assert _found("the bluetooth redesign", "color") == []
    assert _found("a tangent", "color") == []
    assert _found("MEN'S shirt", "department") == ["men"]
    assert _found("womenswear", "department") == []


@pytest.mark.parametrize(
    ("text", "spans"),
    [
        ("navy-blue", [(0, 9)]),  # any gap between words, however long, reads as one
        ("navy,  -- blue", [(0, 14)]),
        ("Navy\u00a0Blue", [(0, 9)]),
        ("navy_blue", [(0, 9)]),  # an underscore is a gap too, as in the tokenizer
        ("navyblue navy2 2navy", []),  # only whole words
        ("navyé éblue İnavy", []),  # letters outside ASCII belong to the word
        ("wom'en's wear", [(0, 8)]),  # an apostrophe inside a word is dropped
        ("women''s", [(0, 5)]),  # two apostrophes end the word
        ("'navy' blue", [(1, 11)]),  # an apostrophe at a word's edge is a gap
        (
            "hook&loop, hook &loop, hook& loop",
            [(0, 9), (11, 21), (23, 33)],
        ),  # '&' is a word of its own
        ("navy & blue", [(0, 4), (7, 11)]),  # ... so it breaks a phrase
        ("3/4 sleeve", [(0, 10)]),
    ],
)
def test_phrases_match_whole_words_across_any_gap(text: str, spans: list[tuple[int, int]]) -> None:
    assert sorted({(m.start, m.end) for m in find_mentions(text)}) == spans


def test_overlapping_phrases_take_the_leftmost_then_the_longest() -> None:
    # "navy blue" holds the colour "blue"; "blue jeans" would start inside it and is not read.
    assert [(m.text, m.value) for m in find_mentions("navy blue jeans", ("color",))] == [
        ("navy blue", "blue")
    ]
    assert [m.text for m in find_mentions("wide leg, wide")] == ["wide leg", "wide"]
    assert [m.text for m in find_mentions("sterling silver 925 sterling silver")] == [
        "sterling silver",
        "sterling silver",
        "925 sterling silver",
        "925 sterling silver",
    ]


_TOKEN_PATTERN = re.compile(r"[^\W_]+(?:'[^\W_]+)*|[&/]")


def _word_by_word_spans(text: str) -> list[tuple[int, int]]:
    """The phrase spans a plain scan finds: the text's words, then the longest phrase at each
    word."""
    folded = vocabulary_module._fold(text)
    words = [
        (m.start(), m.end(), m.group().replace("'", "")) for m in _TOKEN_PATTERN.finditer(folded)
    ]
    phrases = {
        normalize_phrase(t)
        for table in vocabulary().tables.values()
        for terms in table.values()
        for t in terms
    }
    longest = max(len(phrase.split(" ")) for phrase in phrases)
    spans, first = [], 0
    while first < len(words):
        for count in range(min(longest, len(words) - first), 0, -1):
            if " ".join(word for _, _, word in words[first : first + count]) in phrases:
                spans.append((words[first][0], words[first + count - 1][1]))
                first += count
                break
        else:
            first += 1
    return spans


def test_the_phrase_automaton_finds_what_a_word_by_word_scan_finds() -> None:
    rng = random.Random(5)
    terms = sorted(
        {t for table in vocabulary().tables.values() for terms in table.values() for t in terms}
    )
    gaps = [
        " ",
        "  ",
        ", ",
        "-",
        " & ",
        "&",
        "/",
        " / ",
        "'",
        "’",
        "''",
        "_",
        "\u00a0",
        JOIN,
        ".",
        " (",
        ") ",
    ]
    others = ["é", "İ", "ß", "x", "2", "tired", "ſ", "\u212a", "Σ", "pocket's"]
    for _ in range(3000):
        pieces = [
            rng.choice(terms) if rng.random() < 0.7 else rng.choice(others)
            for _ in range(rng.randint(1, 8))
        ]
        text = "".join(piece + rng.choice(gaps) for piece in pieces)
        folded = vocabulary_module._fold(text)
        found = vocabulary_module._phrases(
            vocabulary_module._canonical(folded, joined=False), vocabulary().phrases
        )
        assert [(start, end) for start, end, _ in found] == _word_by_word_spans(text), text


def test_phrase_in_two_tables_yields_both() -> None:
    text = "925 sterling silver chain"
    found = {(m.facet, m.value) for m in find_mentions(text)}
    assert {("material", "sterling silver"), ("color", "silver")} <= found


def test_mentions_can_be_restricted() -> None:
    mentions = find_mentions("black cotton hoodie for hiking", ("material", "use_case"))
    assert [(m.facet, m.value) for m in mentions] == [
        ("material", "cotton"),
        ("use_case", "hiking"),
    ]


def test_sizes_need_context() -> None:
    assert _found("size 9 wide", "size") == ["9"]
    assert _found("size 9 wide", "width") == ["wide"]
    assert _found("Size: M", "size") == ["M"]
    assert _found("size x-large please", "size") == ["XL"]
    assert _found("32W x 30L", "size") == ["32x30"]
    assert _found("a large pocket", "size") == ["L"]  # the shopper's words; derive() is stricter
    assert _found("I am a size", "size") == []
    # A size at the end of a sentence is a size; a longer decimal is not one cut short.
    assert _found("size 11. just comfy", "size") == ["11"]
    assert _found("I'm a size M.", "size") == ["M"]
    assert _found("size 9.25 shoes", "size") == []


def test_letter_size_range_and_departments() -> None:
    assert letter_size_range("S", "5XL") == ("S", "M", "L", "XL", "2XL", "3XL", "4XL", "5XL")
    assert letter_size_range("XL", "S") == ("S", "M", "L", "XL")
    assert letter_size_range("S", "huge") == ()
    assert accepted_departments("ladies") == {"women", "unisex"}
    assert "girls" in accepted_departments("kids")
    assert "men" not in accepted_departments("women")


@pytest.mark.parametrize(
    ("text", "values", "unit"),
    [
        ("30 mm", (30.0,), "mm"),
        ("30mm", (30.0,), "mm"),
        ("5 inches", (5.0,), "inch"),
        ("2 ft", (2.0,), "ft"),
        ("16 oz", (16.0,), "oz"),
        ("15 x 12 x 0.33 inches", (15.0, 12.0, 0.33), "inch"),
        ('18" chain', (18.0,), "inch"),
        ("1 1/2 inch heel", (1.5,), "inch"),
        ("21x16x5mm", (21.0, 16.0, 5.0), "mm"),
        ("1,200 ml", (1200.0,), "ml"),
        ("3/4 ct", (0.75,), "ct"),
        ("2.4 Pounds", (2.4,), "lb"),
    ],
)
def test_measures_with_units(text: str, values: tuple[float, ...], unit: str) -> None:
    (match,) = find_measures(text)
    assert match.measure.values == values
    assert match.measure.unit == unit
    assert text[match.start : match.end] == match.measure.text


def test_money_and_counts_are_not_measures() -> None:
    assert find_measures("under $30 please") == []
    assert find_measures("2 in 1 design, 6 pack") == []
    assert find_measures("size 9") == []
    assert find_measures("under 30 in blue") == []  # a budget, then a colour
    assert find_measures("$25 mm") == []


def test_bare_in_is_inches_where_the_phrase_ends() -> None:
    assert [m.measure.values for m in find_measures("a 10 in. blade")] == [(10.0,)]
    assert [m.measure.unit for m in find_measures("waist 32 in")] == ["inch"]
    assert [m.measure.unit for m in find_measures("5 to 7 inches")] == ["inch"]


# Texts whose joined scan could go wrong at a text's edge: phrases, sizes and measures that
# end or start there, a text holding the separator itself, empty texts, case-folding oddities.
_EDGE_TEXTS = [
    "Hook",
    "and loop closure",
    "size 9",
    "wide",
    "5 in",
    "blue",
    "",
    "32W x",
    "30L",
    "navy blue",
    f"hook{JOIN}and loop",
    "Women's",
    "’s wide leg",
    "İstanbul navy",
    "ſize 9",
    "1 1/2 in.",
    "12 fl. oz",
    "S-XL",
    '0.8"x0.6"',
    "in)",
    "sizes",
    "10",
    "mm thick",
]


@pytest.mark.parametrize("count", [0, 1, 2, 5, len(_EDGE_TEXTS)])
def test_scanning_texts_together_finds_what_each_alone_finds(count: int) -> None:
    for start in range(len(_EDGE_TEXTS)):
        texts = (_EDGE_TEXTS[start:] + _EDGE_TEXTS[:start])[:count]
        assert find_mentions_in_each(texts) == [find_mentions(text) for text in texts]
        assert find_measures_in_each(texts) == [find_measures(text) for text in texts]


def test_every_character_read_as_the_x_of_waist_by_inseam_gives_the_size() -> None:
    # The size patterns only run on texts holding one of a few characters: none may be missing.
    every = "".join(map(chr, range(sys.maxunicode + 1)))
    for x in set(re.findall("[x×]", every, re.IGNORECASE)):
        for text in (f"32W {x} 30L", f"w32{x}30"):
            assert _found(text, "size") == ["32x30"], text


def test_every_spelling_of_waist_by_inseam_is_one_size() -> None:
    # Each passes the cheap precheck that comes before the pattern.
    for text in ["32W x 30L", "w32x30", "W 32 X L 30", "32wx30l", "٣٢x٣٠", "32 X\tl 30"]:
        assert _found(text, "size") == ["32x30"], text


def test_a_number_read_from_its_first_character_on_is_the_same_number() -> None:
    # The measure pattern reads a number's first character before the rest (see _measure_pattern).
    first_then_rest = re.compile(rf"[\d.]{vocabulary_module._NUMBER_AFTER_FIRST}")
    number = re.compile(vocabulary_module._NUMBER)
    for text in [
        "5",
        "12",
        ".5",
        "0.33",
        "1,200",
        "1,200.5",
        "12,34",
        "3/4",
        "1 1/2",
        "12 3/4x",
        "1.2.3",
        "٣٢",
        "..5",
    ]:
        assert [m.span() for m in first_then_rest.finditer(text)] == [
            m.span() for m in number.finditer(text)
        ], text


def test_normalize_phrase() -> None:
    assert normalize_phrase("  Women’s  PULL-on ") == "womens pull on"
    assert normalize_phrase("3/4 Sleeve") == "3 / 4 sleeve"


def test_shipped_vocabulary_loads_and_is_cached() -> None:
    assert vocabulary() is vocabulary()
    assert "blue" in vocabulary().values("color")
    assert load_vocabulary(VOCABULARY_PATH).tables.keys() == vocabulary().tables.keys()


def _write_vocabulary(tmp_path: Path, change) -> Path:
    raw = json.loads(VOCABULARY_PATH.read_text(encoding="utf-8"))
    change(raw)
    path = tmp_path / "vocabulary.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    return path


def test_conflicting_term_is_rejected_with_its_name(tmp_path: Path) -> None:
    path = _write_vocabulary(tmp_path, lambda raw: raw["colors"]["red"].append("navy"))
    with pytest.raises(VocabularyError, match=r"color term 'navy' means both"):
        load_vocabulary(path)


def test_malformed_tables_are_rejected(tmp_path: Path) -> None:
    path = _write_vocabulary(tmp_path, lambda raw: raw.pop("closures"))
    with pytest.raises(VocabularyError, match="missing table 'closures'"):
        load_vocabulary(path)
    path = _write_vocabulary(tmp_path, lambda raw: raw["materials"].update({"cotton": "cotton"}))
    with pytest.raises(VocabularyError, match="materials.cotton must be a list"):
        load_vocabulary(path)
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(VocabularyError, match="cannot read vocabulary"):
        load_vocabulary(path)
