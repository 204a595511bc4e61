"""The runner, metrics, results files and CLI, driven by small fake agents on a fixture catalog."""

from __future__ import annotations

import hashlib
import json
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from shopcopilot.bench.metrics import Outcome, latency_summary, summarize
from shopcopilot.bench.runner import (
    BenchError,
    RunSettings,
    build_agent,
    load_bench_data,
    run_session,
    run_sessions,
)
from shopcopilot.bench.sessions_io import Session, SessionFileError, load_sessions, write_sessions
from shopcopilot.cli import main

COLORS = ["black", "navy", "red", "olive"]
MATERIALS = ["cotton", "denim", "wool", "mesh"]


def fixture_record(n: int) -> dict:
    return {
        "parent_asin": f"P{n:02d}",
        "title": f"Fixture item {n} {COLORS[n % 4]}",
        "features": [f"{MATERIALS[n % 4]} shell", f"pocket count {n % 3}"],
        "description": [],
        "price": 10.0 + n,
        "categories": ["Clothing, Shoes & Jewelry", "Women", "Clothing", f"Group {n % 5}"],
        "details": {"Department": "Womens" if n % 2 else "Mens"},
        "average_rating": 4.0,
        "rating_number": n,
        "store": "Fixture Co",
    }


CATALOG_SIZE = 40


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory, write_catalog) -> Path:
    # Read only: one file for the module (conftest.py's writer).
    records = [fixture_record(n) for n in range(CATALOG_SIZE)]
    return write_catalog(tmp_path_factory.mktemp("bench") / "catalog.jsonl", records)


def make_session(sample_id: str, scenario: str, target: str) -> Session:
    return Session(
        sample_id=sample_id,
        scenario_type=scenario,
        user_profile={"summary": "x"},
        target_asin=target,
        category_bucket="clothing",
        difficulty_bucket="easy",
    )


def fixture_sessions() -> list[Session]:
    scenarios = ["buying", "browsing", "intent_override", "boundary"]
    return [
        make_session(f"fx_{n:02d}", scenarios[n % 4], f"P{(n * 7) % CATALOG_SIZE:02d}")
        for n in range(12)
    ]


def data_for(catalog: Path, sessions: list[Session]):
    return load_bench_data(catalog, sessions)


# ---- fake agents (module level so worker processes can import them by name) ----------------------


class ShowAgent:
    """Shows a fixed list on every turn (or per-turn lists) and records what it was told."""

    def __init__(self, catalog_path: str | None = None, show=None, ask=None, usage=None) -> None:
        self.show = show or {}
        self.ask = ask
        self.usage = usage
        self.messages: list[str] = []

    def reset(self, session_id: str, user_profile: dict) -> None:
        self.messages.clear()

    def respond(self, session_id: str, user_message: str, turn: int, top_k: int) -> dict:
        self.messages.append(user_message)
        shown = self.show.get(turn, self.show.get("all", []))
        response = {"message": "ok", "ask_attribute": self.ask, "recommendations": list(shown)}
        if self.usage is not None:
            response["usage"] = self.usage
        return response


class HashAgent:
    """Deterministic but scattered: ranks ids by a hash of the message, asks in a cycle."""

    ASKS = ["material", "color", "other", None, "style"]

    def __init__(self, catalog_path: str) -> None:
        with open(catalog_path, encoding="utf-8") as handle:
            self.ids = [json.loads(line)["parent_asin"] for line in handle]

    def reset(self, session_id: str, user_profile: dict) -> None:
        pass

    def respond(self, session_id: str, user_message: str, turn: int, top_k: int) -> dict:
        ranked = sorted(
            self.ids, key=lambda asin: hashlib.sha256(f"{user_message}|{asin}".encode()).hexdigest()
        )
        return {
            "message": "here",
            "ask_attribute": self.ASKS[turn % len(self.ASKS)],
            "recommendations": [{"parent_asin": asin} for asin in ranked[:top_k]],
            "usage": {"prompt_tokens": 3, "completion_tokens": 1},
        }


class RaisingAgent(ShowAgent):
    def respond(self, session_id, user_message, turn, top_k):
        raise RuntimeError("boom")


class ExitingAgent(ShowAgent):
    def respond(self, session_id, user_message, turn, top_k):
        sys.exit(3)


