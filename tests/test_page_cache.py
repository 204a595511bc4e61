"""Prefetching the index's files into the page cache: asked only when they fit, never a failure."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from shopcopilot.index import page_cache

pytestmark = pytest.mark.skipif(
    not hasattr(os, "posix_fadvise"), reason="no posix_fadvise on this platform"
)


def _cached_pages(path: Path) -> int | None:
    """Pages of `path` in the page cache (mincore through a mapping), or None when unknowable."""
    import ctypes
    import mmap

    libc = ctypes.CDLL(None, use_errno=True)
    size = path.stat().st_size
    pages = (size + mmap.PAGESIZE - 1) // mmap.PAGESIZE
    with path.open("rb") as handle:
        mapped = mmap.mmap(handle.fileno(), size, access=mmap.ACCESS_COPY)  # writable: an address
        first = ctypes.c_char.from_buffer(mapped)
        vector = (ctypes.c_ubyte * pages)()
        address = ctypes.c_void_p(ctypes.addressof(first))
        ok = libc.mincore(address, ctypes.c_size_t(size), vector) == 0
        del first
        mapped.close()
    return sum(v & 1 for v in vector) if ok else None


def test_prefetch_asks_for_every_file_and_evict_lets_go(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    big = tmp_path / "sub" / "data.bin"
    big.write_bytes(os.urandom(3 * page_cache.WINDOW + 123))
    (tmp_path / "small.json").write_text("{}")
    os.sync()
    page_cache.evict(tmp_path)
    assert page_cache.prefetch(tmp_path) == big.stat().st_size + 2
    cached = _cached_pages(big)
    if cached is None:
        pytest.skip("the page cache cannot be inspected here")
    deadline = time.monotonic() + 10
    while cached < big.stat().st_size // 4096 and time.monotonic() < deadline:
        time.sleep(0.05)
        cached = _cached_pages(big) or 0
    assert cached * 4096 >= big.stat().st_size - 4096  # the windows past the first too


def test_no_prefetch_when_the_files_would_not_fit(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "data.bin").write_bytes(b"x" * 10_000)
    monkeypatch.setattr(page_cache, "_available_bytes", lambda: 15_000)
    assert page_cache.prefetch(tmp_path) == 0
    monkeypatch.setattr(page_cache, "_available_bytes", lambda: None)
    assert page_cache.prefetch(tmp_path) == 0


def test_a_missing_folder_or_file_is_no_failure(tmp_path: Path) -> None:
    assert page_cache.prefetch(tmp_path / "gone") == 0
    page_cache.evict(tmp_path / "gone")
    page_cache._advise(tmp_path / "gone.bin", os.POSIX_FADV_WILLNEED)
