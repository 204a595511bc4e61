"""Hard requirements hold in the list, while some candidate of the wanted kind meets them.

The scores make a hard requirement count for a lot, but a strong match on the item can
outweigh it: after "running shoes for women" and "make it trail running", men's trail shoes
beat women's road shoes. In a person's list each hard requirement is a filter instead, taken
in turn: it is kept while some candidate of the wanted kind still meets it together with the
ones kept before it; one that none meets is relaxed, and the reply and the cards say so.
The wanted kind is the leaf categories of the candidates best matching the item, so a
requirement never turns a named item into another ("women's trail shoes": none here, so
men's trail shoes, not women's road shoes). Unknown is never a violation (a product listing
no colours may well be red), except an unknown price: a budget is met by a price shown.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

import numpy as np

from ..index.text import stem
from ..state.audience import GROWN
from ..state.budget import around
from ..state.model import Constraint, ShoppingState
from ..terms import Attribute, Level
from .evidence import Batch, accepted_departments, brands_of, rejection_check, value_words

# The facets a stated value of must hold, in the order they are kept: who it is for first.
FACETS = ("department", "size", "width", "brand", "color", "material")
_LISTS = {"size": "sizes", "width": "sizes", "color": "colors", "material": "materials"}
KIND_FROM = 10  # the leaves of (at least) this many best item matches are the wanted kind
WEAK = 0.5  # ...that match at least this share of the best match


@dataclass(frozen=True, slots=True)
class Requirement:
    label: str  # what the shopper asked: "for women", "under $60", "without wool"
    miss: str  # what a product that fails it is: "not for women", "has wool"
    violated: Callable[[Batch], np.ndarray]  # per candidate: does it contradict it?
    stems: tuple[str, ...] = ()  # the words `violated` asks the batch about
    facet: str = ""  # the stated value's facet, for a value requirement
    said: Callable[[Batch], np.ndarray] | None = None  # per candidate: does it name the value?
    filed: Callable[[Batch], np.ndarray] | None = None  # ...is it filed under the department?
    young: bool = False  # a child's department: nothing of a grown-up's fits, whatever its kind
    values: tuple[str, ...] = ()  # a value requirement's values, any of which will do
    kind_too: bool = False  # the wanted kind is read from the candidates meeting it
    shade: Callable[[Batch], np.ndarray] | None = None  # ...does it name the shade said?


@dataclass(frozen=True, slots=True)
class Held:
    positions: np.ndarray  # the candidates left, by position
    relaxed: tuple[Requirement, ...]  # requirements no candidate of the item met
    # Per candidate: how many of the colours and materials asked for a product of the wanted
    # kind names. A person who asked for black sees the black ones first, then those whose
    # listing names no colour; a product naming only other colours is gone already.
    tier: np.ndarray | None = None


def hard_requirements(state: ShoppingState) -> list[Requirement]:
    """The state's hard requirements whose violation a product's data can show: turned-down
    values first, then stated values by facet (any of a facet's values will do), then the
    budget."""
    out = [_rejection(r.attribute, r.value) for r in state.rejected]
    values = [c for c in state.active() if c.level == Level.HARD]
    guessed = [c for c in state.active() if c.data.get("facet") == "department"]
    if not any(c.level == Level.HARD for c in guessed):
        # "For my dad": men's, a guess (unisex will do), but never women's.
        out += [_not_other_half(c.value) for c in guessed[-1:] if c.value in OTHER_HALF]
    for facet in FACETS:
        held = [c for c in values if c.data.get("facet") == facet]
        wanted = [v for c in held for v in _held_values(c)]
        if wanted:
            requirement = _values(facet, tuple(dict.fromkeys(wanted)), _grown_up(state))
            out.append(_with_shades(requirement, held) if facet in SHADED else requirement)
    styles = {c.value for c in values if c.data.get("facet") == "style"}
    for group in EXCLUSIVE:
        if wanted_styles := tuple(v for v in group if v in styles):
            out.append(_exclusive_style(wanted_styles, group))
    genders = {c.data["gender"] for c in values if c.data.get("gender") in BABY_WORDS}
    if len(genders) == 1:
        out.append(_babys_gender(genders.pop()))
    if not _the_brides(state):
        out.append(_not_a_brides(_for_a_wedding(state)))
    # A price said as a goal ("around $100") holds too, as a band around it.
    budgets = [c for c in state.active() if c.level in (Level.HARD, Level.GOAL)]
    out += [_budget(c) for c in budgets if c.attribute == Attribute.BUDGET and _limits(c)]
    return out


# A bride's dress only when said to be the bride's: "a dress for a wedding" is a guest's, and a
# dress said plainly is an everyday one.
BRIDES_LEAVES = ("Wedding Dresses",)  # leaf names as the catalog writes them
BRIDES_WORDS = ("wedding dress", "wedding gown", "bridal", "my wedding", "our wedding",
                "i'm the bride", "im the bride", "i am the bride", "i'm getting married",
                "im getting married", "i am getting married", "we're getting married",
                "were getting married", "we are getting married")  # fmt: skip


def _the_brides(state: ShoppingState) -> bool:
    said = " ".join(turn.user.lower() for turn in state.history)
    return any(words in said for words in BRIDES_WORDS)


def _for_a_wedding(state: ShoppingState) -> bool:
    return any(c.value == "wedding" for c in state.active(Attribute.USE_CASE))


def _not_a_brides(guest: bool) -> Requirement:
    def violated(batch: Batch) -> np.ndarray:
        return batch.code_is("leaf", BRIDES_LEAVES)

    label = "for a guest" if guest else "other than a bride's dress"
    return Requirement(label, "a bride's dress", violated, kind_too=True)


def _held_values(constraint: Constraint) -> tuple[str, ...]:
    # A department on an age assumed ("my son": boys) holds only who it is for: he may be grown.
    grown = GROWN.get(constraint.value) if constraint.data.get("assumed") else None
    also = constraint.data.get("also")  # a toddler's: the baby's department too
    return tuple(v for v in (constraint.value, grown, also) if v)


def hold(
    requirements: Iterable[Requirement],
    batch: Batch,
    category: np.ndarray,
    eligible: np.ndarray,
    item_words: tuple[str, ...] = (),
) -> Held:
    """The `eligible` candidates meeting every requirement that some candidate of the wanted
    kind meets along with those kept before it. The kind: the leaves of the candidates whose
    `category` match is among the best KIND_FROM and not weak (any kind, when no item was
    named). `item_words`: the stems of the item asked for."""
    if not len(eligible):
        return Held(eligible, (), np.zeros(len(batch), dtype=np.int64))
    requirements = list(requirements)
    item = np.zeros(len(batch), dtype=bool)
    pool = _of_the_department(requirements, batch, eligible, category, item_words)
    pool = _headed(pool, batch, category, item_words)
    for requirement in requirements:
        if requirement.kind_too and len(kept := pool[~requirement.violated(batch)[pool]]):
            pool = kept  # "a dress for a wedding": the guests' dresses are the kind
    matches = category[pool]
    # A weak match never defines the kind, however few the candidates.
    floor = max(np.sort(matches)[::-1][:KIND_FROM][-1], matches.max() * WEAK)
    kinds = _kinds(batch)
    item[eligible[np.isin(kinds[eligible], kinds[pool[matches >= floor]])]] = True
    keep = np.ones(len(batch), dtype=bool)
    tier = np.zeros(len(batch), dtype=np.int64)
    relaxed = []
    for requirement in requirements:
        meets = ~requirement.violated(batch)
        if (keep & meets & item).any():
            keep &= meets
            if requirement.said is not None:
                tier += requirement.said(batch) & item
            if requirement.shade is not None:
                tier += requirement.shade(batch) & item
        else:
            relaxed.append(requirement)
    # The wanted kind before any other: a named item is never pushed down by a product of
    # another kind that happens to score well on the rest ("suspenders", then "something that
    # lasts": suspenders still, not wedding rings).
    tier += item * KIND_FIRST
    if item[eligible].any() and category[eligible].max() > 0:
        # Past the wanted kind, only products that match the item at all: after two kids'
        # backpacks under $30, no boys' costume because it is for boys and cheap.
        keep &= item | (category > 0)
    return Held(eligible[keep[eligible]], tuple(relaxed), tier)


def _kinds(batch: Batch) -> np.ndarray:
    """Per candidate, its leaf within its department: a leaf's name alone is no kind (the
    women's "Casual" dresses and the men's "Casual" pants)."""
    departments = batch.code("department").astype(np.int64) + 1
    return batch.code("leaf").astype(np.int64) * (int(departments.max(initial=0)) + 1) + departments


def _of_the_department(
    requirements: list[Requirement],
    batch: Batch,
    eligible: np.ndarray,
    category: np.ndarray,
    item_words: tuple[str, ...] = (),
) -> np.ndarray:
    """The candidates the kind is read from: those of the department asked for, when some match
    the item not weakly beside the best ("women's pajama set": the women's kind, not the
    boys' one that matches the words best; but "hiking boots for women", where no women's boot
    is, stays boots). The department holds too when the titles of a few of its products name
    the item: a swimsuit for an 18-month-old is the babies' swimwear ("Baby Girls' Swimsuit
    Set", filed under other leaves than the grown-ups' swimsuits), never a woman's one-piece;
    "men's flip flops" are the men's sandals so titled, not the women's flip-flops leaf; but
    girls' leggings, where the girls' products do not (one "T-Shirt for Leggings" is no kind),
    stay leggings."""
    for requirement in requirements:
        if requirement.filed is not None:
            # Those filed under the department, not those that merely name none.
            meets = eligible[requirement.filed(batch)[eligible]]
            if len(meets) and category[meets].max() >= category[eligible].max() * AS_WELL:
                return meets
            if len(meets):
                titled = meets[_titled(batch, item_words)[meets]]
                if len(titled) >= A_KIND:
                    return titled  # the kind: the leaves of the department's products so called
    return eligible


def _headed(
    pool: np.ndarray, batch: Batch, category: np.ndarray, item_words: tuple[str, ...]
) -> np.ndarray:
    """The candidates filed under the item's head noun, when enough are and they match about as
    well: "running socks" are socks, though running shoes titled "Running Sock" match the words
    as well."""
    head = item_words[-1] if item_words else None
    filed = batch.in_category.get(head) if head else None
    if filed is None or not len(pool):
        return pool
    headed = pool[filed[pool]]
    if len(headed) >= A_KIND and category[headed].max() >= category[pool].max() * HEADED_AS_WELL:
        return headed
    return pool


def _titled(batch: Batch, stems: tuple[str, ...]) -> np.ndarray:
    """Per candidate: does its title name every one of `stems` (none: no)?"""
    out = np.full(len(batch), bool(stems))
    for word in stems:
        out &= batch.titled(word)
    return out


KIND_FIRST = 100  # above any count of colours and materials named
A_KIND = 3  # products a department must call by the item's name (not one "for leggings")
HEADED_AS_WELL = 0.8  # products filed under the head noun, matching this share of the best
AS_WELL = WEAK / 2  # a department whose best item match is this close reads the kind


def _grown_up(state: ShoppingState) -> bool:
    """Might the person wear a grown-up's size (said to be a teen or an adult)?"""
    age = state.audience.age_group
    return age is not None and age.value in ("teen", "adult")