class NoneAgent(ShowAgent):
    def respond(self, session_id, user_message, turn, top_k):
        return None


class BadMessageAgent(ShowAgent):
    def respond(self, session_id, user_message, turn, top_k):
        return {"message": 5, "recommendations": [{"parent_asin": "P00"}]}


class SlowAgent(ShowAgent):
    def respond(self, session_id, user_message, turn, top_k):
        time.sleep(0.5)
        return {"message": "late", "recommendations": ["P00"]}


class ResetRaisingAgent(ShowAgent):
    def reset(self, session_id, user_profile):
        raise ValueError("cannot reset")


class BrokenConstructorAgent:
    def __init__(self, catalog_path: str) -> None:
        raise OSError("no index here")


OFFICIAL = RunSettings(protocol="official", turn_timeout=5.0)


# ---- the session loop
# --------------------------------------------------------------------------------


def test_hit_is_recorded_with_turn_and_rank(catalog: Path) -> None:
    session = make_session("s1", "buying", "P05")
    agent = ShowAgent(show={1: ["P01", "P02"], 2: ["P09", "P05", "P03"]})
    run = run_session(agent, session, data_for(catalog, [session]), OFFICIAL)
    assert (run.first_hit_turn, run.best_rank) == (2, 2)
    assert len(run.turns) == 2 and run.turns[-1].counted_hit
    assert (
        agent.messages[0] == "I'm looking for Women Group 0. A key requirement is: denim shell."
    )  # "denim" is no material word


def test_hits_before_the_override_do_not_count(catalog: Path) -> None:
    # fixture_override_a overrides at turn 4, fixture_override_b at turn 3 (see the protocol tests).
    for sample_id, override_turn in (("fixture_override_a", 4), ("fixture_override_b", 3)):
        session = make_session(sample_id, "intent_override", "P05")
        agent = ShowAgent(show={"all": ["P05"]})
        run = run_session(agent, session, data_for(catalog, [session]), OFFICIAL)
        assert run.first_hit_turn == override_turn and run.best_rank == 1
        shown_early = run.turns[: override_turn - 1]
        assert all(turn.target_rank == 1 and not turn.counted_hit for turn in shown_early)
        assert agent.messages[override_turn - 1].startswith(
            "Actually, ignore my earlier preference."
        )


def test_a_miss_runs_ten_turns_and_scores_eleven(catalog: Path) -> None:
    session = make_session("s1", "browsing", "P05")
    run = run_session(
        ShowAgent(show={"all": ["P01"]}), session, data_for(catalog, [session]), OFFICIAL
    )
    assert run.first_hit_turn is None and len(run.turns) == 10
    assert summarize([run.outcome])["mttc"] == 11.0


def test_customer_answers_the_asked_attribute(catalog: Path) -> None:
    session = make_session("s1", "browsing", "P02")  # P02: "wool shell", color red in the title
    agent = ShowAgent(ask="material")
    run_session(agent, session, data_for(catalog, [session]), OFFICIAL)
    assert agent.messages[1] == "For that, what matters is: wool; wool shell."
    assert agent.messages[2] == "I don't have an additional preference for material."


def test_invalid_and_duplicate_ids_are_skipped_before_ranking(catalog: Path) -> None:
    session = make_session("s1", "buying", "P05")
    agent = ShowAgent(
        show={"all": ["NOPE", "P01", {"parent_asin": "P01"}, " ", {"parent_asin": " P05 "}]}
    )
    run = run_session(agent, session, data_for(catalog, [session]), OFFICIAL)
    assert (run.first_hit_turn, run.best_rank) == (1, 2)
    assert run.turns[0].recommended == ["P01", "P05"]


@pytest.mark.parametrize("agent_class", [RaisingAgent, ExitingAgent, NoneAgent, BadMessageAgent])
def test_broken_responses_count_as_empty_turns_and_errors(catalog: Path, agent_class) -> None:
    session = make_session("s1", "buying", "P00")
    run = run_session(agent_class(), session, data_for(catalog, [session]), OFFICIAL)
    assert (
        run.first_hit_turn is None
    )  # BadMessageAgent shows the target, but its response does not count
    assert len(run.turns) == 10 and run.errors == 10 and run.timeouts == 0
    assert (
        run.turns[1].customer_message
        == "Those options are not quite right yet. Ask me about one specific attribute."
    )


