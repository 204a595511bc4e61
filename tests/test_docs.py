"""The documentation cannot rot.

- Every `shopcopilot ...` command in a fenced block of README.md and docs/*.md runs, in the
  order written, on a small generated catalog named `catalog.jsonl.gz` in a scratch folder
  with its own cache. A block that cannot run here (it needs a server of its own, the real
  records or a long run) is marked on the line before its fence, with the reason:

      <!-- docs-test: skip: needs the real records in ../shared/data -->

  `shopcopilot serve` is started and asked for /api/health; `shopcopilot chat` gets a message.
- Every ```python block of those files runs.
- Every relative link and #anchor of those files, CONTRIBUTING.md and CHANGELOG.md resolves.
- No tracked text tells how the work went (a numbered work period, "a helper wrote") rather
  than what the software does: a shopper's session and helper threads are the software's own
  words.
"""

from __future__ import annotations

import os
import re
import shlex
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from shopcopilot.cli import main as cli

ROOT = Path(__file__).resolve().parent.parent
COMMAND_DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINKED_DOCS = [*COMMAND_DOCS, ROOT / "CONTRIBUTING.md", ROOT / "CHANGELOG.md"]
CATALOG = "catalog.jsonl.gz"  # the name the docs' runnable examples use
CATALOG_SIZE = 300
SKIP_MARK = re.compile(r"<!--\s*docs-test:\s*skip:\s*(?P<reason>\S.*?)\s*-->")
FENCE = re.compile(r"^(?P<fence>```+|~~~+)\s*(?P<lang>[\w+-]*)")
ENV_ASSIGNMENT = re.compile(r"^[A-Z_][A-Z0-9_]*=")
CHAT_INPUT = "black leather boots under sixty dollars\nno preference\n\n"


# ---- reading the docs ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Block:
    path: Path
    line: int  # of the opening fence, 1-based
    lang: str
    text: str
    skip: str | None  # the marker's reason

    def where(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def fenced_blocks(path: Path) -> list[Block]:
    blocks: list[Block] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    index = 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if not opening:
            index += 1
            continue
        before = next((line for line in reversed(lines[:index]) if line.strip()), "")
        mark = SKIP_MARK.search(before)
        end = index + 1
        while end < len(lines) and not lines[end].startswith(opening["fence"]):
            end += 1
        text = "\n".join(lines[index + 1 : end])
        reason = mark["reason"] if mark else None
        blocks.append(Block(path, index + 1, opening["lang"].lower(), text, reason))
        index = end + 1
    return blocks


def commands(block: Block) -> list[list[str]]:
    """The block's shell lines that run shopcopilot, as argument lists (environment
    assignments first, as written)."""
    found = []
    for line in block.text.replace("\\\n", " ").splitlines():
        words = shlex.split(line, comments=True)
        env = [w for w in words[: _first_command(words)]]
        rest = words[len(env) :]
        if rest[:1] in (["shopcopilot"], [".venv/bin/shopcopilot"]):
            found.append([*env, "shopcopilot", *rest[1:]])
        elif rest[:3] in (
            ["python", "-m", "shopcopilot"],
            [".venv/bin/python", "-m", "shopcopilot"],
        ):
            found.append([*env, "shopcopilot", *rest[3:]])
    return found


def _first_command(words: list[str]) -> int:
    count = 0
    while count < len(words) and ENV_ASSIGNMENT.match(words[count]):
        count += 1
    return count


def runnable(path: Path) -> list[Block]:
    return [b for b in fenced_blocks(path) if b.skip is None and b.lang != "python"]


def _id(path: Path) -> str:
    return str(path.relative_to(ROOT))


# ---- the scratch folder ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def docs_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("docs-cache")


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory, docs_cache: Path) -> Path:
    """The small catalog every example runs on, generated as the docs say, and indexed."""
    folder = tmp_path_factory.mktemp("docs-catalog")
    path = folder / CATALOG
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SHOPCOPILOT_CACHE", str(docs_cache))
        for args in (
            ["catalog", "synth", "--size", str(CATALOG_SIZE), "--seed", "7", "-o", str(path)],
            ["index", "build", "--catalog", str(path)],
        ):
            result = CliRunner().invoke(cli, args)
            assert result.exit_code == 0, result.output
    return path


