"""Where things live: the shared real data, the cache, the default catalog."""

from __future__ import annotations

import os
from pathlib import Path

DEFAULT_SYNTH_SIZE = 50_000
DEFAULT_SYNTH_SEED = 7


def cache_dir() -> Path:
    """SHOPCOPILOT_CACHE, else the user's cache directory (XDG on Linux)."""
    override = os.environ.get("SHOPCOPILOT_CACHE")
    if override:
        path = Path(override)
    else:
        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        path = Path(base) / "shopcopilot"
    path.mkdir(parents=True, exist_ok=True)
    return path


def shared_data_dir() -> Path | None:
    """The real records: SHOPCOPILOT_SHARED_DATA, else ../shared/data when it exists."""
    override = os.environ.get("SHOPCOPILOT_SHARED_DATA")
    candidates = [Path(override)] if override else []
    project_root = Path(__file__).resolve().parent.parent
    candidates += [project_root.parent / "shared" / "data", Path.cwd().parent / "shared" / "data"]
    for path in candidates:
        if (path / "catalog_harvest.jsonl").exists():
            return path
    return None


def default_catalog_path(size: int = DEFAULT_SYNTH_SIZE, seed: int = DEFAULT_SYNTH_SEED) -> Path:
    """The embedded default: a synthetic catalog generated on first use, then reused."""
    from .catalog.synth import write_catalog  # local: generating is rare

    path = cache_dir() / f"synthetic-{size}-seed{seed}.jsonl.gz"
    if not path.exists():
        partial = path.with_name(f"synthetic-{size}-seed{seed}.partial-{os.getpid()}.jsonl.gz")
        write_catalog(partial, size=size, seed=seed, progress=True)
        partial.replace(path)
    return path


def resolve_catalog(path: str | Path | None) -> Path:
    """A user-given catalog path, or the default synthetic one."""
    return Path(path) if path else default_catalog_path()
