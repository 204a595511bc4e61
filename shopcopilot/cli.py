"""`shopcopilot ...`: a thin command layer over the library.

Errors end a command with one `Error: ...` line, never a traceback for a user's mistake:
exit 2 when the command line itself is wrong (an unknown option, a malformed or out-of-range
value, options that exclude each other), exit 1 when a well-formed command fails on what it
names or does (a missing or invalid file, an agent that cannot be imported, a full disk).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from .bench.commands import register as register_bench_commands
from .bench.runner import BenchError
from .bench.sessions_io import SessionFileError
from .catalog.commands import catalog_group
from .catalog.loader import CatalogError
from .chat import chat
from .index.commands import register as register_index_commands
from .index.errors import CorruptIndexError
from .llm import LlmConfigError
from .reader.commands import reader_group
from .web.commands import serve

# Problems with what the user named; any other exception is a bug and keeps its traceback.
USER_PROBLEMS = (
    CatalogError,
    CorruptIndexError,
    SessionFileError,
    BenchError,
    LlmConfigError,
    OSError,
)

# What `starter-shim` writes: the module the TechJam evaluator imports.
STARTER_SHIM = {
    "__init__.py": '"""Drop-in package for the official TechJam evaluator '
    '(`from starter.agent import Agent`)."""\n',
    "agent.py": "# The official evaluator does "
    "`from starter.agent import Agent; Agent(catalog_path)`.\n"
    "from shopcopilot.agent import Agent  # noqa: F401\n",
}


class Cli(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except USER_PROBLEMS as exc:
            raise click.ClickException(str(exc)) from exc


@click.group(cls=Cli, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="shopcopilot")
def main() -> None:
    """Shopping Copilot: conversational product search over a catalog."""


@main.command("starter-shim")
@click.argument("directory", type=click.Path(path_type=Path))
def starter_shim(directory: Path) -> None:
    """Write DIRECTORY/starter/, the package the TechJam evaluator imports
    (`from starter.agent import Agent`): run the evaluator from DIRECTORY."""
    package = directory / "starter"
    clashes = [name for name, text in STARTER_SHIM.items() if _differs(package / name, text)]
    if clashes:
        clash = package / clashes[0]
        raise click.ClickException(f"{clash} exists with other contents; not replaced")
    package.mkdir(parents=True, exist_ok=True)
    for name, text in STARTER_SHIM.items():
        (package / name).write_text(text, encoding="utf-8")
    click.echo(f"wrote {package}: run the evaluator from {directory}")


def _differs(path: Path, text: str) -> bool:
    return path.exists() and path.read_text(encoding="utf-8") != text


main.add_command(catalog_group)
register_bench_commands(main)
register_index_commands(main)
main.add_command(serve)
main.add_command(chat)
main.add_command(reader_group)