@pytest.fixture
def workdir(
    tmp_path: Path, catalog: Path, docs_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """A fresh folder holding catalog.jsonl.gz, the current directory, with the docs' cache."""
    (tmp_path / CATALOG).symlink_to(catalog)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SHOPCOPILOT_CACHE", str(docs_cache))
    return tmp_path


# ---- the commands ------------------------------------------------------------------------------


@pytest.mark.parametrize("path", COMMAND_DOCS, ids=_id)
def test_every_documented_command_runs(path: Path, workdir: Path) -> None:
    ran = 0
    for block in runnable(path):
        for argv in commands(block):
            env = dict(word.split("=", 1) for word in argv[: _first_command(argv)])
            args = argv[len(env) + 1 :]
            shown = f"{block.where()}: {' '.join(argv)}"
            if args[:1] == ["serve"]:
                _serve(args, env, workdir, shown)
            else:
                chat = args[:1] == ["chat"]
                result = CliRunner().invoke(cli, args, env=env, input=CHAT_INPUT if chat else None)
                assert result.exit_code == 0, f"{shown}\n{result.output}"
            ran += 1
    for block in fenced_blocks(path):
        if block.skip is None and block.lang == "python":
            exec(compile(block.text, block.where(), "exec"), {"__name__": "docs_example"})
            ran += 1
    if ran == 0:
        pytest.skip(f"{_id(path)} has no runnable command or example")


def _serve(args: list[str], env: dict[str, str], workdir: Path, shown: str) -> None:
    """Start the documented server on a free port, wait for /api/health, stop it."""
    port = _free_port()
    if "--port" in args:
        at = args.index("--port")
        args = [*args[:at], *args[at + 2 :]]
    argv = [sys.executable, "-m", "shopcopilot", *args, "--no-browser", "--port", str(port)]
    log = workdir / "serve.log"
    with log.open("w") as out:
        server = subprocess.Popen(
            argv, cwd=workdir, env={**os.environ, **env}, stdout=out, stderr=subprocess.STDOUT
        )
        try:
            _wait_for_health(port, server, shown, log)
        finally:
            server.terminate()
            server.wait(timeout=30)


def _wait_for_health(port: int, server: subprocess.Popen[bytes], shown: str, log: Path) -> None:
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"{shown}: exited with {server.returncode}\n{log.read_text()}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/health", timeout=2) as r:
                assert r.status == 200
                return
        except OSError:
            time.sleep(0.2)
    pytest.fail(f"{shown}: no answer on /api/health within 90 s\n{log.read_text()}")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_every_skip_says_why() -> None:
    for path in COMMAND_DOCS:
        text = path.read_text(encoding="utf-8")
        marks = re.findall(r"<!--\s*docs-test.*?-->", text, flags=re.S)
        bad = [m for m in marks if not SKIP_MARK.fullmatch(m.strip())]
        assert not bad, f"{_id(path)}: a docs-test marker needs 'skip: <reason>': {bad}"


def test_the_runnable_docs_cover_the_commands_a_newcomer_types() -> None:
    ran = {
        " ".join(argv[_first_command(argv) + 1 :][:2])
        for path in COMMAND_DOCS
        for block in runnable(path)
        for argv in commands(block)
    }
    for command in (
        "catalog check",
        "index build",
        "serve --catalog",
        "chat --catalog",
        "eval --catalog",
    ):
        assert command in ran, f"no runnable example of `shopcopilot {command}`"


def test_the_readme_stays_short() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) < 150, "the README is for a newcomer: the details belong in docs/"


# ---- links -------------------------------------------------------------------------------------

LINK = re.compile(r"!?\[[^\]]*\]\((?P<target>[^)\s]+)(?:\s+\"[^\"]*\")?\)")


def _prose(text: str) -> str:
    """The text without fenced blocks and inline code, where brackets are not links."""
    text = re.sub(r"^(```+|~~~+).*?^\1", "", text, flags=re.S | re.M)
    return re.sub(r"`[^`\n]*`", "", text)


def anchors(path: Path) -> set[str]:
    """GitHub's heading ids: lower case, punctuation dropped, spaces to hyphens, repeats -1, -2."""
    found: set[str] = set()
    for line in _prose(path.read_text(encoding="utf-8")).splitlines():
        heading = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not heading:
            continue
        slug = re.sub(r"[^\w\- ]", "", heading[1].replace("`", "").lower()).replace(" ", "-")
        unique, count = slug, 1
        while unique in found:
            unique, count = f"{slug}-{count}", count + 1
        found.add(unique)
    for html_id in re.findall(r'<a\s+(?:name|id)="([^"]+)"', path.read_text(encoding="utf-8")):
        found.add(html_id)
    return found


