"""The index's files in the operating system's page cache, before the first turns need them.

A large index is read through memory maps (the ranking features, tantivy's segments, the
nearest-in-meaning graph) and SQLite: on a cold start each turn waits for the disk pages it
touches (at a million products a turn's p99 went from about 70 ms of CPU to over 140 ms of wall
time). `prefetch` asks the kernel to read the files ahead into the page cache (posix_fadvise
WILLNEED): shared by every worker, not counted in any process's resident memory, and
dropped by the kernel under pressure. It only asks when the files fit easily in the
memory that is free, so that it never pushes out what others on the machine are using.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

log = logging.getLogger(__name__)

SHARE_OF_AVAILABLE = 0.5  # prefetch only when the files take at most this share of free memory
WINDOW = 8 << 20  # Linux reads ahead at most about this much per request


def prefetch(folder: Path) -> int:
    """Ask the kernel to read every file under `folder` into the page cache; the bytes asked
    for (0 when they would not fit or the platform cannot ask). The requests return once the
    disk has them queued: about a second a gigabyte when the cache is cold, nothing when warm.
    Done before the first turn, not beside it: turns waiting behind a queue of read-ahead took
    longer than turns reading what they need."""
    if not hasattr(os, "posix_fadvise"):
        return 0
    files = [path for path in folder.rglob("*") if path.is_file()]
    total = sum(path.stat().st_size for path in files)
    available = _available_bytes()
    if available is None or total > available * SHARE_OF_AVAILABLE:
        log.debug("no prefetch: %s bytes of index, %s available", total, available)
        return 0
    for path in files:
        _advise(path, os.POSIX_FADV_WILLNEED)
    return total


def evict(folder: Path) -> None:
    """Drop the clean pages of every file under `folder` from the page cache (a cold start, for
    benchmarks; pages other processes have mapped stay)."""
    for path in folder.rglob("*"):
        if path.is_file():
            _advise(path, os.POSIX_FADV_DONTNEED)


def _advise(path: Path, advice: int) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return  # removed meanwhile (an older build pruned): nothing to read
    try:
        size = os.fstat(fd).st_size
        for offset in range(0, max(size, 1), WINDOW):  # one request covers one window only
            os.posix_fadvise(fd, offset, WINDOW, advice)
    except OSError:
        pass  # a file system that takes no advice: reads work as before
    finally:
        os.close(fd)


def _available_bytes() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None
