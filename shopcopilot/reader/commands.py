"""`shopcopilot reader train` and `shopcopilot reader eval`."""

from __future__ import annotations

import json
import time
from pathlib import Path

import click

from .train import TRAIN_DIR, TrainingDataError


@click.group("reader")
def reader_group() -> None:
    """The learned reader: train it from the annotated messages, score it."""


@reader_group.command("train")
@click.option(
    "--data",
    "data_dir",
    type=click.Path(path_type=Path, file_okay=False),
    default=TRAIN_DIR,
    show_default=True,
    help="Folder of annotated messages (JSON Lines).",
)
@click.option("--seed", type=int, default=7, show_default=True)
@click.option(
    "--catalog",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Catalog whose titles are weak item labels (default: the embedded 50k catalog).",
)
@click.option(
    "--held-out", is_flag=True, help="Leave out the held-out tenth (to score designs on it)."
)
@click.option(
    "-o", "--out", "out_dir", type=click.Path(path_type=Path, file_okay=False), required=True
)
def train_command(
    data_dir: Path, seed: int, catalog: Path | None, held_out: bool, out_dir: Path
) -> None:
    """Train the tagger, the negation tagger and the item model into OUT (the shipped model is
    this command's output with the defaults)."""
    from .train import train

    started = time.monotonic()
    try:
        meta = train(out_dir, data_dir, seed, catalog, held_out, log=click.echo)
    except TrainingDataError as error:
        raise click.ClickException(str(error)) from error
    size = sum(p.stat().st_size for p in out_dir.iterdir())
    click.echo(
        f"wrote {out_dir} ({size / 1e6:.1f} MB, data {meta['data']}) "
        f"in {time.monotonic() - started:.0f} s"
    )


@reader_group.command("eval")
@click.option(
    "--split",
    default="dev",
    show_default=True,
    help="held (the held-out tenth of the training data: span scores), or a corpus split "
    "(dev, test, fresh...: the copilot's understanding with this model).",
)
@click.option(
    "--model",
    "model_dir",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Model folder (default: the shipped one).",
)
@click.option(
    "--data", "data_dir", type=click.Path(path_type=Path, file_okay=False), default=TRAIN_DIR
)
@click.option(
    "-o",
    "--out",
    "out_dir",
    type=click.Path(path_type=Path),
    default=Path("runs/reader"),
    show_default=True,
)
def eval_command(split: str, model_dir: Path | None, data_dir: Path, out_dir: Path) -> None:
    """Score a reader: span precision/recall/F1 per label on the held-out tenth, or the item node
    and negation read on a corpus split."""
    from .evaluate import evaluate_corpus, evaluate_held
    from .model import MODEL_DIR, ModelError, load

    try:
        reader = load(model_dir or MODEL_DIR)
    except ModelError as error:
        raise click.ClickException(str(error)) from error
    summary = evaluate_held(reader, data_dir) if split == "held" else evaluate_corpus(reader, split)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / f"reader-{split}.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
    for key, value in summary.items():
        click.echo(f"{key}: {value}")
    click.echo(f"wrote {out_dir / f'reader-{split}.json'}")


@reader_group.command("held-corpus")
@click.option(
    "--data", "data_dir", type=click.Path(path_type=Path, file_okay=False), default=TRAIN_DIR
)
@click.option(
    "-o", "--out", "out_dir", type=click.Path(path_type=Path, file_okay=False), required=True
)
def held_corpus_command(data_dir: Path, out_dir: Path) -> None:
    """Write the held-out tenth's messages as a corpus folder (split dev) for
    `eval-understanding --corpus OUT --reader MODEL`, MODEL trained with `--held-out`."""
    from .evaluate import write_held_corpus

    n = write_held_corpus(data_dir, out_dir)
    click.echo(f"wrote {n} held-out messages to {out_dir / 'utterances.jsonl'}")