def _values(facet: str, wanted: tuple[str, ...], grown_up: bool = False) -> Requirement:
    label = _LABELS[facet](" or ".join(wanted))

    def said(batch: Batch) -> np.ndarray:
        has = np.zeros(len(batch), dtype=bool)
        for value in wanted:
            has |= batch.listed(_LISTS[facet], value)
            if facet in _NAMED:
                has |= _says(batch, value_words(value))
        return has

    young = facet == "department" and not grown_up and all(v in YOUNG for v in wanted)

    def violated(batch: Batch) -> np.ndarray:
        if facet == "department":
            accepted = {d for value in wanted for d in accepted_departments(value)}
            filed = batch.code("department") >= 0
            out = filed & ~batch.code_is("department", accepted)
            if young:  # filed under none, but titled a grown-up's ("Womens Party Dress")
                out |= (
                    ~filed & _titled_any(batch, GROWN_UP_WORDS) & ~_titled_any(batch, CHILD_WORDS)
                )
                out &= ~unisex_childs(batch)
            return out
        if facet == "brand":
            return ~brands_of(batch, wanted)
        return batch.lists_any(_LISTS[facet]) & ~said(batch)

    stems = tuple(dict.fromkeys(w for value in wanted for w in value_words(value)))

    def filed(batch: Batch) -> np.ndarray:
        accepted = {d for value in wanted for d in accepted_departments(value)}
        return batch.code_is("department", accepted) | (young and unisex_childs(batch))

    named = facet in _NAMED
    return Requirement(
        label,
        "not " + label,
        violated,
        stems if named else (),
        facet,
        said if named else None,
        filed if facet == "department" else None,
        young,
        wanted,
    )


