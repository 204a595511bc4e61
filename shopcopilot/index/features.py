"""FeatureStore: every product's ranking evidence as arrays, built once per index.

A turn scores a few hundred candidates. Decoding each one's JSON and tokenising
its text at query time cost more than the scoring itself, so that work is done
once per catalog, while the index is built (`features_build`): each product's distinct
words (as ids), its token text for phrase tests, its canonical attribute values and its
numbers, and the inverted rows of each word and value, are written beside the index as
flat column files, slice by slice. A process opens them memory-mapped, so a million
products cost the pages a turn touches, not the whole catalog in memory, and every
worker shares one copy through the page cache. Scoring gathers the candidates' rows
(see `gather`), and the reranker works on whole columns.
"""

from __future__ import annotations

import json
import math
import mmap
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from ..versions import source_hash
from . import text as text_module

FEATURES_PREFIX = "rank-features-"
FEATURES_META = "meta.json"
# The features' folder is named by a hash of the code that writes them.
_BUILD_CODE = Path(__file__).with_name("features_build.py")
LIST_FACETS = ("colors", "materials", "sizes", "use_cases", "styles")
CODE_FACETS = ("department", "closure", "leaf", "brand_key", "store_key", "brand_name")
BATCH_ROWS = 5_000  # rows decoded at a time when walking every row
FACETS_CACHE = 100_000
FOUND_CACHE = 1_000_000  # remembered phrase searches (about 100 MB at most)
DENSE_HOLDERS = 2_000  # a word held by more rows is looked up in a mask
HOLDERS_CACHE_BYTES = 64 << 20  # remembered holders of asked-about words
REMEMBERED = 4096  # values `FeatureStore.remembered` keeps


