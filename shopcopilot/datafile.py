"""Reading the project's JSON data files (cue lists, phrasing templates): one object, or an
error naming the file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def read_json_object(path: Path, error: type[Exception], what: str) -> dict[str, Any]:
    """The file's top-level JSON object; `error` (naming the file) when it cannot be read, is
    not JSON or holds something else."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise error(f"{path}: cannot read {what}: {exc}") from exc
    if not isinstance(raw, dict):
        raise error(f"{path}: must hold a JSON object")
    return raw
