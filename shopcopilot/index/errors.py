"""Errors of the index stage."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class CorruptIndexError(RuntimeError):
    """An index file is unreadable; `open_index(..., rebuild=True)` or `shopcopilot index build
    --rebuild` fixes it."""


class UnsupportedQueryError(ValueError):
    """The chosen back end cannot express part of the query; the message says which part."""


@contextmanager
def sqlite_errors_as_corruption(path: Path) -> Iterator[None]:
    """SQLite failures on a built, read-only index file mean the file is damaged."""
    try:
        yield
    except sqlite3.DatabaseError as exc:
        raise CorruptIndexError(f"{path}: {exc}") from exc
