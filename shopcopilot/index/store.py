"""The product store: every product's record and derived attributes in one SQLite file.

Opened read-only and immutable after the build, so any number of processes can
share it without locks, and opening costs one file open whatever the size.
"""

from __future__ import annotations

import json
import math
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import orjson

from ..catalog.product import Product, product_from_record
from .derived import Derived, attributes_from_dict
from .errors import CorruptIndexError, sqlite_errors_as_corruption

STORE_FILE = "store.sqlite"
WRITE_BATCH = 1000
SQLITE_MAX_PARAMS = 900  # under SQLite's historic 999-parameter limit

_SCHEMA = """
CREATE TABLE products (
    row INTEGER PRIMARY KEY,          -- also the tantivy "row" fast field
    parent_asin TEXT NOT NULL UNIQUE,
    record TEXT NOT NULL,             -- the normalised official JSON layout
    attributes TEXT NOT NULL,         -- derived attributes, Attributes.to_dict()
    price REAL,
    average_rating REAL,
    rating_number INTEGER,
    department TEXT NOT NULL,         -- lower-cased, '' when unknown
    leaf_category TEXT NOT NULL
);
"""


@dataclass(frozen=True, slots=True)
class ProductFacts:
    """The per-product columns that filters and tie-breaks need, without decoding JSON."""

    parent_asin: str
    price: float | None
    average_rating: float | None
    rating_number: int | None
    department: str
    leaf_category: str


# What json.dumps(value, ensure_ascii=False) makes, without building an encoder per call.
_JSON_TEXT = json.JSONEncoder(ensure_ascii=False).encode
PRICE_COLUMN = 3  # in store_columns()


def json_text(value: Any, floats: Iterable[float | None] = ()) -> str:
    """`value` as JSON text that json.loads reads back equal to `value`; `floats` lists every float
    in it.

    orjson writes it about 4x faster than the stdlib (compact, without spaces; every reader parses
    the text, none compares it). orjson cannot write three things the stdlib can, so those values
    take the stdlib's path: a non-finite float (orjson would write null, so `floats` are checked;
    their sum is non-finite if any is, or on overflow, which only costs the slow path), an integer
    beyond 64 bits and a string holding a lone surrogate (orjson raises on both).
    """
    if math.isfinite(sum(f for f in floats if f is not None)):
        try:
            return orjson.dumps(value).decode()
        except orjson.JSONEncodeError:
            pass
    return _JSON_TEXT(value)


def _attribute_floats(attributes: dict[str, Any]) -> Iterator[float | None]:
    """Every float in Attributes.to_dict()."""
    yield attributes["price"]
    for material in attributes["materials"]:
        yield material["percent"]
    for dimension in attributes["dimensions"]:
        yield from dimension["values"]


def store_columns(product: Product, derived: Derived) -> tuple[Any, ...]:
    """A product's row after the row number, serialised (done in the build's worker processes)."""
    return (
        product.parent_asin,
        json_text(product.to_record(), (product.price, product.average_rating)),
        json_text(derived.attributes, _attribute_floats(derived.attributes)),
        product.price,
        product.average_rating,
        product.rating_number,
        derived.department,
        product.leaf_category,
    )


class StoreWriter:
    """Appends products during a build; rows are numbered 1, 2, ... in insertion order."""

    def __init__(self, path: Path) -> None:
        self._db = sqlite3.connect(path)
        # The build happens in a temp folder that a crash throws away, so durability is not needed.
        self._db.execute("PRAGMA journal_mode=OFF")
        self._db.execute("PRAGMA synchronous=OFF")
        self._db.executescript(_SCHEMA)
        self._pending: list[tuple[Any, ...]] = []
        self.rows = 0

    def add(self, columns: tuple[Any, ...]) -> int:
        """Append one product's `store_columns()`; returns its row number."""
        self.rows += 1
        self._pending.append((self.rows, *columns))
        if len(self._pending) >= WRITE_BATCH:
            self._flush()
        return self.rows

    def close(self) -> None:
        self._flush()
        self._db.commit()
        self._db.close()

    def _flush(self) -> None:
        if self._pending:
            self._db.executemany("INSERT INTO products VALUES (?,?,?,?,?,?,?,?,?)", self._pending)
            self._pending.clear()


def stored_json_rows(
    path: Path, first: int = 0, last: int | None = None
) -> Iterator[tuple[str, str]]:
    """(record JSON, attributes JSON) of the products at positions first..last-1 in row order,
    undecoded (safe in a forked worker)."""
    # Rows are numbered 1, 2, ... in insertion order (StoreWriter.add).
    sql = "SELECT record, attributes FROM products WHERE row > ? AND row <= ? ORDER BY row"
    return _stream(path, sql, (first, last if last is not None else 2**62))


