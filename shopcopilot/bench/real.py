"""The real-data benchmark: the public sessions on the real records padded to catalog size.

The padded catalog is built once and cached; its file name carries a fingerprint of the
real records and of the catalog-generation code, so a change to either rebuilds it.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from rich.console import Console

from .. import catalog as catalog_package
from ..paths import cache_dir, is_partial, shared_data_dir, via_partial
from .runner import BenchError

PADDED_SIZE = 50_000
PADDING_SEED = 7


# What writes the padded catalog: a change elsewhere in catalog/ (the vocabulary, derived
# attributes) leaves its records as they were, so it must not make a copy stale.
_GENERATOR_SOURCES = ("padding.py", "loader.py", "synth/*", "data/synth_*")


def _fingerprint(real_catalog: Path) -> str:
    digest = hashlib.sha256(real_catalog.read_bytes())
    catalog_dir = Path(catalog_package.__file__).parent
    sources = {path for pattern in _GENERATOR_SOURCES for path in catalog_dir.glob(pattern)}
    for source in sorted(sources):
        if source.is_file() and source.suffix in {".py", ".json", ".toml", ".txt"}:
            digest.update(source.relative_to(catalog_dir).as_posix().encode())
            digest.update(source.read_bytes())
    return digest.hexdigest()[:12]


def padded_catalog_path(
    real_catalog: Path, size: int = PADDED_SIZE, seed: int = PADDING_SEED
) -> Path:
    return cache_dir() / f"real-padded-{size}-seed{seed}-{_fingerprint(real_catalog)}.jsonl"


def prepare_real_benchmark(console: Console) -> tuple[Path, Path]:
    """(padded catalog, public session file), building the catalog on first use."""
    data_dir = shared_data_dir()
    if data_dir is None:
        raise BenchError(
            "the real data is not here: set SHOPCOPILOT_SHARED_DATA to the folder holding "
            "catalog_harvest.jsonl and public_set.jsonl"
        )
    real_catalog, sessions = data_dir / "catalog_harvest.jsonl", data_dir / "public_set.jsonl"
    if not sessions.is_file():
        raise BenchError(f"public session file not found: {sessions}")
    padded = padded_catalog_path(real_catalog)
    if not padded.exists():
        from ..catalog.padding import write_padded_catalog  # local: only needed to build once

        console.print(f"building the padded catalog {padded} (once) ...")
        # A private partial file: two runs building at once must not write into the same file.
        with via_partial(padded) as partial:
            write_padded_catalog(real_catalog, partial, size=PADDED_SIZE, seed=PADDING_SEED)
        _remove_stale_copies(padded)
    return padded, sessions


def _remove_stale_copies(current: Path) -> None:
    """Padded catalogs built from older real records or generator code can never be used again."""
    prefix = current.name.rsplit("-", 1)[0]
    for stale in current.parent.glob(f"{prefix}-*.jsonl"):
        if stale != current and not is_partial(stale):  # a partial may be another run's
            stale.unlink(missing_ok=True)
