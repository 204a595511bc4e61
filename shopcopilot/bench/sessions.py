"""Generated session sets: new benchmark sessions drawn from any catalog.

Three kinds of target sampling, each with the official scenario mix (40% buying,
40% browsing, 15% intent override, 5% boundary) and plausible aggregate profiles:

- ``iid``: targets sampled uniformly, so categories follow the catalog's own mix;
- ``long_tail``: the rarest leaf categories first, and within one the least-rated products;
- ``stress``: products whose features are heavy with measures ("up to 30 mm", widths,
  inches), money-like words, or no price: the inputs that trip budget parsing.

Everything is deterministic for (catalog, kind, n, seed, exclusions). Targets are
never repeated within a set and never taken from ``exclude_targets`` (for example
the public set's targets), so generated sets are disjoint from given lists.
"""

from __future__ import annotations

import random
import re
from collections import defaultdict
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from ..catalog.loader import CatalogError, LoadReport, iter_products
from ..catalog.product import Product
from ..catalog.vocabulary import find_measures
from .sessions_io import Session, write_sessions

KINDS = ("iid", "long_tail", "stress")
SCENARIO_MIX = (("buying", 0.40), ("browsing", 0.40), ("intent_override", 0.15), ("boundary", 0.05))
SCENARIO_ORDER = {name: index for index, (name, _) in enumerate(SCENARIO_MIX)}
DIFFICULTY = {
    "buying": "easy",
    "browsing": "medium",
    "intent_override": "hard",
    "boundary": "medium",
}

# Profile distributions, shaped like the public set's (aggregate habits, never the target).
PREFERENCE_TAGS = {
    "fit": 16,
    "material": 15,
    "comfort": 14,
    "style": 10,
    "durability": 5,
    "value": 3,
    "quality": 3,
    "size": 3,
    "performance": 2,
    "warmth": 1,
    "weather": 1,
}
TAG_COUNTS = {4: 60, 3: 15, 2: 21, 1: 4}
RATING_STYLES = (
    ("usually positive", (5.0,), 67),
    ("critical", (1.0, 2.0, 3.0), 22),
    ("mixed", (4.0,), 11),
)
PURCHASE_FREQUENCIES = {
    "1-2 prior purchases": 15,
    "3-4 prior purchases": 70,
    "5+ prior purchases": 15,
}
# Shoppers of sport or cold-weather categories lean on these tags more often (whole words of the
# path).
CATEGORY_TAG_BOOSTS = {
    "performance": re.compile(r"\b(?:athletic|active|sport|running|cycling|yoga|training|swim)"),
    "warmth": re.compile(r"\b(?:cold weather|winter|snow|fleece|thermal|down &|coats|sweaters)\b"),
    "weather": re.compile(r"\b(?:rain|snow|cold weather|outdoor|raincoats)\b"),
}
CATEGORY_TAG_BOOST = 8
BUCKETS = (  # first path segment word that names the bucket, checked in order
    ("jewelry", "jewelry"),
    ("watch", "watches"),
    ("shoe", "shoes"),
    ("boot", "shoes"),
    ("handbag", "bags"),
    ("luggage", "bags"),
    ("accessor", "accessories"),
)

_MONEY = re.compile(
    r"\$\s?\d|\b(?:usd|dollars?|price[ds]?|budget|cheap|affordable|value|save|under \d+)\b", re.I
)
_MAYBE_MEASURE = re.compile(r"\d\s*-?\s*[^\W\d_\s]|\d\s*[\"”″']")
STRESS_POOL_FACTOR = 3  # stress targets are drawn from the top 3n by stress score


class SessionGenerationError(ValueError):
    """A session set cannot be generated as asked; the message says why."""


@dataclass(frozen=True, slots=True)
class TargetInfo:
    """What sampling needs to know about one catalog product (kept small for 50k+ catalogs)."""

    asin: str
    leaf: str
    path: str  # lower-cased category path, for buckets and tag boosts
    rating_number: int
    measures: int  # measure phrases in the features
    money_words: int
    missing_price: bool

    @property
    def stress_score(self) -> int:
        return (
            min(self.measures, 6) * 2 + min(self.money_words, 3) + (2 if self.missing_price else 0)
        )


def generate_sessions(
    catalog_path: str | Path,
    kind: str,
    n: int,
    seed: int,
    exclude_targets: Collection[str] | None = None,
) -> list[Session]:
    """`n` sessions of the given kind, deterministic for the seed, disjoint from
    `exclude_targets`."""
    if kind not in KINDS:
        raise SessionGenerationError(
            f"unknown session kind {kind!r}; expected one of {', '.join(KINDS)}"
        )
    if n <= 0:
        raise SessionGenerationError(f"the number of sessions must be positive, got {n}")
    excluded = frozenset(exclude_targets or ())
    pool = [
        info
        for info in read_targets(catalog_path, stress=kind == "stress")
        if info.asin not in excluded
    ]
    rng = random.Random(f"{seed}:{kind}:targets")
    targets = PICKERS[kind](pool, n, rng)
    if len(targets) < n:
        raise SessionGenerationError(
            f"{catalog_path}: only {len(targets)} products qualify as {kind} targets "
            f"(after excluding {len(excluded)} given targets); asked for {n}"
        )
    scenarios = scenario_plan(n, random.Random(f"{seed}:{kind}:scenarios"))
    profile_rng = random.Random(f"{seed}:{kind}:profiles")
    return [
        Session(
            sample_id=f"{kind}_{seed}_{number:04d}",
            scenario_type=scenario,
            user_profile=make_profile(profile_rng, target.path),
            target_asin=target.asin,
            category_bucket=category_bucket(target.path),
            difficulty_bucket=DIFFICULTY[scenario],
        )
        for number, (target, scenario) in enumerate(zip(targets, scenarios, strict=True), start=1)
    ]


