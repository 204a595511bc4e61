"""Derived attributes: each extractor on hand-built products, then on real catalog records."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from shopcopilot.catalog import attributes as attributes_module
from shopcopilot.catalog.attributes import Attributes, AttributesError, MaterialShare, derive
from shopcopilot.catalog.product import Product, product_from_record
from shopcopilot.catalog.vocabulary import Measure


def _product(title: str = "Plain Item", **fields) -> Product:
    return Product(parent_asin="TEST000001", title=title, **fields)


def test_category_path_drops_the_top_category() -> None:
    attrs = derive(_product(categories=("Clothing, Shoes & Jewelry", "Women", "Shoes", "Sandals")))
    assert attrs.category_path == ("Women", "Shoes", "Sandals")
    assert attrs.leaf == "Sandals"
    assert derive(_product()).leaf == ""


def test_department_priority_details_then_categories_then_title() -> None:
    categories = ("Clothing, Shoes & Jewelry", "Men", "Shirts")
    with_field = _product(
        "Women's Tee", categories=categories, details={"Department": "Unisex-adult"}
    )
    assert derive(with_field).department == "unisex"
    assert derive(_product("Women's Tee", categories=categories)).department == "men"
    assert derive(_product("Women's Tee")).department == "women"
    assert derive(_product("Tee", details={"Target Audience": "Boys"})).department == "boys"
    assert derive(_product("Tee", details={"Department": "baby-girls"})).department == "baby"
    assert derive(_product("Sling Bag for Men Women")).department == "unisex"
    assert derive(_product("Silver Ring")).department is None


def test_materials_with_percentages_details_and_title() -> None:
    attrs = derive(
        _product(
            "Linen Blend Shirt",
            features=("65% Polyester, 35% Cotton", "Machine Wash"),
            details={"Fabric Type": "87% Latex, 10% Polyamide, 3% Elastane"},
        )
    )
    assert attrs.materials == (
        MaterialShare("polyester", 65.0),
        MaterialShare("cotton", 35.0),
        MaterialShare("latex", 87.0),
        MaterialShare("nylon", 10.0),
        MaterialShare("spandex", 3.0),
        MaterialShare("linen", None),
    )
    assert attrs.material_names[:2] == ("polyester", "cotton")


def test_percentages_that_are_not_materials_are_ignored() -> None:
    attrs = derive(_product("Lens", features=("30% thicker than other lenses", "100% Textile")))
    assert attrs.materials == ()


def test_colors_from_title_details_and_features_in_that_order() -> None:
    attrs = derive(
        _product("Navy Hoodie", features=("Soft charcoal lining",), details={"Color": "Burgundy"})
    )
    assert attrs.colors == ("blue", "red", "gray")


def test_closure_sources() -> None:
    assert derive(_product("Pants", features=("Pull On closure",))).closure == "pull on"
    assert derive(_product("Pants", features=("Pull-On closure",))).closure == "pull on"
    assert (
        derive(_product("Jeans", features=("Zipper fly with button closure",))).closure == "button"
    )
    assert derive(_product("Jeans", features=("Elastic closure",))).closure == "elastic"
    boot = _product("Boot", details={"Closure Type": "Hook and Loop"}, features=("Zipper closure",))
    assert derive(boot).closure == "hook and loop"
    assert derive(_product("Lace-Up Sneaker")).closure == "lace up"
    pocket_talk = "Two zipper pockets keep your phone safe while you walk the dog around the block"
    assert derive(_product("Jacket", features=(pocket_talk,))).closure is None
    bracelet = _product("Bracelet", features=("Secure lobster clasp keeps the chain on",))
    assert derive(bracelet).closure == "lobster clasp"


def test_sizes_ranges_title_end_and_width() -> None:
    ranged = derive(_product("Scrub Pant", features=("Available in sizes from S to 3XL.",)))
    assert ranged.sizes == ("S", "M", "L", "XL", "2XL", "3XL")
    assert derive(_product("Underwear sizes Small-XL")).sizes == ("S", "M", "L", "XL")
    assert derive(_product("Striped Blouse T-Shirt XL")).sizes == ("XL",)
    assert "wide" in derive(_product("Women's Walking Shoe Wide Width")).sizes
    assert "plus" in derive(_product("Women's Plus Size Skirt")).sizes
    assert derive(_product("Boot", details={"Size": "6"})).sizes == ("6",)


def test_size_words_in_prose_are_not_sizes() -> None:
    attrs = derive(
        _product("Small Black Sling Bag", features=("Large main pocket with a wide opening",))
    )
    assert attrs.sizes == ()


def test_prechecks_on_case_folded_text_are_sound() -> None:
    # The size-range and closure patterns are case-insensitive; their cheap prechecks look for
    # letters in case-folded text. Every character the patterns take for one of those letters
    # must fold to it (the dotless i would not, which is why the range cue has no "i").
    letters = set("lemsxtohrugacd") | set("closure")
    assert "i" not in attributes_module._RANGE_CUE.pattern
    every = "".join(map(chr, range(sys.maxunicode + 1)))
    for letter in letters:
        assert {c.casefold() for c in re.findall(letter, every, re.IGNORECASE)} == {letter}, letter


def test_range_cue_never_hides_a_range() -> None:
    for text in [
        "S-XL",
        "Small to X-Large",
        "XS~3XL",
        "m - l",
        "2XL through 5XL",
        "Stoxl",
        "XXS–XXL",
        "ſ-xl",
    ]:
        assert attributes_module._LETTER_RANGE.search(text), text
        assert attributes_module._RANGE_CUE.search(text.casefold()), text


def test_brand_prefers_brand_fields_then_store() -> None:
    branded = _product(
        details={"Brand Name": "Acme", "Manufacturer": "Acme Corp"}, store="Acme Store"
    )
    assert derive(branded).brand == "Acme"
    assert (
        derive(_product(details={"Manufacturer": "Acme Corp"}, store="Acme Store")).brand
        == "Acme Store"
    )
    assert derive(_product(details={"Manufacturer": "Acme Corp"})).brand == "Acme Corp"
    assert derive(_product()).brand is None


def test_measures_land_in_dimensions_not_price() -> None:
    attrs = derive(
        _product(
            "Hoop Earrings 30 mm",
            price=24.5,
            features=("Drop length 5 inches", "Holds 16 oz"),
            details={"Package Dimensions": "9 x 7 x 2 inches", "Item Weight": "2 ft"},
        )
    )
    assert attrs.price == 24.5
    assert Measure((30.0,), "mm", "30 mm") in attrs.dimensions
    units = {(d.values, d.unit) for d in attrs.dimensions}
    assert {((5.0,), "inch"), ((16.0,), "oz"), ((2.0,), "ft")} <= units
    assert ((9.0, 7.0, 2.0), "inch") not in units  # the box, not the product


def test_use_cases_and_styles() -> None:
    attrs = derive(
        _product(
            "Men's Slim Fit Long Sleeve Hiking Shirt",
            features=("Great for camping and travel",),
            categories=("Clothing, Shoes & Jewelry", "Sport Specific Clothing", "Running"),
        )
    )
    assert attrs.use_cases[:3] == ("hiking", "outdoor", "travel")
    assert "running" in attrs.use_cases
    assert attrs.styles[:2] == ("slim fit", "long sleeve")


def test_search_text_holds_canonical_values() -> None:
    attrs = derive(
        _product(
            "Women's Navy Hiking Pants",
            features=("95% Polyester, 5% Spandex", "Pull On closure"),
            details={"Size": "Petite"},
        )
    )
    words = attrs.search_text()
    for expected in ("women", "polyester", "spandex", "blue", "pull on", "hiking", "petite"):
        assert expected in words
    assert "navy" not in words.split()


def test_round_trip_through_json() -> None:
    attrs = derive(
        _product(
            "Women's Navy Hiking Pants 30 mm",
            price=19.99,
            features=("95% Polyester, 5% Spandex", "Pull On closure", "Sizes XS-XL"),
            categories=("Clothing, Shoes & Jewelry", "Women", "Pants"),
        )
    )
    restored = Attributes.from_dict(json.loads(json.dumps(attrs.to_dict())))
    assert restored == attrs
    assert Attributes.from_dict({}) == Attributes()


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ([], "must be a JSON object"),
        ({"colors": "blue"}, "'colors' must be a list"),
        ({"colors": [1]}, "'colors' must hold only strings"),
        ({"price": "cheap"}, "'price' must be a number"),
        ({"materials": [{"percent": 5}]}, "'materials' entries need a string 'name'"),
        (
            {"dimensions": [{"unit": "mm", "values": ["x"]}]},
            "'dimensions' values must be a list of numbers",
        ),
        ({"department": 3}, "'department' must be a string"),
    ],
)
def test_from_dict_names_the_bad_field(record: object, message: str) -> None:
    with pytest.raises(AttributesError, match=message):
        Attributes.from_dict(record)  # type: ignore[arg-type]


def test_odd_records_do_not_crash() -> None:
    record = {
        "parent_asin": "X1",
        "title": "Thing",
        "features": [None, 5, "   "],
        "details": {"Color": None, "Size": 7},
        "categories": None,
        "price": "n/a",
        "description": "<b>Red</b> and tan",
    }
    attrs = derive(product_from_record(record))
    assert attrs.price is None
    assert attrs.category_path == ()
    assert attrs.colors == ("red", "brown")
    assert attrs.sizes == ("7",)


def test_descriptions_lose_markup_and_runs_of_whitespace() -> None:
    # Every character str.split() splits on is one re's \s matches, and no other: both collapse
    # alike.
    every = "".join(map(chr, range(sys.maxunicode + 1)))
    assert set(re.findall(r"\s", every)) == {c for c in every if c.isspace()}
    record = {
        "parent_asin": "X2",
        "title": "Thing",
        "description": [
            "<p>Soft&nbsp;cotton</p>\n\t<br/>tee&amp;top\u2003 \x1c end ",
            " <i> </i> ",
            "a  b",
        ],
    }
    assert product_from_record(record).description == ("Soft cotton tee&top end", "a b")


# ---- real records -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def real_products(shared_data: Path) -> dict[int, Product]:
    """The real records by their 1-based line, read at run time (never copied into tests)."""
    with (shared_data / "catalog_harvest.jsonl").open(encoding="utf-8") as handle:
        lines = [line for line in handle if line.strip()]
    return {n: product_from_record(json.loads(line)) for n, line in enumerate(lines, 1)}


@pytest.mark.shared
def test_real_scrub_pants(real_products: dict[int, Product]) -> None:
    attrs = derive(real_products[1])
    assert attrs.department == "men"
    assert attrs.materials[:2] == (MaterialShare("polyester", 65.0), MaterialShare("cotton", 35.0))
    assert attrs.closure == "pull on"
    assert attrs.leaf == "Scrub Bottoms"
    assert {"S", "5XL"} <= set(attrs.sizes)  # "sizes from S to 5XL"
    assert "medical" in attrs.use_cases
    assert all(
        d.unit != "inch" or d.values != (15.0, 12.0, 0.33) for d in attrs.dimensions
    )  # package box


@pytest.mark.shared
def test_real_underwear_pack(real_products: dict[int, Product]) -> None:
    attrs = derive(real_products[2])
    assert attrs.department == "men"
    assert attrs.materials[0] == MaterialShare("cotton", 100.0)
    assert "polyester" in attrs.material_names
    assert attrs.sizes == ("S", "M", "L", "XL", "2XL", "3XL")  # "sizes Small-3XL"
    assert attrs.brand == "Hanes"


@pytest.mark.shared
def test_real_jewelry_measures_in_millimetres(real_products: dict[int, Product]) -> None:
    attrs = derive(real_products[21])
    assert attrs.department == "women"
    assert "gold" in attrs.material_names and "gold" in attrs.colors
    assert {(40.0,), (4.5,)} <= {d.values for d in attrs.dimensions if d.unit == "mm"}


@pytest.mark.shared
def test_real_detail_fields(real_products: dict[int, Product]) -> None:
    wallet = derive(real_products[17])  # Material "Aluminum", Color "Black Marble"
    assert wallet.material_names[0] == "aluminum"
    assert wallet.colors[0] == "black"
    gloves = derive(real_products[160])  # Closure Type "Pull On"
    assert gloves.closure == "pull on"
    cleats = derive(real_products[180])  # Department "Unisex-child"
    assert cleats.department == "kids"
    assert "soccer" in cleats.use_cases


@pytest.mark.shared
def test_real_catalog_coverage(real_products: dict[int, Product]) -> None:
    products = list(real_products.values())
    derived = [derive(p) for p in products]
    share = lambda has: sum(1 for a in derived if has(a)) / len(derived)  # noqa: E731
    assert share(lambda a: a.department) > 0.95
    assert share(lambda a: a.materials) > 0.8
    assert share(lambda a: a.closure) > 0.45
    assert share(lambda a: a.colors) > 0.35
    # Every "N% Material" bullet of the real file yields that material with its share.
    for product, attrs in zip(products, derived, strict=True):
        for feature in product.features:
            if feature in ("100% Cotton", "100% Polyester", "100% Leather"):
                assert MaterialShare(feature.split()[1].lower(), 100.0) in attrs.materials, (
                    product.parent_asin
                )
    for attrs in derived:
        assert Attributes.from_dict(json.loads(json.dumps(attrs.to_dict()))) == attrs


def test_a_description_names_the_colours_only_when_nothing_else_does():
    """ "A brown boot with a white sole": the sole's colour is no colour of the boot."""
    boot = _product("Men's Leather Chelsea Boot Brown", description=("With a white rubber sole.",))
    assert derive(boot).colors == ("brown",)
    plain = _product("Men's Leather Chelsea Boot", description=("Comes in black.",))
    assert derive(plain).colors == ("black",)
