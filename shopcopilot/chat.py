"""`shopcopilot chat`: a terminal conversation with the copilot, optionally with the stage trace."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.console import Console
from rich.table import Table

from .catalog.commands import price_text, short_title

if TYPE_CHECKING:
    from .agent import Agent, TurnResult

TITLE_CHARS = 80


@click.command("chat")
@click.option(
    "--catalog",
    type=click.Path(path_type=Path),
    help="Catalog JSONL(.gz) (default: the synthetic 50k catalog).",
)
@click.option("--trace", is_flag=True, help="Show each pipeline stage with its timing and output.")
@click.option(
    "-k",
    "--top-k",
    default=10,
    show_default=True,
    type=click.IntRange(min=1),
    help="Products to show at most per turn.",
)
def chat(catalog: Path | None, trace: bool, top_k: int) -> None:
    """Talk to the copilot in the terminal. Empty line or Ctrl-D ends the conversation."""
    from .agent import FOR_PEOPLE, Agent  # local: the rest of the CLI starts faster

    console = Console()
    agent = Agent(catalog, settings=FOR_PEOPLE, progress=True)
    session = f"chat-{uuid.uuid4().hex[:8]}"
    agent.reset(session, {})
    console.print("[bold]Shopping Copilot[/bold]: what are you looking for?")
    turn = 0
    while True:
        try:
            message = console.input("[bold cyan]you>[/bold cyan] ").strip()
        except EOFError:
            break
        if not message:
            break
        turn += 1
        result = agent.respond_traced(session, message, turn, top_k)
        show_turn(console, agent, result, trace)


def show_turn(console: Console, agent: Agent, result: TurnResult, trace: bool) -> None:
    table = Table(show_header=True, header_style="bold")
    for column in ("#", "price", "title", "why"):
        table.add_column(column, overflow="fold")
    answered = {a for answer in result.response.get("answers", []) for a in answer["parent_asins"]}
    for rank, rec in enumerate(result.response["recommendations"], start=1):
        product = agent.index.store.get(rec["parent_asin"])
        price = price_text(product.price if product else None)
        title = short_title(product.title, TITLE_CHARS) if product else rec["parent_asin"]
        why = ("new · " if rec.get("new") else "") + rec.get("reason", "")
        style = "bold yellow" if rec["parent_asin"] in answered else None
        table.add_row(str(rank), price, title, why, style=style)
    console.print(table)
    held = [r["label"] for r in result.response.get("requirements", [])]
    if held:
        console.print("[dim]you asked for: " + " · ".join(held) + "[/dim]")
    if trace:
        for event in result.trace:
            console.print(
                f"  [dim]{event['stage']:<10} {event['ms']:7.2f} ms  {event['summary']}[/dim]"
            )
    console.print(f"[bold]copilot>[/bold] {result.response['message']}")
