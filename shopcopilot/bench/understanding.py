"""The understanding benchmark: does the copilot's state say what the shopper meant?

The corpus (benchmarks/data/understanding/) holds single utterances and short exchanges,
each turn annotated with what the shopper means (see its README). Every turn is played
through the agent (`respond_traced`), and the state it leaves is read back into the
corpus's slots: item (a catalog category node), department, budget, sizes, colours and
the rest. Each slot is scored by precision, recall and F1 over (slot, value) pairs, and a
turn is an exact match when every slot it has or was expected to have agrees.

The agent is never told the annotation; products shown in an exchange are put into the
session as if the agent had shown them, so references can be resolved against them.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..catalog.vocabulary import vocabulary
from ..index.text import ROOT_CATEGORY, STOPWORDS, stem, tokens
from ..terms import Facet

CORPUS_DIR = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "understanding"
SPLITS = ("dev", "test", "fresh", "fresh2", "fresh3", "fresh4", "fresh5", "fresh6", "all")
LIST_SLOTS = {
    "colors": Facet.COLOR,
    "materials": Facet.MATERIAL,
    "styles": Facet.STYLE,
    "uses": Facet.USE_CASE,
}
# Per-turn keys describe that message only; the rest are the state after it.
TURN_KEYS = ("correction", "reference", "critique", "no_preference", "not_sure", "chitchat")
SLOTS = (
    "item",
    "department",
    "budget",
    "size",
    "width",
    "colors",
    "materials",
    "styles",
    "uses",
    "features",
    "brands",
    "not",
    "no_preference",
    "recipient",
    "age_group",
    "reference",
    "critique",
    "correction",
    "chitchat",
)
_DEPARTMENTS = {"baby girls": "baby", "baby boys": "baby"}
_CUE_READINGS = frozenset({"not sure", "no preference", "browsing", "question"})
_WHO = frozenset({"women", "men", "girl", "boy", "baby", "kid", "unisex"})


class CorpusError(ValueError):
    """A corpus line is malformed; the message names the file and line."""


@dataclass(frozen=True, slots=True)
class Turn:
    user: str
    expect: Mapping[str, Any]
    shown: tuple[Mapping[str, Any], ...] = ()
    asked: str | None = None


@dataclass(frozen=True, slots=True)
class Case:
    id: str
    split: str
    turns: tuple[Turn, ...]
    exchange: bool


def load_corpus(folder: Path = CORPUS_DIR, split: str = "all") -> list[Case]:
    """The corpus's cases of one split ("all": dev and test; each "fresh" slice is its own)."""
    if split not in SPLITS:
        raise CorpusError(f"unknown split {split!r}; known: {', '.join(SPLITS)}")
    cases = [
        *_read(folder / "utterances.jsonl", _utterance),
        *_read(folder / "exchanges.jsonl", _exchange),
    ]
    for fresh in sorted(folder.glob("fresh*.jsonl")):  # slices written after each round of work
        cases += _read(fresh, _any_case)
    wanted = {"all": ("dev", "test")}.get(split, (split,))
    return [case for case in cases if case.split in wanted]


def _read(path: Path, make: Any) -> Iterator[Case]:
    if not path.exists():
        return
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                yield make(json.loads(line))
            except (ValueError, KeyError, TypeError) as error:
                raise CorpusError(f"{path}:{number}: {error}") from error


def _utterance(raw: Mapping[str, Any]) -> Case:
    context = raw.get("context") or {}
    turn = Turn(raw["text"], dict(raw["expect"]), asked=context.get("asked"))
    return Case(raw["id"], raw["split"], (turn,), exchange=False)


def _exchange(raw: Mapping[str, Any]) -> Case:
    turns = tuple(
        Turn(t["user"], dict(t["expect"]), tuple(t.get("shown") or ()), t.get("asked"))
        for t in raw["turns"]
    )
    if not turns:
        raise ValueError("an exchange needs at least one turn")
    return Case(raw["id"], raw["split"], turns, exchange=True)


def _any_case(raw: Mapping[str, Any]) -> Case:
    return _exchange(raw) if "turns" in raw else _utterance(raw)


# -- reading the agent's state back into the corpus's slots ----------------------------------


