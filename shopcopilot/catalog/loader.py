"""Reading catalogs: JSONL or JSONL.gz, validated line by line, nothing dropped silently."""

from __future__ import annotations

import gzip
import io
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import orjson

from .product import Product, RecordError, product_from_record

MAX_REPORTED = 5


@dataclass(frozen=True, slots=True)
class LineProblem:
    path: str
    line: int
    reason: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.reason}"


@dataclass(slots=True)
class LoadReport:
    """What loading found besides the products: skipped lines and duplicates."""

    path: str
    lines: int = 0
    invalid: list[LineProblem] = field(default_factory=list)
    duplicates: list[LineProblem] = field(default_factory=list)

    def summary(self) -> str:
        parts = [f"{self.path}: {self.lines} lines"]
        if self.invalid:
            parts.append(f"{len(self.invalid)} invalid (skipped)")
        if self.duplicates:
            parts.append(f"{len(self.duplicates)} duplicate parent_asin (kept the first)")
        return ", ".join(parts)


class CatalogError(Exception):
    """The catalog cannot be used as given; the message says why and where."""


def open_text(path: Path) -> IO[str]:
    """Open a catalog file as text, transparently un-gzipping by magic bytes."""
    raw = path.open("rb")
    magic = raw.read(2)
    raw.seek(0)
    if magic == b"\x1f\x8b":
        return io.TextIOWrapper(gzip.GzipFile(fileobj=raw), encoding="utf-8")
    return io.TextIOWrapper(raw, encoding="utf-8")


def iter_lines(path: Path) -> Iterator[tuple[int, str]]:
    """Non-blank lines with their 1-based line numbers."""
    with open_text(path) as handle:
        for number, line in enumerate(handle, start=1):
            if line.strip():
                yield number, line


def iter_products(path: str | Path, report: LoadReport) -> Iterator[Product]:
    """Stream products; problems go into `report` instead of raising."""
    return (product for _, product in iter_checked_lines(path, report))


def iter_checked_lines(path: str | Path, report: LoadReport) -> Iterator[tuple[str, Product]]:
    """Each valid line as written, with its product; invalid and duplicate lines go into
    `report`."""
    path = Path(path)
    check = LineCheck(path, report)
    for number, line in iter_lines(path):
        try:
            product = parse_line(line)
        except RecordError as exc:
            check.invalid(number, str(exc))
            continue
        if check.first(number, product.parent_asin):
            yield line, product


def parse_line(line: str) -> Product:
    """One catalog line as a Product; RecordError says why it is not one."""
    record = _fast_record(line)
    return product_from_record(_exact_record(line) if record is None else record)


def _fast_record(line: str) -> dict[str, Any] | None:
    """The line's object as orjson reads it (about twice as fast as json), or None wherever
    json's reading could make a different Product: then `_exact_record` decides.

    orjson refuses what json reads specially (NaN and Infinity, numbers beyond a double, lone
    surrogates), but reads an integer beyond 64 bits as a float where json keeps the int. As a
    price or rating that is the same float (orjson rounds as float(int) does; such a count is
    unknown either way), but as text it would read "1.8e+19": records with a float in a text
    field, rare, and with nested lists or objects there, which are not checked, go to json.
    """
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    if type(record) is not dict or not _TEXT_TYPES.issuperset(map(type, _texts(record))):
        return None
    return record


_TEXT_TYPES = frozenset({str, int, bool, type(None)})  # read alike by orjson and json


def _texts(record: dict[str, Any]) -> list[Any]:
    """Every value of the record that `product_from_record` reads as text."""
    texts = [record.get("parent_asin"), record.get("title"), record.get("store")]
    for key in ("features", "description", "categories"):
        value = record.get(key)
        if type(value) is list:
            texts.extend(value)
        else:
            texts.append(value)
    if type(details := record.get("details")) is dict:
        texts.extend(details.values())
    return texts


def _exact_record(line: str) -> Any:
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        raise RecordError(f"not valid JSON ({exc.msg})") from exc
    if _SURROGATE_ESCAPE.search(line):
        record = _without_lone_surrogates(record)
    return record


# JSON may escape half of a UTF-16 pair alone ("\ud800"): no UTF-8 text (SQLite's, the
# index's) can hold that, so such a half becomes U+FFFD; whole pairs decode as usual.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _without_lone_surrogates(value: Any) -> Any:
    if isinstance(value, str):
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, list):
        return [_without_lone_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {_without_lone_surrogates(k): _without_lone_surrogates(v) for k, v in value.items()}
    return value


class LineCheck:
    """Counts a catalog's lines in order, reporting invalid ones and repeated ids."""

    def __init__(self, path: Path, report: LoadReport) -> None:
        self._path = str(path)
        self._report = report
        self._seen: set[str] = set()

    def invalid(self, number: int, reason: str) -> None:
        self._report.lines += 1
        self._report.invalid.append(LineProblem(self._path, number, reason))

    def first(self, number: int, parent_asin: str) -> bool:
        """Whether this valid line is the first with its id (a later one is reported as a
        duplicate)."""
        self._report.lines += 1
        if parent_asin in self._seen:
            self._report.duplicates.append(
                LineProblem(self._path, number, f"duplicate parent_asin {parent_asin}")
            )
            return False
        self._seen.add(parent_asin)
        return True


def load_catalog(path: str | Path, skip_invalid: bool = False) -> tuple[list[Product], LoadReport]:
    """Load every product. Invalid lines fail the load unless `skip_invalid`."""
    path = Path(path)
    _check_path(path)
    report = LoadReport(str(path))
    try:
        products = list(iter_products(path, report))
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise CatalogError(f"{path}: cannot read catalog: {exc}") from exc
    if report.invalid and not skip_invalid:
        raise CatalogError(_invalid_message(report))
    if not products:
        raise CatalogError(
            f"{path}: no valid products (the file is empty or every line is invalid)"
        )
    return products, report


def _check_path(path: Path) -> None:
    if not path.exists():
        raise CatalogError(f"catalog not found: {path}")
    if path.is_dir():
        raise CatalogError(
            f"catalog path is a directory, expected a .jsonl or .jsonl.gz file: {path}"
        )
    if path.stat().st_size == 0:
        raise CatalogError(f"catalog is empty: {path}")


def _invalid_message(report: LoadReport) -> str:
    shown = "\n".join(f"  {problem}" for problem in report.invalid[:MAX_REPORTED])
    more = len(report.invalid) - MAX_REPORTED
    tail = f"\n  ... and {more} more" if more > 0 else ""
    return (
        f"{report.path}: {len(report.invalid)} invalid line(s) out of {report.lines}:\n"
        f"{shown}{tail}\nFix them, or pass --skip-invalid to load the rest."
    )