@pytest.mark.parametrize("path", LINKED_DOCS, ids=_id)
def test_every_relative_link_and_anchor_resolves(path: Path) -> None:
    broken = []
    for match in LINK.finditer(_prose(path.read_text(encoding="utf-8"))):
        target = match["target"]
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        file_part, _, anchor = target.partition("#")
        linked = (path.parent / file_part).resolve() if file_part else path
        if not linked.exists():
            broken.append(f"{target}: no {linked}")
        elif anchor and (linked.suffix != ".md" or anchor not in anchors(linked)):
            broken.append(f"{target}: no heading #{anchor} in {linked.name}")
    assert not broken, f"{_id(path)}: " + "; ".join(broken)


# ---- the static site ---------------------------------------------------------------------------


def test_the_site_builds_strict_and_offline(tmp_path: Path) -> None:
    """`make docs`: every page in the nav, no warning, nothing loaded from another host."""
    pytest.importorskip("mkdocs", reason="mkdocs (the dev extra) is not installed")
    site = tmp_path / "site"
    build = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "-d", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert build.returncode == 0, build.stdout + build.stderr
    pages = {p.stem for p in (ROOT / "docs").glob("*.md")}
    assert pages <= {p.parent.name for p in site.glob("*/index.html")} | {"index"}
    loaded = re.compile(r"<(?:script|link|img)\b[^>]*(?:src|href)=\"(?:https?:)?//", re.I)
    remote = [p.name for p in site.rglob("*.html") if loaded.search(p.read_text("utf-8"))]
    assert not remote, f"pages that load from another host: {remote}"


# ---- no development log in the product ---------------------------------------------------------

WORK_LOG = re.compile(
    r"""(?ix)
      (?<![-\w])sessions?\ \d+\b                               # a numbered one, not --sessions 200
    | \bthis\ session\b
    | \b(?:next|previous|last|earlier|later|third|fourth|fifth|sixth)\ session\b
    | \bsession's\ (?:start|starting|final|end|last)\b
    | \b(?:start|end)\ of\ (?:the|this)\ session\b
    | \bhelpers?(?:'s?)?\ (?:sessions?|who|report|jobs?|part|started)\b
    | \b(?:by|an?|the|two|three|another|other)\ (?:AI\ )?helpers?(?:'s?)?
      \ (?:sessions?|who|that\ (?:wrote|did|had|read|never))\b
    | \bby\ (?:an?\ |the\ |two\ )?(?:AI\ )?helpers?\b
    | \bwork\ log\b
    | \bdevelopment\ log\b
    """
)
TEXT_FILE = re.compile(r"\.(md|py|toml|js|html|css)$|(^|/)README[^/]*$")


def tracked_text_files() -> Iterator[Path]:
    try:
        listing = subprocess.run(
            ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):  # an unpacked source tree: every file
        listing = [str(p.relative_to(ROOT)) for p in ROOT.rglob("*") if p.is_file()]
        listing = [name for name in listing if not name.startswith((".venv", ".git"))]
    for name in listing:
        if TEXT_FILE.search(name) and name != "tests/test_docs.py":
            path = ROOT / name
            if path.is_file():
                yield path


def test_no_tracked_text_reads_as_a_work_log() -> None:
    found = []
    for path in tracked_text_files():
        for number, line in enumerate(
            path.read_text(encoding="utf-8", errors="replace").splitlines(), 1
        ):
            for match in WORK_LOG.finditer(line):
                found.append(f"{_id(path)}:{number}: {match[0]!r}")
    assert not found, "describe the software, not how the work went:\n" + "\n".join(found)


@pytest.mark.parametrize(
    "text",
    [
        "written in {s} 6",
        "the fifth {s}'s code",
        "measured this {s}",
        "written by a helper {s} (Claude)",
        "the helper's report",
        "written by two helper {s}s",
    ],
)
def test_the_work_log_words_are_caught(text: str) -> None:
    # Spelt with a slot, so that this file holds none of the phrases it catches.
    assert WORK_LOG.search(text.format(s="session"))


@pytest.mark.parametrize(
    "text",
    [
        "python benchmarks/load.py --sessions 200",
        "a shopper's session expires after 6 hours",
        "the session's lock",
        "the quote search runs on helper threads",
        "200 sessions of 5 turns",
    ],
)
def test_the_product_words_are_not(text: str) -> None:
    assert not WORK_LOG.search(text)
