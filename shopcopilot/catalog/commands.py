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


@catalog_group.command("synth")
@click.option("--size", type=click.IntRange(min=1), default=50_000, show_default=True, help="Number of products.")
@click.option("--seed", type=int, default=7, show_default=True, help="Same seed, same catalog, byte for byte.")
@click.option("-o", "--out", "out_path", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="Output file: .jsonl, or .jsonl.gz to compress.")
def synth(size: int, seed: int, out_path: Path) -> None:
    """Generate a synthetic catalog in the Amazon Reviews 2023 layout."""
    from .synth import write_catalog  # local: keeps `catalog check` light

    count = write_catalog(out_path, size=size, seed=seed, progress=True)
    click.echo(f"wrote {count} products to {out_path}")


@catalog_group.command("pad")
@click.option("--real", "real_path", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="Real catalog (.jsonl or .jsonl.gz); its records come first, unchanged.")
@click.option("--size", type=click.IntRange(min=1), default=50_000, show_default=True, help="Total products.")
@click.option("--seed", type=int, default=7, show_default=True, help="Seed of the synthetic padding.")
@click.option("-o", "--out", "out_path", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="Output file: .jsonl, or .jsonl.gz to compress.")
def pad(real_path: Path, size: int, seed: int, out_path: Path) -> None:
    """Pad real records with synthetic products up to SIZE (ids never collide)."""
    from .padding import write_padded_catalog

    try:
        write_padded_catalog(real_path, out_path, size=size, seed=seed)
    except CatalogError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)
    click.echo(f"wrote {size} products to {out_path}")
