"""The ranking feature store: built once per index (in parallel slices, written as column files),
memory-mapped, rebuilt when damaged or from other code."""

from __future__ import annotations

import numpy as np
import pytest

from shopcopilot.index import features as F
from shopcopilot.index import features_build as B


@pytest.fixture(scope="module")
def index(synthetic_index):
    """The generated catalog's index from conftest.py (the agent tests read it too)."""
    return synthetic_index


def ragged(rows: list[list[int]]) -> F.Ragged:
    """Row r holds rows[r]."""
    ptr = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum([len(r) for r in rows], out=ptr[1:])
    return F.Ragged(ptr, np.array([i for r in rows for i in r], dtype=np.int32))


def test_gather_returns_each_rows_ids_in_order():
    ragged_rows = ragged([[1, 2], [], [3], [4, 5, 6]])
    owner, ids = ragged_rows.gather(np.array([3, 0, 1, 2]))
    assert owner.tolist() == [0, 0, 0, 1, 1, 3]
    assert ids.tolist() == [4, 5, 6, 1, 2, 3]


@pytest.mark.parametrize("id_count", [10, 70_000, 5_000_000])  # one, two and three radix digits
def test_postings_list_the_rows_holding_each_id_as_a_scan_would(id_count):
    rng = np.random.default_rng(id_count)
    rows = [sorted(set(rng.integers(0, id_count, rng.integers(0, 6)).tolist())) for _ in range(300)]
    rows[7] = [id_count - 1, 0]  # the extremes, in a row not sorted by id
    postings = F.Postings.of(ragged(rows), id_count)
    for wanted in {0, id_count - 1, *rng.integers(0, id_count, 20).tolist(), *rows[150]}:
        assert postings.rows_of(wanted).tolist() == [
            r for r, ids in enumerate(rows) if wanted in ids
        ]


@pytest.mark.parametrize(
    "held", [[], [4], [0, 3, 9, 12], list(range(0, 5000, 2))]
)  # sparse and dense
def test_holders_answer_for_any_rows_in_any_order(held):
    holders = F.Holders.of([np.array(held, dtype=np.int32)], 5000)
    assert (holders.mask is not None) == (len(held) > F.DENSE_HOLDERS)
    asked = np.array([12, 0, 4999, 3, 3, 4, 13, 2])
    assert holders.among(asked).tolist() == [row in held for row in asked.tolist()]
    assert holders.among(np.array([], dtype=np.int64)).tolist() == []
    halves = F.Holders.of(
        [np.array(held[::2], dtype=np.int32), np.array(held[1::2], dtype=np.int32)], 5000
    )
    assert halves.among(asked).tolist() == holders.among(asked).tolist()


def test_postings_order_rows_as_numpys_stable_argsort_of_their_ids():
    # One id per row: the postings' rows are then the rows sorted by id, ties in row order.
    ids = np.random.default_rng(3).integers(0, 200_000, 5_000).astype(np.int32)
    postings = F.Postings.of(ragged([[i] for i in ids.tolist()]), 200_000)
    assert postings.rows.tolist() == np.argsort(ids, kind="stable").tolist()


def test_parallel_slices_equal_one_build(index, monkeypatch, tmp_path):
    monkeypatch.setattr(B, "SLICE_ROWS", len(index.store))
    (tmp_path / "whole").mkdir()
    whole = B.load_or_build(index.store, tmp_path / "whole")  # one slice, in this process
    monkeypatch.setattr(B, "SLICE_ROWS", 250)
    monkeypatch.setattr(B, "PARALLEL_MIN_ROWS", 0)
    (tmp_path / "sliced").mkdir()
    sliced = B.load_or_build(index.store, tmp_path / "sliced")
    assert list(sliced.asins) == list(whole.asins) == index.store.ids()
    assert sliced.text[:] == whole.text[:] and sliced.lead[:] == whole.lead[:]
    words = dict(enumerate(whole.word_id))
    sliced_words = dict(enumerate(sliced.word_id))
    for row in range(0, len(whole), 37):
        assert sorted(words[i] for i in whole.words.row(row)) == sorted(
            sliced_words[i] for i in sliced.words.row(row)
        )
        assert whole.facets([row]) == sliced.facets([row])
    assert np.array_equal(whole.price, sliced.price, equal_nan=True)