SHADE_WORDS = 2  # "navy", "rose gold": a shade is a word or two
SHADED = ("color", "material")  # "memory foam" is a shade of the material searched (eva foam)


def _with_shades(requirement: Requirement, held: list[Constraint]) -> Requirement:
    """The colour (or material) requirement, with the shades said in other words than the value
    searched ("navy", searched as blue; "memory foam", as eva foam): products naming the shade
    come before those naming only the value, so "navy" shows navy blue before sky blue."""
    shades = []
    for said in held:
        own = set(value_words(said.value))
        words = tuple(stem(w) for w in said.text.lower().split() if stem(w) not in own)
        if words and len(said.text.split()) <= SHADE_WORDS:
            shades.append(words)
    if not shades:
        return requirement

    def shade(batch: Batch) -> np.ndarray:
        out = np.zeros(len(batch), dtype=bool)
        for words in shades:
            out |= _says(batch, words)
        return out

    stems = tuple(dict.fromkeys([*requirement.stems, *(w for s in shades for w in s)]))
    return replace(requirement, stems=stems, shade=shade)


def unisex_childs(batch: Batch) -> np.ndarray:
    """Per candidate: is it filed unisex under a child's kind by name ("Kids' Backpacks")? Such
    a product is a child's, whatever child."""
    return batch.code_is("department", ("unisex",)) & batch.code_is("leaf", _childs(batch))


