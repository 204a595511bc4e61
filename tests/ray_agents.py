"""Small agents for tests/test_ray_eval.py, imported by Ray's worker processes: this module
imports next to nothing, so the actors start quickly."""

from __future__ import annotations

import json
import os

from shopcopilot.paths import cache_dir


class ProcessAgent:
    """Says which cache folder its process uses and at what niceness it runs."""

    def __init__(self, catalog_path: str) -> None:
        pass

    def reset(self, session_id: str, user_profile: dict) -> None:
        pass

    def respond(self, session_id: str, message: str, turn: int, top_k: int) -> dict:
        return {"message": json.dumps([str(cache_dir()), os.nice(0)]), "recommendations": []}


class DyingAgent:
    """Ends its own process on the first turn, as a crashing native library would."""

    def __init__(self, catalog_path: str) -> None:
        pass

    def reset(self, session_id: str, user_profile: dict) -> None:
        pass

    def respond(self, session_id: str, message: str, turn: int, top_k: int) -> dict:
        os._exit(3)