@pytest.mark.parametrize("chunk", [B.POSTING_CHUNK_IDS, 1, 997])  # 1: a row at a time
def test_written_postings_equal_those_inverted_in_memory(index, monkeypatch, tmp_path, chunk):
    monkeypatch.setattr(B, "POSTING_CHUNK_IDS", chunk)
    monkeypatch.setattr(B, "SLICE_ROWS", 300)
    written = B.load_or_build(index.store, tmp_path)
    for name in ("words", "category_stems", *F.LIST_FACETS):
        ragged = written.lists[name] if name in written.lists else getattr(written, name)
        id_count = len(written.value_names) if name in written.lists else len(written.word_id)
        expected = F.Postings.of(ragged, id_count)
        assert np.array_equal(written.postings(name).ptr, expected.ptr), name
        assert np.array_equal(written.postings(name).rows, expected.rows), name


def test_keys_find_each_key_and_nothing_else():
    names = ["b", "a", "ab", "abc", "B0012", "zz", "é", ""]
    keys = F.Keys.of(names)
    assert [keys.get(n) for n in names] == list(range(len(names)))
    assert [keys[i] for i in range(len(names))] == names == list(keys)
    for absent in ("c", "abcd", "a" * 10, "aa", "\0", "b\0"):
        assert keys.get(absent) is None and absent not in keys
    assert keys.numbers(["zz", "nope", "a"]).tolist() == [5, 1]
    assert sorted(names, key=lambda n: keys.rank[keys.get(n)]) == sorted(names)
    assert F.Keys.of([]).get("a") is None and len(F.Keys.of([])) == 0


def test_opened_columns_are_mapped_from_the_index_folder(index):
    features = B.load_or_build(index.store, index.path)
    for column in (features.words.ids, features.price, features.asins.raw, features.codes["leaf"]):
        assert not column.flags.owndata and not column.flags.writeable
    assert features.postings("words") is features.postings("words")
    assert type(features.text).__name__ == "mmap"


def test_facets_are_the_stored_attributes(index):
    features = B.load_or_build(index.store, index.path)
    for asin in index.store.ids()[::97]:
        row = features.row_of(asin)
        attributes, product = index.store.attributes(asin), index.store.get(asin)
        facets = features.facets([row])[0]
        assert facets.colors == attributes.colors and facets.sizes == attributes.sizes
        assert facets.materials == attributes.material_names and facets.styles == attributes.styles
        assert (
            facets.department == (attributes.department or None) and facets.leaf == attributes.leaf
        )
        assert facets.brand == ((attributes.brand or product.store) or None)
        assert facets.price == product.price


def test_facets_decoded_together_equal_one_at_a_time(index):
    rows = list(range(0, len(index.store), 53))
    together = B.load_or_build(index.store, index.path).facets(rows + rows[:3])
    one_at_a_time = [
        B.load_or_build(index.store, index.path).facets([row])[0] for row in rows + rows[:3]
    ]
    assert together == one_at_a_time and len(together) == len(rows) + 3


def test_remembered_phrase_finds_equal_a_fresh_search(index, monkeypatch):
    features = B.load_or_build(index.store, index.path)
    monkeypatch.setattr(F, "FOUND_CACHE", 500)  # forces evictions along the way
    rows = np.arange(0, len(features), 3)

    def fresh(key, lead):
        blob, ptr = (
            (features.lead, features.lead_ptr) if lead else (features.text, features.text_ptr)
        )
        return [blob.find(key, int(ptr[r]), int(ptr[r + 1])) for r in rows]

    for key in (b" machine wash ", b" imported ", b" no such words here ", b" machine wash "):
        for lead in (False, True):
            expected = fresh(key, lead)
            assert features.find(key, rows, lead=lead) == expected
            assert features.find(key, rows[::-1], lead=lead) == expected[::-1]  # now from memory
    assert any(at >= 0 for at in fresh(b" imported ", False))