class NodeResolver:
    """Which catalog category node a set of category words names: the deepest node, on the
    path that covers most of the words, that one of the words names; the last word said
    (English names the thing last) breaks ties."""

    def __init__(self, category_paths: Iterable[tuple[str, ...]]) -> None:
        # Who it is for ("Women", "Baby Girls") is the department slot, never the item.
        self.paths = [
            [
                (part, stems)
                for part in path
                if part.strip().lower() != ROOT_CATEGORY and not (stems := _stems(part)) <= _WHO
            ]
            for path in sorted(category_paths)  # set order would make ties run-dependent
        ]

    def resolve(self, words: list[str]) -> str | None:
        said = set(words)
        if not said:
            return None
        best: tuple[tuple[int, ...], str] | None = None
        for path in self.paths:
            covered = set().union(*(stems & said for _, stems in path)) if path else set()
            named = [
                (depth, part, stems) for depth, (part, stems) in enumerate(path) if stems & said
            ]
            if not named:
                continue
            depth, part, stems = max(named, key=lambda n: (len(n[2] & said) == len(n[2]), n[0]))
            head = int(words[-1] in stems)
            key = (len(covered), head, int(stems <= said), -len(stems - said), depth)
            if best is None or key > best[0]:
                best = (key, part)
        return best[1] if best else None


def item_node(data: Mapping[str, Any], nodes: NodeResolver) -> str | None:
    """The node a category constraint names: the categoriser's reading stored with it, else the
    node its words name."""
    return data.get("node") or nodes.resolve(list(data.get("words", {})))


def _stems(text: str) -> set[str]:
    return {stem(t) for t in tokens(text) if t not in STOPWORDS}


def predicted(
    state: Mapping[str, Any], diff: Mapping[str, Any], nodes: NodeResolver
) -> dict[str, set]:
    """The state (and this turn's diff) as (slot -> set of values)."""
    active = [c for c in state["constraints"] if c["status"] == "active"]
    out: dict[str, set] = {slot: set() for slot in SLOTS}
    for c in active:
        facet, value = c["data"].get("facet"), c["value"]
        if c["attribute"] == "category":
            out["item"].add(_norm(item_node(c["data"], nodes) or c["value"]))
        elif facet == "department":
            out["department"].add(value)
        elif facet == "budget" and c["data"].get("lean"):
            continue  # "cheap": the cheaper first, no amount (the corpus: not a budget)
        elif facet == "budget":
            out["budget"].add(
                _budget(c["data"].get("min"), c["data"].get("max"), c["data"].get("target"))
            )
        elif facet in ("size", "fit"):
            out["size"].add(_size(value))
        elif facet == "width":
            out["width"].add(value.lower())
        elif facet == "brand":
            out["brands"].add(value.lower())
        elif facet == "closure":
            out["features"].add(value.lower())
        for slot, wanted in LIST_SLOTS.items():
            if facet == wanted:
                out[slot].add(value.lower())
    audience = state.get("audience") or {}
    for slot in ("recipient", "age_group"):  # who the item is for, as the state keeps it
        if fact := audience.get(slot):
            out[slot].add(fact["value"])
    out["features"] |= {  # fragments every word of which is read otherwise claim nothing more
        f["text"] for f in state["fragments"] if f["status"] == "active" and not f.get("covered")
    }
    out["not"] = {_stem_phrase(r["value"]) for r in state["rejected"]}
    out["no_preference"] = set(diff.get("unconstrained", []))
    out["correction"] = {True} if diff.get("new_epoch") or diff.get("replaced") else set()
    out["reference"] = {p for r in diff.get("references", []) for p in r["positions"]}
    out["critique"] = {c["kind"] for c in diff.get("critiques", [])}
    changed = any(
        diff.get(key)
        for key in (
            "added",
            "replaced",
            "negated",
            "unconstrained",
            "fragments",
            "critiques",
            "audience",
        )
    )
    # A turn read as not knowing, browsing or having no preference is a reply, not chit-chat.
    cue = any(r["kind"] in _CUE_READINGS for r in diff.get("read", []))
    out["chitchat"] = set() if changed or cue else {True}
    return out


