"""`shopcopilot index build` and `shopcopilot search`: thin commands over `open_index`."""

from __future__ import annotations

import time
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from ..catalog.commands import price_text, short_title
from ..paths import cache_dir, orphaned_partials
from .ann import ann_path
from .build import prune_free_locks
from .catalog_index import (
    BACKENDS,
    DEFAULT_BACKEND,
    CatalogIndex,
    index_root,
    open_index,
    prune_other_versions,
)
from .categoriser import describe
from .query import Filters, Hit
from .vectors import dense_enabled, load_encoder, load_or_build, vectors_path

TITLE_CHARS = 70
_CATALOG_HELP = "Catalog file (.jsonl or .jsonl.gz); default: the synthetic 50k catalog."


def register(main: click.Group) -> None:
    main.add_command(index_group)
    main.add_command(search_command)


@click.group("index")
def index_group() -> None:
    """Build the catalog's search index (done automatically on first search)."""


@index_group.command("build")
@click.option("--catalog", type=click.Path(path_type=Path), default=None, help=_CATALOG_HELP)
@click.option("--rebuild", is_flag=True, help="Build again even if a valid index exists.")
def build_command(catalog: Path | None, rebuild: bool) -> None:
    """Build (or verify and reuse) the index of a catalog and print where it lives."""
    started = time.perf_counter()
    index = open_index(catalog, rebuild=rebuild, progress=True)
    manifest = index.manifest
    click.echo(f"index     {index.path}")
    click.echo(f"catalog   {index.catalog_path}")
    click.echo(f"products  {manifest['products']:,}")
    click.echo(f"built at  {manifest['built_at']}{_build_steps(manifest.get('timings_s', {}))}")
    click.echo(f"items     {describe(index.store, index.path)}")
    click.echo(f"vectors   {_vectors_line(index)}")
    click.echo(f"ready in  {time.perf_counter() - started:.2f} s")


def _vectors_line(index) -> str:
    """Build (or check) the product vectors now, so the first turn does not wait for them."""
    if not dense_enabled():
        return "off (SHOPCOPILOT_DENSE=0)"
    encoder = load_encoder()
    vectors = load_or_build(index.store, index.path, encoder, progress=True)
    if vectors is None or encoder is None:
        return "none: words alone (see the notice above)"
    path = vectors_path(index.path, encoder)
    line = f"{encoder.name}, {len(vectors):,} x {encoder.dim}, {path.stat().st_size / 1e6:.1f} MB"
    if vectors.neighbours is None:
        return line + ", searched exactly"
    graph = ann_path(path).stat().st_size / 1e6
    return line + f", searched through a graph of {graph:.1f} MB"


def _build_steps(timings: dict[str, float]) -> str:
    """' (took 1.23 s: write products 1.10 s, checksums 0.13 s)', or nothing without timings."""
    if not timings:
        return ""
    steps = ", ".join(f"{step.replace('_', ' ')} {secs:.2f} s" for step, secs in timings.items())
    return f" (took {sum(timings.values()):.2f} s: {steps})"


@index_group.command("prune")
@click.option("--dry-run", is_flag=True, help="Only list what would be deleted.")
def prune_command(dry_run: bool) -> None:
    """Delete cached indexes that this version can never open again (built by other code
    versions, or damaged), leftovers of crashed builds, lock files no process holds, and
    catalogs half-written by a process that was killed. Run it when no older version is running."""
    root = index_root()
    folders = prune_other_versions(root, dry_run=dry_run)
    locks = prune_free_locks(root, dry_run=dry_run)  # after the folders: pruning them takes locks
    partials = orphaned_partials(cache_dir())
    if not dry_run:
        for path in partials:
            path.unlink(missing_ok=True)
    verb = "would delete" if dry_run else "deleted"
    for path in [*folders, *locks, *partials]:
        click.echo(f"{verb} {path}")
    click.echo(f"{verb} {len(folders)} folder(s) under {root}")
    click.echo(f"{verb} {len(locks)} unused lock file(s) and {len(partials)} partial catalog(s)")


@click.command("search")
@click.argument("query")
@click.option("--catalog", type=click.Path(path_type=Path), default=None, help=_CATALOG_HELP)
@click.option(
    "-k",
    "--limit",
    default=10,
    show_default=True,
    type=click.IntRange(min=1),
    help="How many hits.",
)
@click.option(
    "--offset",
    default=0,
    show_default=True,
    type=click.IntRange(min=0),
    help="Skip this many hits.",
)
@click.option(
    "--min-price",
    type=click.FloatRange(min=0),
    default=None,
    help="Lowest price (unpriced items kept).",
)
@click.option(
    "--max-price",
    type=click.FloatRange(min=0),
    default=None,
    help="Highest price (unpriced items kept).",
)
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
    if min_price is not None and max_price is not None and min_price > max_price:
        problem = f"{price_text(min_price)} is above --max-price {price_text(max_price)}"
        raise click.BadParameter(problem, param_hint="--min-price")
    index = open_index(catalog, progress=True)
    try:
        filters = Filters(min_price=min_price, max_price=max_price, department=department)
        started = time.perf_counter()
        hits = index.search(query, limit=limit, offset=offset, filters=filters, backend=backend)
        elapsed_ms = (time.perf_counter() - started) * 1000
    except ValueError as exc:  # a query the back end cannot express
        raise click.ClickException(str(exc)) from exc
    console = Console()
    console.print(
        _table(index, hits, f"{len(hits)} hits for {query!r} ({backend}, {elapsed_ms:.1f} ms)")
    )


def _table(index: CatalogIndex, hits: list[Hit], title: str) -> Table:
    ids = [hit.parent_asin for hit in hits]
    products = index.store.get_many(ids)
    table = Table(title=title, title_justify="left")
    for name in ("rank", "score", "id", "price"):
        table.add_column(name, justify="left" if name == "id" else "right", no_wrap=True)
    table.add_column("title")
    table.add_column("leaf category")
    for hit in hits:
        product = products[hit.parent_asin]
        title = short_title(product.title, TITLE_CHARS)
        row = (str(hit.rank), f"{hit.score:.3f}", hit.parent_asin, price_text(product.price), title)
        table.add_row(*row, product.leaf_category)
    return table
