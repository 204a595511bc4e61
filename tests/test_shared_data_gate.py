"""The gate to the real records (conftest.py): library code finds none during the tests, and a
marked test receives the folder from the `shared_data` fixture."""

from __future__ import annotations

from pathlib import Path

import pytest

from shopcopilot import paths
from shopcopilot.bench import commands, real


def test_library_lookups_find_no_real_records() -> None:
    # Both ways library modules reach the lookup: through the module, and by a name imported
    # before the tests started.
    assert paths.shared_data_dir() is None
    assert real.shared_data_dir() is None and commands.shared_data_dir() is None


@pytest.mark.shared
def test_a_marked_test_gets_the_folder_of_real_records(shared_data: Path) -> None:
    assert (shared_data / "catalog_harvest.jsonl").is_file()
    assert (shared_data / "public_set.jsonl").is_file()