@pytest.mark.parametrize("cache_bytes", [F.HOLDERS_CACHE_BYTES, 1])  # 1: every answer overflows it
def test_holders_of_a_words_forms_are_every_row_holding_any_form(index, monkeypatch, cache_bytes):
    monkeypatch.setattr(F, "HOLDERS_CACHE_BYTES", cache_bytes)
    features = B.load_or_build(index.store, index.path)
    found = (features.word_id.get(w) for w in ("dress", "dresses"))
    ids = tuple(i for i in found if i is not None)
    assert ids
    every_row = np.arange(len(features))
    for _ in range(2):  # fresh, then remembered (or rebuilt)
        held = features.holders("words", ids).among(every_row)
        assert held.tolist() == [
            bool(set(ids) & set(features.words.row(r).tolist())) for r in range(len(features))
        ]


def test_saved_features_are_reused_and_a_damaged_file_is_rebuilt(index, monkeypatch, tmp_path):
    # In a folder of its own: other tests' agents map the index folder's files.
    first = B.load_or_build(index.store, tmp_path)
    saved = F.features_folder(tmp_path)
    assert (saved / F.FEATURES_META).is_file()
    built = B.build_features
    monkeypatch.setattr(B, "build_features", lambda *a, **k: pytest.fail("built again"))
    again = B.load_or_build(index.store, tmp_path)
    assert list(again.asins) == list(first.asins) and again.text[:] == first.text[:]
    asins, word_ids = list(first.asins), first.words.ids.copy()
    del first, again  # their maps of the file damaged below would fault when read
    with (saved / "words-ids").open("r+b") as handle:
        handle.truncate(8)  # a damaged column: its size no longer matches the meta file
    calls = []
    monkeypatch.setattr(B, "build_features", lambda *a, **k: calls.append(1) or built(*a, **k))
    rebuilt = B.load_or_build(index.store, tmp_path)
    assert calls == [1] and list(rebuilt.asins) == asins
    assert np.array_equal(rebuilt.words.ids, word_ids)


def test_features_from_older_code_are_removed(index):
    stale_folder = index.path / f"{F.FEATURES_PREFIX}000000000000"
    stale_folder.mkdir(exist_ok=True)
    (stale_folder / "words-ids").write_bytes(b"old")
    stale_pickle = index.path / f"{F.FEATURES_PREFIX}000000000001.pkl"
    stale_pickle.write_bytes(b"old")
    current = F.features_folder(index.path)
    (current / F.FEATURES_META).unlink(missing_ok=True)
    B.load_or_build(index.store, index.path)
    assert (current / F.FEATURES_META).is_file()
    assert not stale_folder.exists() and not stale_pickle.exists()


def test_ensure_built_builds_once_without_loading(index, monkeypatch):
    meta = F.features_folder(index.path) / F.FEATURES_META
    meta.unlink(missing_ok=True)
    B.ensure_built(index.store, index.path)
    assert meta.is_file() and B.is_written(index.store, index.path)
    monkeypatch.setattr(B, "load_or_build", lambda *a, **k: pytest.fail("rebuilt or loaded again"))
    monkeypatch.setattr(B, "build_features", lambda *a, **k: pytest.fail("rebuilt"))
    B.ensure_built(index.store, index.path)


def test_the_features_folder_is_named_by_the_code_that_writes_them_only():
    # A change to how a turn reads the features must not make every index rebuild them.
    from shopcopilot.index import text
    from shopcopilot.versions import source_hash

    assert F.features_version() == source_hash(B.__file__, text.__file__)
    assert F.features_version() != source_hash(F.__file__, B.__file__, text.__file__)
