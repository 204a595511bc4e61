"""`eval --ray`: sessions played by Ray actors give the serial run's results.

One local Ray (2 CPUs, small object store) serves the whole module; the agent is the real
one, on the shared small synthetic catalog, so the actors open a real index.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

import pytest
from click.testing import CliRunner

from shopcopilot.bench.ray_runner import LOCAL, run_sessions_on_ray, start
from shopcopilot.bench.runner import (
    BASELINE_AGENT,
    BenchData,
    BenchError,
    RunSettings,
    SessionRun,
    load_bench_data,
    run_sessions,
)
from shopcopilot.bench.sessions import generate_sessions
from shopcopilot.cli import main
from shopcopilot.index import CatalogIndex

HERE = Path(__file__).parent
AGENT = "shopcopilot.agent:Agent"
SESSIONS = ["--generate", "iid:8", "--seed", "5"]
# What may differ between two runs of the same sessions: timing and how the run was made.
RUN_KEYS = ("latency", "wall_seconds", "command", "workers", "ray", "sessions_file")


@pytest.fixture(scope="module")
def ray_local(synthetic_index: CatalogIndex, synthetic_cache: Path) -> Iterator[None]:
    """A local Ray for the module. It starts before the cache is pointed at the test index:
    the actors see that cache because the runner forwards SHOPCOPILOT_CACHE."""
    ray = pytest.importorskip("ray", reason="Ray is not installed: pip install 'shopcopilot[ray]'")
    with pytest.MonkeyPatch.context() as patch:
        # The Ray workers inherit the path: tests/ray_agents.py imports there.
        patch.setenv("PYTHONPATH", os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]))
        start(ray, LOCAL)
        patch.setenv("SHOPCOPILOT_CACHE", str(synthetic_cache))
        yield
    ray.shutdown()


def _eval(catalog: Path, out: Path, *more: str) -> dict:
    args = ["eval", "--agent", AGENT, "--catalog", str(catalog), "--no-report", "-o", str(out)]
    result = CliRunner().invoke(main, [*args, *SESSIONS, *more])
    assert result.exit_code == 0, result.output
    return json.loads((out / "results.json").read_text(encoding="utf-8"))


def _turns(out: Path) -> list[dict]:
    lines = (out / "transcripts.jsonl").read_text(encoding="utf-8").splitlines()
    return [{k: v for k, v in json.loads(line).items() if k != "latency_ms"} for line in lines]


def test_ray_gives_the_serial_results(
    ray_local: None, synthetic_catalog: Path, tmp_path: Path
) -> None:
    serial = _eval(synthetic_catalog, tmp_path / "serial")
    on_ray = _eval(synthetic_catalog, tmp_path / "ray", "--ray", "local")
    assert (on_ray["ray"], on_ray["workers"]) == ("local", 2)  # one agent per CPU
    assert (serial["ray"], serial["workers"]) == (None, 1)
    sessions = [(tmp_path / run / "sessions.jsonl").read_bytes() for run in ("serial", "ray")]
    assert sessions[0] == sessions[1]
    # Per session (hit, turn, rank, reciprocal rank), the summary, every metric table.
    assert {k: v for k, v in on_ray.items() if k not in RUN_KEYS} == {
        k: v for k, v in serial.items() if k not in RUN_KEYS
    }
    # Every turn's words, recommendations and target rank, in the same order.
    assert _turns(tmp_path / "ray") == _turns(tmp_path / "serial")
    turns = [session["first_hit_turn"] for session in serial["sessions"]]
    assert len(turns) == 8 and len(set(turns)) > 1  # sessions that differ, not one outcome


def test_natural_customer_reads_shown_products_in_the_actors(
    ray_local: None, synthetic_catalog: Path
) -> None:

    sessions = list(generate_sessions(synthetic_catalog, "iid", 4, seed=9))
    data = load_bench_data(synthetic_catalog, sessions)
    natural = RunSettings(protocol="natural", seed=9)
    serial = run_sessions(AGENT, sessions, data, natural)
    done: list[str] = []
    on_ray = run_sessions_on_ray(
        AGENT, sessions, data, natural, LOCAL, lambda r: done.append(r.sample_id)
    )
    assert sorted(done) == sorted(s.sample_id for s in sessions)  # the progress saw each once
    assert [_plain(run) for run in on_ray.runs] == [_plain(run) for run in serial]


def _plain(run: SessionRun) -> dict:
    row = asdict(run)
    for turn in row["turns"]:
        turn.pop("latency_ms")
    return row


def test_an_agent_that_cannot_start_is_one_clear_error(ray_local: None, tmp_path: Path) -> None:

    missing = tmp_path / "no-such-catalog.jsonl"
    data = BenchData(str(missing), frozenset(), {})
    expected = r"^a Ray worker could not start the agent: constructing .*no-such-catalog"
    with pytest.raises(BenchError, match=expected):  # the baseline: the quickest to import
        run_sessions_on_ray(BASELINE_AGENT, [], data, RunSettings(), LOCAL)


def test_the_actors_use_the_drivers_cache_and_priority(
    ray_local: None, synthetic_catalog: Path, synthetic_cache: Path
) -> None:
    sessions = list(generate_sessions(synthetic_catalog, "iid", 1, seed=9))
    data = load_bench_data(synthetic_catalog, sessions)
    settings = RunSettings(max_turns=1)
    (run,) = run_sessions_on_ray("ray_agents:ProcessAgent", sessions, data, settings, LOCAL).runs
    # Ray's default would run them 15 niceness lower than the command that started them.
    assert json.loads(run.turns[0].agent_message) == [str(synthetic_cache), os.nice(0)]


def test_a_worker_that_dies_mid_run_is_one_clear_error(
    ray_local: None, synthetic_catalog: Path
) -> None:

    sessions = list(generate_sessions(synthetic_catalog, "iid", 2, seed=9))
    data = load_bench_data(synthetic_catalog, sessions)
    with pytest.raises(BenchError, match="^a Ray worker failed: "):
        run_sessions_on_ray("ray_agents:DyingAgent", sessions, data, RunSettings(), LOCAL)


def test_ray_and_workers_together_are_refused(synthetic_catalog: Path, tmp_path: Path) -> None:
    args = ["eval", "--catalog", str(synthetic_catalog), "-o", str(tmp_path / "x")]
    result = CliRunner().invoke(main, [*args, "--ray", "local", "--workers", "2"])
    assert result.exit_code == 2
    assert "give --workers or --ray, not both" in result.output


def test_an_address_where_nothing_listens_is_a_quick_clear_error(
    synthetic_catalog: Path, tmp_path: Path
) -> None:
    pytest.importorskip("ray", reason="Ray is not installed: pip install 'shopcopilot[ray]'")
    with socket.socket() as probe:  # a loopback port that was free a moment ago
        probe.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{probe.getsockname()[1]}"
    args = ["eval", "--catalog", str(synthetic_catalog), "--generate", "iid:1"]
    result = CliRunner().invoke(main, [*args, "-o", str(tmp_path / "x"), "--ray", address])
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: cannot connect to Ray at '{address}': nothing answers")
    assert not (tmp_path / "x").exists()  # refused before any work


def test_without_ray_the_error_says_how_to_install(
    synthetic_catalog: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` fails as when it is absent
    args = ["eval", "--catalog", str(synthetic_catalog), "-o", str(tmp_path / "x"), "--ray"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        "Error: --ray needs Ray, which is not installed: pip install 'shopcopilot[ray]'"
    ]
    assert not (tmp_path / "x").exists()  # refused before any work
