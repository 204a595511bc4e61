"""`shopcopilot ...`: a thin command layer over the library."""

from __future__ import annotations

import click

from .catalog.commands import catalog_group


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="shopcopilot")
def main() -> None:
    """Shopping Copilot: conversational product search over a catalog."""


main.add_command(catalog_group)
