"""Session files: one benchmark session per JSON line, read with errors that name file:line.

Layout of a line (the official public-set layout):

    {"sample_id": str, "scenario_type": "buying"|"browsing"|"intent_override"|"boundary",
     "user_profile": {...}, "ground_truth": {"parent_asin": str},
     "category_bucket": str (optional), "difficulty_bucket": str (optional),
     "intent_card": {...} (optional), "behavior": {...} (optional)}

A precomputed `intent_card` / `behavior` replaces the one the official customer would
derive from the target product.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..catalog.loader import iter_lines

SCENARIOS = ("buying", "browsing", "intent_override", "boundary")


class SessionFileError(ValueError):
    """A session file that cannot be used; the message names the file and line."""


@dataclass(frozen=True, slots=True)
class Session:
    sample_id: str
    scenario_type: str
    user_profile: dict[str, Any]
    target_asin: str
    category_bucket: str | None = None
    difficulty_bucket: str | None = None
    intent_card: dict[str, Any] | None = None
    behavior: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_record(self) -> dict[str, Any]:
        """The session-file layout; optional fields only when set."""
        record: dict[str, Any] = {
            "sample_id": self.sample_id,
            "scenario_type": self.scenario_type,
            "user_profile": self.user_profile,
            "ground_truth": {"parent_asin": self.target_asin},
        }
        optional = {
            "category_bucket": self.category_bucket,
            "difficulty_bucket": self.difficulty_bucket,
            "intent_card": self.intent_card,
            "behavior": self.behavior,
        }
        record.update({key: value for key, value in optional.items() if value is not None})
        record.update(self.extra)
        return record


_KNOWN_KEYS = {
    "sample_id",
    "scenario_type",
    "user_profile",
    "ground_truth",
    "category_bucket",
    "difficulty_bucket",
    "intent_card",
    "behavior",
}


def session_from_record(record: Any) -> Session:
    """Validate one decoded line; raises SessionFileError naming the bad field."""
    if not isinstance(record, dict):
        raise SessionFileError(f"expected a JSON object, got {type(record).__name__}")
    sample_id = record.get("sample_id")
    if not isinstance(sample_id, str) or not sample_id.strip():
        raise SessionFileError("missing or empty 'sample_id'")
    scenario = record.get("scenario_type")
    if scenario not in SCENARIOS:
        raise SessionFileError(
            f"'scenario_type' must be one of {', '.join(SCENARIOS)}, got {scenario!r}"
        )
    profile = record.get("user_profile", {})
    if not isinstance(profile, dict):
        raise SessionFileError("'user_profile' must be an object")
    truth = record.get("ground_truth")
    target = truth.get("parent_asin") if isinstance(truth, dict) else None
    if not isinstance(target, str) or not target.strip():
        raise SessionFileError("missing 'ground_truth.parent_asin'")
    card = _optional_dict(record, "intent_card")
    behavior = _optional_dict(record, "behavior")
    if card is not None:
        _check_card(card)
    if behavior is not None and scenario == "intent_override":
        _check_override(behavior)
    return Session(
        sample_id=sample_id,
        scenario_type=scenario,
        user_profile=profile,
        target_asin=target.strip(),
        category_bucket=_optional_text(record, "category_bucket"),
        difficulty_bucket=_optional_text(record, "difficulty_bucket"),
        intent_card=card,
        behavior=behavior,
        extra={key: value for key, value in record.items() if key not in _KNOWN_KEYS},
    )


def load_sessions(path: str | Path) -> list[Session]:
    """Every session of a JSONL file (.gz allowed); the first bad line raises with file:line."""
    path = Path(path)
    if not path.is_file():
        raise SessionFileError(f"session file not found: {path}")
    sessions: list[Session] = []
    seen: dict[str, int] = {}
    for number, line in iter_lines(path):
        try:
            session = session_from_record(json.loads(line))
        except json.JSONDecodeError as exc:
            raise SessionFileError(f"{path}:{number}: not valid JSON ({exc.msg})") from exc
        except SessionFileError as exc:
            raise SessionFileError(f"{path}:{number}: {exc}") from exc
        if session.sample_id in seen:
            raise SessionFileError(
                f"{path}:{number}: duplicate sample_id {session.sample_id!r} "
                f"(first on line {seen[session.sample_id]})"
            )
        seen[session.sample_id] = number
        sessions.append(session)
    if not sessions:
        raise SessionFileError(f"{path}: no sessions (the file is empty)")
    return sessions


def write_sessions(path: str | Path, sessions: Iterable[Session]) -> None:
    """Write sessions as JSON lines in the official layout."""
    with Path(path).open("w", encoding="utf-8") as handle:
        for session in sessions:
            handle.write(json.dumps(session.to_record(), ensure_ascii=False) + "\n")


def _optional_dict(record: dict[str, Any], key: str) -> dict[str, Any] | None:
    value = record.get(key)
    if value is None:
        return None
    if not isinstance(value, dict):
        raise SessionFileError(f"'{key}' must be an object when present")
    return value


def _optional_text(record: dict[str, Any], key: str) -> str | None:
    value = record.get(key)
    return None if value is None else str(value)


def _check_card(card: dict[str, Any]) -> None:
    for key in ("hard_constraints", "soft_preferences"):
        if not isinstance(card.get(key, []), list):
            raise SessionFileError(f"'intent_card.{key}' must be a list")


def _check_override(behavior: dict[str, Any]) -> None:
    # The first message of an override session quotes old_value; without it the session cannot
    # start.
    override = behavior.get("override")
    if not isinstance(override, dict) or "old_value" not in override:
        raise SessionFileError(
            "intent_override 'behavior.override' must be an object with 'old_value'"
        )
    if "turn" in override and not isinstance(override["turn"], int):
        raise SessionFileError("'behavior.override.turn' must be an integer")
