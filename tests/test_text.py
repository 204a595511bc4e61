"""Word analysis shared by messages and product text: both must cut words the same way."""

from shopcopilot.index.text import path_stems, stem, tokens


def test_accents_fold_in_messages() -> None:
    assert tokens("Café crème, Straße") == ["cafe", "creme", "strasse"]


def test_ascii_text_is_cut_on_anything_but_letters_and_digits() -> None:
    assert tokens("Women's size-9 SHOES!") == ["women", "s", "size", "9", "shoes"]


def test_curly_apostrophes_and_emoji_cut_like_plain_ones() -> None:
    assert tokens("women’s shoes 😀") == tokens("women's shoes")


def test_plurals_fold_to_one_stem() -> None:
    assert stem("scarves") == stem("scarf")
    assert stem("hoodies") == stem("hoodie")


def test_category_path_stems_skip_the_catalog_root() -> None:
    stems = path_stems(["Clothing, Shoes & Jewelry", "Women", "Scarves & Wraps"])
    assert stem("scarf") in stems and "clothing" not in stems
