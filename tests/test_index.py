"""The persistent index: store lookups, ranking behaviour of both back ends, rebuilds, CLI."""

from __future__ import annotations

import json
import logging
import multiprocessing
import os
import pickle
import random
import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from shopcopilot.catalog.loader import CatalogError, parse_line
from shopcopilot.catalog.product import RecordError, product_from_record
from shopcopilot.cli import main
from shopcopilot.index import (
    BACKENDS,
    DEFAULT_WEIGHTS,
    STARTER_WEIGHTS,
    CatalogIndex,
    Filters,
    Occur,
    Query,
    UnsupportedQueryError,
    features,
    features_build,
    open_index,
    phrase,
    terms,
)
from shopcopilot.index.store import json_text

# The hand-written catalog and its builders come from conftest.py.
Records = list[dict[str, object]]
MakeRecord = Callable[..., dict[str, object]]
WriteCatalog = Callable[[Path, Records], Path]


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("SHOPCOPILOT_CACHE", str(folder))
    return folder


def top_ids(
    index: CatalogIndex, query: str | Query, backend: str = "tantivy", **options: object
) -> list[str]:
    return [hit.parent_asin for hit in index.search(query, backend=backend, **options)]


# --- the product store ---------------------------------------------------------------


def test_store_looks_products_up_by_id(hand_index: CatalogIndex, hand_records: Records) -> None:
    store = hand_index.store
    assert len(store) == len(hand_records)
    assert "PARKA1" in store and "NOPE" not in store
    assert store.get("PARKA1").title == "Quilted Parka"
    assert store.get("NOPE") is None
    assert store.ids()[:3] == ["TITLE01", "DESC01", "PHRASE1"]  # catalog order
    many = store.get_many(["PARKA2", "NOPE", "PARKA1"])
    assert list(many) == ["PARKA2", "PARKA1"]
    assert store.attributes("PARKA1").department == "women"
    facts = store.facts("PARKA2")
    assert (facts.price, facts.department, facts.leaf_category) == (
        50.0,
        "men",
        "Coats, Jackets & Vests",
    )


def test_store_round_trips_the_record(hand_index: CatalogIndex, hand_records: Records) -> None:
    original = next(r for r in hand_records if r["parent_asin"] == "STORE01")
    assert hand_index.store.get("STORE01").to_record() == original


# --- ranking, both back ends ------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_exact_title_finds_its_product_first(hand_index: CatalogIndex, backend: str) -> None:
    for wanted in ("TITLE01", "PHRASE2", "OR01", "PARKA3", "FILL007"):
        title = hand_index.store.get(wanted).title
        assert top_ids(hand_index, title, backend)[0] == wanted


