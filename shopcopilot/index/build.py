"""Building an index folder: stream the catalog once into the store and tantivy, atomically.

Everything is written into a temp folder beside the final one and renamed into
place at the end, so a crash mid-build never leaves a half index behind. Builds
of the same fingerprint are serialised by a lock file, so concurrent processes
build once and share the result.
"""

from __future__ import annotations

import gc
import itertools
import logging
import multiprocessing
import os
import shutil
import time
import uuid
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from multiprocessing.pool import AsyncResult, Pool
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from ..catalog.loader import CatalogError, LineCheck, LoadReport, open_text, parse_line
from ..catalog.product import Product, RecordError
from ..catalog.vocabulary import vocabulary
from ..workers import parallel_workers, progress_counter
from .derived import derive
from .fingerprint import write_json_atomic
from .integrity import snapshot
from .store import PRICE_COLUMN, STORE_FILE, StoreWriter, store_columns
from .tantivy_backend import TANTIVY_DIR, TantivyWriter, document_json

log = logging.getLogger(__name__)

MANIFEST_FILE = "manifest.json"
LOCK_SUFFIX = ".lock"
MAX_LOGGED_PROBLEMS = 5
PARALLEL_MIN_BYTES = 8 << 20  # about 5k products
PREPARE_BATCH = 256
IN_FLIGHT_PER_WORKER = 4


@contextmanager
def build_lock(root: Path, fingerprint: str, *, wait: bool = True) -> Iterator[bool]:
    """An exclusive lock on one fingerprint, held across processes until the block ends.
    Yields whether it is held: with `wait=False` a lock held elsewhere yields False at once."""
    root.mkdir(parents=True, exist_ok=True)
    lock = FileLock(root / f"{fingerprint}{LOCK_SUFFIX}")
    try:
        lock.acquire(timeout=-1 if wait else 0)
    except Timeout:
        yield False
        return
    try:
        yield True
    finally:
        lock.release()


def prune_free_locks(root: Path, *, dry_run: bool = False) -> list[Path]:
    """Delete the lock files under `root` that no process holds; returns them.

    Each is deleted while held here, and filelock re-opens a lock file deleted under a waiter,
    so a build that starts meanwhile still excludes the others.
    """
    removed = []
    for path in sorted(root.glob(f"*{LOCK_SUFFIX}")):
        with build_lock(root, path.name.removesuffix(LOCK_SUFFIX), wait=False) as free:
            if free:
                if not dry_run:
                    path.unlink(missing_ok=True)
                removed.append(path)
    return removed


def build_index(
    catalog_path: Path, dest: Path, fingerprint_parts: dict[str, Any], *, progress: bool
) -> dict[str, Any]:
    """Build the folder `dest` (replacing any previous one) and return its manifest.

    The caller holds `build_lock` for dest's fingerprint.
    """
    work = dest.parent / f".{dest.name}.building-{os.getpid()}"
    _remove_leftovers(dest)
    work.mkdir(parents=True)
    try:
        manifest = _build_into(work, catalog_path, dest.name, fingerprint_parts, progress)
        _swap_into_place(work, dest)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return manifest


def _build_into(
    work: Path,
    catalog_path: Path,
    fingerprint: str,
    fingerprint_parts: dict[str, Any],
    progress: bool,
) -> dict[str, Any]:
    started = time.perf_counter()
    report = LoadReport(str(catalog_path))
    workers = derive_workers(catalog_path)
    products = _write_products(work, catalog_path, report, workers, progress)
    if products == 0:
        raise CatalogError(
            f"{catalog_path}: no valid products (the file is empty or every line is invalid)"
        )
    _log_problems(report)
    written = time.perf_counter()
    manifest = {
        "fingerprint": fingerprint,
        "fingerprint_parts": fingerprint_parts,
        "catalog": {
            "path": str(catalog_path.resolve()),
            "lines": report.lines,
            "invalid_lines": len(report.invalid),
            "duplicate_ids": len(report.duplicates),
        },
        "products": products,
        "built_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "build_id": uuid.uuid4().hex,  # tells two builds apart, even within one second
        "derive_workers": workers,
        "files": snapshot(work, [STORE_FILE, TANTIVY_DIR]),
    }
    manifest["timings_s"] = {
        "write_products": round(written - started, 3),
        "checksums": round(time.perf_counter() - written, 3),
    }
    write_json_atomic(work / MANIFEST_FILE, manifest)
    return manifest


