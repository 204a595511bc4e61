"""What the index build derives from each catalog line, as one digest per line.

    PYTHONPATH=OLD_WORKTREE python benchmarks/build_digest.py CATALOG > old.txt
    PYTHONPATH=NEW_WORKTREE python benchmarks/build_digest.py CATALOG > new.txt
    cmp old.txt new.txt   # a speed change must change no result

Each line's digest covers the parsed Product, `derive(p).to_dict()`, its search text and
department, the store columns and the tantivy document. Lines go through the build's
`_prepare_batch` in the batches a worker gets, so per-process caches carry state across
products as they do in a build.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

from shopcopilot.catalog import attributes
from shopcopilot.catalog.loader import parse_line
from shopcopilot.catalog.product import RecordError
from shopcopilot.index.build import _prepare_batch, line_batches


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("catalog", type=Path)
    catalog = parser.parse_args().catalog
    for first, lines in line_batches(catalog):
        prepared = dict(_prepare_batch((first, lines)))
        for number, line in enumerate(lines, first):
            if line.strip():
                print(number, line_digest(line, prepared[number]))


def line_digest(line: str, prepared: object) -> str:
    """A digest of everything derived from one line (`prepared`: what the build's workers made of
    it)."""
    try:
        product = parse_line(line)
    except RecordError as exc:
        return f"invalid: {exc}"
    derived = attributes.derive(product)
    # repr tells 1 from 1.0 and keeps the order of every dict.
    text = repr((product, derived.to_dict(), derived.search_text(), derived.department, prepared))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


if __name__ == "__main__":
    sys.exit(main())