def expected(expect: Mapping[str, Any]) -> dict[str, set]:
    """The annotation as (slot -> set of values), in the forms `predicted` gives."""
    out: dict[str, set] = {slot: set() for slot in SLOTS}
    if item := expect.get("item"):  # any of the acceptable nodes will do
        out["item"].add(frozenset(_norm(i) for i in [item, *expect.get("item_alternatives", [])]))
    if department := expect.get("department"):
        out["department"].add(_DEPARTMENTS.get(department, department))
    if budget := expect.get("budget"):
        out["budget"].add(_budget(budget.get("min"), budget.get("max"), budget.get("around")))
    out["size"] = {_size(s) for s in expect.get("size", [])}
    if width := expect.get("width"):
        out["width"].add(width.lower())
    for slot, facet in LIST_SLOTS.items():
        out[slot] = {_canonical(facet, v) for v in expect.get(slot, [])}
    for value in expect.get("features", []):
        # The vocabulary types some features as styles ("waterproof", "hood": hooded): there the
        # copilot's typed reading is the style, and it is scored in that slot.
        style = vocabulary().canonical(Facet.STYLE, value)
        out["styles" if style else "features"].add((style or value).lower())
    out["brands"] = {v.lower() for v in expect.get("brands", [])}
    out["not"] = {_stem_phrase(_canonical_any(n["value"])) for n in expect.get("not", [])}
    out["no_preference"] = set(expect.get("no_preference", []))
    for slot in ("recipient", "age_group"):
        if value := expect.get(slot):
            out[slot].add(value.lower())
    out["reference"] = {int(p) for p in expect.get("reference", [])}
    out["critique"] = {c["kind"] for c in expect.get("critique", [])}
    for slot in ("correction", "chitchat"):
        if expect.get(slot):
            out[slot].add(True)
    return out


def _norm(text: str) -> str:
    return " ".join(tokens(text))


def _budget(low: Any, high: Any, around: Any) -> tuple[float | None, float | None, float | None]:
    def number(value: Any) -> float | None:
        return None if value is None else round(float(value), 2)

    return number(low), number(high), number(around)


def _size(value: str) -> str:
    """One form for one size: the vocabulary's, and baby months one way ("12M", "12 months")."""
    vocab = vocabulary()
    canonical = vocab.canonical(Facet.SIZE, value) or vocab.canonical(Facet.FIT, value) or value
    months = _MONTHS.fullmatch(canonical.strip().lower())
    return f"{months[1]}M" if months else canonical.strip().upper().replace(" ", "")


_MONTHS = re.compile(r"(\d{1,2}(?:\s?-\s?\d{1,2})?)\s?(?:m|mos?|months?)")


def _canonical(facet: Facet, value: str) -> str:
    return (vocabulary().canonical(facet, value) or value).lower()


def _canonical_any(value: str) -> str:
    for facet in (Facet.COLOR, Facet.MATERIAL, Facet.STYLE, Facet.CLOSURE, Facet.USE_CASE):
        if found := vocabulary().canonical(facet, value):
            return found
    return value


def _stem_phrase(text: str) -> str:
    return " ".join(stem(t) for t in tokens(text))


# -- scoring ------------------------------------------------------------------------------------


@dataclass(slots=True)
class SlotCounts:
    tp: int = 0
    fp: int = 0
    fn: int = 0
    n: int = 0  # turns where the slot was expected

    def add(self, got: set, want: set, matches: Matcher) -> None:
        hits = sum(1 for value in want if any(matches(value, g) for g in got))
        used = sum(1 for g in got if any(matches(value, g) for value in want))
        self.tp += hits
        self.fn += len(want) - hits
        self.fp += len(got) - used
        self.n += bool(want)

    def scores(self) -> dict[str, float | int]:
        precision = self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0
        recall = self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        return {
            "precision": round(precision, 4),
            "recall": round(recall, 4),
            "f1": round(f1, 4),
            "n": self.n,
        }


# (wanted value, predicted value) -> do they agree. Any: the values' type depends on the slot
# (str for most, a frozenset[str] of acceptable names for a wanted item).
Matcher = Callable[[Any, Any], bool]


def _same(want: Any, got: Any) -> bool:
    return want == got


def _feature_match(want: str, got: str) -> bool:
    """A wanted feature is found when all its words are in the predicted text."""
    return _stems(want) <= _stems(got) if _stems(want) else False


def _not_match(want: str, got: str) -> bool:
    return want == got or (bool(want) and want.split()[-1] == got.split()[-1] if got else False)


def _item_match(want: frozenset[str], got: str) -> bool:
    return got in want


# Slots two annotators part on (free text): the typed exact match leaves them out.
FREE_TEXT_SLOTS = frozenset({"features", "styles", "uses"})

MATCHERS: dict[str, Matcher] = {
    "features": _feature_match,
    "not": _not_match,
    "item": _item_match,
}


