"""Shared by the CPU-bound build steps (the index, the ranking features): how many worker
processes to start, and a progress line counting the products done."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

MAX_WORKERS = 4


def parallel_workers() -> int:
    """Worker processes for CPU-bound build steps: one per core, at most MAX_WORKERS."""
    return max(1, min(MAX_WORKERS, os.cpu_count() or 1))


@contextmanager
def progress_counter(
    description: str, enabled: bool, total: int | None = None
) -> Iterator[Callable[..., None]]:
    """A rich progress line on stderr counting products; yields the tick (`tick(n)` for n)."""
    if not enabled:
        yield lambda n=1: None
        return
    columns = (
        SpinnerColumn(),
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        TextColumn("{task.completed:,} products"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=Console(stderr=True)) as bar:
        task = bar.add_task(description, total=total)
        yield lambda n=1: bar.advance(task, n)
