"""Which index belongs to which catalog: content hashes and the fingerprint.

Hashing a large catalog on every open is wasted time, so the hash is cached
by (path, size, mtime) in a small JSON file next to the indexes and recomputed
only when one of those changes.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

CHUNK_BYTES = 1 << 20


def file_sha256(path: Path) -> str:
    """sha256 of the file's bytes, read in chunks so size does not matter."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(CHUNK_BYTES):
            digest.update(chunk)
    return digest.hexdigest()


def catalog_sha256(path: Path, cache_file: Path) -> str:
    """The catalog's content hash, reusing the cached one while size and mtime are unchanged."""
    stat = path.stat()
    key = str(path.resolve())
    cache = _read_cache(cache_file)
    entry = cache.get(key)
    if (
        isinstance(entry, dict)
        and entry.get("size") == stat.st_size
        and entry.get("mtime_ns") == stat.st_mtime_ns
    ):
        cached = entry.get("sha256")
        if isinstance(cached, str) and len(cached) == 64:
            return cached
    digest = file_sha256(path)
    cache[key] = {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns, "sha256": digest}
    write_json_atomic(cache_file, cache)
    return digest


def index_fingerprint(parts: dict[str, Any]) -> str:
    """A short stable name for an index built from exactly these inputs."""
    canonical = json.dumps(parts, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:20]


def write_json_atomic(path: Path, data: Any) -> None:
    """Write JSON via a temp file and rename, so readers never see half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(
            handle, 0o644
        )  # mkstemp makes it private; the cache is shared like any other file
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(data, out, indent=1, sort_keys=True)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def _read_cache(cache_file: Path) -> dict[str, Any]:
    try:
        data = json.loads(cache_file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        # Only a speed-up: a damaged cache costs one re-hash, never a wrong index.
        log.warning("ignoring unreadable catalog hash cache %s (%s)", cache_file, exc)
        return {}
    return data if isinstance(data, dict) else {}
