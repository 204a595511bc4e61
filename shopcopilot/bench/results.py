"""results.json and transcripts.jsonl: what a benchmark run leaves behind.

results.json keeps the official evaluator's top-level keys (hit_rate_at_10, mrr, mttc,
efficiency, recommended_technical_score, reported_token_usage, scenario_metrics,
sessions) and adds latency, errors, timeouts and how the run was made.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from .metrics import latency_summary, summarize, summarize_by
from .runner import SessionRun

MAX_ERROR_EXAMPLES = 5


@dataclass(frozen=True, slots=True)
class RunInfo:
    """How a run was made, recorded next to its numbers."""

    protocol: str
    agent: str
    catalog: str
    sessions_file: str
    command: str
    workers: int  # worker processes, or Ray actors when `ray` is set
    ray: str | None
    turn_timeout: float | None
    seed: int
    wall_seconds: float


def session_entry(run: SessionRun) -> dict[str, Any]:
    """The evaluator's per-session fields first, then ours."""
    outcome = run.outcome
    return {
        "sample_id": run.sample_id,
        "scenario_type": run.scenario_type,
        "hit": outcome.hit,
        "first_hit_turn": outcome.first_hit_turn,
        "best_rank": outcome.best_rank,
        "reciprocal_rank": outcome.reciprocal_rank,
        "target_asin": run.target_asin,
        "category_bucket": run.category_bucket,
        "difficulty_bucket": run.difficulty_bucket,
        "turns": len(run.turns),
        "errors": run.errors,
        "timeouts": run.timeouts,
    }


def build_results(runs: Sequence[SessionRun], info: RunInfo) -> dict[str, Any]:
    outcomes = [run.outcome for run in runs]
    prompt = sum(run.prompt_tokens for run in runs)
    completion = sum(run.completion_tokens for run in runs)
    by_sample = {run.sample_id: run for run in runs}
    return {
        **summarize(outcomes),
        "reported_token_usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        },
        "scenario_metrics": summarize_by(outcomes, lambda o: o.scenario_type),
        "category_metrics": summarize_by(
            outcomes, lambda o: by_sample[o.sample_id].category_bucket
        ),
        "difficulty_metrics": summarize_by(
            outcomes, lambda o: by_sample[o.sample_id].difficulty_bucket
        ),
        "latency": latency_summary([turn.latency_ms for run in runs for turn in run.turns]),
        "errors": sum(run.errors for run in runs),
        "timeouts": sum(run.timeouts for run in runs),
        "error_examples": _error_examples(runs),
        **asdict(info),
        "sessions": [session_entry(run) for run in runs],
    }


def _error_examples(runs: Sequence[SessionRun]) -> list[str]:
    examples: list[str] = []
    for run in runs:
        problems = ([f"reset: {run.reset_error}"] if run.reset_error else []) + [
            f"turn {turn.turn}: {turn.error}" for turn in run.turns if turn.error
        ]
        examples.extend(f"{run.sample_id} {problem}" for problem in problems)
        if len(examples) >= MAX_ERROR_EXAMPLES:
            break
    return examples[:MAX_ERROR_EXAMPLES]


def transcript_lines(runs: Sequence[SessionRun]) -> list[dict[str, Any]]:
    """One line per turn, every session, in session order."""
    return [
        {
            "sample_id": run.sample_id,
            "scenario_type": run.scenario_type,
            "target_asin": run.target_asin,
            **asdict(turn),
        }
        for run in runs
        for turn in run.turns
    ]


def write_results(directory: Path, results: Mapping[str, Any], runs: Sequence[SessionRun]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "results.json").write_text(
        json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    with (directory / "transcripts.jsonl").open("w", encoding="utf-8") as handle:
        for line in transcript_lines(runs):
            handle.write(json.dumps(line, ensure_ascii=False, default=str) + "\n")


def load_results(path: str | Path) -> dict[str, Any]:
    """A results.json (or the directory holding one), with a clear error when it is not one."""
    path = Path(path)
    if path.is_dir():
        path = path / "results.json"
    if not path.is_file():
        raise ValueError(f"results file not found: {path}")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from exc
    missing = [key for key in ("hit_rate_at_10", "mrr", "mttc", "sessions") if key not in data]
    if missing:
        raise ValueError(f"{path}: not a benchmark results file (missing {', '.join(missing)})")
    return data
