"""`shopcopilot eval`, `shopcopilot compare`, `shopcopilot bench-real`."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Any

import click
from rich.console import Console

from ..catalog.loader import CatalogError
from ..paths import resolve_catalog, shared_data_dir
from .conversations import SPLITS as CONVERSATION_SPLITS
from .customer import BOTH, PROTOCOLS
from .evaluate import EvalRequest, run_eval
from .runner import (
    DEFAULT_TURN_TIMEOUT,
    BenchError,
    RunSettings,
    load_agent_class,
    resolve_agent_spec,
)
from .sessions_io import Session, SessionFileError, load_sessions, write_sessions
from .understanding import SPLITS

PROTOCOL_HELP = (
    "The simulated customer: official (the organiser's rules), natural (its own words), "
    "natural-reactive (natural, and it reacts to the products shown: picks the closest, "
    "critiques it, or turns the list down with a reason)."
)

# Results files and session sets report what is wrong with them as ValueError.
_PROBLEMS = (BenchError, SessionFileError, CatalogError, ValueError, OSError)


def _clear_errors(command: Callable[..., Any]) -> Callable[..., Any]:
    """Known problems end the command with one 'Error:' line and exit 1, not a traceback."""

    @wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except _PROBLEMS as exc:
            raise click.ClickException(str(exc)) from exc

    return wrapper


def _command_line() -> str:
    return "shopcopilot " + shlex.join(sys.argv[1:])


def _parse_generate(value: str, param_hint: str) -> tuple[str, int]:
    from .sessions import KINDS  # local: the generator is only needed with --generate

    kind, sep, count = value.partition(":")
    if not sep or not kind or not count.isdigit() or int(count) < 1:
        problem = f"expected KIND:N such as iid:200, got {value!r}"
    elif kind not in KINDS:
        problem = f"unknown session kind {kind!r}; expected one of {', '.join(KINDS)}"
    else:
        return kind, int(count)
    raise click.BadParameter(problem, param_hint=param_hint)


def _generated_sessions(catalog_path: Path, kind: str, count: int, seed: int) -> list[Session]:
    from .sessions import generate_sessions  # local: the generator is only needed with --generate

    return list(
        generate_sessions(catalog_path, kind, count, seed, exclude_targets=_public_targets())
    )


def _agent(spec: str | None) -> str:
    """The agent spec, resolved and checked: its module imports and has the class."""
    resolved = resolve_agent_spec(spec)
    module, sep, name = resolved.partition(":")
    if not sep or not module or not name:
        raise click.BadParameter(f"expected MODULE:CLASS, got {resolved!r}", param_hint="--agent")
    load_agent_class(resolved)  # BenchError, reported as a runtime error, when it cannot load
    return resolved


def _check_out_dir(out_dir: Path) -> None:
    if out_dir.exists() and not out_dir.is_dir():
        raise click.ClickException(f"the output folder is a file: {out_dir}")


def _public_targets() -> frozenset[str]:
    """Generated sets stay disjoint from the public sessions, so tuning on them never sees those
    targets."""
    data_dir = shared_data_dir()
    public = data_dir / "public_set.jsonl" if data_dir else None
    if public is None or not public.is_file():
        return frozenset()
    return frozenset(session.target_asin for session in load_sessions(public))


_common_options = [
    click.option(
        "--agent",
        "agent_spec",
        default=None,
        metavar="MODULE:CLASS",
        help="Agent under test (default: shopcopilot.agent:Agent, else the baseline).",
    ),
    click.option(
        "--workers",
        type=click.IntRange(min=1),
        default=1,
        show_default=True,
        help="Parallel worker processes, each with its own agent.",
    ),
    click.option(
        "--turn-timeout",
        type=click.FloatRange(min=0, min_open=True),
        default=DEFAULT_TURN_TIMEOUT,
        show_default=True,
        help="Seconds a respond() may take before it counts as a failed turn.",
    ),
    click.option("--no-report", is_flag=True, help="Skip report.md and its plots."),
]


def _with_common_options(command: Callable[..., Any]) -> Callable[..., Any]:
    for option in reversed(_common_options):
        command = option(command)
    return command


@click.command("eval")
@_with_common_options
@click.option(
    "--catalog",
    type=click.Path(path_type=Path),
    default=None,
    help="Catalog JSONL(.gz) (default: the synthetic 50k catalog).",
)
@click.option(
    "--sessions",
    "sessions_path",
    type=click.Path(path_type=Path),
    default=None,
    help="Session file (JSONL, official layout).",
)
@click.option(
    "--generate",
    default=None,
    metavar="KIND:N",
    help=(
        "Generate N sessions of KIND from the catalog instead (default iid:200 when no --sessions)."
    ),
)
@click.option(
    "--seed",
    type=int,
    default=0,
    show_default=True,
    help="Seed for --generate and the natural customer.",
)
@click.option(
    "--protocol",
    type=click.Choice(PROTOCOLS),
    default="official",
    show_default=True,
    help=PROTOCOL_HELP,
)
@click.option(
    "--limit", type=click.IntRange(min=1), default=None, help="Run only the first N sessions."
)
@click.option(
    "-o",
    "--out",
    "out_dir",
    type=click.Path(path_type=Path),
    default=Path("runs/eval"),
    show_default=True,
)
@click.option(
    "--ray",
    "ray_address",
    is_flag=False,
    flag_value="local",
    default=None,
    metavar="[ADDRESS|local]",
    help=(
        "Play the sessions on Ray, one agent per CPU: 'local' (or no value) starts Ray on this "
        "machine's cores, an address joins a running cluster. Needs shopcopilot[ray]."
    ),
)
@_clear_errors
def eval_command(
    agent_spec: str | None,
    workers: int,
    turn_timeout: float,
    no_report: bool,
    catalog: Path | None,
    sessions_path: Path | None,
    generate: str | None,
    seed: int,
    protocol: str,
    limit: int | None,
    out_dir: Path,
    ray_address: str | None,
) -> None:
    """Run benchmark sessions against an agent; write DIR/results.json, transcripts.jsonl,
    report.md."""
    if sessions_path and generate:
        raise click.UsageError("give --sessions or --generate, not both")
    if ray_address is not None:
        _check_ray(ray_address, workers)
    spec = generate or "iid:200"
    kind, count = _parse_generate(spec, "--generate")  # all checks first: a typo costs no work
    agent = _agent(agent_spec)
    _check_out_dir(out_dir)
    catalog_path = resolve_catalog(catalog)
    if sessions_path:
        sessions, label = load_sessions(sessions_path), str(sessions_path)
    else:
        sessions = _generated_sessions(catalog_path, kind, count, seed)
        out_dir.mkdir(parents=True, exist_ok=True)
        write_sessions(out_dir / "sessions.jsonl", sessions)
        label = f"generated {spec} seed {seed} ({out_dir / 'sessions.jsonl'})"
    if limit and limit < len(sessions):
        sessions, label = sessions[:limit], f"{label} (first {limit})"
    request = EvalRequest(
        agent_spec=agent,
        catalog_path=catalog_path,
        sessions=sessions,
        sessions_label=label,
        settings=RunSettings(protocol=protocol, seed=seed, turn_timeout=turn_timeout),
        workers=workers,
        out_dir=out_dir,
        command=_command_line(),
        report=not no_report,
        ray=ray_address,
    )
    run_eval(request, Console(stderr=True))
    click.echo(f"wrote {out_dir / 'results.json'}")


def _check_ray(address: str, workers: int) -> None:
    """Before any work: Ray is installed, the address answers, --workers is not given."""
    from .ray_runner import LOCAL, check_reachable, import_ray

    if workers != 1:
        raise click.UsageError("give --workers or --ray, not both (Ray runs one agent per CPU)")
    if not address.strip():
        raise click.BadParameter("expected a Ray address or 'local'", param_hint="--ray")
    import_ray()  # BenchError with the install command when Ray is missing
    if address != LOCAL:
        check_reachable(address)


@click.command("compare")
@click.argument("before", type=click.Path(path_type=Path))
@click.argument("after", type=click.Path(path_type=Path))
@_clear_errors
def compare_command(before: Path, after: Path) -> None:
    """Deltas AFTER - BEFORE per metric and scenario, and sessions that flipped hit/miss."""
    from .compare import compare_results, render_comparison
    from .results import load_results

    comparison = compare_results(load_results(before), load_results(after))
    render_comparison(comparison, Console(), str(before), str(after))


@click.command("bench-real")
@_with_common_options
@click.option(
    "--protocol",
    type=click.Choice([*PROTOCOLS, "both"]),
    default="both",
    show_default=True,
    help=PROTOCOL_HELP + " both: official, then natural.",
)
@click.option(
    "--seed", type=int, default=0, show_default=True, help="Seed of the natural customer."
)
@click.option(
    "-o",
    "--out",
    "out_dir",
    type=click.Path(path_type=Path),
    default=Path("runs/bench-real"),
    show_default=True,
)
@_clear_errors
def bench_real_command(
    agent_spec: str | None,
    workers: int,
    turn_timeout: float,
    no_report: bool,
    protocol: str,
    seed: int,
    out_dir: Path,
) -> None:
    """The 200 public sessions on the real records padded to 50,000 products; writes
    DIR/<protocol>/."""
    from .real import prepare_real_benchmark

    agent = _agent(agent_spec)
    _check_out_dir(out_dir)
    catalog_path, sessions_path = prepare_real_benchmark(Console(stderr=True))
    sessions = load_sessions(sessions_path)
    protocols = list(BOTH) if protocol == "both" else [protocol]
    for name in protocols:
        request = EvalRequest(
            agent_spec=agent,
            catalog_path=catalog_path,
            sessions=sessions,
            sessions_label=str(sessions_path),
            settings=RunSettings(protocol=name, seed=seed, turn_timeout=turn_timeout),
            workers=workers,
            out_dir=out_dir / name,
            command=_command_line(),
            report=not no_report,
        )
        run_eval(request, Console(stderr=True))
        click.echo(f"wrote {request.out_dir / 'results.json'}")


@click.command("sessions")
@click.argument("spec", metavar="KIND:N")
@click.option(
    "--catalog",
    type=click.Path(path_type=Path),
    default=None,
    help="Catalog JSONL(.gz) to draw targets from (default: the synthetic 50k catalog).",
)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option(
    "-o",
    "--out",
    "out_path",
    type=click.Path(path_type=Path),
    required=True,
    help="Session file to write (JSONL, public_set.jsonl layout).",
)
@_clear_errors
def sessions_command(spec: str, catalog: Path | None, seed: int, out_path: Path) -> None:
    """Generate a session set (KIND is iid, long_tail or stress) and save it, to share or re-run."""
    kind, count = _parse_generate(spec, "KIND:N")
    sessions = _generated_sessions(resolve_catalog(catalog), kind, count, seed)
    write_sessions(out_path, sessions)
    click.echo(f"wrote {len(sessions)} sessions to {out_path}")


@click.command("eval-understanding")
@click.option(
    "--split",
    type=click.Choice(SPLITS),
    default="dev",
    show_default=True,
    help="Corpus split: tune on dev; test and the fresh slices (fresh to fresh6, each written "
    "blind after a round of changes to the reader) are for reporting only.",
)
@click.option(
    "--catalog",
    type=click.Path(path_type=Path),
    default=None,
    help="Catalog JSONL(.gz) (default: the real records padded to 50,000 when the shared "
    "data is here, else the synthetic 50k catalog).",
)
@click.option(
    "--corpus",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Corpus folder (default: benchmarks/data/understanding).",
)
@click.option(
    "--reader",
    "reader_dir",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Learned reader's model folder (default: the shipped one).",
)
@click.option(
    "-o",
    "--out",
    "out_dir",
    type=click.Path(path_type=Path),
    default=Path("runs/understanding"),
    show_default=True,
)
@_clear_errors
def eval_understanding_command(
    split: str, catalog: Path | None, corpus: Path | None, reader_dir: Path | None, out_dir: Path
) -> None:
    """Per-slot precision / recall / F1 and exact-state match of the copilot's understanding on
    the annotated corpus; writes DIR/understanding.json and DIR/misses.jsonl."""
    import json

    from ..agent import FOR_PEOPLE, Agent
    from . import understanding

    cases = understanding.load_corpus(corpus or understanding.CORPUS_DIR, split)
    if not cases:
        raise BenchError(f"the {split} split of the corpus is empty")
    # What a person typing gets (the web page's and chat's settings).
    reader = _reader(reader_dir) if reader_dir is not None else None
    agent = Agent(_understanding_catalog(catalog), settings=FOR_PEOPLE, warm_up=False)
    agent.reader = reader or agent.reader
    records = understanding.real_records()
    if not records:
        click.echo(
            "the real records are not here: exchanges are played without their shown products"
        )
    nodes = understanding.node_resolver(agent, records)
    report = understanding.evaluate(agent, cases, nodes, records)
    summary = report.to_dict(
        sum(not c.exchange for c in cases), sum(c.exchange for c in cases), split
    )
    summary["command"] = _command_line()
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "understanding.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
    with (out_dir / "misses.jsonl").open("w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(miss) + "\n" for miss in report.misses)
    Console().print(understanding.report_table(summary))
    click.echo(f"wrote {out_dir / 'understanding.json'}")


def _reader(folder: Path):
    from ..reader.model import ModelError, load

    try:
        return load(folder)
    except ModelError as error:
        raise BenchError(str(error)) from error


@click.command("eval-conversations")
@click.option(
    "--split",
    type=click.Choice(CONVERSATION_SPLITS),
    default="dev",
    show_default=True,
    help="Suite split: build on dev; test and fresh are for reporting (their misses are not "
    "written).",
)
@click.option(
    "--catalog",
    type=click.Path(path_type=Path),
    default=None,
    help="Play every conversation on this catalog (default: each on its own: the embedded "
    "synthetic catalog, or the real records padded to 50,000 when the shared data is here).",
)
@click.option(
    "--suite",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Suite folder (default: benchmarks/data/conversations).",
)
@click.option(
    "-o",
    "--out",
    "out_dir",
    type=click.Path(path_type=Path),
    default=Path("runs/conversations"),
    show_default=True,
)
@_clear_errors
def eval_conversations_command(
    split: str, catalog: Path | None, suite: Path | None, out_dir: Path
) -> None:
    """Play the conversation suite with the people's settings and check every turn; writes
    DIR/conversations.json and DIR/misses.jsonl (dev conversations only)."""
    import json

    from rich.progress import Progress

    from . import conversations as suite_module

    chosen = suite_module.load_suite(suite or suite_module.SUITE_DIR, split)
    if not chosen:
        raise BenchError(f"the {split} split of the conversation suite is empty")
    agents = _conversation_agents(catalog, {c.catalog for c in chosen})
    with Progress(console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("conversations", total=len(chosen))
        report = suite_module.evaluate(agents, chosen, split, progress=lambda: bar.advance(task))
    summary = report.to_dict()
    summary["command"] = _command_line()
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "conversations.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")
    with (out_dir / "misses.jsonl").open("w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(miss) + "\n" for miss in report.misses)
    Console().print(suite_module.report_table(summary))
    if report.skipped:
        click.echo(f"{len(report.skipped)} conversations skipped: their catalog is not here")
    click.echo(f"wrote {out_dir / 'conversations.json'}")


def _conversation_agents(catalog: Path | None, wanted: set[str]) -> dict[str, Any]:
    """One agent (the people's settings) per catalog the conversations name."""
    from ..agent import FOR_PEOPLE, Agent

    if catalog is not None:
        agent = Agent(resolve_catalog(catalog), settings=FOR_PEOPLE, warm_up=False)
        return dict.fromkeys(wanted, agent)
    agents: dict[str, Any] = {}
    if "embedded" in wanted:
        agents["embedded"] = Agent(resolve_catalog(None), settings=FOR_PEOPLE, warm_up=False)
    if "real" in wanted and shared_data_dir() is not None:
        from .real import prepare_real_benchmark

        padded = prepare_real_benchmark(Console(stderr=True))[0]
        agents["real"] = Agent(padded, settings=FOR_PEOPLE, warm_up=False)
    return agents


def _understanding_catalog(catalog: Path | None) -> Path:
    if catalog is not None or shared_data_dir() is None:
        return resolve_catalog(catalog)
    from .real import prepare_real_benchmark

    return prepare_real_benchmark(Console(stderr=True))[0]


def register(group: click.Group) -> None:
    """Add the benchmark commands to the top-level CLI."""
    for command in (
        eval_command,
        compare_command,
        bench_real_command,
        sessions_command,
        eval_understanding_command,
        eval_conversations_command,
    ):
        group.add_command(command)