@dataclass(frozen=True, slots=True)
class Ragged:
    """Rows of variable-length id lists in two flat arrays (row r is ids[ptr[r]:ptr[r+1]])."""

    ptr: np.ndarray  # int64, rows + 1
    ids: np.ndarray  # int32

    def gather(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(position in `rows`, id) for every id of the given rows, without a Python loop."""
        starts = self.ptr[rows]
        lengths = self.ptr[rows + 1] - starts
        owner = np.repeat(np.arange(len(rows)), lengths)
        first_out = np.cumsum(lengths) - lengths
        index = np.arange(int(lengths.sum())) + np.repeat(starts - first_out, lengths)
        return owner, self.ids[index]

    def row(self, row: int) -> np.ndarray:
        return self.ids[self.ptr[row] : self.ptr[row + 1]]

    def nonempty(self, rows: np.ndarray) -> np.ndarray:
        return self.ptr[rows + 1] > self.ptr[rows]


@dataclass(frozen=True, slots=True)
class Keys:
    """Strings numbered 0, 1, ... (product ids, words) as one fixed-width byte array, found by a
    binary search through their sorted order: a dict of a million Python strings costs about
    150 MB in every process, these arrays are mapped from disk and shared."""

    raw: np.ndarray  # S<width>: key i, UTF-8
    by_rank: np.ndarray  # intp: key numbers in sorted order
    rank: np.ndarray  # int32: each key's position in sorted order

    def __post_init__(self) -> None:
        # searchsorted copies a sorter of any other dtype on every call: 0.4 ms at a million keys.
        if self.by_rank.dtype != np.intp:
            object.__setattr__(self, "by_rank", self.by_rank.astype(np.intp))

    @classmethod
    def of(cls, keys: Iterable[str]) -> Keys:
        raw = np.array([k.encode("utf-8") for k in keys], dtype=np.bytes_)
        return cls.sorted(raw if len(raw) else np.zeros(0, dtype="S1"))

    @classmethod
    def sorted(cls, raw: np.ndarray) -> Keys:
        """The keys of a fixed-width byte array, in its order."""
        by_rank = np.argsort(raw, kind="stable").astype(np.intp)
        rank = np.empty(len(raw), dtype=np.int32)
        rank[by_rank] = np.arange(len(raw), dtype=np.int32)
        return cls(raw, by_rank, rank)

    def __len__(self) -> int:
        return len(self.raw)

    def __getitem__(self, number: int) -> str:
        return bytes(self.raw[number]).decode("utf-8")

    def __iter__(self) -> Iterator[str]:
        for start in range(0, len(self.raw), BATCH_ROWS):
            yield from (k.decode("utf-8") for k in self.raw[start : start + BATCH_ROWS].tolist())

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and self.get(key) is not None

    def get(self, key: str) -> int | None:
        """The key's number, or None."""
        encoded = key.encode("utf-8")
        # A fixed-width array drops trailing NULs and cannot hold a longer key: neither is stored.
        if not len(self.raw) or len(encoded) > self.raw.itemsize or encoded.endswith(b"\0"):
            return None
        at = int(self.raw.searchsorted(encoded, sorter=self.by_rank))
        if at < len(self.raw) and self.raw[number := int(self.by_rank[at])] == encoded:
            return number
        return None

    def numbers(self, keys: Iterable[str]) -> np.ndarray:
        """The numbers of the known keys, in the order given (unknown keys are skipped)."""
        found = (self.get(k) for k in keys)
        return np.array([n for n in found if n is not None], dtype=np.int64)


@dataclass(frozen=True, slots=True)
class Postings:
    """A Ragged turned inside out: for each id, the rows that hold it, ascending. A turn asks
    about a dozen words over a few hundred candidates; looking the candidates up in each word's
    rows is cheaper than gathering every word of every candidate."""

    ptr: np.ndarray  # int64, ids + 1
    rows: np.ndarray  # int32

    @classmethod
    def of(cls, ragged: Ragged, id_count: int) -> Postings:
        owner = np.repeat(np.arange(len(ragged.ptr) - 1, dtype=np.int32), np.diff(ragged.ptr))
        ptr = np.zeros(id_count + 1, dtype=np.int64)
        np.cumsum(np.bincount(ragged.ids, minlength=id_count), out=ptr[1:])
        return cls(ptr, owner[_stable_order(ragged.ids)])

    def rows_of(self, wanted: int) -> np.ndarray:
        return self.rows[self.ptr[wanted] : self.ptr[wanted + 1]]

    def held_by(self, groups: Sequence[Iterable[int]], rows: np.ndarray) -> list[np.ndarray]:
        """Per group of ids (a word's forms), per row: does any of the group's ids list it? A
        binary search of the rows, sorted once, in each id's sorted rows (each search starts
        where the last ended): a few thousand lookups, where a mask over the catalog would cost
        a pass over a common word's rows."""
        order = np.argsort(rows, kind="stable")
        ascending = rows[order]
        out = []
        for ids in groups:
            found = np.zeros(len(rows), dtype=bool)
            for number in ids:
                held = self.rows_of(number)
                if len(held):
                    wanted = ascending.astype(held.dtype, copy=False)
                    found |= held.take(held.searchsorted(wanted), mode="clip") == wanted
            in_order = np.empty_like(found)
            in_order[order] = found
            out.append(in_order)
        return out


@dataclass(frozen=True, slots=True)
class Holders:
    """The rows holding a word in any of its forms: sorted rows when few, else a mask over all
    rows (a lookup per candidate, where a binary search through thousands of rows is slow)."""

    sorted_rows: np.ndarray | None  # int32
    mask: np.ndarray | None

    @classmethod
    def of(cls, parts: list[np.ndarray], row_count: int) -> Holders:
        """The holders of several sorted row lists (a word's forms)."""
        if sum(map(len, parts)) <= DENSE_HOLDERS:
            return cls(parts[0] if len(parts) == 1 else np.unique(np.concatenate(parts)), None)
        mask = np.zeros(row_count, dtype=bool)
        for rows in parts:
            mask[rows] = True
        return cls(None, mask)

    @property
    def nbytes(self) -> int:
        held = self.mask if self.mask is not None else self.sorted_rows
        assert held is not None  # `of` sets exactly one of mask and sorted_rows
        return held.nbytes

    def among(self, rows: np.ndarray) -> np.ndarray:
        """Per row: does it hold the word?"""
        if self.mask is not None:
            return self.mask[rows]
        held = self.sorted_rows
        assert held is not None  # `of` sets sorted_rows whenever it leaves mask None
        if not len(held):
            return np.zeros(len(rows), dtype=bool)
        rows = rows.astype(held.dtype, copy=False)  # else numpy widens all of `held` per call
        return held.take(held.searchsorted(rows), mode="clip") == rows


def _stable_order(ids: np.ndarray) -> np.ndarray:
    """argsort(ids, kind="stable") for ids >= 0, as a radix sort on 16-bit digits: numpy sorts
    16-bit keys by radix, several times faster than its stable sort of wider ones."""
    order = np.arange(len(ids))
    shift, top = 0, int(ids.max()) if len(ids) else 0
    while True:
        digit = ((ids[order] >> shift) & 0xFFFF).astype(np.uint16)
        order = order[np.argsort(digit, kind="stable")]
        shift += 16
        if top >> shift == 0:
            return order


class Facets(NamedTuple):
    """A product's canonical values, decoded for the few products a question or reason needs
    (a tuple: a turn may create dozens, and a frozen dataclass costs ten times more to make)."""

    colors: tuple[str, ...]
    materials: tuple[str, ...]
    sizes: tuple[str, ...]
    use_cases: tuple[str, ...]
    styles: tuple[str, ...]
    department: str | None
    closure: str | None
    leaf: str
    brand: str | None  # the brand, else the store: what a shopper would call it
    price: float | None


@dataclass(slots=True)
class FeatureStore:
    asins: Keys  # product id of each row; rank: the reranker's final tie-break
    word_id: Keys  # product words and category stems share one vocabulary
    words: Ragged  # distinct words of each product's text, plus its category stems
    category_stems: Ragged
    # " tok tok | tok ... " per product: a phrase matches if its token string is a substring
    text: bytes | mmap.mmap
    text_ptr: np.ndarray
    lead: bytes | mmap.mmap  # the first feature lines' token strings, NUL-separated
    lead_ptr: np.ndarray
    lists: dict[str, Ragged]  # LIST_FACETS -> value ids
    codes: dict[str, np.ndarray]  # CODE_FACETS -> value id, -1 when unknown
    value_names: list[str]  # value id -> canonical value (every facet shares one table)
    price: np.ndarray  # NaN when unknown
    rating: np.ndarray  # NaN when unknown
    popularity: np.ndarray
    # The inverted rows of "words", "category_stems" and each list facet: read from the index
    # folder, or built on first use for a store made in memory.
    _postings: dict[str, Postings] = field(default_factory=dict)
    value_id: dict[str, int] = field(default_factory=dict)
    _facets: dict[int, Facets] = field(
        default_factory=dict
    )  # a session asks about the same products again
    # (phrase, in lead lines?) -> row -> where the phrase first occurs (-1: nowhere). A conversation
    # tests the same requirements on mostly the same candidates every turn.
    _found: dict[tuple[bytes, bool], dict[int, int]] = field(default_factory=dict)
    _found_count: int = 0
    # (postings name, ids of a word's forms) -> their holders: conversations ask about the same
    # words.
    _holders: dict[tuple[str, tuple[int, ...]], Holders] = field(default_factory=dict)
    _holders_bytes: int = 0
    # What a later stage works out once per store (the values naming a child, a department's
    # rows, whether a kind is mostly a child's): key -> value, forgotten all at once when full.
    _remembered: dict[Any, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.value_id = {name: i for i, name in enumerate(self.value_names)}

    @property
    def asin_order(self) -> np.ndarray:
        """Rank of each product's id in sorted order: the reranker's final tie-break."""
        return self.asins.rank

    def __len__(self) -> int:
        return len(self.asins)

    def rows(self, asins: Iterable[str]) -> np.ndarray:
        """Rows of the known ids, in the order given (unknown ids are skipped)."""
        return self.asins.numbers(asins)

    def row_of(self, asin: str) -> int | None:
        return self.asins.get(asin)

    @staticmethod
    def of_store_rows(store_rows: np.ndarray) -> np.ndarray:
        """Feature rows of index-store rows: the store numbers products 1, 2, ... and this store
        was built from it in that order."""
        return store_rows - 1

    def code_name(self, facet: str, row: int) -> str | None:
        code = int(self.codes[facet][row])
        return self.value_names[code] if code >= 0 else None

    def warm_facets(self) -> None:
        """Decode every product's facets now (about 0.3 s at 50k, in slices), if the cache holds
        them all."""
        if len(self) > FACETS_CACHE:
            return
        for start in range(0, len(self), BATCH_ROWS):
            self.facets(list(range(start, min(start + BATCH_ROWS, len(self)))))

    def postings(self, name: str) -> Postings:
        """The inverted rows of "words", "category_stems" or a list facet (about 0.3 s for the
        words of 50k products, once)."""
        postings = self._postings.get(name)
        if postings is None:
            ragged = self.lists[name] if name in self.lists else getattr(self, name)
            id_count = len(self.value_names) if name in self.lists else len(self.word_id)
            postings = self._postings[name] = Postings.of(ragged, id_count)
        return postings

    def holders(self, name: str, ids: tuple[int, ...]) -> Holders:
        """The rows holding any of `ids` in the postings `name`."""
        key = (name, ids)
        found = self._holders.get(key)
        if found is None:
            postings = self.postings(name)
            found = Holders.of([postings.rows_of(i) for i in ids], len(self))
            if self._holders_bytes + found.nbytes > HOLDERS_CACHE_BYTES:
                self._holders.clear()
                self._holders_bytes = 0
            self._holders[key] = found
            self._holders_bytes += found.nbytes
        return found

    def word_ids(self, word: str) -> tuple[int, ...]:
        """The ids of an index token and of its category stem ("shoes": the word in titles and
        features, "shoe" in category paths), where the store has them."""
        forms = dict.fromkeys((word, text_module.stem(word)))
        return tuple(i for i in map(self.word_id.get, forms) if i is not None)

    def remembered(self, key: Any, make: Callable[[], Any]) -> Any:
        """`make()`, worked out once per key for this store."""
        if key not in self._remembered:
            if len(self._remembered) >= REMEMBERED:
                self._remembered.clear()
            self._remembered[key] = make()
        return self._remembered[key]

    def holder_count(self, word: str) -> int:
        """About how many products hold an index token (its commoner form's count)."""
        ptr = self.postings("words").ptr
        return max((int(ptr[i + 1] - ptr[i]) for i in self.word_ids(word)), default=0)

    def holds_words(self, words: Sequence[str], rows: np.ndarray) -> list[np.ndarray]:
        """Per word, per row: does the product hold the index token (or its category stem)?"""
        return self.postings("words").held_by([self.word_ids(w) for w in words], rows)

    def facets(self, rows: list[int]) -> list[Facets]:
        """The rows' canonical values, in order; rows not seen before are decoded together."""
        missing = [row for row in dict.fromkeys(rows) if row not in self._facets]
        if missing:
            if len(self._facets) + len(missing) > FACETS_CACHE:
                self._facets.clear()
            self._facets.update(zip(missing, self._decode_facets(missing), strict=True))
        return [self._facets[row] for row in rows]

    def find(self, key: bytes, rows: np.ndarray, lead: bool = False) -> list[int]:
        """Where `key` first occurs in each row's token text (or lead lines), as an offset into
        `text` (`lead`); -1 where it does not."""
        known = self._found.get((key, lead))
        if known is None:
            known = self._found[(key, lead)] = {}
        wanted = rows.tolist()
        missing = [row for row in wanted if row not in known]
        if missing:
            if self._found_count + len(missing) > FOUND_CACHE:
                self._found.clear()
                self._found_count = 0
                known = self._found[(key, lead)] = {}
            blob, ptr = (self.lead, self.lead_ptr) if lead else (self.text, self.text_ptr)
            at = np.array(missing)
            find = blob.find
            known.update(
                (row, find(key, start, end))
                for row, start, end in zip(
                    missing, ptr[at].tolist(), ptr[at + 1].tolist(), strict=True
                )
            )
            self._found_count += len(missing)
        return [known[row] for row in wanted]

    def _decode_facets(self, rows: list[int]) -> list[Facets]:
        names = self.value_names
        at = np.asarray(rows, dtype=np.int64)
        listed: dict[str, list[list[str]]] = {}
        for facet in LIST_FACETS:
            values: list[list[str]] = [[] for _ in rows]
            listed[facet] = values
            owner, ids = self.lists[facet].gather(at)
            for position, value_id in zip(owner.tolist(), ids.tolist(), strict=True):
                values[position].append(names[value_id])
        codes = {
            facet: self.codes[facet][at].tolist()
            for facet in ("department", "closure", "leaf", "brand_name")
        }
        named = {
            facet: [names[c] if c >= 0 else None for c in column] for facet, column in codes.items()
        }
        prices = self.price[at].tolist()
        return [
            Facets(
                colors=tuple(listed["colors"][i]),
                materials=tuple(listed["materials"][i]),
                sizes=tuple(listed["sizes"][i]),
                use_cases=tuple(listed["use_cases"][i]),
                styles=tuple(listed["styles"][i]),
                department=named["department"][i],
                closure=named["closure"][i],
                leaf=named["leaf"][i] or "",
                brand=named["brand_name"][i],
                price=None if math.isnan(prices[i]) else prices[i],
            )
            for i in range(len(rows))
        ]


def features_folder(folder: Path) -> Path:
    """Where this code's features of the index in `folder` live."""
    return folder / f"{FEATURES_PREFIX}{features_version()}"


@lru_cache(maxsize=1)
def features_version() -> str:
    """A hash of the code that builds the features (not of this module's reading code, so a change
    to how a turn reads them costs no rebuild): when it changes, saved features are stale."""
    return source_hash(_BUILD_CODE, text_module.__file__)


def _read_meta(target: Path, rows: int | None) -> dict[str, Any] | None:
    """The features folder's meta when it is complete, for `rows` products (None: any), and every
    file has the size it was written with; else None."""
    try:
        meta = json.loads((target / FEATURES_META).read_text(encoding="utf-8"))
        if rows is not None and meta["rows"] != rows:
            return None
        for name, size in meta["sizes"].items():
            if (target / name).stat().st_size != size:
                return None
        return meta if isinstance(meta["dtypes"], dict) else None
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _open(target: Path, meta: dict[str, Any]) -> FeatureStore:
    """Every column mapped read-only: pages are read when a turn touches them, and shared by every
    process that opens the same index."""
    dtypes = meta["dtypes"]

    def column(name: str) -> np.ndarray:
        return _column(target / name, dtypes[name])

    def keys(name: str) -> Keys:
        return Keys(*(column(f"{name}-{part}") for part in ("raw", "by_rank", "rank")))

    return FeatureStore(
        asins=keys("asins"),
        word_id=keys("words"),
        words=_ragged_column(target, "words", dtypes),
        category_stems=_ragged_column(target, "category_stems", dtypes),
        text=_mapped(target / "text-ids"),
        text_ptr=column("text-ptr"),
        lead=_mapped(target / "lead-ids"),
        lead_ptr=column("lead-ptr"),
        lists={f: _ragged_column(target, f"list-{f}", dtypes) for f in LIST_FACETS},
        codes={f: column(f"code-{f}") for f in CODE_FACETS},
        value_names=json.loads((target / "values.json").read_text(encoding="utf-8")),
        price=column("price"),
        rating=column("rating"),
        popularity=column("popularity"),
        _postings={
            name: Postings(column(f"postings-{key}-ptr"), column(f"postings-{key}-rows"))
            for name, key in (
                ("words", "words"),
                ("category_stems", "category_stems"),
                *((f, f"list-{f}") for f in LIST_FACETS),
            )
        },
    )


def _ragged_column(target: Path, name: str, dtypes: dict[str, str]) -> Ragged:
    return Ragged(
        _column(target / f"{name}-ptr", dtypes[f"{name}-ptr"]),
        _column(target / f"{name}-ids", dtypes[f"{name}-ids"]),
    )


def _mapped(path: Path) -> bytes | mmap.mmap:
    """A file's bytes, mapped read-only (an empty file cannot be mapped: b"")."""
    with path.open("rb") as handle:
        if not os.fstat(handle.fileno()).st_size:
            return b""
        return mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)


def _column(path: Path, dtype: str) -> np.ndarray:
    """A read-only array over the mapped file (a plain ndarray, not np.memmap: arithmetic on it
    returns ordinary arrays)."""
    return np.frombuffer(_mapped(path), dtype=np.dtype(dtype))