def test_slow_turns_time_out_and_the_run_goes_on(catalog: Path) -> None:
    session = make_session("s1", "buying", "P00")
    started = time.perf_counter()
    run = run_session(
        SlowAgent(), session, data_for(catalog, [session]), RunSettings(turn_timeout=0.05)
    )
    assert time.perf_counter() - started < 3.0
    assert run.timeouts == 10 and run.errors == 0 and run.first_hit_turn is None
    assert all(turn.latency_ms == 50.0 for turn in run.turns)


def test_reset_failure_is_counted_and_the_session_still_runs(catalog: Path) -> None:
    session = make_session("s1", "buying", "P05")
    run = run_session(
        ResetRaisingAgent(show={"all": ["P05"]}), session, data_for(catalog, [session]), OFFICIAL
    )
    assert run.errors == 1 and run.first_hit_turn == 1


def test_usage_sums_only_non_negative_integers(catalog: Path) -> None:
    session = make_session("s1", "browsing", "P05")
    data = data_for(catalog, [session])
    good = run_session(
        ShowAgent(usage={"prompt_tokens": 7, "completion_tokens": 2}), session, data, OFFICIAL
    )
    assert (good.prompt_tokens, good.completion_tokens) == (70, 20)
    odd = run_session(
        ShowAgent(usage={"prompt_tokens": -1, "completion_tokens": "9"}), session, data, OFFICIAL
    )
    assert (odd.prompt_tokens, odd.completion_tokens) == (0, 0)


# ---- metrics -------------------------------------------------------------------------------------


def test_metrics_by_hand() -> None:
    outcomes = [
        Outcome("a", "buying", 1, 1),
        Outcome("b", "buying", 3, 2),
        Outcome("c", "browsing", None, None),
        Outcome("d", "browsing", None, None),
    ]
    metrics = summarize(outcomes)
    # hits 2/4; MRR (1 + 1/2) / 4; MTTC (1 + 3 + 11 + 11) / 4 = 6.5; efficiency (11 - 6.5) / 10
    assert metrics["hit_rate_at_10"] == 0.5
    assert metrics["mrr"] == 0.375
    assert metrics["mttc"] == 6.5
    assert metrics["efficiency"] == 0.45
    assert metrics["recommended_technical_score"] == pytest.approx(
        0.5 * 0.5 + 0.3 * 0.375 + 0.2 * 0.45
    )
    assert summarize([])["mttc"] is None


def test_latency_percentiles() -> None:
    summary = latency_summary([float(n) for n in range(1, 101)])
    assert summary["calls"] == 100 and summary["max_ms"] == 100.0
    assert summary["p50_ms"] == pytest.approx(50.5) and summary["p99_ms"] == pytest.approx(99.01)


# ---- loading
# -----------------------------------------------------------------------------------------


def test_session_file_errors_name_file_and_line(tmp_path: Path) -> None:
    good = make_session("a", "buying", "P01").to_record()
    cases = {
        "not valid JSON": "{oops",
        "ground_truth.parent_asin": json.dumps({**good, "ground_truth": {}}),
        "scenario_type": json.dumps({**good, "scenario_type": "shopping"}),
        "duplicate sample_id": json.dumps(good),
    }
    for expected, bad_line in cases.items():
        path = tmp_path / "sessions.jsonl"
        path.write_text(json.dumps(good) + "\n" + bad_line + "\n", encoding="utf-8")
        with pytest.raises(SessionFileError, match=rf"sessions.jsonl:2: .*{expected}"):
            load_sessions(path)


def test_sessions_round_trip(tmp_path: Path) -> None:
    sessions = fixture_sessions()
    write_sessions(tmp_path / "s.jsonl", sessions)
    assert load_sessions(tmp_path / "s.jsonl") == sessions


def test_missing_targets_and_bad_catalog_lines_are_clear_errors(
    catalog: Path, tmp_path: Path
) -> None:
    with pytest.raises(BenchError, match="gone -> P99"):
        load_bench_data(catalog, [make_session("gone", "buying", "P99")])
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(fixture_record(1)) + "\n{nope\n", encoding="utf-8")
    with pytest.raises(BenchError, match="bad.jsonl:2"):
        load_bench_data(bad, [make_session("a", "buying", "P01")])


