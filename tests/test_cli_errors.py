"""The CLI as a new user meets it: wrong inputs end with one `Error:` line and the documented
exit code (2: the command line is wrong; 1: what it names cannot be used), never a traceback;
`index prune` clears what killed runs left; the output reads well (summaries, prices, titles)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from shopcopilot.bench.compare import compare_results
from shopcopilot.catalog.commands import price_text, short_title
from shopcopilot.cli import main
from shopcopilot.index.build import build_lock

LONG_TITLE = (
    "Women's Lightweight Packable Rain Jacket with Hood and Zip Pockets "
    "for Travel and Weekend Hikes"
)


def record(number: int) -> dict:
    kind = ("Rain Jacket", "Wool Sweater", "Linen Dress")[number % 3]
    return {
        "parent_asin": f"E{number:03d}",
        "title": LONG_TITLE if number == 0 else f"Everyday {kind} number {number}",
        "features": ["Machine washable"],
        "description": [f"A {kind.lower()}."],
        "price": 50.0 if number % 2 else 51.99,
        "categories": ["Clothing, Shoes & Jewelry", "Women", "Clothing", kind],
        "details": {"Department": "Women"},
    }


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("SHOPCOPILOT_CACHE", str(folder))
    return folder


@pytest.fixture()
def catalog(tmp_path: Path) -> Path:
    path = tmp_path / "catalog.jsonl"
    path.write_text("".join(json.dumps(record(n)) + "\n" for n in range(18)), encoding="utf-8")
    return path


class FirstItemsAgent:
    """Recommends the catalog's first products whatever is said: fast, and enough for eval."""

    def __init__(self, catalog_path: str) -> None:
        with open(catalog_path, encoding="utf-8") as handle:
            self.ids = [json.loads(line)["parent_asin"] for line in handle]

    def reset(self, session_id: str, user_profile: dict) -> None:
        pass

    def respond(self, session_id: str, user_message: str, turn: int, top_k: int) -> dict:
        shown = [{"parent_asin": asin} for asin in self.ids[:top_k]]
        return {"message": "here", "recommendations": shown}


AGENT = f"{__name__}:FirstItemsAgent"


def run(*args: str, stdin: str | None = None) -> Result:
    return CliRunner().invoke(main, list(args), input=stdin)


def assert_error(result: Result, exit_code: int, *fragments: str) -> None:
    """One `Error:` line, the exit code, and no exception escaped (no traceback)."""
    assert result.exit_code == exit_code, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, result.output
    assert "Traceback" not in result.output and "error:" not in result.output
    for fragment in fragments:
        assert fragment in errors[0], errors[0]


# ---- usage errors: exit 2 -----------------------------------------------------------------------


def test_a_price_range_upside_down_is_a_usage_error(catalog: Path) -> None:
    prices = ["--min-price", "100", "--max-price", "10"]
    result = run("search", "jacket", "--catalog", str(catalog), *prices)
    assert_error(result, 2, "--min-price", "$100.00 is above --max-price $10.00")
    assert "Filters" not in result.output


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["eval", "--agent", "no_colon"], "expected MODULE:CLASS"),
        (["eval", "--generate", "zzz:3"], "unknown session kind 'zzz'"),
        (["eval", "--generate", "iid"], "expected KIND:N"),
        (["sessions", "iid", "-o", "x.jsonl"], "KIND:N"),
        (["chat", "-k", "0"], "-k"),
        (["eval", "--sessions", "a.jsonl", "--generate", "iid:3"], "not both"),
        (["no-such-command"], "No such command"),
    ],
)
def test_malformed_command_lines_exit_2(
    catalog: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], fragment: str
) -> None:
    monkeypatch.chdir(tmp_path)
    extra = [] if args[0] == "no-such-command" else ["--catalog", str(catalog)]
    assert_error(run(*args, *extra), 2, fragment)
    assert not list(tmp_path.glob("**/sessions.jsonl"))  # checked before any work


# ---- runtime errors: exit 1 ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["chat", "--catalog", "missing.jsonl"],
        ["search", "jacket", "--catalog", "missing.jsonl"],
        ["index", "build", "--catalog", "missing.jsonl"],
        ["serve", "--no-browser", "--catalog", "missing.jsonl"],
        ["catalog", "check", "missing.jsonl"],
        ["catalog", "pad", "--real", "missing.jsonl", "-o", "out.jsonl"],
        ["sessions", "iid:3", "--catalog", "missing.jsonl", "-o", "out.jsonl"],
    ],
)
def test_a_missing_catalog_is_one_error_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert_error(run(*args, stdin=""), 1, "missing.jsonl", "not found")


def test_chat_on_a_missing_catalog_prints_no_traceback_for_real(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "shopcopilot", "chat", "--catalog", "missing.jsonl"]
    quiet = {"stdin": subprocess.DEVNULL, "capture_output": True, "text": True, "timeout": 120}
    done = subprocess.run(command, cwd=tmp_path, **quiet)
    assert done.returncode == 1
    error = "Error: catalog not found (or not a file): missing.jsonl"
    assert done.stderr.strip().splitlines() == [error]


