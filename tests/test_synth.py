"""The synthetic catalog generator and the padded real-data catalog."""

from __future__ import annotations

import gzip
import hashlib
import inspect
import json
import re
from collections import Counter, defaultdict
from itertools import islice
from pathlib import Path

import pytest
from click.testing import CliRunner

from shopcopilot.catalog.loader import CatalogError, load_catalog
from shopcopilot.catalog.padding import write_padded_catalog
from shopcopilot.catalog.synth import ID_PREFIX, iter_synthetic, write_catalog
from shopcopilot.catalog.synth.vocabulary import load_vocabulary
from shopcopilot.cli import main

REQUIRED_GROUPS = {
    "Women",
    "Men",
    "Girls",
    "Boys",
    "Baby",
    "Novelty & More",
    "Shoes",
    "Jewelry",
    "Watches",
    "Handbags & Wallets",
    "Luggage & Travel Gear",
    "Accessories",
}
AMAZON_ID = re.compile(r"^(B0[0-9A-Z]{8}|[0-9]{9}[0-9X])$")


@pytest.fixture(scope="module")
def sample() -> list[dict]:
    return list(iter_synthetic(3000, seed=11))


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_same_seed_same_bytes_and_other_seed_differs(tmp_path: Path) -> None:
    first, again, other = tmp_path / "a.jsonl.gz", tmp_path / "b.jsonl.gz", tmp_path / "c.jsonl.gz"
    assert write_catalog(first, 300, seed=7) == 300
    write_catalog(again, 300, seed=7)
    write_catalog(other, 300, seed=8)
    assert _digest(first) == _digest(again)
    assert _digest(first) != _digest(other)


def test_product_depends_only_on_seed_and_index() -> None:
    # Streaming from an offset must reproduce the same products: nothing depends on earlier items.
    whole = list(iter_synthetic(60, seed=3))
    assert list(iter_synthetic(20, seed=3, start=40)) == whole[40:]


def test_output_passes_the_loader(tmp_path: Path) -> None:
    for name in ("plain.jsonl", "packed.jsonl.gz"):
        path = tmp_path / name
        write_catalog(path, 500, seed=5)
        products, report = load_catalog(path)
        assert len(products) == 500
        assert not report.invalid and not report.duplicates
    with gzip.open(tmp_path / "packed.jsonl.gz", "rt", encoding="utf-8") as handle:
        assert json.loads(handle.readline())["parent_asin"].startswith(ID_PREFIX)


def test_record_layout_and_value_types(sample: list[dict]) -> None:
    fields = {
        "parent_asin",
        "title",
        "features",
        "description",
        "price",
        "categories",
        "details",
        "average_rating",
        "rating_number",
        "store",
    }
    for record in sample:
        assert set(record) == fields
        assert record["categories"][0] == "Clothing, Shoes & Jewelry"
        assert all(isinstance(value, str) and value for value in record["details"].values())
        assert record["price"] is None or record["price"] > 0


def test_taxonomy_breadth() -> None:
    leaves = load_vocabulary().leaves
    assert len({leaf.path for leaf in leaves}) >= 150
    groups = {part for leaf in leaves for part in leaf.path[1:3]}
    assert groups >= REQUIRED_GROUPS, REQUIRED_GROUPS - groups


def test_sample_spreads_over_many_leaves(sample: list[dict]) -> None:
    leaves = Counter(tuple(record["categories"]) for record in sample)
    assert len(leaves) >= 150
    top_groups = Counter(record["categories"][1] for record in sample)
    # Women's and men's products lead, as in the real catalog.
    assert [group for group, _ in top_groups.most_common(2)] == ["Women", "Men"]


DEPARTMENT_WORDS = {
    "women",
    "womens",
    "men",
    "mens",
    "girls",
    "boys",
    "baby",
    "girl",
    "boy",
    "s",
    "for",
    "unisex",
    "adult",
    "and",
}


def _shingles(title: str, store: str) -> set[str]:
    """Four-word runs of a title without its store name and department words."""
    words = [
        w
        for w in re.findall(r"[a-z0-9]+", title.lower().removeprefix(store.lower()))
        if w not in DEPARTMENT_WORDS
    ]
    return {" ".join(words[i : i + 4]) for i in range(len(words) - 3)}


def test_near_duplicate_crowds_across_stores(sample: list[dict]) -> None:
    stores_by_shingle: dict[str, set[str]] = defaultdict(set)
    for record in sample:
        for shingle in _shingles(record["title"], record["store"]):
            stores_by_shingle[shingle].add(record["store"])
    crowded = [shingle for shingle, stores in stores_by_shingle.items() if len(stores) >= 5]
    assert len(crowded) >= 20
    assert max(len(stores) for stores in stores_by_shingle.values()) >= 10


