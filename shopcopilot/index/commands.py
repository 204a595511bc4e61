"""`shopcopilot index build` and `shopcopilot search`: thin commands over `open_index`."""

from __future__ import annotations

import time
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from ..catalog.loader import CatalogError
from .catalog_index import BACKENDS, DEFAULT_BACKEND, CatalogIndex, index_root, open_index, prune_other_versions
from .errors import CorruptIndexError
from .query import Filters, Hit

TITLE_CHARS = 70
_CATALOG_HELP = "Catalog file (.jsonl or .jsonl.gz); default: the synthetic 50k catalog."


def register(main: click.Group) -> None:
    main.add_command(index_group)
    main.add_command(search_command)


@click.group("index")
def index_group() -> None:
    """Build the catalog's search index (done automatically on first search)."""


@index_group.command("build")
@click.option("--catalog", type=click.Path(path_type=Path, dir_okay=False), default=None, help=_CATALOG_HELP)
@click.option("--rebuild", is_flag=True, help="Build again even if a valid index exists.")
def build_command(catalog: Path | None, rebuild: bool) -> None:
    """Build (or verify and reuse) the index of a catalog and print where it lives."""
    started = time.perf_counter()
    index = _open(catalog, rebuild)
    manifest = index.manifest
    click.echo(f"index     {index.path}")
    click.echo(f"catalog   {index.catalog_path}")
    click.echo(f"products  {manifest['products']:,}")
    click.echo(f"built at  {manifest['built_at']} (steps, s: {manifest.get('timings_s', {})})")
    click.echo(f"ready in  {time.perf_counter() - started:.2f} s")


@index_group.command("prune")
@click.option("--dry-run", is_flag=True, help="Only list what would be deleted.")
def prune_command(dry_run: bool) -> None:
    """Delete cached indexes that this version can never open again (built by other code
    versions, or damaged) and leftovers of crashed builds. Run it when no older version is running."""
    root = index_root()
    removed = prune_other_versions(root, dry_run=dry_run)
    verb = "would delete" if dry_run else "deleted"
    for folder in removed:
        click.echo(f"{verb} {folder}")
    click.echo(f"{verb} {len(removed)} folder(s) under {root}")


@click.command("search")
@click.argument("query")
@click.option("--catalog", type=click.Path(path_type=Path, dir_okay=False), default=None, help=_CATALOG_HELP)
@click.option("-k", "--limit", default=10, show_default=True, type=click.IntRange(min=1), help="How many hits.")
@click.option("--offset", default=0, show_default=True, type=click.IntRange(min=0), help="Skip this many hits.")
@click.option("--min-price", type=click.FloatRange(min=0), default=None, help="Lowest price (unpriced items kept).")
@click.option("--max-price", type=click.FloatRange(min=0), default=None, help="Highest price (unpriced items kept).")
@click.option("--department", default=None, help="Only this department, e.g. women, men, girls.")
@click.option("--backend", type=click.Choice(BACKENDS), default=DEFAULT_BACKEND, show_default=True)
def search_command(
    query: str,
    catalog: Path | None,
    limit: int,
    offset: int,
    min_price: float | None,
    max_price: float | None,
    department: str | None,
    backend: str,
) -> None:
    """Search the catalog: words are OR-ed; use "quoted phrases", AND, +required and -excluded."""
    index = _open(catalog, rebuild=False)
    try:
        filters = Filters(min_price=min_price, max_price=max_price, department=department)
        started = time.perf_counter()
        hits = index.search(query, limit=limit, offset=offset, filters=filters, backend=backend)
        elapsed_ms = (time.perf_counter() - started) * 1000
    except (ValueError, CorruptIndexError) as exc:
        raise click.ClickException(str(exc)) from exc
    console = Console()
    console.print(_table(index, hits, f"{len(hits)} hits for {query!r} ({backend}, {elapsed_ms:.1f} ms)"))


def _open(catalog: Path | None, rebuild: bool) -> CatalogIndex:
    try:
        return open_index(catalog, rebuild=rebuild, progress=True)
    except (CatalogError, CorruptIndexError) as exc:
        raise click.ClickException(str(exc)) from exc


def _table(index: CatalogIndex, hits: list[Hit], title: str) -> Table:
    ids = [hit.parent_asin for hit in hits]
    products = index.store.get_many(ids)
    table = Table(title=title, title_justify="left")
    for name, justify in (("rank", "right"), ("score", "right"), ("id", "left"), ("price", "right")):
        table.add_column(name, justify=justify, no_wrap=True)
    table.add_column("title")
    table.add_column("leaf category")
    for hit in hits:
        product = products[hit.parent_asin]
        price = "-" if product.price is None else f"{product.price:.2f}"
        title = product.title if len(product.title) <= TITLE_CHARS else product.title[: TITLE_CHARS - 1] + "…"
        table.add_row(str(hit.rank), f"{hit.score:.3f}", hit.parent_asin, price, title, product.leaf_category)
    return table
