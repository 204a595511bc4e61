"""Packaging and first run: what the wheel declares, `python -m shopcopilot`, the evaluator shim,
reports without the `report` extra, and the parts that must work off Linux (locks, cache)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from shopcopilot.cli import STARTER_SHIM, main
from shopcopilot.index.build import build_lock
from shopcopilot.paths import cache_dir

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def python(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, *args]
    return subprocess.run(command, cwd=cwd, input="", capture_output=True, text=True, timeout=120)


def names(requirements: list[str]) -> set[str]:
    return {re.split(r"[=<>!~\[ ]", requirement, maxsplit=1)[0] for requirement in requirements}


# ---- what the wheel declares --------------------------------------------------------------------


def test_every_dependency_is_pinned() -> None:
    extras = PYPROJECT["optional-dependencies"]
    for requirement in PYPROJECT["dependencies"] + [r for group in extras.values() for r in group]:
        # An exact pin, optionally for some platforms only (an environment marker).
        pin = r"[A-Za-z0-9_.-]+==[0-9][0-9A-Za-z.]*(; [a-z_]+ [!=<>]+ '[A-Za-z0-9_.]+')?"
        assert re.fullmatch(pin, requirement), requirement


def test_a_plain_install_serves_and_plots_are_an_extra() -> None:
    runtime = names(PYPROJECT["dependencies"])
    assert {"fastapi", "uvicorn", "fastapi-offline", "filelock", "platformdirs"} <= runtime
    assert "matplotlib" not in runtime
    # Product vectors by default (numpy only); the transformer is an extra, never the runtime.
    assert "wordllama" in runtime and not {"torch", "sentence-transformers"} & runtime
    extras = PYPROJECT["optional-dependencies"]
    assert names(extras["report"]) == {"matplotlib"}
    assert "matplotlib" in names(extras["dev"]) and extras["web"] == []
    # The model resolver's SDK is an extra; the copilot and its tests never need a model.
    assert names(extras["llm"]) == {"openai"} and "openai" not in runtime


def test_ray_is_an_extra_pinned_as_the_tests_install_it() -> None:
    # `eval --ray` says to install shopcopilot[ray]; CI installs dev, so the Ray tests run there.
    extras = PYPROJECT["optional-dependencies"]
    assert "ray" not in names(PYPROJECT["dependencies"])
    pinned = [r for r in extras["dev"] if r.startswith("ray==")]
    assert extras["ray"] == pinned and len(pinned) == 1


def test_the_wheel_has_no_top_level_starter_package() -> None:
    tool = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]
    assert tool["setuptools"]["packages"]["find"]["include"] == ["shopcopilot*"]
    assert PYPROJECT["license"] == "MIT"  # the SPDX form: no license-table warning


def test_python_dash_m_runs_the_cli() -> None:
    done = python("-m", "shopcopilot", "--help")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Usage: shopcopilot ") and "starter-shim" in done.stdout


# ---- the evaluator shim -------------------------------------------------------------------------


def test_starter_shim_writes_the_package_the_evaluator_imports(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["starter-shim", str(tmp_path / "eval")])
    assert result.exit_code == 0, result.output
    check = "import shopcopilot.agent as a, starter.agent as s; print(s.Agent is a.Agent)"
    done = python("-c", check, cwd=tmp_path / "eval")
    assert done.stdout.strip() == "True", done.stderr
    again = CliRunner().invoke(main, ["starter-shim", str(tmp_path / "eval")])
    assert again.exit_code == 0, again.output  # the same files: nothing to refuse


def test_starter_shim_never_replaces_other_files(tmp_path: Path) -> None:
    own = tmp_path / "starter" / "agent.py"
    own.parent.mkdir()
    own.write_text("from mine import Agent\n")
    result = CliRunner().invoke(main, ["starter-shim", str(tmp_path)])
    assert result.exit_code == 1 and "Error:" in result.output and "not replaced" in result.output
    assert own.read_text() == "from mine import Agent\n"


def test_the_clone_starter_package_is_the_shim() -> None:
    for name, text in STARTER_SHIM.items():
        assert (ROOT / "starter" / name).read_text(encoding="utf-8") == text


# ---- reports without matplotlib -----------------------------------------------------------------


class ShowAllAgent:
    def __init__(self, catalog_path: str) -> None:
        with open(catalog_path, encoding="utf-8") as handle:
            self.ids = [json.loads(line)["parent_asin"] for line in handle]

    def reset(self, session_id: str, user_profile: dict) -> None:
        pass

    def respond(self, session_id: str, user_message: str, turn: int, top_k: int) -> dict:
        shown = [{"parent_asin": asin} for asin in self.ids[:top_k]]
        return {"message": "here", "recommendations": shown}


def small_catalog(path: Path) -> Path:
    kinds = ("Rain Jacket", "Wool Sweater", "Linen Dress", "Canvas Sneaker")
    lines = [
        {
            "parent_asin": f"K{n:02d}",
            "title": f"{kinds[n % 4]} {n}",
            "price": 10.0 + n,
            "categories": ["Clothing, Shoes & Jewelry", "Women", kinds[n % 4]],
            "details": {},
        }
        for n in range(16)
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_a_report_without_matplotlib_has_its_tables_and_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SHOPCOPILOT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if not installed
    out = tmp_path / "run"
    args = ["eval", "--agent", f"{__name__}:ShowAllAgent", "--generate", "iid:4", "-o", str(out)]
    catalog = small_catalog(tmp_path / "c.jsonl")
    result = CliRunner().invoke(main, [*args, "--catalog", str(catalog)])
    assert result.exit_code == 0, result.output
    notice = "report plots skipped: matplotlib is not installed (pip install 'shopcopilot[report]')"
    assert notice in result.output.splitlines()
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "| **overall** |" in report and ".png" not in report
    assert not list(out.glob("*.png"))


# ---- off Linux: no fcntl, platform cache folders ------------------------------------------------


def test_the_cli_starts_without_fcntl() -> None:
    # Windows has no fcntl; the index build used to import it at module top, failing even --help.
    start = "import sys; sys.modules['fcntl'] = None; import shopcopilot.cli as c; c.main(['-h'])"
    done = python("-W", "ignore", "-c", start)
    assert done.returncode == 0 and "Usage:" in done.stdout, done.stderr


def test_a_build_lock_held_by_another_process_is_seen(tmp_path: Path) -> None:
    hold = (
        f"from pathlib import Path; from shopcopilot.index.build import build_lock\n"
        f"with build_lock(Path({str(tmp_path)!r}), 'fp'):\n"
        f"    print('held', flush=True); input()"
    )
    pipes = {"stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "text": True}
    holder = subprocess.Popen([sys.executable, "-c", hold], **pipes)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with build_lock(tmp_path, "fp", wait=False) as free:
            assert not free
    finally:
        holder.communicate("\n", timeout=60)
    with build_lock(tmp_path, "fp", wait=False) as free:
        assert free


def test_the_cache_folder_follows_the_override_then_the_platform(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SHOPCOPILOT_CACHE", str(tmp_path / "mine"))
    assert cache_dir() == tmp_path / "mine" and cache_dir().is_dir()
    monkeypatch.delenv("SHOPCOPILOT_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    if sys.platform.startswith("linux"):
        assert cache_dir() == tmp_path / "xdg" / "shopcopilot"
