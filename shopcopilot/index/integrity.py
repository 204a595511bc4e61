"""Detecting damaged index files cheaply: sizes and mtimes first, content hashes when those
moved."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .fingerprint import file_sha256

# tantivy creates these lock files when an index is opened; they carry no data.
_IGNORED = {".tantivy-meta.lock", ".tantivy-writer.lock"}


def snapshot(folder: Path, names: list[str]) -> dict[str, dict[str, Any]]:
    """Size, mtime and sha256 of each named file (folders: every file inside), keyed by relative
    path."""
    files: dict[str, dict[str, Any]] = {}
    for name in names:
        target = folder / name
        paths = sorted(p for p in target.rglob("*") if p.is_file()) if target.is_dir() else [target]
        for path in paths:
            if path.name in _IGNORED:
                continue
            stat = path.stat()
            files[path.relative_to(folder).as_posix()] = {
                "size": stat.st_size,
                "mtime_ns": stat.st_mtime_ns,
                "sha256": file_sha256(path),
            }
    return files


def find_damage(folder: Path, expected: dict[str, dict[str, Any]]) -> str | None:
    """A description of the first missing or changed file, or None when all match."""
    for name, want in expected.items():
        path = folder / name
        try:
            stat = path.stat()
        except FileNotFoundError:
            return f"{name} is missing"
        if stat.st_size != want["size"]:
            return f"{name} has {stat.st_size} bytes, expected {want['size']}"
        # Same size and mtime: unchanged in practice. Otherwise compare content.
        if stat.st_mtime_ns != want["mtime_ns"] and file_sha256(path) != want["sha256"]:
            return f"{name} content changed since the build"
    return None
