"""Where things live: the shared real data, the cache, the default catalog."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from platformdirs import user_cache_dir

DEFAULT_SYNTH_SIZE = 50_000
DEFAULT_SYNTH_SEED = 7
# synthetic-50000-seed7.partial-<pid>.jsonl.gz, or x.jsonl.<pid>.partial as earlier versions had it
_PARTIAL_MARK = re.compile(r"\.partial-(?P<pid>\d+)\.|\.(?P<old_pid>\d+)\.partial$")


def cache_dir() -> Path:
    """SHOPCOPILOT_CACHE, else the platform's user cache folder (XDG on Linux)."""
    override = os.environ.get("SHOPCOPILOT_CACHE")
    path = Path(override) if override else Path(user_cache_dir("shopcopilot", appauthor=False))
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
        with via_partial(path) as partial:
            write_catalog(partial, size=size, seed=seed, progress=True)
    return path


def resolve_catalog(path: str | Path | None) -> Path:
    """A user-given catalog path, or the default synthetic one."""
    return Path(path) if path else default_catalog_path()


@contextmanager
def via_partial(path: Path) -> Iterator[Path]:
    """A partial file to write `path` into, renamed into place when the block ends, deleted
    when it fails. Private to the process, since two may generate the same file at once; its
    PID lets `index prune` find the leftovers of a process that was killed."""
    base, _, suffixes = path.name.partition(".")
    partial = path.with_name(f"{base}.partial-{os.getpid()}.{suffixes}")
    try:
        yield partial
    except BaseException:  # Ctrl-C too
        partial.unlink(missing_ok=True)
        raise
    partial.replace(path)


def is_partial(path: Path) -> bool:
    return _PARTIAL_MARK.search(path.name) is not None


def orphaned_partials(folder: Path) -> list[Path]:
    """The partial files in `folder` whose writing process no longer runs."""
    orphans = []
    for path in sorted(folder.glob("*.partial*")):
        match = _PARTIAL_MARK.search(path.name)
        if match and path.is_file() and not _may_be_running(int(match["pid"] or match["old_pid"])):
            orphans.append(path)
    return orphans


def _may_be_running(pid: int) -> bool:
    if os.name == "nt":
        return True  # os.kill would end the process there: keep its files rather than guess
    try:
        os.kill(pid, 0)  # signal 0: only asks whether the process exists
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, as another user's process
    return True
