"""`shopcopilot ...`: a thin command layer over the library."""

from __future__ import annotations

import click

from .bench.commands import register as register_bench_commands
from .catalog.commands import catalog_group
from .chat import chat
from .index.commands import register as register_index_commands
from .web.commands import serve


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="shopcopilot")
def main() -> None:
    """Shopping Copilot: conversational product search over a catalog."""


main.add_command(catalog_group)
register_bench_commands(main)
register_index_commands(main)
main.add_command(serve)
main.add_command(chat)
