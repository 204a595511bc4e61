"""`shopcopilot catalog ...` commands."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from .loader import CatalogError, load_catalog


@click.group("catalog")
def catalog_group() -> None:
    """Check or generate catalogs."""


@catalog_group.command("check")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--skip-invalid", is_flag=True, help="Report invalid lines instead of failing.")
def check(path: Path, skip_invalid: bool) -> None:
    """Validate a catalog file (JSONL or JSONL.gz) and report what is wrong."""
    try:
        products, report = load_catalog(path, skip_invalid=skip_invalid)
    except CatalogError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)
    click.echo(f"{len(products)} valid products")
    click.echo(report.summary())
    for problem in report.invalid[:20] + report.duplicates[:20]:
        click.echo(f"  {problem}")