def test_agent_spec_errors(catalog: Path) -> None:
    with pytest.raises(BenchError, match="module:Class"):
        build_agent("no_colon_here", catalog)
    with pytest.raises(BenchError, match="cannot import"):
        build_agent("no_such_module_xyz:Agent", catalog)
    with pytest.raises(BenchError, match="no class"):
        build_agent("shopcopilot.bench.official:Missing", catalog)
    with pytest.raises(BenchError, match="no index here"):
        build_agent(f"{__name__}:BrokenConstructorAgent", catalog)


# ---- many sessions
# -------------------------------------------------------------------------------------


def _without_latency(runs) -> list[dict]:
    from dataclasses import asdict

    rows = []
    for run in runs:
        row = asdict(run)
        for turn in row["turns"]:
            turn.pop("latency_ms")
        rows.append(row)
    return rows


def test_workers_give_the_same_results_as_a_serial_run(catalog: Path) -> None:
    sessions = fixture_sessions()
    data = data_for(catalog, sessions)
    spec = f"{__name__}:HashAgent"
    serial = run_sessions(spec, sessions, data, OFFICIAL, workers=1)
    parallel = run_sessions(spec, sessions, data, OFFICIAL, workers=2)
    assert [run.sample_id for run in parallel] == [s.sample_id for s in sessions]
    assert _without_latency(parallel) == _without_latency(serial)
    hits = sum(run.outcome.hit for run in serial)
    assert 0 < hits < len(sessions)  # the fixture exercises both hits and misses


# ---- the CLI
# ---------------------------------------------------------------------------------------------