def _stream(path: Path, sql: str, params: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Rows of a long query on a private connection: it must not hold a shared one's lock."""
    with sqlite_errors_as_corruption(path):
        db = read_only_connection(path)
        try:
            yield from db.execute(sql, params)
        finally:
            db.close()


def read_only_connection(path: Path) -> sqlite3.Connection:
    """A connection that never writes or locks: the file is immutable once built."""
    if not path.is_file():
        raise CorruptIndexError(f"{path}: missing")
    return sqlite3.connect(
        f"{path.as_uri()}?mode=ro&immutable=1", uri=True, check_same_thread=False
    )


class ProductStore:
    """Read-only id lookups with a small LRU cache of decoded products."""

    def __init__(self, path: str | Path, cache_size: int = 4096) -> None:
        self.path = Path(path)
        self._db = read_only_connection(self.path)
        self._lock = threading.Lock()  # one connection shared by threads
        self._product = lru_cache(maxsize=cache_size)(self._load_product)
        self._attributes = lru_cache(maxsize=cache_size)(self._load_attributes)
        counted = self._fetch_one("SELECT count(*) FROM products", ())
        assert counted is not None  # an aggregate without GROUP BY always returns one row
        self._count = counted[0]
        self._rows: list[str] | None = None

    def __reduce__(self) -> tuple[Any, ...]:
        return (ProductStore, (str(self.path),))

    def __len__(self) -> int:
        return self._count

    def __contains__(self, parent_asin: object) -> bool:
        if not isinstance(parent_asin, str):
            return False
        return (
            self._fetch_one("SELECT 1 FROM products WHERE parent_asin = ?", (parent_asin,))
            is not None
        )

    def get(self, parent_asin: str) -> Product | None:
        return self._product(parent_asin)

    def attributes(self, parent_asin: str) -> Any | None:
        """The derived `Attributes` of a product, or None for an unknown id."""
        return self._attributes(parent_asin)

    def get_many(self, parent_asins: Iterable[str]) -> dict[str, Product]:
        """The known products among `parent_asins`, in the order asked (unknown ids are absent)."""
        wanted = list(dict.fromkeys(parent_asins))
        found = self._select_by_asin("parent_asin, record", wanted)
        out: dict[str, Product] = {}
        for asin in wanted:
            if asin in found:
                out[asin] = product_from_record(json.loads(found[asin][1]))
        return out

    def get_many_with_attributes(
        self, parent_asins: Iterable[str]
    ) -> dict[str, tuple[Product, Any]]:
        """(Product, Attributes) of the known products among `parent_asins`, in one query."""
        wanted = list(dict.fromkeys(parent_asins))
        found = self._select_by_asin("parent_asin, record, attributes", wanted)
        return {
            asin: (
                product_from_record(json.loads(found[asin][1])),
                attributes_from_dict(json.loads(found[asin][2])),
            )
            for asin in wanted
            if asin in found
        }

    def facts(self, parent_asin: str) -> ProductFacts | None:
        return self.facts_many([parent_asin]).get(parent_asin)

    def facts_many(self, parent_asins: Iterable[str]) -> dict[str, ProductFacts]:
        wanted = list(dict.fromkeys(parent_asins))
        columns = "parent_asin, price, average_rating, rating_number, department, leaf_category"
        found = self._select_by_asin(columns, wanted)
        return {asin: ProductFacts(*found[asin]) for asin in wanted if asin in found}

    def ids(self) -> list[str]:
        """Every parent_asin, in catalog order."""
        return [
            asin for (asin,) in self._fetch_all("SELECT parent_asin FROM products ORDER BY row", ())
        ]

    def asins_for_rows(self, rows: Sequence[int]) -> list[str]:
        """parent_asins of store rows (the tantivy back end's doc keys), in the order given."""
        self.check_rows(rows)
        by_row = self._asin_by_row()
        return [by_row[row] for row in rows]

    def check_rows(self, rows: Sequence[int]) -> None:
        """A search hit outside 1..len(store) means the back end and the store disagree."""
        if rows and not (min(rows) >= 1 and max(rows) <= self._count):
            missing = [row for row in rows if not 1 <= row <= self._count]
            raise CorruptIndexError(
                f"{self.path}: search returned rows {missing[:5]} that the store does not hold"
            )

    def _asin_by_row(self) -> list[str]:
        # Every search maps rows to ids; one list in memory (about 3 MB at 50k) beats a query per
        # search.
        if self._rows is None:
            # Ordered by parent_asin so SQLite reads only its unique index (which holds the row):
            # a few MB instead of every record, about 6x faster on a cold start.
            pairs = self._fetch_all(
                "SELECT row, parent_asin FROM products ORDER BY parent_asin", ()
            )
            by_row = [""] * (max((row for row, _ in pairs), default=0) + 1)
            for row, asin in pairs:
                by_row[row] = asin
            self._rows = by_row
        return self._rows

    def indexable(self) -> Iterator[tuple[int, Product]]:
        """(row, product) for every product in row order, for building a search back end."""
        for row, record in _stream(self.path, "SELECT row, record FROM products ORDER BY row"):
            yield row, product_from_record(json.loads(record))

    def close(self) -> None:
        self._db.close()

    def _load_product(self, parent_asin: str) -> Product | None:
        row = self._fetch_one("SELECT record FROM products WHERE parent_asin = ?", (parent_asin,))
        return None if row is None else product_from_record(json.loads(row[0]))

    def _load_attributes(self, parent_asin: str) -> Any | None:
        row = self._fetch_one(
            "SELECT attributes FROM products WHERE parent_asin = ?", (parent_asin,)
        )
        return None if row is None else attributes_from_dict(json.loads(row[0]))

    def _select_by_asin(self, columns: str, asins: list[str]) -> dict[str, tuple[Any, ...]]:
        found: dict[str, tuple[Any, ...]] = {}
        for start in range(0, len(asins), SQLITE_MAX_PARAMS):
            chunk = asins[start : start + SQLITE_MAX_PARAMS]
            marks = ",".join("?" * len(chunk))
            sql = f"SELECT {columns} FROM products WHERE parent_asin IN ({marks})"
            found.update((values[0], values) for values in self._fetch_all(sql, chunk))
        return found

    def _fetch_one(self, sql: str, params: Any) -> tuple[Any, ...] | None:
        with self._lock, sqlite_errors_as_corruption(self.path):
            return self._db.execute(sql, params).fetchone()

    def _fetch_all(self, sql: str, params: Any) -> list[tuple[Any, ...]]:
        with self._lock, sqlite_errors_as_corruption(self.path):
            return self._db.execute(sql, params).fetchall()
