"""Training the reader from the annotated messages (benchmarks/data/understanding/train/) and the
catalog's titles, and scoring a trained reader. Deterministic: the same data and seed give the
same model files and the same scores."""

from __future__ import annotations

import gzip
import hashlib
import json
import random
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pycrfsuite
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.svm import LinearSVC

from ..index.text import ROOT_CATEGORY, STOPWORDS, stem, tokens
from .doc import Doc, make_doc
from .features import bio, token_features
from .items import ItemModel, item_features
from .model import FORMAT, fingerprint, with_context

TRAIN_DIR = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "understanding" / "train"
# What the tagger marks; negation scope is its own layer ("nothing white": not + colour).
SLOT_LABELS = (
    "item",
    "dept",
    "color",
    "material",
    "size",
    "width",
    "dim",
    "brand",
    "style",
    "use",
    "feature",
    "recipient",
    "age",
    "budget",
    "nopref",
    "notsure",
    "ref",
    "crit",
)
RECIPE: dict[str, Any] = {
    "tagger": "CRF (L-BFGS), c1 0.05, c2 0.01, 200 iterations, all transitions",
    "items": "linear SVM (C 0.5) over tf-idf of phrase stems, pairs, head, 4-letter groups, "
    "context",
    "titles_per_leaf": 30,
    "title_weight": 0.3,
    "prune": 0.02,
}


@dataclass(slots=True)
class Example:
    text: str
    spans: list[tuple[int, int, str, Any]]
    context: dict[str, Any] = field(default_factory=dict)
    source: str = ""


class TrainingDataError(ValueError):
    pass


def examples(folder: Path = TRAIN_DIR) -> list[Example]:
    """Every annotated message of the folder's files (an exchange gives one per turn)."""
    out = []
    files = sorted(folder.glob("*.jsonl"))
    if not files:
        raise TrainingDataError(f"{folder}: no .jsonl files")
    for path in files:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                raw = json.loads(line)
                out += list(_examples(raw, f"{path.name}:{number}"))
            except (json.JSONDecodeError, KeyError, TypeError) as error:
                raise TrainingDataError(f"{path}:{number}: {error}") from None
    return out


def _examples(raw: dict[str, Any], where: str) -> Iterator[Example]:
    if "turns" in raw:
        shown = 0
        for turn in raw["turns"]:
            shown = len(turn.get("shown", [])) or shown
            yield _example(turn["user"], turn, {"asked": turn.get("asked"), "shown": shown}, where)
    else:
        yield _example(raw["text"], raw, {"asked": raw.get("asked")}, where)


def _example(text: str, raw: dict[str, Any], context: dict[str, Any], where: str) -> Example:
    spans = []
    for s in raw["spans"]:
        if not (0 <= s["start"] < s["end"] <= len(text)):
            raise TrainingDataError(f"{where}: span {s} outside the text")
        spans.append((s["start"], s["end"], s["slot"], s.get("value")))
    return Example(text, spans, {k: v for k, v in context.items() if v}, where)


def tag_of(label: str, value: Any) -> str:
    """The tagger's label: a critique carries its kind ("crit_cheaper"), the rest their slot."""
    return f"crit_{value}" if label == "crit" and value else label


def split_of(example: Example, held_out: float = 0.1) -> str:
    """A fixed tenth of the messages is held out to compare designs; the shipped model uses all."""
    digest = hashlib.sha256(example.text.encode()).digest()
    return "held" if digest[0] < 256 * held_out else "fit"


def node_words(nodes: Iterable[str]) -> frozenset[str]:
    return frozenset(stem(t) for node in nodes for t in tokens(node) if t not in STOPWORDS)


def catalog_titles(path: Path, per_leaf: int, seed: int) -> list[tuple[str, str]]:
    """(title, leaf) pairs, at most `per_leaf` per leaf, chosen with a seeded reservoir."""
    rng = random.Random(seed)
    seen: Counter = Counter()
    kept: dict[str, list[str]] = defaultdict(list)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            path_names = [c for c in record.get("categories") or [] if c.lower() != ROOT_CATEGORY]
            if not path_names or not record.get("title"):
                continue
            leaf = path_names[-1]
            seen[leaf] += 1
            if len(kept[leaf]) < per_leaf:
                kept[leaf].append(record["title"])
            elif (j := rng.randrange(seen[leaf])) < per_leaf:
                kept[leaf][j] = record["title"]
    return [(title, leaf) for leaf in sorted(kept) for title in kept[leaf]]


