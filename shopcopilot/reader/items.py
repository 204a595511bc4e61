"""Which catalog node an item phrase names: a linear model over the phrase's stems, stem pairs,
head noun and letter groups (typos keep most of theirs), with the rest of the message as
context ("boys tie for a wedding": Neckties). Trained on the annotated messages and, as weak
labels, the catalog's own titles under their leaf. Stored as plain arrays, pruned to the
weights that matter, so the shipped file stays small and loads without pickle."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import sparse

from ..index.text import STOPWORDS
from .doc import Doc, Span


def item_features(doc: Doc, span: Span | None) -> list[str]:
    inside = list(doc.token_range(span.start, span.end)) if span else range(len(doc.tokens))
    words = [doc.tokens[i] for i in inside if any(c.isalnum() for c in doc.tokens[i].lower)]
    stems = [t.stem for t in words]
    out = [f"s:{s}" for s in stems]
    out += [f"b:{a}_{b}" for a, b in zip(stems, stems[1:], strict=False)]
    if stems:
        out.append(f"h:{stems[-1]}")
    for t in words:
        padded = f"<{t.lower}>"
        out += (
            [f"c:{padded[i : i + 4]}" for i in range(len(padded) - 3)] if len(t.lower) > 3 else []
        )
    if span is not None:
        seen = set(inside)
        out += [
            f"x:{t.stem}"
            for i, t in enumerate(doc.tokens)
            if i not in seen and t.lower not in STOPWORDS and any(c.isalpha() for c in t.lower)
        ]
    return out


@dataclass(slots=True)
class ItemModel:
    vocabulary: dict[str, int]
    weights: sparse.csr_matrix  # features x classes
    bias: np.ndarray
    classes: list[str]

    def scores(self, features: list[str]) -> np.ndarray:
        columns = [self.vocabulary[f] for f in features if f in self.vocabulary]
        if not columns:
            return self.bias.copy()
        counts = np.bincount(columns, minlength=0)
        used = np.flatnonzero(counts)
        values = 1.0 + np.log(counts[used])
        values /= np.linalg.norm(values) or 1.0
        return np.asarray(self.weights[used].T @ values).ravel() + self.bias

    def read(self, features: list[str]) -> tuple[str, float]:
        """The node and a confidence in [0, 1]: a softmax over the scores."""
        scores = self.scores(features)
        best = int(scores.argmax())
        odds = np.exp((scores - scores[best]) * 4.0)
        return self.classes[best], float(1.0 / odds.sum())

    def save(self, folder: Path) -> None:
        w = self.weights.tocsr()
        np.savez_compressed(
            folder / "items.npz",
            data=w.data.astype(np.float16),
            indices=w.indices.astype(np.int32),
            indptr=w.indptr.astype(np.int32),
            shape=np.array(w.shape),
            bias=self.bias.astype(np.float32),
        )
        (folder / "items.json").write_text(
            json.dumps(
                {
                    "classes": self.classes,
                    "vocabulary": sorted(self.vocabulary, key=lambda f: self.vocabulary[f]),
                }
            ),
            encoding="utf-8",
        )

    @classmethod
    def load(cls, folder: Path) -> ItemModel:
        arrays = np.load(folder / "items.npz")
        meta = json.loads((folder / "items.json").read_text(encoding="utf-8"))
        weights = sparse.csr_matrix(
            (arrays["data"].astype(np.float32), arrays["indices"], arrays["indptr"]),
            shape=tuple(arrays["shape"]),
        )
        vocabulary = {f: i for i, f in enumerate(meta["vocabulary"])}
        return cls(vocabulary, weights, arrays["bias"], meta["classes"])
