"""Two designs for the reader's tagger and two for its item model, scored on what neither
trained on.

    python benchmarks/reader_designs.py [--data DIR] [-o OUT.json]

Taggers, on the held-out tenth of the training messages (span precision/recall/F1, exact
offsets and label): (a) a linear-chain CRF over word, shape, vocabulary and context features
(the shipped design); (b) a per-token linear model (logistic regression) over the same features
plus the WordLlama vectors of the token and its neighbours, each token tagged on its own.
Item models, on the understanding corpus's dev first messages that name an item (the node read
for the tagger's item phrase is the annotated one or an alternative): (a) the reader's linear
model over phrase features (shipped); (b) the catalog's own categoriser (index/categoriser.py)
reading the same phrase.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np
from scipy import sparse
from sklearn.feature_extraction import DictVectorizer
from sklearn.linear_model import LogisticRegression

from shopcopilot.index.vectors import WordLlamaEncoder
from shopcopilot.reader.doc import make_doc
from shopcopilot.reader.evaluate import span_scores
from shopcopilot.reader.features import bio, spans_of, token_features
from shopcopilot.reader.model import load, with_context
from shopcopilot.reader.train import SLOT_LABELS, TRAIN_DIR, examples, split_of, train


def crf(model_dir: Path, held) -> tuple[dict, dict]:
    reader = load(model_dir)
    slot_pairs, not_pairs = [], []
    for e in held:
        doc = reader.read(e.text, e.context)
        got = {(s.start, s.end, s.label) for s in doc.spans}
        want = {(s, t, label) for s, t, label, _ in e.spans}
        slot_pairs.append(({g for g in got if g[2] != "not"}, {w for w in want if w[2] != "not"}))
        not_pairs.append(({g for g in got if g[2] == "not"}, {w for w in want if w[2] == "not"}))
    return span_scores(slot_pairs), span_scores(not_pairs)


class Vectors:
    def __init__(self) -> None:
        self.encoder, self.cache = WordLlamaEncoder(), {}

    def of(self, words: list[str]) -> np.ndarray:
        new = sorted({w for w in words if w not in self.cache})
        if new:
            for w, v in zip(new, self.encoder.encode(new), strict=True):
                self.cache[w] = np.asarray(v, dtype=np.float32)
        return np.stack([self.cache[w] for w in words])


def token_rows(docs, contexts, words, vectors: Vectors, vectorizer=None):
    feats, dense = [], []
    for doc, context in zip(docs, contexts, strict=True):
        feats += with_context(token_features(doc, words), context)
        lows = [t.lower for t in doc.tokens]
        own = vectors.of(lows) if lows else np.zeros((0, 256), np.float32)
        pad = np.zeros((1, own.shape[1]), np.float32)
        before = np.vstack([pad, own[:-1]]) if len(own) else own
        after = np.vstack([own[1:], pad]) if len(own) else own
        dense.append(np.hstack([own, before, after]))
    if vectorizer is None:
        vectorizer = DictVectorizer()
        X = vectorizer.fit_transform(feats)
    else:
        X = vectorizer.transform(feats)
    return sparse.hstack([X, sparse.csr_matrix(np.vstack(dense))]).tocsr(), vectorizer


def per_token(fit, held, words) -> tuple[dict, dict]:
    vectors = Vectors()
    results = []
    for layer in ("slots", "not"):
        keep = (
            (lambda label: label in SLOT_LABELS)
            if layer == "slots"
            else (lambda label: label == "not")
        )
        docs = [make_doc(e.text) for e in fit]
        tags = [
            t
            for d, e in zip(docs, fit, strict=False)
            for t in bio(d, [(s, t, lab) for s, t, lab, _ in e.spans if keep(lab)])
        ]
        X, vectorizer = token_rows(docs, [e.context for e in fit], words, vectors)
        model = LogisticRegression(C=2.0, max_iter=300)
        model.fit(X, tags)
        pairs = []
        for e in held:
            doc = make_doc(e.text)
            if not doc.tokens:
                continue
            Xh, _ = token_rows([doc], [e.context], words, vectors, vectorizer)
            got = {(s, t, lab) for s, t, lab, _ in spans_of(doc, list(model.predict(Xh)))}
            pairs.append((got, {(s, t, lab) for s, t, lab, _ in e.spans if keep(lab)}))
        results.append(span_scores(pairs))
    return results[0], results[1]


def items(model_dir: Path) -> dict:
    from shopcopilot.agent import Agent
    from shopcopilot.bench.commands import _understanding_catalog
    from shopcopilot.bench.understanding import load_corpus

    reader = load(model_dir)
    lexicon = Agent(_understanding_catalog(None), warm_up=False).lexicon
    n = ours = catalog = 0
    for case in load_corpus(split="dev"):
        turn = case.turns[0]
        if case.exchange or not turn.expect.get("item"):
            continue
        wanted = {turn.expect["item"], *turn.expect.get("item_alternatives", [])}
        doc = reader.read(turn.user)
        spans = [s for s in doc.of("item") if not doc.negated(s)]
        n += 1
        if spans:
            ours += spans[0].value in wanted
            reading = lexicon.read_item(doc.words(spans[0]))
            catalog += bool(reading and reading.node in wanted)
    return {
        "n": n,
        "reader's item model": round(ours / n, 3),
        "catalog categoriser": round(catalog / n, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=TRAIN_DIR)
    parser.add_argument("-o", "--out", type=Path)
    args = parser.parse_args()
    data = examples(args.data)
    fit = [e for e in data if split_of(e) == "fit"]
    held = [e for e in data if split_of(e) == "held"]
    with tempfile.TemporaryDirectory() as folder:
        started = time.monotonic()
        meta = train(Path(folder), args.data, held_out=True, log=lambda *_: None)
        crf_time = time.monotonic() - started
        crf_slots, crf_not = crf(Path(folder), held)
        item_scores = items(Path(folder))
    started = time.monotonic()
    tok_slots, tok_not = per_token(fit, held, frozenset(meta["node_words"]))
    tok_time = time.monotonic() - started
    result = {
        "fit": len(fit),
        "held": len(held),
        "CRF": {"slots": crf_slots, "not": crf_not, "train_s (all three parts)": round(crf_time)},
        "per-token + WordLlama": {
            "slots": tok_slots,
            "not": tok_not,
            "train_s (taggers)": round(tok_time),
        },
        "items (dev)": item_scores,
    }
    print(json.dumps(result, indent=1))
    if args.out:
        args.out.write_text(json.dumps(result, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