def train_tagger(
    docs: list[Doc], tags: list[list[str]], contexts, words, path: Path, seed: int
) -> None:
    trainer = pycrfsuite.Trainer(verbose=False)
    for doc, labels, context in zip(docs, tags, contexts, strict=True):
        if doc.tokens:
            trainer.append(with_context(token_features(doc, words), context), labels)
    trainer.set_params(
        {"c1": 0.05, "c2": 0.01, "max_iterations": 200, "feature.possible_transitions": True}
    )
    trainer.train(str(path))


def item_examples(data: list[Example]) -> list[tuple[list[str], str]]:
    out = []
    for example in data:
        doc = make_doc(example.text)
        from .doc import Span

        for start, end, label, value in example.spans:
            if label == "item" and value:
                out.append((item_features(doc, Span(start, end, "item")), value))
    return out


def train_items(data: list[Example], titles: list[tuple[str, str]], seed: int) -> ItemModel:
    pairs = item_examples(data)
    from .doc import Span

    for title, leaf in titles:
        doc = make_doc(title)
        pairs.append((item_features(doc, Span(0, len(title), "item")), leaf))
    weights = np.array([1.0] * (len(pairs) - len(titles)) + [RECIPE["title_weight"]] * len(titles))
    vectorizer = TfidfVectorizer(analyzer=lambda f: f, sublinear_tf=True, min_df=2, use_idf=False)
    X = vectorizer.fit_transform([f for f, _ in pairs])
    y = [label for _, label in pairs]
    model = LinearSVC(C=0.5, random_state=seed, max_iter=3000)
    model.fit(X, y, sample_weight=weights)
    coef = model.coef_.T  # features x classes
    coef[np.abs(coef) < RECIPE["prune"]] = 0.0
    from scipy import sparse

    vocabulary = {f: int(i) for f, i in vectorizer.vocabulary_.items()}
    return ItemModel(
        vocabulary,
        sparse.csr_matrix(coef),
        model.intercept_.astype(np.float32),
        list(model.classes_),
    )


def train(
    out: Path,
    data_dir: Path = TRAIN_DIR,
    seed: int = 7,
    catalog: Path | None = None,
    held_out: bool = False,
    log=print,
) -> dict[str, Any]:
    """Train the three parts into `out`. `held_out`: leave the held-out tenth out (for comparing
    designs on it)."""
    from ..paths import default_catalog_path

    started = time.monotonic()
    data = examples(data_dir)
    if held_out:
        data = [e for e in data if split_of(e) == "fit"]
    out.mkdir(parents=True, exist_ok=True)
    titles = catalog_titles(catalog or default_catalog_path(), RECIPE["titles_per_leaf"], seed)
    nodes = {v for e in data for _, _, label, v in e.spans if label == "item" and v} | {
        leaf for _, leaf in titles
    }
    words = node_words(nodes)
    docs = [make_doc(e.text) for e in data]
    contexts = [e.context for e in data]
    log(f"{len(data)} messages, {len(titles)} titles, {len(nodes)} nodes")
    slot_tags = [
        bio(d, [(s, t, tag_of(label, v)) for s, t, label, v in e.spans if label in SLOT_LABELS])
        for d, e in zip(docs, data, strict=False)
    ]
    not_tags = [
        bio(d, [(s, t, label) for s, t, label, _ in e.spans if label == "not"])
        for d, e in zip(docs, data, strict=False)
    ]
    train_tagger(docs, slot_tags, contexts, words, out / "slots.crfsuite", seed)
    log(f"slot tagger trained ({time.monotonic() - started:.0f} s)")
    train_tagger(docs, not_tags, contexts, words, out / "negation.crfsuite", seed)
    log(f"negation tagger trained ({time.monotonic() - started:.0f} s)")
    train_items(data, titles, seed).save(out)
    log(f"item model trained ({time.monotonic() - started:.0f} s)")
    meta = {
        "format": FORMAT,
        "version": 1,
        "seed": seed,
        "recipe": RECIPE,
        "data": data_fingerprint(data_dir),
        "n_messages": len(data),
        "n_titles": len(titles),
        "node_words": sorted(words),
        "files": {
            name: fingerprint(out / name)
            for name in ("slots.crfsuite", "negation.crfsuite", "items.npz", "items.json")
        },
    }
    (out / "meta.json").write_text(json.dumps(meta, indent=1, sort_keys=True), encoding="utf-8")
    return meta


def data_fingerprint(folder: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(folder.glob("*.jsonl")):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]
