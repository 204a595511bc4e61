"""`shopcopilot catalog ...` commands, and how every command shows a product's price and title."""

from __future__ import annotations

from pathlib import Path

import click

from .loader import load_catalog

ELLIPSIS = "…"


def price_text(price: float | None) -> str:
    """Always two decimals, so "$50.00" lines up with "$51.99"; "-" when unpriced."""
    return "-" if price is None else f"${price:,.2f}"


def short_title(title: str, limit: int) -> str:
    """The title cut to at most `limit` characters at a word boundary, with an ellipsis."""
    if len(title) <= limit:
        return title
    head = title[: limit - len(ELLIPSIS) + 1]  # one more: a cut just before a space keeps the word
    words = head.rsplit(" ", 1)[0] if " " in head.strip() else head[:-1]
    return words.rstrip(" ,;:-/&(") + ELLIPSIS


@click.group("catalog")
def catalog_group() -> None:
    """Check or generate catalogs."""


@catalog_group.command("check")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--skip-invalid", is_flag=True, help="Report invalid lines instead of failing.")
def check(path: Path, skip_invalid: bool) -> None:
    """Validate a catalog file (JSONL or JSONL.gz) and report what is wrong."""
    products, report = load_catalog(path, skip_invalid=skip_invalid)
    click.echo(f"{len(products)} valid products")
    click.echo(report.summary())
    for problem in report.invalid[:20] + report.duplicates[:20]:
        click.echo(f"  {problem}")


@catalog_group.command("synth")
@click.option(
    "--size",
    type=click.IntRange(min=1),
    default=50_000,
    show_default=True,
    help="Number of products.",
)
@click.option(
    "--seed", type=int, default=7, show_default=True, help="Same seed, same catalog, byte for byte."
)
@click.option(
    "-o",
    "--out",
    "out_path",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="Output file: .jsonl, or .jsonl.gz to compress.",
)
def synth(size: int, seed: int, out_path: Path) -> None:
    """Generate a synthetic catalog in the Amazon Reviews 2023 layout."""
    from .synth import write_catalog  # local: keeps `catalog check` light

    count = write_catalog(out_path, size=size, seed=seed, progress=True)
    click.echo(f"wrote {count} products to {out_path}")


@catalog_group.command("pad")
@click.option(
    "--real",
    "real_path",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="Real catalog (.jsonl or .jsonl.gz); its records come first, unchanged.",
)
@click.option(
    "--size", type=click.IntRange(min=1), default=50_000, show_default=True, help="Total products."
)
@click.option(
    "--seed", type=int, default=7, show_default=True, help="Seed of the synthetic padding."
)
@click.option(
    "-o",
    "--out",
    "out_path",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="Output file: .jsonl, or .jsonl.gz to compress.",
)
def pad(real_path: Path, size: int, seed: int, out_path: Path) -> None:
    """Pad real records with synthetic products up to SIZE (ids never collide)."""
    from .padding import write_padded_catalog

    write_padded_catalog(real_path, out_path, size=size, seed=seed)
    click.echo(f"wrote {size} products to {out_path}")