def test_eval_writes_results_transcripts_and_report(catalog: Path, tmp_path: Path) -> None:
    sessions_path = tmp_path / "sessions.jsonl"
    write_sessions(sessions_path, fixture_sessions())
    out = tmp_path / "run"
    result = CliRunner().invoke(
        main,
        [
            "eval",
            "--agent",
            f"{__name__}:HashAgent",
            "--catalog",
            str(catalog),
            "--sessions",
            str(sessions_path),
            "-o",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    results = json.loads((out / "results.json").read_text())
    for key in (
        "hit_rate_at_10",
        "mrr",
        "mttc",
        "efficiency",
        "recommended_technical_score",
        "reported_token_usage",
        "scenario_metrics",
        "sessions",
        "latency",
        "errors",
        "timeouts",
        "protocol",
        "agent",
        "catalog",
        "command",
    ):
        assert key in results
    assert results["sample_count"] == 12 and len(results["sessions"]) == 12
    assert set(results["scenario_metrics"]) == {"boundary", "browsing", "buying", "intent_override"}
    turns = [json.loads(line) for line in (out / "transcripts.jsonl").read_text().splitlines()]
    assert len(turns) == sum(s["turns"] for s in results["sessions"])
    assert results["reported_token_usage"]["prompt_tokens"] == 3 * len(turns)
    assert {
        "customer_message",
        "agent_message",
        "ask_attribute",
        "recommended",
        "target_rank",
        "latency_ms",
    } <= set(turns[0])
    for name in ("report.md", "hit_turns.png", "ranks.png", "scenarios.png", "latency.png"):
        assert (out / name).stat().st_size > 0


def test_eval_reports_a_bad_agent_without_a_traceback(catalog: Path, tmp_path: Path) -> None:
    sessions_path = tmp_path / "sessions.jsonl"
    write_sessions(sessions_path, fixture_sessions()[:1])
    result = CliRunner().invoke(
        main,
        [
            "eval",
            "--agent",
            "nope:Agent",
            "--catalog",
            str(catalog),
            "--sessions",
            str(sessions_path),
            "-o",
            str(tmp_path / "o"),
        ],
    )
    assert result.exit_code == 1
    assert "Error: cannot import agent module 'nope'" in result.output


def test_compare_lists_flipped_sessions(tmp_path: Path) -> None:
    def results(hits: dict[str, bool]) -> dict:
        outcomes = [
            Outcome(sid, "buying", 2 if hit else None, 1 if hit else None)
            for sid, hit in hits.items()
        ]
        return {
            **summarize(outcomes),
            "scenario_metrics": {"buying": summarize(outcomes)},
            "sessions": [{"sample_id": o.sample_id, "hit": o.hit} for o in outcomes],
        }

    (tmp_path / "a.json").write_text(json.dumps(results({"s1": True, "s2": False, "s3": True})))
    (tmp_path / "b.json").write_text(json.dumps(results({"s1": False, "s2": True, "s3": True})))
    result = CliRunner().invoke(
        main, ["compare", str(tmp_path / "a.json"), str(tmp_path / "b.json")]
    )
    assert result.exit_code == 0, result.output
    assert "gained (miss -> hit): 1  s2" in result.output
    assert "lost   (hit -> miss): 1  s1" in result.output


# ---- the real-data benchmark's catalog
# --------------------------------------------------------------------


def test_padded_catalog_is_built_once_and_rebuilt_when_the_records_change(
    tmp_path: Path, monkeypatch
) -> None:
    import types

    from rich.console import Console

    from shopcopilot.bench import real

    data_dir = tmp_path / "shared"
    data_dir.mkdir()
    (data_dir / "catalog_harvest.jsonl").write_text(
        json.dumps(fixture_record(1)) + "\n", encoding="utf-8"
    )
    (data_dir / "public_set.jsonl").write_text(
        json.dumps(make_session("a", "buying", "P01").to_record()) + "\n"
    )
    calls: list[tuple[Path, Path, int, int]] = []

    def fake_padding(real_path, out_path, size, seed):
        calls.append((Path(real_path), Path(out_path), size, seed))
        Path(out_path).write_text(Path(real_path).read_text())

    monkeypatch.setitem(
        sys.modules,
        "shopcopilot.catalog.padding",
        types.SimpleNamespace(write_padded_catalog=fake_padding),
    )
    monkeypatch.setenv("SHOPCOPILOT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(real, "shared_data_dir", lambda: data_dir)
    with (tmp_path / "log.txt").open("w") as log:
        console = Console(file=log)
        first, sessions = real.prepare_real_benchmark(console)
        assert real.prepare_real_benchmark(console)[0] == first and len(calls) == 1
        assert calls[0][2:] == (50_000, 7) and sessions == data_dir / "public_set.jsonl"
        with (data_dir / "catalog_harvest.jsonl").open("a") as handle:
            handle.write(json.dumps(fixture_record(2)) + "\n")
        second, _ = real.prepare_real_benchmark(console)
        assert second != first and len(calls) == 2
        assert second.exists() and not first.exists()  # the stale copy is gone

        monkeypatch.setattr(real, "shared_data_dir", lambda: None)
        with pytest.raises(BenchError, match="SHOPCOPILOT_SHARED_DATA"):
            real.prepare_real_benchmark(console)


class OddAskAgent(ShowAgent):
    def respond(self, session_id, user_message, turn, top_k):
        return {"message": "?", "ask_attribute": lambda: "material", "recommendations": []}


def test_odd_ask_attribute_is_recorded_as_text_and_read_as_no_question(catalog: Path) -> None:
    session = make_session("s1", "browsing", "P05")
    run = run_session(OddAskAgent(), session, data_for(catalog, [session]), OFFICIAL)
    assert isinstance(run.turns[0].ask_attribute, str) and run.errors == 0
    assert run.turns[1].customer_message.startswith("Those options are not quite right yet.")


def test_eval_generate_writes_the_sessions_it_ran(
    catalog: Path, tmp_path: Path, monkeypatch
) -> None:
    from shopcopilot.bench import sessions as generator

    asked: list[tuple] = []

    def fake_generate(catalog_path, kind, n, seed, exclude_targets=None):
        asked.append((kind, n, seed))
        return fixture_sessions()[:n]

    monkeypatch.setattr(generator, "generate_sessions", fake_generate)
    out = tmp_path / "gen"
    args = [
        "eval",
        "--agent",
        f"{__name__}:HashAgent",
        "--catalog",
        str(catalog),
        "--no-report",
        "-o",
        str(out),
    ]
    result = CliRunner().invoke(main, [*args, "--generate", "iid:5", "--seed", "4"])
    assert result.exit_code == 0, result.output
    assert asked == [("iid", 5, 4)]
    assert [s.sample_id for s in load_sessions(out / "sessions.jsonl")] == [
        s.sample_id for s in fixture_sessions()[:5]
    ]
    assert json.loads((out / "results.json").read_text())["sample_count"] == 5
    assert CliRunner().invoke(main, [*args, "--generate", "iid"]).exit_code == 2