def _childs(batch: Batch) -> tuple[str, ...]:
    """The values naming a child, once per feature store (a pass over all its values is tens
    of milliseconds: it had doubled the people's p99)."""
    values = batch.features.value_id
    return batch.features.remembered(
        "childs", lambda: tuple(v for v in values if any(w in v.lower() for w in CHILD_WORDS))
    )


def _titled_any(batch: Batch, words: tuple[str, ...]) -> np.ndarray:
    out = np.zeros(len(batch), dtype=bool)
    for word in words:
        out |= batch.titled(word)
    return out


GROWN_UP_WORDS = ("women", "men", "adult", "ladies")
CHILD_WORDS = ("girl", "boy", "baby", "kid", "toddler", "child", "infant", "little")


YOUNG = frozenset({"baby", "girls", "boys", "kids"})  # departments a grown-up's product never fits


# A product's colours and materials are read from its details and miss some its own words name
# ("denim jacket" listing cotton): either will do. Not sizes: a "9" in a product's words is as
# often inches or a pack count as a size.
_NAMED = ("color", "material")


def _says(batch: Batch, stems: tuple[str, ...]) -> np.ndarray:
    """Per candidate: do its words hold every one of `stems`?"""
    out = np.full(len(batch), bool(stems))
    for word in stems:
        out &= batch.has[word]
    return out