def test_real_style_fields(sample: list[dict]) -> None:
    missing_price = sum(record["price"] is None for record in sample) / len(sample)
    assert 0.10 <= missing_price <= 0.25
    ratings = [
        record["average_rating"] for record in sample if record["average_rating"] is not None
    ]
    assert 0 < len(sample) - len(ratings) < 0.15 * len(sample)  # some null ratings, not many
    assert 0.6 <= sum(3.8 <= rating <= 4.8 for rating in ratings) / len(ratings) <= 0.95
    counts = sorted(
        record["rating_number"] for record in sample if record["rating_number"] is not None
    )
    assert counts[-1] > 50 * counts[len(counts) // 2]  # heavy tail
    assert 0.3 <= sum(not record["description"] for record in sample) / len(sample) <= 0.8
    features = [line for record in sample for line in record["features"]]
    assert any(re.fullmatch(r"\d+% \w+, \d+% \w+", line) for line in features)
    assert {"Imported", "Machine Wash", "Rubber sole", "Pull On closure"} <= set(features)
    assert any(line.startswith("Shaft measures approximately") for line in features)
    keys = Counter(key for record in sample for key in record["details"])
    assert (
        keys["Date First Available"] > keys["Department"] > keys["Manufacturer"] > keys["Brand"] > 0
    )


def test_titles_look_like_listings(sample: list[dict]) -> None:
    lengths = sorted(len(record["title"]) for record in sample)
    assert 55 <= lengths[len(lengths) // 2] <= 110
    stores = Counter(record["store"] for record in sample)
    assert len(stores) > len(sample) / 4  # a long tail of sellers
    assert all(store and store[0].isalpha() for store in stores)


def test_iter_synthetic_streams() -> None:
    stream = iter_synthetic(5_000_000, seed=1)
    assert inspect.isgenerator(stream)
    first = next(stream)  # would take minutes if the whole catalog were built first
    assert first["parent_asin"] == f"{ID_PREFIX}0000001"
    assert len(list(islice(stream, 10))) == 10


def test_ids_are_unique_and_never_amazon_shaped(sample: list[dict]) -> None:
    ids = [record["parent_asin"] for record in sample]
    assert len(set(ids)) == len(ids)
    assert not any(AMAZON_ID.match(asin) for asin in ids)


def _real_like(asins: list[str]) -> list[dict]:
    return [
        {"parent_asin": asin, "title": f"Real product {asin}", "features": [], "categories": []}
        for asin in asins
    ]


def test_padding_puts_real_first_verbatim_and_reaches_size(tmp_path: Path) -> None:
    real = tmp_path / "real.jsonl"
    lines = [
        json.dumps(record) for record in _real_like(["B0AAAAAAA1", "B0AAAAAAA2", "SYN0000002"])
    ]
    real.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = write_padded_catalog(real, tmp_path / "padded.jsonl", size=40, seed=7)
    written = out.read_text(encoding="utf-8").splitlines()
    assert written[:3] == lines
    products, report = load_catalog(out)
    assert len(products) == 40 and not report.duplicates  # the colliding SYN id was skipped


def test_padding_reports_bad_real_line(tmp_path: Path) -> None:
    real = tmp_path / "real.jsonl"
    real.write_text(
        '{"parent_asin": "B0AAAAAAA1", "title": "ok"}\n{"parent_asin": "B0X"\n', encoding="utf-8"
    )
    with pytest.raises(CatalogError, match=r"real\.jsonl:2: not valid JSON"):
        write_padded_catalog(real, tmp_path / "out.jsonl", size=10)


def test_padding_rejects_size_below_real_count(tmp_path: Path) -> None:
    real = tmp_path / "real.jsonl"
    real.write_text(
        "\n".join(json.dumps(r) for r in _real_like(["B0AAAAAAA1", "B0AAAAAAA2"])), encoding="utf-8"
    )
    with pytest.raises(CatalogError, match="more than the requested size 1"):
        write_padded_catalog(real, tmp_path / "out.jsonl", size=1)


@pytest.mark.shared
def test_padding_real_catalog_ids_never_collide(tmp_path: Path, shared_data: Path) -> None:
    real_path = shared_data / "catalog_harvest.jsonl"
    real_products, _ = load_catalog(real_path)
    size = len(real_products) + 500
    out = write_padded_catalog(real_path, tmp_path / "padded.jsonl.gz", size=size, seed=7)
    products, report = load_catalog(out)
    assert len(products) == size and not report.duplicates
    assert [p.parent_asin for p in products[: len(real_products)]] == [
        p.parent_asin for p in real_products
    ]
    synthetic = {p.parent_asin for p in products[len(real_products) :]}
    assert not synthetic & {p.parent_asin for p in real_products}
    assert all(asin.startswith(ID_PREFIX) for asin in synthetic)


@pytest.mark.shared
def test_every_real_leaf_group_has_synthetic_neighbours(
    sample: list[dict], shared_data: Path
) -> None:
    real, _ = load_catalog(shared_data / "catalog_harvest.jsonl")
    synthetic_parents = {tuple(record["categories"][:4]) for record in sample}
    standard = [p for p in real if len(p.categories) >= 4 and p.categories[1] in {"Women", "Men"}]
    covered = sum(tuple(p.categories[:4]) in synthetic_parents for p in standard)
    assert covered / len(standard) >= 0.9


def test_cli_synth_and_pad(tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "synth.jsonl.gz"
    result = runner.invoke(
        main, ["catalog", "synth", "--size", "50", "--seed", "3", "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "wrote 50 products" in result.output
    assert len(load_catalog(out)[0]) == 50

    real = tmp_path / "real.jsonl"
    real.write_text(json.dumps(_real_like(["B0AAAAAAA9"])[0]) + "\n", encoding="utf-8")
    padded = tmp_path / "padded.jsonl"
    result = runner.invoke(
        main, ["catalog", "pad", "--real", str(real), "--size", "20", "-o", str(padded)]
    )
    assert result.exit_code == 0, result.output
    assert len(load_catalog(padded)[0]) == 20

    result = runner.invoke(
        main, ["catalog", "pad", "--real", str(tmp_path / "absent.jsonl"), "-o", str(padded)]
    )
    assert result.exit_code == 1 and "real catalog not found" in result.output