@pytest.mark.parametrize("backend", BACKENDS)
def test_title_term_outranks_the_same_term_in_the_description(
    hand_index: CatalogIndex, backend: str
) -> None:
    assert top_ids(hand_index, "quokka", backend) == ["TITLE01", "DESC01"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_field_weights_can_be_overridden_per_search(hand_index: CatalogIndex, backend: str) -> None:
    flipped = {"title": 0.1, "description": 10.0}
    assert top_ids(hand_index, "quokka", backend, weights=flipped) == ["DESC01", "TITLE01"]
    # Weight 0 means the field is not searched at all.
    assert top_ids(hand_index, "quokka", backend, weights={"description": 0.0}) == ["TITLE01"]
    assert top_ids(hand_index, "wombatwear", backend, weights={"store": 0.0}) == []


def test_unknown_weight_field_is_a_clear_error(hand_index: CatalogIndex) -> None:
    with pytest.raises(ValueError, match="unknown search field 'colour'"):
        hand_index.search("parka", weights={"colour": 1.0})


@pytest.mark.parametrize("backend", BACKENDS)
def test_phrase_matches_adjacent_words_only(hand_index: CatalogIndex, backend: str) -> None:
    assert top_ids(hand_index, '"red cotton dress"', backend) == ["PHRASE1"]
    assert set(top_ids(hand_index, "red cotton dress", backend)) == {"PHRASE1", "PHRASE2"}


@pytest.mark.parametrize("backend", BACKENDS)
def test_and_requires_every_term_or_takes_any(hand_index: CatalogIndex, backend: str) -> None:
    assert top_ids(hand_index, "zephyr AND lantern", backend) == ["AND01"]
    every_word = Query.parse("zephyr lantern", require_all=True)
    assert top_ids(hand_index, every_word, backend) == ["AND01"]
    either = top_ids(hand_index, "zephyr lantern", backend)
    assert either[0] == "AND01" and set(either) == {"AND01", "OR01", "OR02"}


@pytest.mark.parametrize("backend", BACKENDS)
def test_excluded_terms_remove_hits(hand_index: CatalogIndex, backend: str) -> None:
    assert set(top_ids(hand_index, "zephyr -compass", backend)) == {"AND01"}
    assert set(top_ids(hand_index, "zephyr NOT gloves", backend)) == {"AND01"}
    assert top_ids(hand_index, "-zephyr", backend) == []


@pytest.mark.parametrize("backend", BACKENDS)
def test_structured_query_with_field_restriction(hand_index: CatalogIndex, backend: str) -> None:
    in_title = Query((terms("quokka", fields=("title",)),))
    assert top_ids(hand_index, in_title, backend) == ["TITLE01"]
    mixed = Query(
        (
            terms("parka", occur=Occur.MUST),
            phrase("quilted parka"),
            terms("hooded", occur="must_not"),
        )
    )
    assert top_ids(hand_index, mixed, backend) == ["PARKA1", "PARKA3"]


def test_clause_boost_decides_between_equal_matches(hand_index: CatalogIndex) -> None:
    quilted_first = Query((terms("quilted", boost=5.0), terms("belted")))
    belted_first = Query((terms("quilted"), terms("belted", boost=5.0)))
    assert top_ids(hand_index, quilted_first)[:2] == ["PARKA1", "PARKA3"]
    assert top_ids(hand_index, belted_first)[:2] == ["PARKA3", "PARKA1"]


def test_fts5_refuses_boosts_it_cannot_express(hand_index: CatalogIndex) -> None:
    with pytest.raises(UnsupportedQueryError, match="boost"):
        hand_index.search(Query((terms("parka", boost=2.0),)), backend="fts5")
    # No attrs column: it would change bm25's row lengths and so every starter score.
    with pytest.raises(UnsupportedQueryError, match="attrs"):
        hand_index.search("parka", backend="fts5", weights=DEFAULT_WEIGHTS)


def test_words_held_by_more_products_than_max_postings_are_not_scored(
    hand_index: CatalogIndex,
) -> None:
    # "everyday" is in the titles of the 24 fillers, "linen" in a few of them, "quilted" in one.
    def scored(text: str, bound: int | None) -> dict[str, float]:
        query = Query((terms(text),), max_postings=bound)
        return {hit.parent_asin: hit.score for hit in hand_index.search(query, limit=50)}

    bounded = scored("everyday linen", 10)
    assert bounded == pytest.approx(scored("linen", None))
    assert scored("everyday linen", None) != bounded
    # A bound no word of this catalog can pass changes nothing.
    assert scored("everyday linen", len(hand_index.store)) == scored("everyday linen", None)
    # When every word is over the bound the query is searched whole, never emptied.
    assert scored("everyday", 10) == scored("everyday", None) != {}
    # Required words are always searched.
    must = Query((terms("everyday", occur=Occur.MUST), terms("quilted")), max_postings=10)
    assert len(hand_index.search(must, limit=50)) == 24


def test_a_phrase_is_left_out_only_when_every_word_is_over_max_postings(
    hand_index: CatalogIndex,
) -> None:
    def found(text: str) -> list[str]:
        return top_ids(hand_index, Query((phrase(text), terms("cotton")), max_postings=10))

    # "everyday top" is a phrase of common words only: left out, "cotton" alone decides.
    assert found("everyday top") == top_ids(hand_index, "cotton")
    # One rare word keeps the phrase: "quilted parka" is PARKA1's title.
    assert found("quilted parka")[0] == "PARKA1"


def test_max_postings_is_checked_and_fts5_refuses_it(hand_index: CatalogIndex) -> None:
    with pytest.raises(ValueError, match="max_postings"):
        Query((terms("parka"),), max_postings=0)
    with pytest.raises(UnsupportedQueryError, match="max_postings"):
        hand_index.search(
            Query((terms("parka"),), max_postings=5), backend="fts5", weights=STARTER_WEIGHTS
        )


@pytest.mark.parametrize("backend", BACKENDS)
def test_offset_and_limit_slice_one_ranking(hand_index: CatalogIndex, backend: str) -> None:
    full = hand_index.search("everyday", limit=20, backend=backend)
    assert len(full) == 20 and [hit.rank for hit in full] == list(range(1, 21))
    windows = [
        hand_index.search("everyday", limit=7, offset=start, backend=backend)
        for start in (0, 7, 14)
    ]
    assert [hit for window in windows for hit in window][:20] == full
    assert hand_index.search("everyday", limit=5, offset=1000, backend=backend) == []
    assert hand_index.count("everyday", backend=backend) == 24


@pytest.mark.parametrize("backend", BACKENDS)
def test_row_hits_are_the_same_ranking_as_hits(hand_index: CatalogIndex, backend: str) -> None:
    hits = hand_index.search("cotton dress", limit=20, backend=backend)
    found = hand_index.search_rows("cotton dress", limit=20, backend=backend)
    assert [h.parent_asin for h in hits] == hand_index.store.asins_for_rows(found.rows)
    assert [h.score for h in hits] == pytest.approx(found.scores)
    assert all(1 <= row <= len(hand_index.store) for row in found.rows)


def test_a_repeated_search_reuses_its_answer_and_options_are_part_of_the_question(
    hand_index: CatalogIndex, monkeypatch: pytest.MonkeyPatch
) -> None:
    backend = hand_index.backend("tantivy")
    calls = []
    original = backend.ranked_rows
    monkeypatch.setattr(
        backend, "ranked_rows", lambda *a, **k: calls.append(1) or original(*a, **k)
    )
    first = hand_index.search_rows("everyday", limit=15)
    assert first.rows and hand_index.search_rows("everyday", limit=15) == first and len(calls) == 1
    hand_index.search_rows("everyday", limit=15, filters=Filters(max_price=40))
    hand_index.search_rows("everyday", limit=15, weights={"description": 0.0})
    hand_index.search_rows("everyday", limit=16)
    assert len(calls) == 4
    with pytest.raises(TypeError):
        first.rows[0] = 0  # shared answers are read-only


@pytest.mark.parametrize("backend", BACKENDS)
def test_price_and_department_filters(hand_index: CatalogIndex, backend: str) -> None:
    def found(filters: Filters) -> set[str]:
        return set(top_ids(hand_index, "parka", backend, filters=filters))

    assert found(Filters()) == {"PARKA1", "PARKA2", "PARKA3"}
    assert found(Filters(max_price=20)) == {"PARKA1", "PARKA3"}  # unpriced kept by default
    assert found(Filters(min_price=20)) == {"PARKA2", "PARKA3"}
    assert found(Filters(min_price=20, include_missing_price=False)) == {"PARKA2"}
    assert found(Filters(min_price=10, max_price=10, include_missing_price=False)) == {
        "PARKA1"
    }  # inclusive
    assert found(Filters(department="Women")) == {"PARKA1", "PARKA3"}
    assert found(Filters(department=("men", "women"), max_price=20)) == {"PARKA1", "PARKA3"}
    assert hand_index.count("parka", filters=Filters(department="men"), backend=backend) == 1


def test_filters_never_change_scores(hand_index: CatalogIndex) -> None:
    unfiltered = {hit.parent_asin: hit.score for hit in hand_index.search("parka quilted")}
    filters = Filters(max_price=20, department="women")
    for hit in hand_index.search("parka quilted", filters=filters):
        assert hit.score == pytest.approx(unfiltered[hit.parent_asin])


def test_bad_filters_are_clear_errors() -> None:
    with pytest.raises(ValueError, match="min_price"):
        Filters(min_price=50, max_price=10)
    with pytest.raises(ValueError, match="max_price"):
        Filters(max_price=-1)


@pytest.mark.parametrize("backend", BACKENDS)
def test_hostile_text_never_breaks_a_search(hand_index: CatalogIndex, backend: str) -> None:
    for text in [
        '"unclosed parka',
        'NEAR(parka "a" ) OR * ^ {title}: AND',
        "-",
        '""',
        "   ",
        'x"y"z',
        "AND OR NOT",
    ]:
        hand_index.search(text, backend=backend)  # must not raise
    assert top_ids(hand_index, 'parka" OR "{title}:quilted', backend)[0] == "PARKA1"


@pytest.mark.parametrize(
    "query", ["quokka", "zephyr lantern", "hooded parka", "plain knit cardigan", '"cotton dress"']
)
def test_back_ends_agree_on_the_top_hit(hand_index: CatalogIndex, query: str) -> None:
    same = {"limit": 1, "weights": STARTER_WEIGHTS}
    tantivy = top_ids(hand_index, query, "tantivy", **same)
    assert tantivy == top_ids(hand_index, query, "fts5", **same)


def test_query_parsing() -> None:
    parsed = Query.parse('red "pull on" +hiking -wool a AND b NOT c OR d')
    summary = [(c.text, c.phrase, c.occur.value) for c in parsed.clauses]
    assert summary == [
        ("red", False, "should"),
        ("pull on", True, "should"),
        ("hiking", False, "must"),
        ("wool", False, "must_not"),
        ("a", False, "must"),
        ("b", False, "must"),
        ("c", False, "must_not"),
        ("d", False, "should"),
    ]
    runs = Query.parse("soft warm wool AND scarf red -itchy")
    assert [(c.text, c.occur.value) for c in runs.clauses] == [
        ("soft warm", "should"),
        ("wool", "must"),
        ("scarf", "must"),
        ("red", "should"),
        ("itchy", "must_not"),
    ]
    with pytest.raises(ValueError, match="unknown search field"):
        terms("x", fields=("colour",))


def test_index_pickles_by_path(hand_index: CatalogIndex) -> None:
    payload = pickle.dumps(hand_index)
    assert len(payload) < 1000  # a path, not the data
    again = pickle.loads(payload)
    assert again.path == hand_index.path
    assert top_ids(again, "quokka") == top_ids(hand_index, "quokka")


# --- build, reuse, rebuild ------------------------------------------------------------


def test_index_is_reused_until_the_catalog_changes(
    cache: Path,
    tmp_path: Path,
    hand_records: Records,
    write_catalog: WriteCatalog,
    catalog_record: MakeRecord,
) -> None:
    catalog = write_catalog(tmp_path / "c.jsonl", hand_records[:6])
    first = open_index(catalog, progress=False)
    again = open_index(catalog, progress=False)
    assert again.path == first.path and again.manifest["build_id"] == first.manifest["build_id"]
    write_catalog(catalog, hand_records[:6] + [catalog_record("NEW01", "Capybara Raincoat")])
    changed = open_index(catalog, progress=False)
    assert changed.fingerprint != first.fingerprint
    assert top_ids(changed, "capybara") == ["NEW01"]
    assert not first.path.exists()  # the build of the old contents is pruned


def test_the_ranking_features_are_written_with_the_index_and_again_when_missing(
    cache: Path, tmp_path: Path, hand_records: Records, write_catalog: WriteCatalog
) -> None:
    catalog = write_catalog(tmp_path / "c.jsonl", hand_records[:6])
    index = open_index(catalog, progress=False)
    assert features_build.is_written(index.store, index.path)  # no agent has asked for them yet
    shutil.rmtree(features.features_folder(index.path))  # as after a change to their code
    again = open_index(catalog, progress=False)
    assert again.path == index.path and features_build.is_written(again.store, again.path)
    opened = features_build.load_or_build(again.store, again.path)
    assert list(opened.asins) == again.store.ids()


def test_prune_deletes_only_what_this_version_cannot_open(
    cache: Path, tmp_path: Path, hand_records: Records, write_catalog: WriteCatalog
) -> None:
    current = open_index(write_catalog(tmp_path / "c.jsonl", hand_records[:6]), progress=False)
    root = current.path.parent
    older = root / "0123456789abcdef0123"  # the same index as an older code version left it
    shutil.copytree(current.path, older)
    manifest = json.loads((older / "manifest.json").read_text())
    manifest["fingerprint_parts"]["attributes_version"] = "an older one"
    (older / "manifest.json").write_text(json.dumps(manifest))
    damaged = root / "fedcba9876543210fedc"
    damaged.mkdir()
    leftover = root / f".{current.fingerprint}.building-999999"
    leftover.mkdir()
    result = CliRunner().invoke(main, ["index", "prune", "--dry-run"])
    assert result.exit_code == 0 and "would delete 3 folder(s)" in result.output
    assert older.exists() and damaged.exists() and leftover.exists()
    result = CliRunner().invoke(main, ["index", "prune"])
    assert result.exit_code == 0 and "deleted 3 folder(s)" in result.output
    assert not older.exists() and not damaged.exists() and not leftover.exists()
    assert top_ids(
        open_index(tmp_path / "c.jsonl", progress=False), "quokka"
    )  # the current one is kept
    assert current.path.exists()


def test_forced_rebuild_replaces_the_folder(
    cache: Path, tmp_path: Path, hand_records: Records, write_catalog: WriteCatalog
) -> None:
    catalog = write_catalog(tmp_path / "c.jsonl", hand_records[:6])
    first = open_index(catalog, progress=False)
    rebuilt = open_index(catalog, rebuild=True, progress=False)
    assert rebuilt.path == first.path and rebuilt.manifest["build_id"] != first.manifest["build_id"]
    assert top_ids(rebuilt, "quokka") == ["TITLE01", "DESC01"]
    assert not list(cache.glob("index/.*building*"))  # no temp folders left


def _damage(path: Path, how: str) -> None:
    data = bytearray(path.read_bytes())
    if how == "truncate":
        path.write_bytes(bytes(data[: len(data) // 2]))
    else:  # garble: same size, different bytes in the middle
        middle = len(data) // 2
        data[middle : middle + 64] = bytes(b ^ 0xFF for b in data[middle : middle + 64])
        path.write_bytes(bytes(data))


@pytest.mark.parametrize("how", ["truncate", "garble"])
@pytest.mark.parametrize("target", ["store", "tantivy"])
def test_damaged_index_is_detected_and_rebuilt(
    cache: Path,
    hand_catalog: Path,
    hand_records: Records,
    caplog: pytest.LogCaptureFixture,
    target: str,
    how: str,
) -> None:
    catalog = hand_catalog
    index = open_index(catalog, progress=False)
    if target == "store":
        victim = index.path / "store.sqlite"
    else:
        victim = max(
            (p for p in (index.path / "tantivy").iterdir() if p.is_file()),
            key=lambda p: p.stat().st_size,
        )
    index.close()
    _damage(victim, how)
    with caplog.at_level(logging.WARNING, logger="shopcopilot.index"):
        reopened = open_index(catalog, progress=False)
    assert "rebuilding" in caplog.text and victim.name in caplog.text
    assert top_ids(reopened, "quokka") == ["TITLE01", "DESC01"]
    assert len(reopened.store) == len(hand_records)


def test_damaged_fts5_file_is_rebuilt(
    cache: Path, hand_catalog: Path, caplog: pytest.LogCaptureFixture
) -> None:
    catalog = hand_catalog
    index = open_index(catalog, progress=False)
    assert top_ids(index, "quokka", "fts5") == ["TITLE01", "DESC01"]
    _damage(index.path / "fts5.sqlite", "garble")
    with caplog.at_level(logging.WARNING, logger="shopcopilot.index"):
        reopened = open_index(catalog, progress=False)
        assert top_ids(reopened, "quokka", "fts5") == ["TITLE01", "DESC01"]
    assert "FTS5 index" in caplog.text


def test_invalid_lines_are_skipped_and_reported(
    cache: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture, hand_records: Records
) -> None:
    catalog = tmp_path / "c.jsonl"
    no_id = json.dumps({"title": "no id"})
    catalog.write_text(json.dumps(hand_records[0]) + "\n{not json\n" + no_id + "\n")
    with caplog.at_level(logging.WARNING, logger="shopcopilot.index"):
        index = open_index(catalog, progress=False)
    assert len(index.store) == 1
    assert f"{catalog}:2" in caplog.text and "2 invalid" in caplog.text
    assert index.manifest["catalog"]["invalid_lines"] == 2


def test_an_infinite_price_is_indexed_as_given(
    cache: Path, tmp_path: Path, catalog_record: MakeRecord, write_catalog: WriteCatalog
) -> None:
    # JSON has no infinity, so this one document skips the JSON path to tantivy.
    records = [
        catalog_record("INF01", "Quokka parka", price="Infinity"),
        catalog_record("FIN01", "Quokka parka", price=12.5),
    ]
    index = open_index(write_catalog(tmp_path / "c.jsonl", records), progress=False)
    assert index.store.get("INF01").price == float("inf")
    assert set(top_ids(index, "quokka")) == {"INF01", "FIN01"}
    assert top_ids(index, "quokka", filters=Filters(max_price=20)) == ["FIN01"]
    assert set(top_ids(index, "quokka", filters=Filters(min_price=20))) == {"INF01"}


def test_values_orjson_cannot_write_are_stored_as_given(
    cache: Path, tmp_path: Path, catalog_record: MakeRecord, write_catalog: WriteCatalog
) -> None:
    # The build writes JSON with orjson, which writes inf as null: such a product takes the
    # stdlib's path and reads back unchanged.
    records = [
        catalog_record("INF02", "Quokka parka", price="Infinity", average_rating=float("inf"))
    ]
    index = open_index(write_catalog(tmp_path / "c.jsonl", records), progress=False)
    infinite = index.store.get("INF02")
    assert infinite.price == float("inf") and infinite.average_rating == float("inf")
    assert index.store.attributes("INF02").price == float("inf")
    # orjson refuses integers beyond 64 bits and lone surrogates (SQLite refuses them too, so a
    # build cannot meet them today): json_text falls back to the stdlib for them as well.
    for value in ({"n": 2**70}, {"s": "a \ud800 b"}, {"f": [1.5, float("-inf")]}):
        assert json.loads(json_text(value, value.get("f", ()))) == value


def test_broken_counts_and_half_surrogates_are_indexed_not_fatal(
    cache: Path, tmp_path: Path, catalog_record: MakeRecord, write_catalog: WriteCatalog
) -> None:
    # Escaped half of a UTF-16 pair, and counts no 64-bit integer holds: SQLite refuses both,
    # so the loader turns them into U+FFFD and an unknown count.
    records = [
        catalog_record("HALF01", "Quokka \ud800 parka", rating_number=2**70),
        catalog_record("HUGE01", "Quokka vest", rating_number="1e400"),
    ]
    index = open_index(write_catalog(tmp_path / "c.jsonl", records), progress=False)
    assert index.store.get("HALF01").title == "Quokka \ufffd parka"
    assert (
        index.store.get("HALF01").rating_number is None
        and index.store.get("HUGE01").rating_number is None
    )
    assert set(top_ids(index, "quokka")) == {"HALF01", "HUGE01"}


# Lines where orjson's reading differs from json's, or could: parse_line must read each as json
# does.
_ODD_LINES = [
    '{"parent_asin": "B1", "title": 123456789012345678901234567890, "price": 18446744073709551617}',
    '{"parent_asin": "B2", "title": "t", "store": -9223372036854775809, '
    '"features": [99999999999999999999]}',
    '{"parent_asin": "B3", "title": "t", "details": {"Size": 36893488147419103231}, '
    '"rating_number": 2e19}',
    '{"parent_asin": "B4", "title": "t", "price": 9007199254740993000000, "average_rating": NaN}',
    '{"parent_asin": "B5", "title": "t", "price": Infinity, "rating_number": -Infinity}',
    '{"parent_asin": "B6", "title": "half \\ud800 pair \\ud83d\\ude00", "features": ["\\udc00"]}',
    '{"parent_asin": "B7", "title": 1.5, '
    '"features": [[12345678901234567890123, "x"], {"a": 1e30}]}',
    '{"parent_asin": "B8", "title": "t", "price": 1e400, "categories": "One, \\"Two\\""}',
    '{"parent_asin": "B9", "title": "t", "title": "last wins", '
    '"details": {"A": 1, "B": true, "A": null}}',
    '{"parent_asin": "B10", "title": "t",}',
    "[1, 2]",
    "18446744073709551617",
    '{"title": "no id"}',
    '\ufeff{"parent_asin": "B11", "title": "t"}',
]


def halves_replaced(value: Any) -> Any:
    """`value` with each lone half of a UTF-16 pair as U+FFFD, as no UTF-8 text can hold one."""
    if isinstance(value, str):
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, list):
        return [halves_replaced(v) for v in value]
    if isinstance(value, dict):
        return {halves_replaced(k): halves_replaced(v) for k, v in value.items()}
    return value


@pytest.mark.parametrize("line", _ODD_LINES)
def test_catalog_lines_read_as_the_stdlib_json_reads_them(line: str) -> None:
    try:
        expected = product_from_record(halves_replaced(json.loads(line)))
    except json.JSONDecodeError as exc:
        with pytest.raises(RecordError, match=re.escape(f"not valid JSON ({exc.msg})")):
            parse_line(line)
        return
    except RecordError as exc:
        with pytest.raises(RecordError, match=re.escape(str(exc))):
            parse_line(line)
        return
    assert repr(parse_line(line)) == repr(expected)  # repr tells 1 from 1.0


def test_odd_values_become_what_they_say() -> None:
    big = parse_line(_ODD_LINES[0])
    assert big.title == "123456789012345678901234567890" and big.price == float(
        18446744073709551617
    )
    assert parse_line(_ODD_LINES[1]).features == ("99999999999999999999",)
    assert parse_line(_ODD_LINES[2]).details == {"Size": "36893488147419103231"}
    assert parse_line(_ODD_LINES[5]).title == "half \ufffd pair \U0001f600"
    assert parse_line(_ODD_LINES[4]).price == float("inf")
    with pytest.raises(RecordError, match="not valid JSON"):
        parse_line(_ODD_LINES[9])


def test_unusable_catalogs_are_clear_errors(cache: Path, tmp_path: Path) -> None:
    with pytest.raises(CatalogError, match="not found"):
        open_index(tmp_path / "missing.jsonl", progress=False)
    (tmp_path / "junk.jsonl").write_text("{not json\n")
    with pytest.raises(CatalogError, match="no valid products"):
        open_index(tmp_path / "junk.jsonl", progress=False)
    assert not list(cache.glob("index/*/manifest.json"))


def _open_in_child(catalog: str, cache_folder: str, results: multiprocessing.Queue) -> None:
    os.environ["SHOPCOPILOT_CACHE"] = cache_folder
    index = open_index(catalog, progress=False)
    results.put((index.fingerprint, index.manifest["build_id"], top_ids(index, "quokka")))


def test_concurrent_opens_build_once(cache: Path, hand_catalog: Path) -> None:
    catalog = hand_catalog
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    workers = [
        context.Process(target=_open_in_child, args=(str(catalog), str(cache), results))
        for _ in range(2)
    ]
    for worker in workers:
        worker.start()
    outcomes = [results.get(timeout=120) for _ in workers]
    for worker in workers:
        worker.join(timeout=60)
        assert worker.exitcode == 0
    assert outcomes[0] == outcomes[1]
    assert outcomes[0][2] == ["TITLE01", "DESC01"]
    assert len(list(cache.glob("index/*/manifest.json"))) == 1


# --- CLI -------------------------------------------------------------------------------


def test_cli_build_and_search(
    cache: Path, tmp_path: Path, hand_catalog: Path, hand_records: Records
) -> None:
    catalog = str(hand_catalog)
    runner = CliRunner()
    built = runner.invoke(main, ["index", "build", "--catalog", catalog])
    assert built.exit_code == 0, built.output
    assert f"products  {len(hand_records)}" in built.output
    wide = {"COLUMNS": "200"}
    search = ["search", "quilted parka", "--catalog", catalog, "-k", "3", "--max-price", "20"]
    found = runner.invoke(main, search, env=wide)
    assert found.exit_code == 0, found.output
    lines = [line for line in found.output.splitlines() if "PARKA" in line]
    assert "PARKA1" in lines[0] and "Quilted Parka" in lines[0] and "10.00" in lines[0]
    assert all("PARKA2" not in line for line in lines)
    fts = runner.invoke(
        main, ["search", "quokka", "--catalog", catalog, "--backend", "fts5"], env=wide
    )
    assert fts.exit_code == 0 and fts.output.index("TITLE01") < fts.output.index("DESC01")
    for args in (["index", "build", "--help"], ["search", "--help"]):
        assert runner.invoke(main, args).exit_code == 0
    bad = runner.invoke(main, ["search", "x", "--catalog", str(tmp_path / "missing.jsonl")])
    assert bad.exit_code != 0 and "not found" in bad.output


# --- real records ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def real_index(
    shared_data: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[CatalogIndex]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SHOPCOPILOT_CACHE", str(tmp_path_factory.mktemp("real") / "cache"))
        index = open_index(shared_data / "catalog_harvest.jsonl", progress=False)
        yield index
        index.close()


@pytest.fixture(scope="module")
def public_targets(shared_data: Path) -> list[str]:
    with (shared_data / "public_set.jsonl").open(encoding="utf-8") as handle:
        return [json.loads(line)["ground_truth"]["parent_asin"] for line in handle if line.strip()]


@pytest.mark.shared
@pytest.mark.parametrize("backend", BACKENDS)
def test_real_exact_titles_find_their_products_first(
    real_index: CatalogIndex, public_targets: list[str], backend: str
) -> None:
    ranks = []
    for asin in public_targets:
        hits = top_ids(real_index, real_index.store.get(asin).title, backend)
        assert asin in hits, asin  # always in the first ten
        ranks.append(hits.index(asin) + 1)
    # Real titles can be near twins ("... Crew T-Shirt" / "... V-Neck T-Shirt"), so not 100%.
    assert ranks.count(1) / len(ranks) >= 0.97


@pytest.mark.shared
def test_real_back_ends_agree_on_most_top_hits(real_index: CatalogIndex) -> None:
    rng = random.Random(5)
    ids = rng.sample(real_index.store.ids(), 100)
    # Short queries: three title words of a random product.
    titles = [real_index.store.get(i).title.split() for i in ids]
    queries = [" ".join(rng.sample(words, 3)) for words in titles if len(words) >= 3]
    same = {"limit": 1, "weights": STARTER_WEIGHTS}
    agree = sum(
        top_ids(real_index, q, "tantivy", **same) == top_ids(real_index, q, "fts5", **same)
        for q in queries
    )
    # Different BM25 flavours (per-field vs whole-row length norms) may split close calls.
    assert agree / len(queries) >= 0.6


def test_products_and_attributes_come_back_together(hand_index: CatalogIndex) -> None:
    """get_many_with_attributes agrees with get() and attributes() one by one."""
    store = hand_index.store
    asins = store.ids()[:10] + ["NOT-AN-ID"]
    both = store.get_many_with_attributes(asins)
    assert list(both) == asins[:10]
    for asin, (product, attributes) in both.items():
        assert product == store.get(asin) and attributes == store.attributes(asin)


def test_searches_run_together_answer_as_each_alone_in_the_order_asked(
    hand_index: CatalogIndex,
) -> None:
    asked = [
        (Query((terms("cotton dress"),)), 20),
        (Query((terms("everyday"),)), 7),
        (Query((terms("zzzz"),)), 5),
        (Query((phrase("cotton dress"),)), 12),
    ]
    options: dict[str, Any] = {"filters": Filters(max_price=60), "weights": {"description": 0.0}}
    together = hand_index.search_rows_together(asked, **options)
    fresh = CatalogIndex.load(hand_index.path, hand_index.catalog_path, progress=False)
    # A second handle on the folder remembers no answers: each is searched alone.
    alone = [fresh.search_rows(q, limit=n, **options) for q, n in asked]
    assert together == alone and together[0].rows and not together[2].rows
    assert hand_index.search_rows_together([]) == []
