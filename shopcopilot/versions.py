"""Code versions for cached artefacts: a short hash of the source files that computed them.

An index's derived attributes, the ranking features and the lexicon's usable store
names are saved once and reused; each is keyed by the hash of the code (and data
files) it came from, so editing that code makes the saved copy stale, never wrong.
"""

from __future__ import annotations

import hashlib
from pathlib import Path


def source_hash(*sources: str | Path, length: int = 16) -> str:
    digest = hashlib.sha256()
    for source in sources:
        digest.update(Path(source).read_bytes())
    return digest.hexdigest()[:length]