def test_eval_checks_the_agent_before_writing_sessions(
    catalog: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "run"
    result = run("eval", "--agent", "nothere:Agent", "--catalog", str(catalog), "-o", str(out))
    assert_error(result, 1, "cannot import agent module 'nothere'")
    assert not out.exists()
    missing_class = run("eval", "--agent", f"{__name__}:Nope", "--catalog", str(catalog))
    assert_error(missing_class, 1, "has no class 'Nope'")


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["compare", "a.json", "b.json"], "results file not found"),
        (["eval", "--agent", AGENT, "--sessions", "missing.jsonl"], "session file not found"),
        (["eval", "--agent", AGENT, "--generate", "iid:2", "-o", "afile"], "folder is a file"),
        (["starter-shim", "afile"], "afile"),
    ],
)
def test_other_runtime_errors(
    catalog: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], fragment: str
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("not a folder")
    extra = ["--catalog", str(catalog)] if args[0] == "eval" else []
    assert_error(run(*args, *extra), 1, fragment)


# ---- leftovers ----------------------------------------------------------------------------------


def finished_pid() -> int:
    """The id of a process that has ended (ids are not reused that fast)."""
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_prune_removes_partials_of_dead_processes_and_free_locks(cache: Path) -> None:
    index_root = cache / "index"
    index_root.mkdir(parents=True)
    dead, alive = finished_pid(), os.getpid()
    orphan = cache / f"synthetic-500-seed7.partial-{dead}.jsonl.gz"
    older_orphan = cache / f"real-padded-50000-seed7-abc.jsonl.{dead}.partial"  # earlier naming
    in_progress = cache / f"synthetic-500-seed7.partial-{alive}.jsonl.gz"
    catalog = cache / "synthetic-500-seed7.jsonl.gz"
    for path in (orphan, older_orphan, in_progress, catalog):
        path.write_text("x")
    free_lock = index_root / "aaaa.lock"
    free_lock.write_text("")
    with build_lock(index_root, "bbbb"):  # held (by this process) while prune runs
        dry = run("index", "prune", "--dry-run")
        assert dry.exit_code == 0 and orphan.exists() and free_lock.exists()
        assert "would delete 1 unused lock file(s) and 2 partial catalog(s)" in dry.output
        result = run("index", "prune")
        assert result.exit_code == 0, result.output
        assert "deleted 1 unused lock file(s) and 2 partial catalog(s)" in result.output
        assert (index_root / "bbbb.lock").exists()
    assert not orphan.exists() and not older_orphan.exists() and not free_lock.exists()
    assert in_progress.exists() and catalog.exists()
    with build_lock(index_root, "aaaa", wait=False) as free:  # a pruned lock still locks
        assert free and (index_root / "aaaa.lock").exists()


# ---- readable output ----------------------------------------------------------------------------


def test_index_build_prints_a_readable_summary(catalog: Path) -> None:
    result = run("index", "build", "--catalog", str(catalog))
    assert result.exit_code == 0, result.output
    assert "products  18" in result.output
    built = re.search(r"built at .* \(took \d+\.\d\d s: (.*)\)", result.output)
    assert built, result.output
    assert sorted(re.sub(r" \d+\.\d\d s$", "", step) for step in built[1].split(", ")) == [
        "checksums",
        "write products",
    ]
    assert "{" not in result.output


def test_titles_are_cut_at_a_word_with_an_ellipsis() -> None:
    assert short_title("Short title", 80) == "Short title"
    cut = short_title(LONG_TITLE, 40)
    assert cut == "Women's Lightweight Packable Rain…" and len(cut) <= 40
    assert LONG_TITLE.startswith(cut.removesuffix("…") + " ")
    assert short_title("Supercalifragilistic", 10) == "Supercali…"  # one long word: no boundary


def test_prices_always_have_two_decimals() -> None:
    prices = [price_text(price) for price in (50, 51.99, 1234.5, None)]
    assert prices == ["$50.00", "$51.99", "$1,234.50", "-"]


def test_chat_shows_prices_with_cents_and_whole_words(catalog: Path) -> None:
    result = run("chat", "--catalog", str(catalog), stdin="a rain jacket\nno preference\n\n")
    assert result.exit_code == 0, result.output
    assert "$50.00" in result.output and "$51.99" in result.output
    assert not re.search(r"\$\d+(?![\d.,])", result.output)  # no "$50" beside "$51.99"
    assert "Travel…" in result.output and "Hikes" not in result.output  # LONG_TITLE, shortened


def test_search_prints_prices_with_cents(catalog: Path) -> None:
    result = run("search", "jacket", "--catalog", str(catalog))
    assert result.exit_code == 0, result.output
    assert re.search(r"\$5[01]\.\d\d", result.output)


def test_compare_knows_one_session_set_saved_in_two_folders(catalog: Path, tmp_path: Path) -> None:
    args = ["eval", "--agent", AGENT, "--catalog", str(catalog), "--generate", "iid:4"]
    args.append("--no-report")
    for name in ("a", "b"):
        result = run(*args, "-o", str(tmp_path / name))
        assert result.exit_code == 0, result.output
    result = run("compare", str(tmp_path / "a"), str(tmp_path / "b"))
    assert result.exit_code == 0, result.output
    assert "differ" not in result.output


def test_compare_names_inputs_whose_contents_differ() -> None:
    run_a = {"sessions": [], "sessions_file": "a/sessions.jsonl", "sessions_sha256": "1" * 64}
    same = {**run_a, "sessions_file": "b/sessions.jsonl"}
    other = {**same, "sessions_sha256": "2" * 64}
    assert compare_results(run_a, same).differences == []
    changed = ["sessions_file: a/sessions.jsonl -> b/sessions.jsonl"]
    assert compare_results(run_a, other).differences == changed
    old_style = {"sessions": [], "sessions_file": "x"}  # a results file from before the hashes
    assert compare_results(old_style, {**old_style, "sessions_file": "y"}).differences
