"""Reading catalogs: JSONL or JSONL.gz, validated line by line, nothing dropped silently."""

from __future__ import annotations

import gzip
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

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
    """Each valid line as written, with its product; invalid and duplicate lines go into `report`."""
    path = Path(path)
    seen: set[str] = set()
    for number, line in iter_lines(path):
        report.lines += 1
        try:
            product = product_from_record(json.loads(line))
        except json.JSONDecodeError as exc:
            report.invalid.append(LineProblem(str(path), number, f"not valid JSON ({exc.msg})"))
            continue
        except RecordError as exc:
            report.invalid.append(LineProblem(str(path), number, str(exc)))
            continue
        if product.parent_asin in seen:
            report.duplicates.append(
                LineProblem(str(path), number, f"duplicate parent_asin {product.parent_asin}")
            )
            continue
        seen.add(product.parent_asin)
        yield line, product


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
        raise CatalogError(f"{path}: no valid products (the file is empty or every line is invalid)")
    return products, report


def _check_path(path: Path) -> None:
    if not path.exists():
        raise CatalogError(f"catalog not found: {path}")
    if path.is_dir():
        raise CatalogError(f"catalog path is a directory, expected a .jsonl or .jsonl.gz file: {path}")
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
