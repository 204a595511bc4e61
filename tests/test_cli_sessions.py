"""`shopcopilot sessions KIND:N -o FILE`: generated sets saved in the public_set.jsonl layout."""

from __future__ import annotations

from click.testing import CliRunner

from shopcopilot.bench.sessions_io import load_sessions
from shopcopilot.catalog.synth import write_catalog
from shopcopilot.cli import main


def test_sessions_command_writes_a_loadable_set(tmp_path, monkeypatch):
    monkeypatch.setenv("SHOPCOPILOT_CACHE", str(tmp_path / "cache"))
    catalog = tmp_path / "catalog.jsonl"
    write_catalog(catalog, size=600, seed=5)
    out = tmp_path / "set.jsonl"
    result = CliRunner().invoke(
        main, ["sessions", "iid:20", "--catalog", str(catalog), "--seed", "2", "-o", str(out)]
    )
    assert result.exit_code == 0, result.output
    sessions = load_sessions(out)
    assert len(sessions) == 20
    assert {s.scenario_type for s in sessions} <= {
        "buying",
        "browsing",
        "intent_override",
        "boundary",
    }


def test_sessions_command_rejects_an_unknown_kind(tmp_path):
    catalog = tmp_path / "catalog.jsonl"
    write_catalog(catalog, size=50, seed=5)
    result = CliRunner().invoke(
        main, ["sessions", "bogus:5", "--catalog", str(catalog), "-o", str(tmp_path / "x")]
    )
    assert result.exit_code != 0 and "unknown session kind" in result.output