_LABELS: dict[str, Callable[[str], str]] = {
    "department": lambda v: f"for {v}",
    "size": lambda v: f"in {v}" if "size" in v else f"in size {v}",
    "width": lambda v: f"in {v} width",
    "brand": lambda v: f"by {v}",
    "color": lambda v: f"in {v}",
    "material": lambda v: f"in {v}",
}


OTHER_HALF = {"men": "women", "women": "men"}


def _not_other_half(value: str) -> Requirement:
    """A grown-up's guessed department: never the other half's, nor a child's (a girls'
    bathrobe for a husband)."""
    other = OTHER_HALF[value]
    return Requirement(
        f"for {value}",
        f"for {other}",
        lambda batch: batch.code_is("department", (other, *YOUNG)),
        facet="department",
    )


# Styles a product has one of: a product listing another of the group and not the one asked
# for contradicts it ("short sleeve": not a sleeveless dress; "high waist": not low rise).
EXCLUSIVE = (
    ("long sleeve", "short sleeve", "3/4 sleeve", "sleeveless"),
    ("high waist", "mid rise", "low rise"),
    ("maxi", "midi", "mini"),
    ("skinny", "straight leg", "bootcut", "wide leg", "flare"),
    ("high top", "low top"),
)


def _exclusive_style(wanted: tuple[str, ...], group: tuple[str, ...]) -> Requirement:
    """ "bootcut or flared": a product naming neither but another leg (skinny) contradicts it."""

    def has_any(batch: Batch, styles: Iterable[str]) -> np.ndarray:
        # The styles the listing's words were read as (title, details, description) already.
        out = np.zeros(len(batch), dtype=bool)
        for style in styles:
            out |= batch.listed("styles", style)
        return out

    def violated(batch: Batch) -> np.ndarray:
        return has_any(batch, (v for v in group if v not in wanted)) & ~has_any(batch, wanted)

    label = " or ".join(wanted)
    return Requirement(label, f"not {label}", violated, facet="style")


# A baby's products name the gender in their words ("Baby Girls' ...") or none (unisex).
BABY_WORDS = {"female": ("girl", "boy"), "male": ("boy", "girl")}


def _babys_gender(gender: str) -> Requirement:
    """ "My 18 month old daughter": not a product for baby boys, while a girls' or unisex one
    of the kind is there."""
    own, other = (stem(w) for w in BABY_WORDS[gender])
    label = f"for a {BABY_WORDS[gender][0]}"

    def violated(batch: Batch) -> np.ndarray:
        return batch.has[other] & ~batch.has[own]

    return Requirement(label, f"for a {BABY_WORDS[gender][1]}", violated, (own, other))


def _rejection(facet: str, value: str) -> Requirement:
    check = rejection_check(facet, value)
    return Requirement(f"without {value}", f"has {value}", lambda b: check.check(b).astype(bool))


def _limits(constraint: Constraint) -> tuple[float | None, float | None] | None:
    low, high = constraint.data.get("min"), constraint.data.get("max")
    if low is None and high is None:
        return around(constraint.data.get("target"))
    return low, high


def _budget(constraint: Constraint) -> Requirement:
    low, high = _limits(constraint) or (None, None)
    if (target := constraint.data.get("target")) is not None and constraint.data.get("max") is None:
        label = f"around ${target:g}"
    elif low is not None and high is not None:
        label = f"between ${low:g} and ${high:g}"
    else:
        label = f"under ${high:g}" if high is not None else f"over ${low:g}"

    def violated(batch: Batch) -> np.ndarray:
        price = batch.features.price[batch.rows]
        # An unknown price cannot be shown to meet a budget: held while priced ones do.
        out = np.isnan(price)
        with np.errstate(invalid="ignore"):
            if low is not None:
                out |= price < low
            if high is not None:
                out |= price > high
        return out

    return Requirement(label, "not " + label, violated)