@dataclass(slots=True)
class Report:
    slots: dict[str, SlotCounts] = field(default_factory=lambda: {s: SlotCounts() for s in SLOTS})
    turns: int = 0
    exact: int = 0
    typed_exact: int = 0  # every slot but the free-text ones (features, styles, uses) agreed
    slot_exact: Counter = field(default_factory=Counter)  # slot -> turns where it agreed
    slot_seen: Counter = field(default_factory=Counter)  # slot -> turns where either side had it
    misses: list[dict[str, Any]] = field(default_factory=list)
    first_items: FirstItems = field(default_factory=lambda: FirstItems())

    def add(self, case: Case, turn_number: int, got: dict[str, set], want: dict[str, set]) -> None:
        self.turns += 1
        wrong = []
        for slot in SLOTS:
            matches = MATCHERS.get(slot, _same)
            self.slots[slot].add(got[slot], want[slot], matches)
            if got[slot] or want[slot]:
                self.slot_seen[slot] += 1
                agreed = len(got[slot]) == len(want[slot]) and all(
                    any(matches(w, g) for g in got[slot]) for w in want[slot]
                )
                self.slot_exact[slot] += agreed
                if not agreed:
                    wrong.append(slot)
        self.exact += not wrong
        self.typed_exact += not set(wrong) - FREE_TEXT_SLOTS
        if wrong:
            self.misses.append(
                {
                    "id": case.id,
                    "turn": turn_number,
                    "text": case.turns[turn_number - 1].user,
                    "wrong": {
                        s: {"got": sorted(map(str, got[s])), "want": sorted(map(str, want[s]))}
                        for s in wrong
                    },
                }
            )

    def to_dict(self, n_utterances: int, n_exchanges: int, split: str) -> dict[str, Any]:
        return {
            "split": split,
            "n_utterances": n_utterances,
            "n_exchanges": n_exchanges,
            "n_turns": self.turns,
            "exact_match": round(self.exact / self.turns, 4) if self.turns else 0.0,
            "typed_exact_match": round(self.typed_exact / self.turns, 4) if self.turns else 0.0,
            "slots": {slot: counts.scores() for slot, counts in self.slots.items()},
            "first_item_right_kind": self.first_items.to_dict(),
            "slot_exact": {
                slot: round(self.slot_exact[slot] / self.slot_seen[slot], 4)
                for slot in SLOTS
                if self.slot_seen[slot]
            },
        }


def evaluate(
    agent: Any,
    cases: list[Case],
    nodes: NodeResolver,
    records: Sequence[Mapping[str, Any]] = (),
    progress: Any = None,
) -> Report:
    """Play every case through `agent` and score each turn. `records`: the real records that
    shown products refer to by line (without them an exchange shows nothing)."""
    report = Report()
    ids = [record["parent_asin"] for record in records]
    for number, case in enumerate(cases):
        for turn_number, turn, result in play_case(agent, case, f"understanding-{number}", ids):
            report.add(
                case,
                turn_number,
                predicted(result.state, result.diff, nodes),
                expected(turn.expect),
            )
            if not case.exchange and turn.expect.get("item"):
                report.first_items.add(agent, turn, result.response)
        if progress:
            progress()
    return report


def second_reading(path: Path) -> dict[str, list[dict[str, Any]]]:
    """A second annotator's file (benchmarks/data/understanding/agreement/): case id -> its
    expect per turn."""
    out: dict[str, list[dict[str, Any]]] = {}
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                raw = json.loads(line)
                out[raw["id"]] = [dict(t["expect"]) for t in raw.get("turns", [raw])]
            except (ValueError, KeyError, TypeError) as error:
                raise CorpusError(f"{path}:{number}: {error}") from error
    return out


def agreement(cases: Sequence[Case], second: Mapping[str, list[dict[str, Any]]]) -> Report:
    """The second annotation scored against the corpus's as the copilot's state is: the corpus
    is the gold, the second annotator the reader, naming one item (its first choice)."""
    report = Report()
    for case in cases:
        for number, (turn, other) in enumerate(zip(case.turns, second[case.id], strict=True), 1):
            got = expected(other)
            got["item"] = {_norm(other["item"])} if other.get("item") else set()
            report.add(case, number, got, expected(turn.expect))
    return report


def play_case(
    agent: Any, case: Case, session: str, ids: Sequence[str], detailed: bool = True
) -> Iterator[tuple[int, Turn, Any]]:
    """Play one case in a fresh `session`: each turn's shown products and question are put into
    the session first (`ids`: the real records' ids, by line); yields (turn number, turn, the
    agent's traced result). The session is forgotten at the end."""
    agent.reset(session, {})
    last_list: tuple = ()
    try:
        for turn_number, turn in enumerate(case.turns, 1):
            last_list = turn.shown or last_list
            _show(
                agent, session, turn, turn_number, _asins(last_list, ids), _asins(turn.shown, ids)
            )
            yield (
                turn_number,
                turn,
                agent.respond_traced(session, turn.user, turn_number, detailed=detailed),
            )
    finally:
        agent.forget(session)


