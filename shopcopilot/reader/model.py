"""The shipped reader: a span tagger (CRF), a negation-scope tagger (CRF) and the item model,
read from the package's `model/` folder once, on first use. A missing or broken model gives one
line of notice and the rules read alone."""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pycrfsuite

from .doc import Doc, Span, make_doc
from .features import spans_of, token_features
from .items import ItemModel, item_features

log = logging.getLogger(__name__)

MODEL_DIR = Path(__file__).resolve().parent / "shipped"
FORMAT = 1  # the artifact's layout; a model of another format is not read
FILES = ("meta.json", "slots.crfsuite", "negation.crfsuite", "items.npz", "items.json")


class ModelError(RuntimeError):
    """The model folder is missing a file, fails its fingerprint or is of another format."""


@dataclass(slots=True)
class Reader:
    slots: pycrfsuite.Tagger
    negation: pycrfsuite.Tagger
    items: ItemModel
    node_words: frozenset[str]
    meta: dict[str, Any]
    lock: threading.Lock = field(default_factory=threading.Lock)  # a tagger is not thread-safe

    def read(self, text: str, context: dict[str, Any] | None = None) -> Doc:
        doc = make_doc(text)
        self.annotate(doc, context)
        return doc

    def annotate(self, doc: Doc, context: dict[str, Any] | None = None) -> Doc:
        """Add the model's spans to `doc`. `context`: {"asked": slot, "shown": n} of the turn."""
        if not doc.tokens:
            return doc
        features = with_context(token_features(doc, self.node_words), context)
        for tagger, keep in ((self.slots, None), (self.negation, "not")):
            with self.lock:
                tagger.set(features)
                tags = tagger.tag()
                marginals = [{tags[i]: tagger.marginal(tags[i], i)} for i in range(len(tags))]
            for start, end, label, score in spans_of(doc, tags, marginals):
                if keep is None or label == keep:
                    label, _, kind = label.partition("_")  # "crit_cheaper": a critique's kind
                    doc.spans.append(Span(start, end, label, kind or None, round(score, 3)))
        for span in list(doc.of("item")):
            node, confidence = self.items.read(item_features(doc, span))
            doc.spans[doc.spans.index(span)] = Span(
                span.start, span.end, "item", node, round(min(span.score, confidence), 3)
            )
        return doc


def with_context(features: list[dict], context: dict[str, Any] | None) -> list[dict]:
    """The turn's context on every token: the slot just asked about, and whether products are
    on show (what "the second one" can point at)."""
    if not context:
        return features
    extra = {}
    if context.get("asked"):
        extra[f"asked:{context['asked']}"] = True
    if context.get("shown"):
        extra["shown"] = True
    return [f | extra for f in features]


_lock = threading.Lock()
_loaded: dict[Path, Reader | None] = {}


def load(folder: Path = MODEL_DIR) -> Reader:
    """The model in `folder`; raises ModelError naming what is wrong."""
    missing = [name for name in FILES if not (folder / name).is_file()]
    if missing:
        raise ModelError(f"{folder}: missing {', '.join(missing)}")
    meta = json.loads((folder / "meta.json").read_text(encoding="utf-8"))
    if meta.get("format") != FORMAT:
        raise ModelError(
            f"{folder}/meta.json: format {meta.get('format')!r}, this code reads {FORMAT}"
        )
    for name, digest in meta.get("files", {}).items():
        if fingerprint(folder / name) != digest:
            raise ModelError(f"{folder}/{name}: its fingerprint does not match meta.json")
    slots, negation = pycrfsuite.Tagger(), pycrfsuite.Tagger()
    slots.open(str(folder / "slots.crfsuite"))
    negation.open(str(folder / "negation.crfsuite"))
    return Reader(slots, negation, ItemModel.load(folder), frozenset(meta["node_words"]), meta)


def shipped(folder: Path = MODEL_DIR) -> Reader | None:
    """The shipped model, loaded once; None (after one line of notice) when it cannot be read."""
    with _lock:
        if folder not in _loaded:
            try:
                _loaded[folder] = load(folder)
            except (ModelError, OSError, ValueError, KeyError) as error:
                log.warning("the learned reader is off, the rules read alone: %s", error)
                _loaded[folder] = None
        return _loaded[folder]


def fingerprint(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]
