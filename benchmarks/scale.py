"""Scale benchmark: build, memory, disk, latency and quality at 50k, 1M (and 5M) products.

    python benchmarks/scale.py --sessions 100                    # 50k and 1M, 100 sessions each
    python benchmarks/scale.py --sizes 50000 --sessions 50       # a quick look
    python benchmarks/scale.py --sizes 5000000 --build-only      # 5M: build and memory only
    python benchmarks/scale.py --sizes 1000000 --steps serve --cold   # one step, cold cache
    make bench-scale                                             # = the first line, into docs/
    python benchmarks/scale.py --sizes 1000000 --retrieval facts_ratio=0   # an experiment

For each size, on the synthetic catalog (`catalog synth --seed 7`), each step runs in a child
process so that its time and peak RSS are its own:

- build: the index, its ranking features, the query categoriser and the lexicon's counts, from
  nothing (or reused when the cache folder already holds them: then only what is missing is
  built and timed);
- vectors: the people's product vectors and, past the exact scan's size, the graph index over
  them (index/ann.py);
- sessions: generated iid sessions (seed 3) and their targets' records (harness only);
- serve: a fresh process opens the copilot as a server does (start-up, warm-up), then plays
  the sessions in the official and the natural protocol: start-up and first-turn time,
  respond() percentiles, resident memory after start-up, after the runs and at its peak,
  TechnicalScore per protocol, per category and per turn;
- people: the same with the people's settings (FOR_PEOPLE) on the first --people-sessions;
- understanding: the understanding corpus's test split on this catalog with the people's
  settings (is the first card the right kind of item; scores only).

The results go to WORK/scale-SIZE.json and, with --docs, into docs/scaling.md under
"A million products". The OS file cache is left as it is (warm after the build); --cold drops
the index's files from it before serving, as after a reboot.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "scaling.md"
HEADING = "## A million products"
END_MARK = "<!-- end of the table benchmarks/scale.py writes -->"
STEPS = ("catalog", "build", "vectors", "sessions", "serve", "people", "understanding")
SERVING = ("sessions", "serve", "people", "understanding")


def main() -> None:
    args = _arguments()
    if args.step:
        answer, sys.stdout = sys.stdout, sys.stderr  # the steps' own output is not the answer
        result = STEP_FUNCTIONS[args.step](args)
        result["peak_rss_mb"] = _peak_mb(resource.RUSAGE_SELF)
        if workers := _peak_mb(resource.RUSAGE_CHILDREN):
            result["largest_worker_peak_rss_mb"] = workers
        print(json.dumps(result), file=answer)
        return
    sizes = [int(s) for s in args.sizes.split(",")]
    steps = [s for s in STEPS if not (args.build_only and s in SERVING)]
    steps = [s for s in steps if s in (args.steps or STEPS)]
    results = {}
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total} steps"),
        TimeElapsedColumn(),
        console=Console(stderr=True),
    ) as bar:
        task = bar.add_task("scale", total=len(sizes) * len(steps))
        for size in sizes:
            saved = args.work / f"scale-{size}.json"
            before = json.loads(saved.read_text()) if saved.exists() else {}
            result = dict(before) if args.steps else {}
            result["size"] = size
            for step in steps:
                bar.update(task, description=f"{size:,} products: {step}")
                result[step] = _child(args, step, size)
                if result[step].get("reused") and not before.get(step, {}).get("reused", True):
                    result[step] = before[step]  # what building it took, not opening it
                bar.advance(task)
            (args.work / f"scale-{size}.json").write_text(json.dumps(result, indent=1))
            results[size] = result
    if args.docs:
        write_docs(args.work, " ".join(["python", "benchmarks/scale.py", *sys.argv[1:]]))
    print(json.dumps(results, indent=1))


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="50000,1000000")
    parser.add_argument("--sessions", type=int, default=200, help="generated iid sessions")
    parser.add_argument("--seed", type=int, default=3, help="the sessions' seed")
    parser.add_argument("--catalog-seed", type=int, default=7)
    parser.add_argument("--build-only", action="store_true", help="no sessions, no serving")
    parser.add_argument(
        "--steps",
        type=lambda text: text.split(","),
        help=f"only these steps (of {','.join(STEPS)}), the others' results kept from the last run",
    )
    parser.add_argument(
        "--cold",
        action="store_true",
        help="serve from a cold page cache: the index's files dropped from it first",
    )
    parser.add_argument(
        "--people-sessions",
        type=int,
        default=60,
        help="sessions played with the people's settings (the first N of the generated ones)",
    )
    parser.add_argument(
        "--work",
        type=Path,
        default=ROOT / "runs" / "scale",
        help="catalogs, caches (cache-SIZE/) and results; reused between runs",
    )
    parser.add_argument("--docs", action="store_true", help="write the table into docs/")
    parser.add_argument(
        "--window-scale",
        type=float,
        default=1.0,
        help="serve with the retrieval windows multiplied by this (an experiment; 1: defaults)",
    )
    parser.add_argument(
        "--retrieval",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="serve with this retrieval setting changed (an experiment; repeatable), e.g. "
        "scope_ratio=0 or max_postings=none",
    )
    parser.add_argument("--step", choices=STEPS, help=argparse.SUPPRESS)
    parser.add_argument("--size", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    return args


def _child(args: argparse.Namespace, step: str, size: int) -> dict[str, Any]:
    command = [sys.executable, __file__, "--step", step, "--size", str(size), "--work"]
    command += [str(args.work), "--sessions", str(args.sessions), "--seed", str(args.seed)]
    command += ["--catalog-seed", str(args.catalog_seed), "--window-scale", str(args.window_scale)]
    command += ["--people-sessions", str(args.people_sessions)] + (["--cold"] if args.cold else [])
    command += [f"--retrieval={change}" for change in args.retrieval]
    env = {**os.environ, "SHOPCOPILOT_CACHE": str(args.work / f"cache-{size}")}
    started = time.perf_counter()
    done = subprocess.run(command, check=True, stdout=subprocess.PIPE, text=True, env=env)
    result = json.loads(done.stdout)
    result["step_seconds"] = round(time.perf_counter() - started, 1)
    return result


# -- the steps, each in its own process ---------------------------------------------------


def _catalog_path(args: argparse.Namespace) -> Path:
    return args.work / f"synthetic-{args.size}-seed{args.catalog_seed}.jsonl.gz"


def step_catalog(args: argparse.Namespace) -> dict[str, Any]:
    from shopcopilot.catalog.synth import write_catalog

    path = _catalog_path(args)
    started = time.perf_counter()
    if not path.exists():
        partial = path.with_name(path.name + ".partial")
        write_catalog(partial, size=args.size, seed=args.catalog_seed, progress=True)
        partial.replace(path)
    return {
        "path": str(path),
        "generated_s": round(time.perf_counter() - started, 1),
        "catalog_mb": round(path.stat().st_size / 1e6, 1),
    }


def step_build(args: argparse.Namespace) -> dict[str, Any]:
    from shopcopilot.agent import Agent
    from shopcopilot.index import open_index
    from shopcopilot.index.categoriser import ensure_trained
    from shopcopilot.index.features import features_folder

    load = round(os.getloadavg()[0], 2)
    started = time.perf_counter()
    wall_clock = time.time()
    index = open_index(_catalog_path(args), progress=True)  # the index and its features
    ensure_trained(index.store, index.path)
    # What a first start counts and caches beside the index (the lexicon's counts and store names).
    Agent(_catalog_path(args), index=index, warm_up=False)
    seconds = time.perf_counter() - started
    usage = [resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    return {
        "seconds": round(seconds, 1),
        "cpu_s": round(sum(u.ru_utime + u.ru_stime for u in usage), 1),
        "load_average_before": load,
        "index_steps_s": index.manifest.get("timings_s", {}),
        "index_built_at": index.manifest.get("built_at"),
        "reused": _built_before(index.manifest.get("built_at"), wall_clock),
        "disk_mb": round(_folder_bytes(index.path) / 1e6, 1),
        "features_mb": round(_folder_bytes(features_folder(index.path)) / 1e6, 1),
        "store_mb": round((index.path / "store.sqlite").stat().st_size / 1e6, 1),
        "tantivy_mb": round(_folder_bytes(index.path / "tantivy") / 1e6, 1),
    }


def _built_before(built_at: str | None, started: float) -> bool:
    """Was the index already there (opened, not built, by this step)?"""
    from datetime import datetime

    return bool(built_at) and datetime.fromisoformat(str(built_at)).timestamp() < started - 1


def step_vectors(args: argparse.Namespace) -> dict[str, Any]:
    """The people's settings' product vectors and, past the exact scan's size, the graph index
    over them (reused when the cache holds them)."""
    from shopcopilot.index import open_index
    from shopcopilot.index.vectors import load_encoder, load_or_build, vectors_path

    index = open_index(_catalog_path(args), progress=False)
    encoder = load_encoder()
    if encoder is None:
        raise SystemExit("the encoder does not load")
    started, cpu = time.perf_counter(), time.process_time()
    vectors = load_or_build(index.store, index.path, encoder, progress=True)
    if vectors is None:
        raise SystemExit("no product vectors")
    path = vectors_path(index.path, encoder)
    result = {
        "seconds": round(time.perf_counter() - started, 1),
        "cpu_s": round(time.process_time() - cpu, 1),
        "vectors_built_s": round(json.loads(path.with_suffix(".json").read_text())["seconds"], 1),
        "vectors_mb": round(path.stat().st_size / 1e6, 1),
    }
    graphs = list(index.path.glob("ann-*.json"))
    if vectors.neighbours is not None and graphs:
        result["graph_built_s"] = json.loads(graphs[0].read_text())["seconds"]
        result["graph_mb"] = round(graphs[0].with_suffix(".usearch").stat().st_size / 1e6, 1)
    return result


def step_sessions(args: argparse.Namespace) -> dict[str, Any]:
    from shopcopilot.bench.sessions import generate_sessions, write_session_set
    from shopcopilot.index import open_index

    catalog = _catalog_path(args)
    if _sessions_path(args).exists() and _targets_path(args).exists():
        return {"sessions": args.sessions, "path": str(_sessions_path(args)), "reused": True}
    sessions = generate_sessions(catalog, "iid", args.sessions, args.seed)
    path = write_session_set(_sessions_path(args), sessions)
    # The targets' records from the index store (the catalog's records, normalised), rather than
    # a second pass over a million-line catalog.
    store = open_index(catalog, progress=False).store
    products = store.get_many(s.target_asin for s in sessions)
    targets = {asin: product.to_record() for asin, product in products.items()}
    _targets_path(args).write_text(json.dumps(targets))
    return {"sessions": len(sessions), "path": str(path)}


def _sessions_path(args: argparse.Namespace) -> Path:
    return args.work / f"sessions-{args.size}-iid{args.sessions}-seed{args.seed}.jsonl"


def _targets_path(args: argparse.Namespace) -> Path:
    return _sessions_path(args).with_suffix(".targets.json")


class Timed:
    """The agent, with the CPU time of each respond() (this process, helper threads included):
    on a shared machine the wall time also counts the waits for a core."""

    def __init__(self, agent: Any) -> None:
        self.agent, self.cpu_ms = agent, []

    def reset(self, session_id: str, profile: Any) -> None:
        self.agent.reset(session_id, profile)

    def respond(self, session_id: str, message: str, turn: int, top_k: int) -> Any:
        started = time.process_time()
        try:
            return self.agent.respond(session_id, message, turn, top_k)
        finally:
            self.cpu_ms.append((time.process_time() - started) * 1000)


class KnownIds:
    """The catalog's ids for scoring, answered from the copilot's own id table: a set of a
    million strings would add the harness's memory to the copilot's."""

    def __init__(self, keys: Any) -> None:
        self.keys = keys

    def __contains__(self, asin: object) -> bool:
        return asin in self.keys


def step_serve(args: argparse.Namespace) -> dict[str, Any]:
    return _serve_sessions(args, _settings(args.window_scale, args.retrieval), args.sessions)


def step_people(args: argparse.Namespace) -> dict[str, Any]:
    """The web page's and chat's settings (FOR_PEOPLE: meaning beside the words, through the
    graph index past the scan's size) on the first --people-sessions sessions."""
    from shopcopilot.agent import FOR_PEOPLE

    return _serve_sessions(args, FOR_PEOPLE, args.people_sessions)


def step_understanding(args: argparse.Namespace) -> dict[str, Any]:
    """The understanding corpus's test split on this catalog with the people's settings: is the
    first card the right kind of item (the scores only; the misses are not read)."""
    out = args.work / f"understanding-{args.size}"
    command = [sys.executable, "-m", "shopcopilot", "eval-understanding", "--split", "test"]
    command += ["--catalog", str(_catalog_path(args)), "-o", str(out)]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    summary = json.loads((out / "understanding.json").read_text())
    (out / "misses.jsonl").unlink(missing_ok=True)  # a reported split: nobody reads its misses
    return {
        "first_item_right_kind": summary["first_item_right_kind"],
        "command": " ".join(command[1:]),
    }


def _serve_sessions(args: argparse.Namespace, settings: Any, count: int) -> dict[str, Any]:
    from shopcopilot.agent import Agent
    from shopcopilot.bench.metrics import latency_summary, summarize, summarize_by
    from shopcopilot.bench.runner import BenchData, RunSettings, run_session
    from shopcopilot.bench.sessions_io import load_sessions

    sessions = load_sessions(_sessions_path(args))[:count]
    targets = json.loads(_targets_path(args).read_text())
    if args.cold:
        from shopcopilot.index.page_cache import evict
        from shopcopilot.paths import cache_dir

        evict(cache_dir())
    harness_mb = _rss_mb()
    started, cpu = time.perf_counter(), time.process_time()
    agent = Agent(_catalog_path(args), settings=settings, warm_up=False)
    agent.warm_up()  # as a server does before it accepts turns
    result: dict[str, Any] = {
        "sessions": len(sessions),
        "cold": args.cold,
        "window_scale": args.window_scale,
        "retrieval": repr(settings.retrieval),
        "startup_s": round(time.perf_counter() - started, 2),
        "startup_cpu_s": round(time.process_time() - cpu, 2),
        "harness_rss_mb": harness_mb,
        "rss_after_startup_mb": _rss_mb(),
        "anonymous_rss_after_startup_mb": _rss_mb("RssAnon"),
    }
    data = BenchData(str(_catalog_path(args)), KnownIds(agent.features.asins), targets)  # type: ignore[arg-type]
    first_turn = None
    for protocol in ("official", "natural"):
        runs, timed = [], Timed(agent)
        for session in sessions:
            runs.append(
                run_session(timed, session, data, RunSettings(protocol=protocol, turn_timeout=None))
            )
            if first_turn is None:
                first_turn = runs[0].turns[0].latency_ms
        latencies = [t.latency_ms for run in runs for t in run.turns]
        outcomes = [run.outcome for run in runs]
        category_of = {r.sample_id: r.category_bucket for r in runs}
        result[protocol] = {
            **summarize(outcomes),
            "latency_ms": latency_summary(latencies),
            "cpu_ms": latency_summary(timed.cpu_ms),
            "by_category": summarize_by(outcomes, lambda o, c=category_of: c[o.sample_id]),
            "first_hit_turns": {
                str(turn or "miss"): count
                for turn, count in sorted(
                    Counter(o.first_hit_turn for o in outcomes).items(),
                    key=lambda item: item[0] or 99,  # misses last
                )
            },
        }
    result["first_turn_ms"] = round(first_turn or 0.0, 1)
    result["rss_after_runs_mb"] = _rss_mb()
    result["anonymous_rss_after_runs_mb"] = _rss_mb("RssAnon")
    return result


def _settings(window_scale: float, changes: list[str]) -> Any:
    """The default settings, with every retrieval window multiplied by `window_scale` and the
    retrieval settings named in `changes` ("name=value") set."""
    from dataclasses import replace

    from shopcopilot.agent import AgentSettings

    settings = AgentSettings()
    windows = ("base_window", "window_growth", "max_window")
    retrieval: dict[str, Any] = {}
    if window_scale != 1.0:
        retrieval = {w: round(getattr(settings.retrieval, w) * window_scale) for w in windows}
    for change in changes:
        name, _, value = change.partition("=")
        current = getattr(settings.retrieval, name, ())
        if not (current is None or isinstance(current, (int, float))):
            raise SystemExit(f"--retrieval {change!r}: no numeric retrieval setting {name!r}")
        try:  # a number of the setting's own kind (an int where the default is None)
            number = None if value.lower() == "none" else type(current or 0)(float(value))
        except ValueError:
            raise SystemExit(f"--retrieval {change!r}: {value!r} is not a number") from None
        retrieval[name] = number
    return replace(settings, retrieval=replace(settings.retrieval, **retrieval))


STEP_FUNCTIONS = {
    "catalog": step_catalog,
    "build": step_build,
    "vectors": step_vectors,
    "sessions": step_sessions,
    "serve": step_serve,
    "people": step_people,
    "understanding": step_understanding,
}


def _rss_mb(field: str = "VmRSS") -> float:
    """This process's resident memory now, in MB: all of it (VmRSS), or the part no file backs
    (RssAnon: what the kernel cannot drop and re-read)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def _peak_mb(who: int) -> float:
    return round(resource.getrusage(who).ru_maxrss / 1024, 1)  # Linux reports KiB


def _folder_bytes(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


# -- the table in docs/scaling.md --------------------------------------------------------


def write_docs(work: Path, command: str) -> None:
    """Replaces the generated part of the section under HEADING (or appends the section); what
    follows END_MARK there (the analysis, written by hand) is kept."""
    results = sorted(
        (json.loads(p.read_text()) for p in work.glob("scale-*.json")), key=lambda r: r["size"]
    )
    section = render(results, command) + "\n" + END_MARK
    text = DOCS.read_text(encoding="utf-8")
    if HEADING not in text:
        DOCS.write_text(text.rstrip("\n") + "\n\n" + section + "\n", encoding="utf-8")
        return
    before, rest = text.split(HEADING, 1)
    if END_MARK in rest:
        after = rest.split(END_MARK, 1)[1]
    else:
        after = "\n" + rest[rest.find("\n## ") :] if "\n## " in rest else "\n"
    DOCS.write_text(before + section + after, encoding="utf-8")


def render(results: list[dict[str, Any]], command: str) -> str:
    sizes = [f"{r['size']:,}" for r in results]
    rows = [
        ("build, wall s", lambda r: r["build"]["seconds"]),
        ("build, CPU s", lambda r: r["build"]["cpu_s"]),
        ("build, peak RSS MB (largest worker)", _build_peak),
        (
            "index folder MB (features)",
            lambda r: f"{r['build']['disk_mb']} ({r['build']['features_mb']})",
        ),
        ("copilot start-up, wall s (CPU s)", _startup),
        ("RSS after start-up MB", lambda r: _serve(r, "rss_after_startup_mb")),
        ("RSS after the sessions (both protocols) MB", lambda r: _serve(r, "rss_after_runs_mb")),
        ("of which not file-backed MB", lambda r: _serve(r, "anonymous_rss_after_runs_mb")),
        ("serving peak RSS MB", lambda r: _serve(r, "peak_rss_mb")),
        ("first turn ms", lambda r: _serve(r, "first_turn_ms")),
        ("respond() wall p50 / p95 / p99 ms", lambda r: _latency(r, "latency_ms")),
        ("respond() CPU p50 / p95 / p99 ms", lambda r: _latency(r, "cpu_ms")),
        ("official TechnicalScore (HitRate)", lambda r: _score(r, "official")),
        ("natural TechnicalScore (HitRate)", lambda r: _score(r, "natural")),
        ("**people's settings** (meaning through vectors)", lambda r: ""),
        ("product vectors built, wall s (MB)", _vectors),
        ("nearest-in-meaning graph built, wall s (MB)", _graph),
        ("start-up, wall s; serving peak RSS MB", _people_memory),
        ("respond() wall p50 / p95 / p99 ms", lambda r: _latency(r, "latency_ms", "people")),
        ("respond() CPU p50 / p95 / p99 ms", lambda r: _latency(r, "cpu_ms", "people")),
        ("official TechnicalScore (HitRate)", lambda r: _score(r, "official", "people")),
        ("understanding test: first card the right kind", _first_card),
    ]
    lines = [
        HEADING,
        "",
        f"Measured {time.strftime('%Y-%m-%d')} on a 2-core machine, synthetic catalogs (seed 7),",
        f"{_sessions(results)} generated iid sessions (seed 3; the people's settings play the",
        f"first {_sessions(results, 'people')}). The build rows are from building from nothing.",
        "Each step in its own process; RSS is resident memory (memory-mapped pages a process has",
        "touched count in it, though the kernel can drop them).",
        "",
        f"    {command}",
        "",
        "| | " + " | ".join(sizes) + " |",
        "|---|" + "---|" * len(sizes),
    ]
    for name, value in rows:
        lines.append(f"| {name} | " + " | ".join(str(_safe(value, r)) for r in results) + " |")
    lines += ["", "Official TechnicalScore per category:", ""]
    categories = sorted(
        {c for r in results if "serve" in r for c in r["serve"]["official"]["by_category"]}
    )
    lines += ["| category | " + " | ".join(sizes) + " |", "|---|" + "---|" * len(sizes)]
    for category in categories:
        cells = [_safe(lambda r, c=category: _category(r, c), r) for r in results]
        lines.append(f"| {category} | " + " | ".join(map(str, cells)) + " |")
    lines += ["", "Turn of the first hit (official), sessions per turn:", ""]
    for r in results:
        if "serve" in r:
            turns = r["serve"]["official"]["first_hit_turns"]
            turns = dict(sorted(turns.items(), key=lambda t: int(t[0]) if t[0].isdigit() else 99))
            lines.append(f"- {r['size']:,}: " + ", ".join(f"{t}: {n}" for t, n in turns.items()))
    return "\n".join(lines) + "\n"


def _sessions(results: list[dict[str, Any]], step: str = "serve") -> str:
    counts = sorted({r[step].get("sessions", "?") for r in results if step in r}, key=str)
    return " / ".join(map(str, counts)) or "-"


def _safe(value: Any, result: dict[str, Any]) -> Any:
    try:
        return value(result)
    except KeyError:
        return "-"


def _serve(result: dict[str, Any], key: str) -> Any:
    return result["serve"][key]


def _startup(result: dict[str, Any]) -> str:
    return f"{result['serve']['startup_s']} ({result['serve']['startup_cpu_s']})"


def _build_peak(result: dict[str, Any]) -> str:
    build = result["build"]
    return f"{build['peak_rss_mb']} ({build.get('largest_worker_peak_rss_mb', '-')})"


def _latency(result: dict[str, Any], key: str, step: str = "serve") -> str:
    latency = result[step]["official"][key]
    return f"{latency['p50_ms']:.1f} / {latency['p95_ms']:.1f} / {latency['p99_ms']:.1f}"


def _score(result: dict[str, Any], protocol: str, step: str = "serve") -> str:
    scores = result[step][protocol]
    return f"{scores['recommended_technical_score']:.4f} ({scores['hit_rate_at_10']:.3f})"


def _vectors(result: dict[str, Any]) -> str:
    return f"{result['vectors']['vectors_built_s']} ({result['vectors']['vectors_mb']})"


def _graph(result: dict[str, Any]) -> str:
    vectors = result["vectors"]
    if "graph_mb" not in vectors:
        return "none (exact scan)"
    return f"{vectors['graph_built_s']} ({vectors['graph_mb']})"


def _people_memory(result: dict[str, Any]) -> str:
    return f"{result['people']['startup_s']}; {result['people']['peak_rss_mb']}"


def _first_card(result: dict[str, Any]) -> str:
    first = result["understanding"]["first_item_right_kind"]
    return f"{first['copilot']:.3f} (BM25 {first['bm25']:.3f}, n={first['n']})"


def _category(result: dict[str, Any], category: str) -> str:
    scores = result["serve"]["official"]["by_category"][category]
    return f"{scores['recommended_technical_score']:.3f} (n={scores['sample_count']})"


if __name__ == "__main__":
    main()