@dataclass(slots=True)
class FirstItems:
    """Is the first product shown the right kind of item? The copilot against plain BM25 over
    the shopper's own words (the search box), on the utterances that name an item."""

    n: int = 0
    copilot: int = 0
    bm25: int = 0
    dense: int = 0  # the nearest product in meaning, when the index has vectors

    def add(self, agent: Any, turn: Turn, response: Mapping[str, Any]) -> None:
        items = [turn.expect["item"], *turn.expect.get("item_alternatives", [])]
        wanted = {_norm(item) for item in items}
        shown = [r["parent_asin"] for r in response["recommendations"][:1]]
        searched = [hit.parent_asin for hit in agent.index.search(turn.user, limit=1)]
        self.n += 1
        self.copilot += _is_kind(agent, shown, wanted)
        self.bm25 += _is_kind(agent, searched, wanted)
        vectors = getattr(agent, "vectors", None)
        if vectors is not None:
            nearest = vectors.nearest(vectors.query(turn.user), 1)
            self.dense += _is_kind(agent, [agent.features.asins[r] for r in nearest], wanted)

    def to_dict(self) -> dict[str, Any]:
        def rate(hits: int) -> float:
            return round(hits / self.n, 4) if self.n else 0.0

        rates = {"n": self.n, "copilot": rate(self.copilot), "bm25": rate(self.bm25)}
        return rates | ({"dense": rate(self.dense)} if self.dense else {})


def _is_kind(agent: Any, asins: list[str], wanted: set[str]) -> bool:
    product = agent.index.store.get(asins[0]) if asins else None
    return product is not None and bool(wanted & {_norm(part) for part in product.categories})


def _asins(shown: Sequence[Mapping[str, Any]], ids: Sequence[str]) -> list[str]:
    """The ids of shown products, given by their 1-based line in the real records."""
    return [ids[p["record"] - 1] for p in shown if 0 < p["record"] <= len(ids)]


def _show(
    agent: Any, session: str, turn: Turn, turn_number: int, last_list: list[str], shown: list[str]
) -> None:
    """Put the exchange's shown products (and the question asked) into the session, as if the
    agent had shown and asked them, so the next message can refer to them. A turn that shows
    nothing keeps the list shown before it as the one the shopper looks at (the corpus's
    assistant only asked a question in between)."""
    if not shown and not turn.asked and not last_list:
        return
    state = agent.export_session(session)
    if last_list:
        state["last_shown"] = last_list
    if shown:
        epoch = str(state["epoch"])
        state["shown"][epoch] = [a for a in state["shown"].get(epoch, []) if a not in shown] + shown
    if turn.asked:
        state["questions"].append({"turn": turn_number - 1, "attribute": turn.asked})
    agent.import_session(session, state)


def report_table(summary: Mapping[str, Any]) -> Any:
    """The per-slot scores as a rich table."""
    from rich.table import Table

    table = Table(
        title=f"understanding, {summary['split']} split: {summary['n_utterances']} utterances, "
        f"{summary['n_exchanges']} exchanges, exact-state match {summary['exact_match']:.3f}"
    )
    first = summary["first_item_right_kind"]
    table.caption = (
        f"first product the right kind of item: copilot {first['copilot']:.3f}, "
        f"plain BM25 over the words {first['bm25']:.3f}"
        + (f", nearest in meaning {first['dense']:.3f}" if "dense" in first else "")
        + f" ({first['n']} utterances)"
    )
    for column in ("slot", "precision", "recall", "F1", "exact", "n"):
        table.add_column(column, justify="left" if column == "slot" else "right")
    for slot, scores in summary["slots"].items():
        exact = summary["slot_exact"].get(slot)
        table.add_row(
            slot,
            f"{scores['precision']:.3f}",
            f"{scores['recall']:.3f}",
            f"{scores['f1']:.3f}",
            "" if exact is None else f"{exact:.3f}",
            str(scores["n"]),
        )
    return table


def real_records() -> list[dict[str, Any]]:
    """The real records (../shared/data/catalog_harvest.jsonl), read at run time: the corpus
    names the products shown in an exchange by their line there, never copying a record; []
    when the shared data is absent."""
    from ..paths import shared_data_dir

    data = shared_data_dir()
    if data is None:
        return []
    with (data / "catalog_harvest.jsonl").open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def node_resolver(agent: Any, records: Sequence[Mapping[str, Any]]) -> NodeResolver:
    """Category nodes as the corpus names them: the real records' paths when they are here (the
    corpus was written against them), else the agent's own catalog's."""
    from ..index.counts import catalog_counts

    if not records:
        return NodeResolver(catalog_counts(agent.index.store, agent.index.path).paths)
    return NodeResolver({tuple(record.get("categories") or ()) for record in records})
