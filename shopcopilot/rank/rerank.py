"""rerank: candidates -> products ordered by the evidence they offer for the state.

Hard constraints dominate soft ones; popularity and rating only break ties; the
profile is a weak prior. The state is read once per turn into `Requirements`,
then every evidence term is computed for all candidates at once, as columns.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from ..index.features import FeatureStore
from ..index.text import stem, tokens
from ..retrieve.facts import rows_holding
from ..state.critique import CUES
from ..state.model import Constraint, ShoppingState
from ..state.requirements import requirements as chips
from ..terms import Attribute, Level
from .evidence import (
    Batch,
    CategoryProbe,
    PreparedCheck,
    accepted_departments,
    anchor_parts,
    brands_of,
    budget_match,
    category_match,
    exact_phrase,
    fragment_coverage,
    fragment_words,
    prepare_category,
    prepare_fragments,
    prominence,
    rejection_check,
    shown_coverage,
    value_check,
    value_words,
)
from .hard import Requirement, hard_requirements, hold, unisex_childs
from .spread import anchor_of, blank_streak, picked, spread_order

LEVEL_WEIGHT = {Level.HARD: 1.0, Level.GOAL: 0.8, Level.SOFT: 0.6}
PARTS = (
    "category",
    "fragments",
    "values",
    "budget",
    "rejected",
    "critique",
    "lexical",
    "popularity",
    "rating",
    "profile",
)


@dataclass(frozen=True, slots=True)
class RankWeights:
    category: float = 6.0
    fragment_exact: float = 2.0
    fragment_partial: float = 1.2
    prominence: float = 0.3
    value: float = 0.8
    budget: float = 1.5
    rejected: float = 2.5
    lexical: float = 0.6
    popularity: float = 0.15
    rating: float = 0.05
    profile: float = 0.05
    anchor: float = 1.5  # "more like that one": all of same leaf, shared details, close price
    turned_down_brand: float = 0.5  # "none of these": other brands first
    size_words: float = 0.3  # "too big": products that say small
    # Cosine of the product's vector to the shopper's words (index/vectors.py), when there are
    # vectors: meaning the words miss ("keep my feet dry" and waterproof).
    semantic: float = 0.0
    # A person's list (FOR_PEOPLE): every hard requirement holds while some candidate of the
    # wanted kind meets it (rank/hard.py). Off for the benchmark, whose answers it would move.
    hold_hard: bool = False
    # A person's list: products filed under the node the catalog's categoriser reads in the item
    # (`kind`, when it is sure) get this on top of their category match, so "shoes" shows shoes
    # rather than shoe trees, whose category names say "shoe" more often. 0: words alone.
    kind: float = 0.0
    # A person's list after this many blank turns in a row ("not sure", "whatever") is a spread
    # of kinds, brands and prices (0: never), and a pick anchors it (rank/spread.py).
    spread_after: int = 0
    spread_width: int = 10
    # A person's list: when nobody was said to be a child, products filed under a child's
    # department come after a grown-up's of the same kind ("sandals": no boys' first), unless
    # the kind is mostly a child's ("onesie"). 0: off.
    unasked_young: float = 0.0
    # A person's list: a wish in free words counts this much more where the product's card shows
    # it (its title or first feature lines) than where only its description says it. 0: off.
    shown_words: float = 0.0
    # A person's list: products filed under a kind named for a part or an accessory of the item
    # ("Watch Bands" of a watch, "Shoe Care" of shoes) come after the item's own. 0: off.
    accessory: float = 0.0
    # A person's list: a product saying more of the styles and features the shopper asked for
    # comes first, as one naming the colour asked for does ("pointed toe pumps": pointed toes
    # before round toes that list the size). Off: they only add to the score.
    wishes_first: bool = False


@dataclass(slots=True)
class Scored:
    parent_asin: str
    score: float
    row: int = -1  # its row in the feature store
    parts: dict[str, float] = field(default_factory=dict)
    evidence: list[str] = field(default_factory=list)
    answers: list[str] = field(default_factory=list)  # what it answers ("cheaper than ...")
    misses: list[str] = field(default_factory=list)  # relaxed requirements it fails
    plain: list[str] = field(default_factory=list)  # its evidence in a shopper's words
    position: int = -1  # its place among the turn's candidates, while it is not yet explained


class Ranking(list[Scored]):
    """Scored products, best first. Their parts and evidence are worked out on demand: a turn
    often shows one product, and explaining costs more than scoring one."""

    def __init__(
        self,
        items: list[Scored],
        explain_one: Callable[[Scored], None],
        relaxed: tuple[str, ...] = (),
    ) -> None:
        super().__init__(items)
        self._explain_one = explain_one
        self.relaxed = relaxed  # hard requirements no candidate met, as the shopper put them
        # Per value held that a listing may leave unsaid: (facet, values, places naming one)
        self.naming: Naming = ()
        self.spread = False  # the first cards are a spread for a vague shopper

    def explain(self, count: int) -> Ranking:
        """Fill in the parts and evidence of the first `count` products (once each)."""
        for item in self[:count]:
            if item.position >= 0:
                self._explain_one(item)
                item.position = -1
        return self


@dataclass(frozen=True, slots=True)
class Critiques:
    """What the shopper said of shown products this epoch, as the ranking reads it."""

    anchor: dict = field(default_factory=dict)  # the product to stay close to, with its facts
    avoid_brands: tuple[str, ...] = ()  # brands of a list turned down ("none of these")
    size_stems: tuple[str, ...] = ()  # "too big": words that say smaller
    size_kind: str = ""


def critiques_of(state: ShoppingState) -> Critiques:
    record = state.anchor()
    current = [r for r in state.critiques if r.epoch == state.epoch]
    turned_down = [r for r in current if r.kind == "none_of_these"]
    brands = tuple(
        dict.fromkeys(str(b).lower() for r in turned_down for b in r.anchor.get("brands", ()) if b)
    )
    sized = [r for r in current if r.kind in ("smaller", "bigger")]
    size_kind = sized[-1].kind if sized else ""
    stems = tuple(stem(w) for w in CUES.size_words.get(size_kind, ()))
    return Critiques(
        anchor=record.anchor if record else {},
        avoid_brands=brands,
        size_stems=stems,
        size_kind=size_kind,
    )


@dataclass(frozen=True, slots=True)
class Requirements:
    """The active state, read once per turn."""

    categories: tuple[CategoryProbe, ...]
    values: tuple[tuple[Constraint, PreparedCheck, float], ...]  # with its check and level weight
    budgets: tuple[Constraint, ...]
    rejections: tuple[PreparedCheck, ...]
    critical_rater: bool
    critique: Critiques = field(default_factory=lambda: Critiques())

    def stems(self) -> set[str]:
        words = {word for probe in self.categories for word, _ in probe.words}
        words.update(self.critique.size_stems)
        words.update(s for _, check, _ in self.values for s in check.stems)
        words.update(s for check in self.rejections for s in check.stems)
        return words


def requirements(state: ShoppingState) -> Requirements:
    active = state.active()
    rejected = dict.fromkeys((r.attribute, r.value) for r in state.rejected)
    return Requirements(
        categories=tuple(prepare_category(c) for c in active if c.attribute == Attribute.CATEGORY),
        values=tuple(
            (c, value_check(c), LEVEL_WEIGHT.get(c.level, 0.6))
            for c in active
            if c.attribute not in ("category", "budget")
        ),
        budgets=tuple(c for c in active if c.attribute == Attribute.BUDGET),
        rejections=tuple(rejection_check(facet, value) for facet, value in rejected),
        critical_rater=str(state.profile.get("rating_style", "")).lower() in ("critical", "mixed"),
        critique=critiques_of(state) if state.critiques else Critiques(),
    )


@dataclass(slots=True)
class Columns:
    """Every evidence term for every candidate (one array each, in PARTS order)."""

    parts: dict[str, np.ndarray]
    exact: list[np.ndarray]  # per fragment probe: which candidates quote it word for word
    anchor: dict[str, np.ndarray]  # per part of likeness to the anchor product (0..1)
    category: list[np.ndarray]  # per category probe
    values: list[np.ndarray]  # per value constraint
    budgets: list[np.ndarray]  # per budget constraint

    @property
    def total(self) -> np.ndarray:
        p = self.parts
        tie_breaks = p["lexical"] + p["popularity"] + p["rating"] + p["profile"]
        if "semantic" in p:
            tie_breaks = tie_breaks + p["semantic"]
        return (
            p["category"]
            + p["fragments"]
            + p["values"]
            + p["budget"]
            + p["rejected"]
            + p["critique"]
            + tie_breaks
        )


def rerank(
    state: ShoppingState,
    features: FeatureStore,
    rows: np.ndarray,
    lexical: np.ndarray,
    weights: RankWeights = RankWeights(),
    explain_top: int = 10,
    exclude: frozenset[str] | set[str] = frozenset(),
    limit: int | None = None,
    semantic: np.ndarray | None = None,
    kind: frozenset[str] = frozenset(),
) -> Ranking:
    """The candidates (feature-store `rows`, with their `lexical` scores) scored and sorted, without
    `exclude` (ids already shown), the best `limit` of them (None: all); the first `explain_top`
    carry their evidence and parts (`Ranking.explain` adds more). Excluded products still count
    in the word statistics. `semantic` is each candidate's cosine to the shopper's words, when
    the index has vectors; `kind` the leaf categories of the item the categoriser read."""
    needs = requirements(state)
    if weights.spread_after and (pick := picked(state)):
        # "The second one": stay near the product picked, as "more like that one" does.
        needs = replace(needs, critique=replace(needs.critique, anchor=anchor_of(features, *pick)))
    fragments = state.active_fragments()
    hard = hard_requirements(state) if weights.hold_hard else []
    stems = needs.stems() | {w for f in fragments for w in fragment_words(f)}
    stems |= {w for requirement in hard for w in requirement.stems}
    batch = Batch(
        features, rows, stems, {word for probe in needs.categories for word, _ in probe.words}
    )
    probes = prepare_fragments(fragments, batch)
    top_lexical = float(lexical.max()) if len(lexical) else 0.0
    columns = score_columns(needs, probes, batch, lexical / (top_lexical or 1.0), weights)
    if semantic is not None and weights.semantic:
        columns.parts["semantic"] = weights.semantic * np.clip(semantic, 0.0, None)
    if kind and weights.kind:
        columns.parts["category"] = columns.parts["category"] + weights.kind * batch.code_is(
            "leaf", kind
        )
    if weights.accessory and needs.categories:
        item = tuple(word for word, _ in needs.categories[-1].words)
        columns.parts["category"] = columns.parts["category"] - weights.accessory * _of_the_item(
            batch, item
        )
    young = np.zeros(len(rows))
    if weights.unasked_young and (_nobody_said(state) or _grown_up(state)):
        # For a grown-up said ("for my wife", "men's"), a kids' backpack filed as unisex is a
        # child's all the same.
        item = tuple(word for word, _ in needs.categories[-1].words) if needs.categories else ()
        grown = _for_grown_ups(state) or _grown_up(state)
        young = _young(batch, columns.parts["category"], grown, item)
        columns.parts["category"] = columns.parts["category"] - weights.unasked_young * young
    if weights.hold_hard and (first := _first_department(state)):
        # "my 2 year old": either the baby's or the girls' department fits, the baby's first
        columns.parts["category"] = columns.parts["category"] + FIRST_DEPARTMENT * batch.code_is(
            "department", accepted_departments(first)
        )
    eligible = np.arange(len(rows))
    if exclude:
        eligible = eligible[~np.isin(rows, features.rows(exclude))]
    relaxed: tuple[Requirement, ...] = ()
    tier = None
    if weights.hold_hard:
        item = tuple(word for word, _ in needs.categories[-1].words) if needs.categories else ()
        held = hold(hard, batch, columns.parts["category"], eligible, item)
        grown = eligible[young[eligible] == 0]
        if grown.size and young[held.positions].all():
            # "black loafers size 8": only babies' loafers list the size; a grown-up's list
            # relaxes it rather than show babies' things nobody asked for.
            held = hold(hard, batch, columns.parts["category"], grown, item)
        eligible, relaxed, tier = held.positions, held.relaxed, held.tier
        tier = tier + LIKE_FIRST * _like_the_anchor(needs.critique.anchor, batch)
        tier = tier - YOUNG_AFTER * young.astype(np.int64)
    wishes = _wishes(state) if weights.shown_words or weights.wishes_first else {}
    if weights.hold_hard and weights.wishes_first:
        required = {f.text for f in fragments if f.level == Level.HARD}
        said = {text: words for text, words in wishes.items() if text in required}
        tier = tier + _wishes_met(needs, columns) + _free_wishes_met(said, batch)
    add_prominence(columns, probes, batch, weights, eligible, limit, wishes)
    ranking = _ranked(features, rows, columns, needs, probes, eligible, limit, relaxed, batch, tier)
    if weights.hold_hard:
        ranking.naming = _naming([r for r in hard if r not in relaxed], batch, ranking)
    if weights.spread_after and blank_streak(state) >= weights.spread_after:
        order = spread_order(features, [s.row for s in ranking], weights.spread_width)
        ranking[:] = [ranking[i] for i in order]
        ranking.spread = True
    return ranking.explain(explain_top)


FIRST_DEPARTMENT = 3.0  # half a category match: a preference among departments that fit


def _first_department(state: ShoppingState) -> str:
    """The department to show first of those that fit who the item is for ("baby" for a two
    year old, whose clothes are the girls' or the baby's)."""
    for constraint in state.active():
        if constraint.data.get("facet") == "department" and constraint.data.get("first"):
            return str(constraint.data["first"])
    return ""


WISH_FACETS = ("style", "fit", "closure")


def _wishes_met(needs: Requirements, columns: Columns) -> np.ndarray:
    """Per candidate: how many of the styles and features asked for it says in full. One the
    item's words say already is no wish of its own: "knee high" of "over the knee boots" would
    put knee-high socks first."""
    item = {word for probe in needs.categories for word, _ in probe.words}
    met = np.zeros(len(columns.parts["category"]), dtype=np.int64)
    for (constraint, _, _), match in zip(needs.values, columns.values, strict=True):
        if constraint.data.get("facet") in WISH_FACETS and item.isdisjoint(
            value_words(constraint.value)
        ):
            met += match >= 1.0
    return met


def _free_wishes_met(wishes: dict[str, tuple[str, ...]], batch: Batch) -> np.ndarray:
    """Per candidate: how many wishes in free words ("arch support", "shoe compartment") it
    uses every word of. Only those said as requirements: "comfy" is a preference."""
    met = np.zeros(len(batch), dtype=np.int64)
    for words in wishes.values():
        said = [word for word in words if word.isalpha()]
        if said and all(word in batch.has for word in said):
            met += np.logical_and.reduce([batch.has[word] for word in said])
    return met


def _wishes(state: ShoppingState) -> dict[str, tuple[str, ...]]:
    """Each wish in free words, as its chip shows it (the stems of "hood" of "one with a hood
    would be good")."""
    return {
        r.value: tuple(stem(t) for t in tokens(r.label))
        for r in chips(state)
        if r.facet == "feature" and not r.negated
    }


# The facets whose values a listing may simply not state ("brown" of boots naming no colour).
UNSAID_FACETS = ("color", "material", "size", "width")
UNSAID_OF = 10  # the cards a person sees


Naming = tuple[tuple[str, tuple[str, ...], tuple[int, ...]], ...]


def _naming(kept, batch: Batch, ranking: Ranking) -> Naming:
    """For each value held whose facet a listing may leave unsaid: (facet, values, the 1-based
    places of the listed products that name one). The others are kept because nothing in their
    listing contradicts it, so the reply can say the value is not confirmed for them."""
    listed = np.array([s.position for s in ranking[:UNSAID_OF]], dtype=np.int64)
    if not len(listed):
        return ()
    return tuple(
        (r.facet, r.values, tuple(int(i) + 1 for i in np.flatnonzero(r.said(batch)[listed])))
        for r in kept
        if r.facet in UNSAID_FACETS and r.said is not None
    )


# "More like #2" on a person's list: products of its kind and department come first, before
# the item's kind (hard.KIND_FIRST): the shopper pointed at the kind they mean.
LIKE_FIRST = 1000


def _like_the_anchor(anchor: dict, batch: Batch) -> np.ndarray:
    """1 for each candidate filed under the anchor product's leaf and department."""
    row = batch.features.row_of(anchor["parent_asin"]) if anchor.get("parent_asin") else None
    if row is None:
        return np.zeros(len(batch), dtype=np.int64)
    codes = batch.features.codes
    same = batch.code("leaf") == codes["leaf"][row]
    if codes["department"][row] >= 0:
        same &= batch.code("department") == codes["department"][row]
    return same.astype(np.int64)


# A child's product when nobody was said to be a child comes after every grown-up's product of
# the kind, whatever else it meets ("black maxi skirt": a girls' black ballet skirt is no answer),
# and still before other kinds (hard.KIND_FIRST).
YOUNG_AFTER = 50


def _nobody_said(state: ShoppingState) -> bool:
    """Is nothing known of who the item is for: no department, age or person?"""
    audience = state.audience
    said = audience.recipient or audience.age_group or audience.gender
    return not said and not any(c.data.get("facet") == "department" for c in state.active())


def _grown_up(state: ShoppingState) -> bool:
    """Is the item said to be for a grown-up: a grown-up's department held, or an adult?"""
    held = [c.value for c in state.active() if c.data.get("facet") == "department"]
    adult = state.audience.age_group is not None and state.audience.age_group.value == "adult"
    return adult or bool(held and held[-1] in GROWN_DEPARTMENTS)


GROWN_DEPARTMENTS = ("women", "men")
# The departments of children's things; the kind is a child's when most of its best matches are.
YOUNG_DEPARTMENTS = ("baby", "girls", "boys", "kids")
MOSTLY_YOUNG = 0.5


# Uses only grown-ups have: "sneakers for a nurse" are no child's, whatever the candidates.
GROWN_UP_USES = ("medical", "work", "office", "business")


def _for_grown_ups(state: ShoppingState) -> bool:
    return any(c.value in GROWN_UP_USES for c in state.active(Attribute.USE_CASE))


def _young(
    batch: Batch, category: np.ndarray, grown: bool = False, item: tuple[str, ...] = ()
) -> np.ndarray:
    """1.0 for each candidate filed under a child's department or kind ("Kids' Backpacks"), when
    the kind asked for is mostly a grown-up's or its use is (all 0 when it is mostly a child's:
    "onesie"). Mostly a child's in the catalog, when the item's words are filed there: the
    candidates a search found can be mostly a child's by chance ("15 inch" of kids' sizes)."""
    young = batch.code_is("department", YOUNG_DEPARTMENTS) | unisex_childs(batch)
    if grown or not len(category):
        return young.astype(float)
    share = _young_share(batch.features, item)
    if share is None:
        best = category >= 0.8 * category.max() if category.max() > 0 else np.ones(len(young), bool)
        share = float(young[best].mean())
    return young.astype(float) if share < MOSTLY_YOUNG else np.zeros(len(young))


def _of_the_item(batch: Batch, item: tuple[str, ...]) -> np.ndarray:
    """1.0 for each candidate filed under a kind named for something of the item's rather than
    the item: the item's last word there, and at the end a part or an accessory ("Watch Bands"
    of a watch, "Shoe Trees" of shoes; not "Pajama Sets" or "Bikini Tops", which are the item)."""
    leaves = batch.code("leaf")
    out = np.zeros(len(leaves))
    if not item:
        return out
    for code in np.unique(leaves[leaves >= 0]).tolist():
        words = _leaf_words(batch.features, code)
        if len(words) > 1 and item[-1] in words[:-1] and words[-1] in PARTS_AND_ACCESSORIES:
            out[leaves == code] = 1.0
    return out


# What a kind named "<item> <word>" is when it is no kind of the item (stems).
PARTS_AND_ACCESSORIES = frozenset(
    {"band", "strap", "tree", "care", "case", "charm", "chain", "box", "rack", "organizer"}
    | {"lace", "insole", "insert", "polish", "brush", "horn", "dryer", "decoration", "clip"}
    | {"pin", "cover", "hanger", "accessory", "kit", "stretcher", "protector", "holder"}
    | {"stand", "tag", "extender", "link", "jack", "shaper", "cleaner", "treatment"}
)


def _leaf_words(features: FeatureStore, code: int) -> tuple[str, ...]:
    """A leaf's name as stems ("Watch Bands": watch, band), once per feature store."""
    name = features.value_names[code]
    return features.remembered(("leaf words", code), lambda: tuple(map(stem, tokens(name))))


def _young_share(features: FeatureStore, item: tuple[str, ...]) -> float | None:
    """The share of the catalog's products filed under all the item's words that are a child's;
    None when none are (once per feature store and item)."""

    def share() -> float | None:
        rows = rows_holding(features, [("category_stems", w) for w in item])
        if not len(rows):
            return None
        whole = Batch(features, rows, set(), ())
        young = whole.code_is("department", YOUNG_DEPARTMENTS) | unisex_childs(whole)
        return float(young.mean())

    return features.remembered(("young share", item), share) if item else None


def score_columns(
    needs: Requirements, probes, batch: Batch, lexical: np.ndarray, w: RankWeights
) -> Columns:
    features, rows, n = batch.features, batch.rows, len(batch)
    category_matches = [category_match(probe, batch) for probe in needs.categories]
    category = np.zeros(n)
    for match in category_matches:
        category += w.category * match
    exact_matches, fragments = [], np.zeros(n)
    for probe in probes:
        strength = LEVEL_WEIGHT.get(probe.level, 0.6)
        exact = exact_phrase(probe, batch)
        fragments += np.where(
            exact,
            w.fragment_exact * strength,
            w.fragment_partial * strength * fragment_coverage(probe, batch),
        )
        exact_matches.append(exact)
    value_matches, values = [], np.zeros(n)
    for _, check, strength in needs.values:
        match = check.check(batch)
        values += w.value * strength * match
        value_matches.append(match)
    budget_matches = [budget_match(c, batch) for c in needs.budgets]
    budget = np.zeros(n)
    for match in budget_matches:
        budget += w.budget * match
    rejected_count = np.zeros(n)
    for check in needs.rejections:
        rejected_count += check.check(batch)
    critique, anchor = critique_column(needs.critique, batch, w)
    rating = features.rating[rows]
    usual_rating = np.where(np.isnan(rating) | (rating == 0), 3.5, rating)
    profile = (w.profile * np.nan_to_num(rating - 4.0)) if needs.critical_rater else np.zeros(n)
    parts = dict(
        zip(
            PARTS,
            (
                category,
                fragments,
                values,
                budget,
                -w.rejected * rejected_count,
                critique,
                w.lexical * lexical,
                w.popularity * features.popularity[rows],
                w.rating * (usual_rating - 3.5) / 1.5,
                profile,
            ),
            strict=True,
        )
    )
    return Columns(parts, exact_matches, anchor, category_matches, value_matches, budget_matches)


def critique_column(
    critique: Critiques, batch: Batch, w: RankWeights
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The soft evidence critiques of shown products give: likeness to the anchor product,
    other brands after "none of these", words that say small after "too big"."""
    n = len(batch)
    column = np.zeros(n)
    anchor = anchor_parts(critique.anchor, batch) if critique.anchor else {}
    if anchor:
        column += w.anchor * (
            0.5 * anchor["leaf"] + 0.25 * anchor["shared"] + 0.25 * anchor["price"]
        )
    if critique.avoid_brands:
        column -= w.turned_down_brand * brands_of(batch, critique.avoid_brands)
    if critique.size_stems:
        said = np.zeros(n, dtype=bool)
        for word in critique.size_stems:
            said |= batch.has[word]
        column += w.size_words * said
    return column, anchor


def add_prominence(
    columns: Columns,
    probes,
    batch: Batch,
    w: RankWeights,
    eligible: np.ndarray,
    limit: int | None,
    wishes: dict[str, tuple[str, ...]] | None = None,
) -> None:
    """Add where each quoted requirement sits among the product's lead lines, and (`wishes`:
    fragment -> the stems its chip shows) whether its card shows the wish. It moves a score by
    at most `w.prominence` + `w.shown_words` per requirement, so it is only worked out for
    products that could still reach the best `limit` (the slow part is a text search per
    product)."""
    wishes = wishes or {}
    if not probes or not (w.prominence or w.shown_words) or limit == 0:
        return
    needed = np.zeros(len(batch), dtype=bool)
    if limit is None or limit >= len(eligible):
        needed[eligible] = True
    else:
        total = columns.total[eligible]
        threshold = np.partition(total, len(total) - limit)[len(total) - limit]  # the limit-th best
        most = (w.prominence + w.shown_words) * len(probes)
        needed[eligible[total + most >= threshold]] = True
    for probe, exact in zip(probes, columns.exact, strict=True):
        columns.parts["fragments"] += w.prominence * prominence(probe, batch, exact & needed)
        if words := wishes.get(probe.text):
            strength = LEVEL_WEIGHT.get(probe.level, 0.6)
            shown = shown_coverage(probe, batch, needed, words)
            columns.parts["fragments"] += w.shown_words * strength * shown


def _ranked(
    features: FeatureStore,
    rows: np.ndarray,
    columns: Columns,
    needs: Requirements,
    probes,
    positions: np.ndarray,
    limit: int | None,
    relaxed: tuple[Requirement, ...],
    batch: Batch,
    tier: np.ndarray | None = None,
) -> Ranking:
    """The products at `positions` (not excluded), best first (within a `tier`, when given);
    a card failing a `relaxed` hard requirement says so."""
    total = columns.total
    asins = features.asins
    # Best score first; equal scores in id order, so results never depend on retrieval order.
    keys = [features.asin_order[rows[positions]], -total[positions]]
    if tier is not None:
        keys.append(-tier[positions])
    order = positions[np.lexsort(keys)][:limit].tolist()
    ranked_rows, scores = rows[order].tolist(), total[order].tolist()
    ranked = [
        Scored(asins[row], score, row, position=i)
        for row, score, i in zip(ranked_rows, scores, order, strict=True)
    ]
    misses = [(r.miss, r.violated(batch)) for r in relaxed]

    def explain(item: Scored) -> None:
        _explain(item, features, columns, needs, probes)
        item.misses.extend(miss for miss, failed in misses if failed[item.position])

    return Ranking(ranked, explain, tuple(r.label for r in relaxed))


def _explain(
    item: Scored, features: FeatureStore, columns: Columns, needs: Requirements, probes
) -> None:
    """Fill in the parts and the evidence one product matched, for its reason and the trace."""
    i = item.position
    item.parts = {name: float(column[i]) for name, column in columns.parts.items() if column[i]}
    evidence, plain = item.evidence, item.plain
    leaf = features.code_name("leaf", item.row)
    if any(match[i] >= 0.99 for match in columns.category):
        evidence.append(f"in {leaf or 'the category'}")
        plain.append(leaf or "")
    phrases = [
        _short(probe.text) for probe, exact in zip(probes, columns.exact, strict=True) if exact[i]
    ]
    evidence.extend(f'"{phrase}"' for phrase in phrases)
    plain.extend(f'says "{phrase}"' for phrase in phrases)
    met = [
        c for (c, _, _), match in zip(needs.values, columns.values, strict=True) if match[i] > 0.5
    ]
    evidence.extend(c.value for c in met)
    plain.extend(_as_said(c) for c in met)
    price = features.price[item.row]
    priced_like = False  # the price answer is about the product it is also like
    if not np.isnan(price):
        for c, match in zip(needs.budgets, columns.budgets, strict=True):
            if match[i] <= 0.5:
                continue
            said = c.data.get("critique")
            if said:  # a budget a critique set answers that critique
                item.answers.append(_price_answer(float(price), said))
                anchored = needs.critique.anchor.get("position")
                priced_like |= bool(said.get("liked")) and anchored in said.get("positions", ())
            else:
                evidence.append(f"${float(price):g} fits {c.value}")
                plain.append(f"${float(price):g}, {_budget_said(c)}")
    item.answers.extend(_anchor_answer(needs.critique, columns.anchor, i, priced_like))


def _once(parts: list[str]) -> list[str]:
    """Each part once, and none said within an earlier one ("hiking" of "Hiking Boots",
    "short sleeve" of 'says "short sleeves"')."""
    out: list[str] = []
    for part in parts:
        within = re.compile(rf"\b{re.escape(part.lower())}")
        if part and not any(within.search(said.lower()) for said in out):
            out.append(part)
    return out


def _as_said(constraint: Constraint) -> str:
    """'for women', 'size 8', 'black': a value as a person reads it on a card."""
    facet, value = constraint.data.get("facet"), constraint.value
    return {"department": f"for {value}", "size": f"size {value}"}.get(str(facet), value)


def _budget_said(constraint: Constraint) -> str:
    if constraint.data.get("lean") == "low":
        return "among the cheapest here"
    low, high = constraint.data.get("min"), constraint.data.get("max")
    if low is not None and high is not None:
        return f"within ${low:g}-${high:g}"
    if high is not None:
        return f"under ${high:g}"
    if low is not None:
        return f"over ${low:g}"
    return f"around ${constraint.data.get('target', 0):g}"


def _price_answer(price: float, said: dict) -> str:
    """'$20, cheaper than the $54 one you pointed at' (or 'than the cheapest shown ($24)')."""
    cheaper = said["kind"] == "cheaper"
    # The budget it set has some slack: a card at the anchor's price is not called cheaper.
    beyond = price < said["price"] if cheaper else price > said["price"]
    relation = ("cheaper than" if cheaper else "pricier than") if beyond else "about the price of"
    if said.get("pointed", True):
        which = "you liked" if said.get("liked") else "you pointed at"
        return f"${price:g}, {relation} the ${said['price']:g} one {which}"
    if said.get("middle"):
        return f"${price:g}, {relation} the middle price shown (${said['price']:g})"
    which = "the cheapest" if cheaper else "the priciest"
    return f"${price:g}, {relation} {which} shown (${said['price']:g})"


def _anchor_answer(
    critique: Critiques, anchor: dict[str, np.ndarray], i: int, priced: bool = False
) -> list[str]:
    """'like the second one: same category, similar price', for a product close to it; after a
    price answer about that same product ("cheaper than the $54 one you liked"), what else it
    shares with it."""
    if not anchor:
        return []
    parts: list[tuple[str, str]] = [("leaf", "same category"), ("shared", "shared details")]
    if not priced:
        parts.append(("price", "similar price"))
    alike = [words for part, words in parts if anchor[part][i] >= 0.5]
    if not alike:
        return []
    if priced:
        return [f"otherwise like it: {', '.join(alike)}"]
    position = critique.anchor.get("position")
    which = f"the {_ORDINAL_WORDS.get(position, f'#{position}')} one" if position else "that one"
    return [f"like {which} you pointed at: {', '.join(alike)}"]


_ORDINAL_WORDS = {1: "first", 2: "second", 3: "third", 4: "fourth", 5: "fifth"}


def _short(text: str, limit: int = 48) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def reason(scored: Scored, people: bool = False) -> str:
    """What a card answers first (a critique of shown products), then what it matches; for a
    person in plain words ("Hiking Boots, for women, size 8, $40.99, under $90")."""
    said = list(dict.fromkeys(scored.answers))
    if people and scored.plain:
        said.append(", ".join(_once(scored.plain)))
    elif scored.evidence:
        said.append("matches " + ", ".join(dict.fromkeys(scored.evidence)))
    said += [f"{miss} (nothing found is)" for miss in scored.misses]
    if said:
        return "; ".join(said)
    if scored.parts.get("semantic", 0.0) > 0.0:
        return "close in meaning to what you described"  # found by its vector, not its words
    return "closest overall match to what you described"
