"""Real records padded with synthetic products to benchmark size.

The real lines come first and are written verbatim (after validation through
the loader's rules); synthetic products follow until the catalog holds `size`
products. Synthetic ids start with "SYN", which no Amazon id does; any that
still collides with a real id is skipped, so every id stays unique.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .loader import CatalogError, LoadReport, iter_checked_lines
from .synth import iter_synthetic, write_records


def write_padded_catalog(
    real_path: str | Path, out_path: str | Path, size: int = 50_000, seed: int = 7
) -> Path:
    """Write the real records then synthetic ones, `size` in all; returns `out_path`."""
    real_path, out_path = Path(real_path), Path(out_path)
    real_lines, real_ids = read_real_lines(real_path)
    if len(real_lines) > size:
        raise CatalogError(
            f"{real_path}: {len(real_lines)} real records, more than the requested size {size}"
        )
    records = _padded(real_lines, real_ids, size - len(real_lines), seed)
    write_records(out_path, records)
    return out_path


def read_real_lines(path: Path) -> tuple[list[str], set[str]]:
    """The real catalog's lines, checked by the loader; any problem fails with file:line."""
    if not path.is_file():
        raise CatalogError(f"real catalog not found: {path}")
    report = LoadReport(str(path))
    lines: list[str] = []
    ids: set[str] = set()
    for line, product in iter_checked_lines(path, report):
        lines.append(line.rstrip("\r\n"))
        ids.add(product.parent_asin)
    problems = report.invalid + report.duplicates
    if problems:
        first = min(problems, key=lambda problem: problem.line)
        raise CatalogError(f"{first} ({len(problems)} bad line(s) in the real catalog)")
    if not lines:
        raise CatalogError(f"{path}: no records")
    return lines, ids


def _padded(
    real_lines: list[str], real_ids: set[str], wanted: int, seed: int
) -> Iterator[str | dict[str, Any]]:
    yield from real_lines  # strings: write_records keeps them verbatim
    written = 0
    index = 0
    while written < wanted:
        # Generate in chunks; skipping a rare collision just moves on to the next index.
        for record in iter_synthetic(wanted - written, seed, start=index):
            index += 1
            if record["parent_asin"] in real_ids:
                continue
            written += 1
            yield record