def write_session_set(path: str | Path, sessions: list[Session]) -> Path:
    """Write a generated set as JSON lines in the public-set layout; returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_sessions(path, sessions)
    return path


# ---- reading the catalog
# --------------------------------------------------------------------------


def read_targets(catalog_path: str | Path, stress: bool = False) -> Iterator[TargetInfo]:
    """Stream the catalog into TargetInfo rows; unreadable files and invalid lines raise, naming
    them.

    The stress signals (measures, money words) cost a regex pass over the features,
    so they are only read when asked for; otherwise they stay 0.
    """
    path = Path(catalog_path)
    if not path.is_file():
        raise SessionGenerationError(f"catalog not found: {path}")
    report = LoadReport(str(path))
    try:
        for product in iter_products(path, report):
            yield target_info(product, stress)
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise CatalogError(f"{path}: cannot read catalog: {exc}") from exc
    if report.invalid:
        shown = "; ".join(str(problem) for problem in report.invalid[:3])
        raise CatalogError(
            f"{len(report.invalid)} invalid catalog line(s), fix them first: {shown}"
        )


def target_info(product: Product, stress: bool = False) -> TargetInfo:
    features = product.features if stress else ()
    return TargetInfo(
        asin=product.parent_asin,
        leaf=product.leaf_category.strip().lower(),
        path=" > ".join(product.categories[1:]).lower(),
        rating_number=product.rating_number or 0,
        # The full measure scan only on features where a number is followed by a unit-like
        # character.
        measures=sum(len(find_measures(f)) for f in features if _MAYBE_MEASURE.search(f)),
        money_words=sum(len(_MONEY.findall(f)) for f in features),
        missing_price=product.price is None,
    )


# ---- picking targets
# ------------------------------------------------------------------------------


def pick_iid(pool: list[TargetInfo], n: int, rng: random.Random) -> list[TargetInfo]:
    """Uniform without replacement: the category mix follows the catalog."""
    return rng.sample(pool, min(n, len(pool)))


def pick_long_tail(pool: list[TargetInfo], n: int, rng: random.Random) -> list[TargetInfo]:
    """Round-robin over leaf categories from the rarest up, least-rated products first in each."""
    by_leaf: dict[str, list[TargetInfo]] = defaultdict(list)
    for info in pool:
        by_leaf[info.leaf].append(info)
    tie = {leaf: rng.random() for leaf in sorted(by_leaf)}
    leaves = sorted(by_leaf, key=lambda leaf: (len(by_leaf[leaf]), tie[leaf]))
    queues = [sorted(by_leaf[leaf], key=lambda i: (i.rating_number, i.asin)) for leaf in leaves]
    picked: list[TargetInfo] = []
    depth = 0
    while len(picked) < n and any(depth < len(queue) for queue in queues):
        picked.extend(queue[depth] for queue in queues if depth < len(queue))
        depth += 1
    return picked[:n]


def pick_stress(pool: list[TargetInfo], n: int, rng: random.Random) -> list[TargetInfo]:
    """Products with measure phrases in their features, the most stressful ones first."""
    eligible = [info for info in pool if info.measures > 0]
    tie = {info.asin: rng.random() for info in eligible}
    eligible.sort(key=lambda info: (-info.stress_score, tie[info.asin]))
    top = eligible[: n * STRESS_POOL_FACTOR]
    return rng.sample(top, min(n, len(top)))


PICKERS = {"iid": pick_iid, "long_tail": pick_long_tail, "stress": pick_stress}


# ---- scenarios and profiles
# -----------------------------------------------------------------------


def scenario_plan(n: int, rng: random.Random) -> list[str]:
    """The official mix for n sessions (largest remainder rounding), in shuffled order."""
    exact = [(name, share * n) for name, share in SCENARIO_MIX]
    counts = {name: int(value) for name, value in exact}
    by_remainder = sorted(
        exact, key=lambda item: (-(item[1] - int(item[1])), SCENARIO_ORDER[item[0]])
    )
    for name, _ in by_remainder[: n - sum(counts.values())]:
        counts[name] += 1
    plan = [name for name, _ in SCENARIO_MIX for _ in range(counts[name])]
    rng.shuffle(plan)
    return plan


def make_profile(rng: random.Random, category_path: str) -> dict[str, object]:
    """A plausible user profile: purchase habits and taste tags, nothing about the target itself."""
    weights = dict(PREFERENCE_TAGS)
    for tag, pattern in CATEGORY_TAG_BOOSTS.items():
        if pattern.search(category_path):
            weights[tag] += CATEGORY_TAG_BOOST
    count = _weighted(rng, TAG_COUNTS)
    tags: list[str] = []
    while len(tags) < count:
        tag = _weighted(rng, {t: w for t, w in weights.items() if t not in tags})
        tags.append(tag)
    style, ratings, _ = rng.choices(RATING_STYLES, weights=[w for *_, w in RATING_STYLES])[0]
    return {
        "average_prior_rating": rng.choice(ratings),
        "preference_tags": tags,
        "purchase_frequency": _weighted(rng, PURCHASE_FREQUENCIES),
        "rating_style": style,
        "summary": f"Prior purchases emphasize {', '.join(tags)}; ratings are {style}.",
    }


def category_bucket(category_path: str) -> str:
    top = category_path.split(" > ")[:3]
    for word, bucket in BUCKETS:
        if any(word in segment for segment in top):
            return bucket
    return "clothing"


_Key = TypeVar("_Key")


def _weighted(rng: random.Random, weights: dict[_Key, int]) -> _Key:
    keys = list(weights)
    return rng.choices(keys, weights=[weights[k] for k in keys])[0]