def _write_products(
    work: Path, catalog_path: Path, report: LoadReport, workers: int, progress: bool
) -> int:
    """Stream the catalog into the store and tantivy; returns how many products were written."""
    check = LineCheck(catalog_path, report)
    # The pool forks before tantivy and the progress bar start threads: forking a threaded process
    # is unsafe.
    with prepare_pool(workers) as pool:
        store = StoreWriter(work / STORE_FILE)
        tantivy_writer = TantivyWriter(work / TANTIVY_DIR)
        try:
            with progress_counter(f"indexing {catalog_path.name}", progress) as tick:
                for number, prepared in prepared_lines(line_batches(catalog_path), pool, workers):
                    if isinstance(prepared, str):
                        check.invalid(number, prepared)
                        continue
                    columns, document = prepared
                    if check.first(number, columns[0]):
                        row = store.add(columns)
                        tantivy_writer.add(row, document, columns[PRICE_COLUMN])
                        tick()
        except (OSError, EOFError, UnicodeDecodeError) as exc:
            tantivy_writer.abort()
            raise CatalogError(f"{catalog_path}: cannot read catalog: {exc}") from exc
        except BaseException:
            tantivy_writer.abort()
            raise
        finally:
            store.close()
    tantivy_writer.close()
    return store.rows


# One product as the store and tantivy take it, derived and serialised (the workers' share):
# (store_columns(), document_json()). A plain tuple: the main process unpickles it in C.
Prepared = tuple[tuple[Any, ...], str]


def prepare(product: Product) -> Prepared:
    derived = derive(product)
    return store_columns(product, derived), document_json(product, derived)


def derive_workers(catalog_path: Path) -> int:
    """Processes that parse, derive and serialise products; small catalogs are not worth starting
    them."""
    if catalog_path.stat().st_size < PARALLEL_MIN_BYTES:
        return 1
    return parallel_workers()


@contextmanager
def prepare_pool(workers: int) -> Iterator[Pool | None]:
    if workers == 1:
        yield None
        return
    with multiprocessing.get_context("fork").Pool(workers, initializer=_start_worker) as pool:
        yield pool


def _start_worker() -> None:
    # The collector walks every tracked object on a full collection; a worker's are mostly the
    # vocabulary and modules, which never die. Frozen, they are skipped: about 20% less CPU.
    vocabulary()
    gc.freeze()


def line_batches(path: Path) -> Iterator[tuple[int, list[str]]]:
    """(number of the first line, the lines) of the catalog's lines, PREPARE_BATCH at a time, blank
    ones too."""
    with open_text(path) as handle:
        first = 1
        while batch := list(itertools.islice(handle, PREPARE_BATCH)):
            yield first, batch
            first += len(batch)


def prepared_lines(
    batches: Iterator[tuple[int, list[str]]], pool: Pool | None, workers: int
) -> Iterator[tuple[int, Prepared | str]]:
    """(line number, the line's product prepared or why the line is invalid), in catalog order;
    blank lines skipped.

    The main process only reads lines and writes rows: parsing, deriving and serialising
    run in the pool, which gets raw lines and returns strings, both cheap to pass.
    """
    if pool is None:
        for batch in batches:
            yield from _prepare_batch(batch)
        return
    pending: deque[AsyncResult[list[tuple[int, Prepared | str]]]] = deque()
    for batch in batches:
        pending.append(pool.apply_async(_prepare_batch, (batch,)))
        # A bounded window keeps memory flat however large the catalog is.
        if len(pending) >= workers * IN_FLIGHT_PER_WORKER:
            yield from pending.popleft().get()
    for result in pending:
        yield from result.get()


def _prepare_batch(batch: tuple[int, list[str]]) -> list[tuple[int, Prepared | str]]:
    first, lines = batch
    prepared: list[tuple[int, Prepared | str]] = []
    for number, line in enumerate(lines, first):
        if not line.strip():
            continue
        try:
            prepared.append((number, prepare(parse_line(line))))
        except RecordError as exc:
            prepared.append((number, str(exc)))
    return prepared


def _log_problems(report: LoadReport) -> None:
    """Skipped lines are reported, never dropped silently."""
    problems = report.invalid + report.duplicates
    if not problems:
        return
    shown = "; ".join(str(problem) for problem in problems[:MAX_LOGGED_PROBLEMS])
    log.warning("%s (indexed the rest). First problems: %s", report.summary(), shown)


def _swap_into_place(work: Path, dest: Path) -> None:
    """Rename the finished folder into place; an old folder is moved aside first, then deleted."""
    old = dest.parent / f".{dest.name}.old-{os.getpid()}"
    if dest.exists():
        dest.rename(old)
    work.rename(dest)
    shutil.rmtree(old, ignore_errors=True)


def _remove_leftovers(dest: Path) -> None:
    """Temp folders of builds that crashed; safe to delete because we hold the fingerprint lock."""
    for leftover in dest.parent.glob(f".{dest.name}.*-*"):
        shutil.rmtree(leftover, ignore_errors=True)
