"""The generator's vocabulary: taxonomy, product families and shared words, read from data files."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from itertools import accumulate
from typing import Any

DATA_PACKAGE = "shopcopilot.catalog.data"
TAXONOMY_FILE = "synth_taxonomy.json"
FAMILIES_FILE = "synth_families.json"
WORDS_FILE = "synth_words.json"


class VocabularyError(ValueError):
    """A vocabulary data file is malformed; the message names the file and entry."""


@dataclass(frozen=True, slots=True)
class Topic:
    lead: str
    sentences: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Family:
    """How one kind of product is described: title words, generic lines, marketing topics, price
    level."""

    name: str
    nouns: tuple[str, ...]
    price_median: float
    price_sigma: float
    fabrics: tuple[tuple[str, ...], ...]
    fabric_rate: float
    fabric_style: str  # "blend" writes percentages, "plain" writes the material names
    origin_rate: float
    closures: tuple[str, ...]
    closure_rate: float
    care: tuple[str, ...]
    care_rate: float
    sole: tuple[str, ...]
    lining: tuple[str, ...]
    spec: tuple[str, ...]
    spec_rate: float
    materials: tuple[str, ...]
    dims: tuple[tuple[float, float], tuple[float, float], tuple[float, float]]
    weight: tuple[float, float, str]
    sized: str | None
    mods: tuple[tuple[str, ...], ...]
    extras: tuple[str, ...]
    topics: tuple[Topic, ...]


@dataclass(frozen=True, slots=True)
class Leaf:
    """One leaf category: its browse path, how common it is, and the words its titles use."""

    path: tuple[str, ...]
    weight: float
    family: Family
    nouns: tuple[str, ...]
    tags: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Vocabulary:
    leaves: tuple[Leaf, ...]
    cumulative_weights: tuple[float, ...]
    families: dict[str, Family]
    words: dict[str, Any]
    common_topics: tuple[Topic, ...]
    lead_formats: tuple[str, ...]
    lead_format_cumulative: tuple[float, ...]
    number_slots: dict[str, tuple[float, float, int]]


@cache
def load_vocabulary() -> Vocabulary:
    """Read and check the three data files once per process."""
    families_doc = _read(FAMILIES_FILE)
    families = {
        name: _family(name, spec, families_doc["kinds"])
        for name, spec in families_doc["families"].items()
    }
    leaves = tuple(
        _leaf(index, entry, families) for index, entry in enumerate(_read(TAXONOMY_FILE)["leaves"])
    )
    words = _read(WORDS_FILE)
    formats = words["lead_formats"]
    return Vocabulary(
        leaves=leaves,
        cumulative_weights=tuple(accumulate(leaf.weight for leaf in leaves)),
        families=families,
        words=words,
        common_topics=tuple(_topic(entry, WORDS_FILE) for entry in words["common_topics"]),
        lead_formats=tuple(fmt for fmt, _ in formats),
        lead_format_cumulative=tuple(accumulate(float(weight) for _, weight in formats)),
        number_slots={
            name: (float(lo), float(hi), int(digits))
            for name, (lo, hi, digits) in families_doc["number_slots"].items()
        },
    )


def _read(name: str) -> dict[str, Any]:
    text = resources.files(DATA_PACKAGE).joinpath(name).read_text(encoding="utf-8")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise VocabularyError(f"{name}:{exc.lineno}: not valid JSON ({exc.msg})") from exc


def _family(name: str, spec: dict[str, Any], kinds: dict[str, dict[str, Any]]) -> Family:
    kind = spec.get("kind")
    if kind not in kinds:
        raise VocabularyError(f"{FAMILIES_FILE}: family {name!r} names unknown kind {kind!r}")
    merged = {**kinds[kind], **spec}
    try:
        (length, width, height, weight) = merged["dims"]
        return Family(
            name=name,
            nouns=tuple(merged["nouns"]),
            price_median=float(merged["price"][0]),
            price_sigma=float(merged["price"][1]),
            fabrics=tuple(tuple(blend) for blend in merged["fabrics"]),
            fabric_rate=float(merged["fabric_rate"]),
            fabric_style=merged.get("fabric_style", "blend"),
            origin_rate=float(merged["origin_rate"]),
            closures=tuple(merged["closures"]),
            closure_rate=float(merged["closure_rate"]),
            care=tuple(merged["care"]),
            care_rate=float(merged["care_rate"]),
            sole=tuple(merged.get("sole", ())),
            lining=tuple(merged.get("lining", ())),
            spec=tuple(merged["spec"]),
            spec_rate=float(merged["spec_rate"]),
            materials=tuple(merged["material"]),
            dims=(tuple(length), tuple(width), tuple(height)),
            weight=(float(weight[0]), float(weight[1]), str(weight[2])),
            sized=merged["sized"],
            mods=tuple(tuple(group) for group in merged["mods"]),
            extras=tuple(merged["extras"]),
            topics=tuple(_topic(entry, FAMILIES_FILE) for entry in merged["topics"]),
        )
    except (KeyError, IndexError, TypeError, ValueError) as exc:
        raise VocabularyError(
            f"{FAMILIES_FILE}: family {name!r} is incomplete or malformed ({exc!r})"
        ) from exc


def _topic(entry: Any, source: str) -> Topic:
    if not (isinstance(entry, list) and len(entry) == 2 and entry[1]):
        raise VocabularyError(f"{source}: topic must be [lead, [sentences...]], got {entry!r}")
    return Topic(lead=str(entry[0]), sentences=tuple(entry[1]))


def _leaf(index: int, entry: Any, families: dict[str, Family]) -> Leaf:
    where = f"{TAXONOMY_FILE}: leaves[{index}]"
    if not (isinstance(entry, list) and len(entry) == 5):
        raise VocabularyError(
            f"{where}: expected [path, weight, family, nouns, tags], got {entry!r}"
        )
    path, weight, family_name, nouns, tags = entry
    if family_name not in families:
        raise VocabularyError(f"{where}: unknown family {family_name!r}")
    if not (isinstance(weight, (int, float)) and weight > 0):
        raise VocabularyError(f"{where}: weight must be a positive number, got {weight!r}")
    family = families[family_name]
    return Leaf(
        path=tuple(part.strip() for part in path.split(" > ")),
        weight=float(weight),
        family=family,
        nouns=tuple(nouns) or family.nouns,
        tags=tuple(tags),
    )
