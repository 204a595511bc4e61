"""Building an index folder: stream the catalog once into the store and tantivy, atomically.

Everything is written into a temp folder beside the final one and renamed into
place at the end, so a crash mid-build never leaves a half index behind. Builds
of the same fingerprint are serialised by a lock file, so concurrent processes
build once and share the result.
"""

from __future__ import annotations

import fcntl
import itertools
import logging
import multiprocessing
import os
import shutil
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from multiprocessing.pool import AsyncResult, Pool
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from ..catalog.loader import CatalogError, LoadReport, iter_products
from ..catalog.product import Product
from .derived import Derived, derive
from .fingerprint import write_json_atomic
from .integrity import snapshot
from .store import STORE_FILE, StoreWriter
from .tantivy_backend import TANTIVY_DIR, TantivyWriter

log = logging.getLogger(__name__)

MANIFEST_FILE = "manifest.json"
MAX_LOGGED_PROBLEMS = 5
PARALLEL_MIN_BYTES = 8 << 20  # about 5k products
MAX_DERIVE_WORKERS = 4
DERIVE_BATCH = 256
IN_FLIGHT_PER_WORKER = 4


@contextmanager
def build_lock(root: Path, fingerprint: str) -> Iterator[None]:
    """An exclusive lock on one fingerprint, held across processes until the block ends."""
    root.mkdir(parents=True, exist_ok=True)
    with (root / f"{fingerprint}.lock").open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextmanager
def progress_counter(description: str, enabled: bool) -> Iterator[Callable[[], None]]:
    """A rich progress line on stderr counting products; yields the per-product tick."""
    if not enabled:
        yield lambda: None
        return
    columns = (
        SpinnerColumn(),
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        TextColumn("{task.completed:,} products"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=Console(stderr=True)) as bar:
        task = bar.add_task(description, total=None)
        yield lambda: bar.advance(task)


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
    work: Path, catalog_path: Path, fingerprint: str, fingerprint_parts: dict[str, Any], progress: bool
) -> dict[str, Any]:
    started = time.perf_counter()
    report = LoadReport(str(catalog_path))
    workers = derive_workers(catalog_path)
    products = _write_products(work, catalog_path, report, workers, progress)
    if products == 0:
        raise CatalogError(f"{catalog_path}: no valid products (the file is empty or every line is invalid)")
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
        "built_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
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


def _write_products(work: Path, catalog_path: Path, report: LoadReport, workers: int, progress: bool) -> int:
    """Stream the catalog into the store and tantivy; returns how many products were written."""
    # The pool forks before tantivy and the progress bar start threads: forking a threaded process is unsafe.
    with derive_pool(workers) as pool:
        store = StoreWriter(work / STORE_FILE)
        tantivy_writer = TantivyWriter(work / TANTIVY_DIR)
        try:
            with progress_counter(f"indexing {catalog_path.name}", progress) as tick:
                for product, derived in with_derived(iter_products(catalog_path, report), pool, workers):
                    row = store.add(product, derived)
                    tantivy_writer.add(row, product, derived)
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


def derive_workers(catalog_path: Path) -> int:
    """Processes for attribute derivation, the slowest step; small catalogs are not worth starting them."""
    if catalog_path.stat().st_size < PARALLEL_MIN_BYTES:
        return 1
    return max(1, min(MAX_DERIVE_WORKERS, os.cpu_count() or 1))


@contextmanager
def derive_pool(workers: int) -> Iterator[Pool | None]:
    if workers == 1:
        yield None
        return
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        yield pool


def with_derived(products: Iterator[Product], pool: Pool | None, workers: int) -> Iterator[tuple[Product, Derived]]:
    """Each product with its derived attributes, in catalog order."""
    if pool is None:
        for product in products:
            yield product, derive(product)
        return
    pending: deque[tuple[list[Product], AsyncResult[list[Derived]]]] = deque()
    for batch in _batches(products, DERIVE_BATCH):
        pending.append((batch, pool.apply_async(_derive_batch, (batch,))))
        # A bounded window keeps memory flat however large the catalog is.
        if len(pending) >= workers * IN_FLIGHT_PER_WORKER:
            batch_done, result = pending.popleft()
            yield from zip(batch_done, result.get())
    for batch_done, result in pending:
        yield from zip(batch_done, result.get())


def _derive_batch(products: list[Product]) -> list[Derived]:
    return [derive(product) for product in products]


def _batches(items: Iterator[Product], size: int) -> Iterator[list[Product]]:
    while batch := list(itertools.islice(items, size)):
        yield batch


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
