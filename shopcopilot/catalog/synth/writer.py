"""Writing a synthetic catalog to .jsonl or .jsonl.gz, streaming, byte-for-byte reproducible."""

from __future__ import annotations

import gzip
import io
import json
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from rich.progress import Progress

from .generator import iter_synthetic


def write_catalog(path: str | Path, size: int, seed: int, progress: bool = False) -> int:
    """Write `size` synthetic products; gzip when the name ends in .gz. Returns the count
    written."""
    if size < 1:
        raise ValueError(f"size must be at least 1, got {size}")
    return write_records(path, iter_synthetic(size, seed), total=size if progress else None)


def write_records(
    path: str | Path, records: Iterable[dict[str, Any] | str], total: int | None = None
) -> int:
    """Write one JSON line per record; a str is taken as an already-serialised line and kept
    verbatim.
    Shows a progress bar when `total` is given."""
    count = 0
    with open_for_writing(Path(path)) as handle:
        for record in _with_progress(records, total):
            handle.write(
                record if isinstance(record, str) else json.dumps(record, ensure_ascii=False)
            )
            handle.write("\n")
            count += 1
    return count


@contextmanager
def open_for_writing(path: Path) -> Iterator[IO[str]]:
    path.parent.mkdir(parents=True, exist_ok=True)
    # Names like "x.jsonl.gz.partial" are still gzip: look at every suffix, not only the last.
    if ".gz" in path.suffixes:
        # mtime=0 and no file name in the header keep the bytes identical run to run.
        with (
            path.open("wb") as raw,
            gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=6) as zipped,
            io.TextIOWrapper(zipped, encoding="utf-8", newline="\n") as handle,
        ):
            yield handle
    else:
        with path.open("w", encoding="utf-8", newline="\n") as handle:
            yield handle


def _with_progress(records: Iterable[Any], total: int | None) -> Iterator[Any]:
    if total is None:
        yield from records
        return
    with Progress(transient=False) as bar:
        task = bar.add_task("generating products", total=total)
        for number, record in enumerate(records, start=1):
            yield record
            if number % 1000 == 0 or number == total:
                bar.update(task, completed=number)
