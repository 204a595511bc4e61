"""The conversation suite: multi-turn shopping conversations whose every turn carries checks
any sensible assistant meets, decided from the returned products' catalog records, the reply
and the requirements the copilot holds (benchmarks/data/conversations/README.md).
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from ..catalog.product import Product
from ..state.model import ShoppingState
from ..state.requirements import FACETS, requirements
from ..terms import Facet

SUITE_DIR = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "conversations"
SPLITS = (
    "dev", "test", "fresh", "fresh2", "fresh3", "fresh4", "fresh5", "fresh6", "fresh7", "fresh8",
    "fresh9", "all",
)  # fmt: skip
CATALOGS = ("embedded", "real")
FACTS = ("price", "rating", "has", "material", "cheaper", "cheapest", "best_rated", "compare")
PRODUCT_CHECKS = ("kind", "has", "none", "price_at_most")  # what feasibility is decided on
DEFAULT_FIRST = 3


class SuiteError(ValueError):
    """A conversation file that cannot be read; the message names the file and line."""


@dataclass(frozen=True, slots=True)
class Check:
    kind: str
    fields: Mapping[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return {"check": self.kind, **self.fields}


@dataclass(frozen=True, slots=True)
class ConversationTurn:
    user: str
    checks: tuple[Check, ...]


@dataclass(frozen=True, slots=True)
class Conversation:
    id: str
    catalog: str
    register: str
    split: str
    turns: tuple[ConversationTurn, ...]


# -- reading the suite ---------------------------------------------------------------------


# Each file of the suite, with the split its conversations are in (None: each line says).
SUITE_FILES = (
    ("suite.jsonl", None),
    ("dev2.jsonl", "dev"),
    ("dev3.jsonl", "dev"),
    ("dev4.jsonl", "dev"),
    ("dev5.jsonl", "dev"),
    ("fresh.jsonl", "fresh"),
    ("fresh2.jsonl", "fresh2"),
    ("fresh3.jsonl", "fresh3"),
    ("fresh4.jsonl", "fresh4"),
    ("fresh5.jsonl", "fresh5"),
    ("fresh6.jsonl", "fresh6"),
    ("fresh7.jsonl", "fresh7"),
    ("fresh8.jsonl", "fresh8"),
    ("fresh9.jsonl", "fresh9"),
)


def load_suite(folder: Path = SUITE_DIR, split: str = "all") -> list[Conversation]:
    """The conversations of one split: dev and test live in suite.jsonl (and more dev in
    dev2.jsonl ... dev5.jsonl), the fresh slices in fresh.jsonl ... fresh9.jsonl."""
    if split not in SPLITS:
        raise SuiteError(f"unknown split {split!r} (one of {', '.join(SPLITS)})")
    found: list[Conversation] = []
    for name, default_split in SUITE_FILES:
        path = folder / name
        if path.is_file():
            found.extend(read_conversations(path, default_split))
    return [c for c in found if split == "all" or c.split == split]


def read_conversations(path: Path, split: str | None = None) -> list[Conversation]:
    conversations, seen = [], set()
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                conversation = parse_conversation(json.loads(line), split)
            except (ValueError, TypeError, KeyError) as exc:
                raise SuiteError(f"{path}:{number}: {exc}") from None
            if conversation.id in seen:
                raise SuiteError(f"{path}:{number}: duplicate id {conversation.id!r}")
            seen.add(conversation.id)
            conversations.append(conversation)
    return conversations


def parse_conversation(raw: Any, split: str | None = None) -> Conversation:
    if not isinstance(raw, dict):
        raise ValueError("a conversation is a JSON object")
    ident = raw.get("id")
    if not isinstance(ident, str) or not ident:
        raise ValueError("'id' is missing")
    if raw.get("catalog") not in CATALOGS:
        raise ValueError(f"{ident}: 'catalog' must be one of {', '.join(CATALOGS)}")
    split = split or raw.get("split")
    if split not in SPLITS or split == "all":
        raise ValueError(f"{ident}: 'split' must be dev or test")
    turns = raw.get("turns")
    if not isinstance(turns, list) or not 1 <= len(turns) <= 8:
        raise ValueError(f"{ident}: 'turns' must list 1 to 8 turns")
    parsed = tuple(_turn(ident, number, turn) for number, turn in enumerate(turns, 1))
    return Conversation(ident, raw["catalog"], str(raw.get("register", "")), split, parsed)


def _turn(ident: str, number: int, raw: Any) -> ConversationTurn:
    where = f"{ident} turn {number}"
    if not isinstance(raw, dict) or not isinstance(raw.get("user"), str):
        raise ValueError(f"{where}: a turn needs the shopper's 'user' message")
    checks = raw.get("checks")
    if not isinstance(checks, list) or not checks:
        raise ValueError(f"{where}: a turn needs at least one check")
    return ConversationTurn(raw["user"], tuple(_check(where, number, c) for c in checks))


def _check(where: str, number: int, raw: Any) -> Check:
    if not isinstance(raw, dict) or raw.get("check") not in JUDGES:
        name = raw.get("check") if isinstance(raw, dict) else raw
        raise ValueError(f"{where}: unknown check {name!r} (one of {', '.join(JUDGES)})")
    kind = raw["check"]
    fields = {k: v for k, v in raw.items() if k != "check"}
    problem = _problem(kind, fields, number)
    if problem:
        raise ValueError(f"{where}: {kind}: {problem}")
    return Check(kind, fields)


def _problem(kind: str, fields: Mapping[str, Any], number: int) -> str | None:
    if kind in ("like", "still_shows", "answers") and number == 1:
        return "nothing has been shown on the first turn"
    if kind == "kind" and not _paths(fields.get("path")):
        return "'path' must be a list of category nodes (or a list of such lists)"
    if kind in ("has", "mentions") and not _words(fields.get("words")):
        return "'words' must be a non-empty list of words"
    if kind == "none" and not (_words(fields.get("words")) or _paths(fields.get("path"))):
        return "'words' or 'path' is needed"
    if kind in ("keeps", "dropped") and fields.get("facet") not in FACETS:
        return f"'facet' must be one of {', '.join(FACETS)}"
    if kind == "keeps" and fields.get("value") in (None, ""):
        return "'value' is needed"
    if kind == "price_at_most" and not isinstance(fields.get("value"), int | float):
        return "'value' must be a number"
    if kind in ("like", "still_shows") and not _position(fields.get("product")):
        return "'product' must be a position from 1"
    if kind == "answers":
        return _answer_problem(fields)
    return None


def _answer_problem(fields: Mapping[str, Any]) -> str | None:
    fact = fields.get("fact")
    if fact not in FACTS:
        return f"'fact' must be one of {', '.join(FACTS)}"
    if fact in ("cheaper", "compare"):
        products = fields.get("products")
        if not isinstance(products, list) or len(products) < 2:
            return f"{fact} needs 'products': two or more positions"
        if not all(_position(p) for p in products):
            return "'products' must be positions from 1"
    elif fact in ("price", "rating", "has", "material") and not _position(fields.get("product")):
        return f"{fact} needs 'product': a position from 1"
    if fact == "has" and not _words(fields.get("value")):
        return "has needs 'value': a word or a list of words"
    return None


def _position(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _words(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return ()
    return tuple(w.strip().lower() for w in value if isinstance(w, str) and w.strip())


def _paths(value: Any) -> tuple[tuple[str, ...], ...]:
    """A path (a list of node names) or a list of paths, lower-cased."""
    if not isinstance(value, list) or not value:
        return ()
    if all(isinstance(node, str) for node in value):
        return (tuple(node.lower() for node in value),)
    if all(
        isinstance(path, list) and path and all(isinstance(n, str) for n in path) for path in value
    ):
        return tuple(tuple(node.lower() for node in path) for path in value)
    return ()


# -- what a product offers a check -----------------------------------------------------------


def _material_line(feature: str) -> bool:
    """A feature that is a material by itself ("Faux Leather", "Stainless Steel"; not "Cotton
    lining" or "Rubber sole", a part's). Read here on its own, not through the copilot's
    answers, so the judge does not grade the copilot by its own reading."""
    words = feature.lower().split()
    part = {"lining", "sole", "outsole", "insole"} & set(words)
    return 0 < len(words) <= 3 and not part and words[-1] in _material_words()


@cache
def _material_words() -> frozenset[str]:
    from ..catalog.vocabulary import vocabulary

    table = vocabulary().tables[Facet.MATERIAL]
    return frozenset(t.split()[-1] for c, terms in table.items() for t in (c, *terms) if t)


@dataclass(frozen=True, slots=True)
class Facts:
    """A product as the checks see it: its text, category nodes, price, rating and material."""

    parent_asin: str
    title: str
    text: str
    nodes: frozenset[str]
    leaf: str
    department: str
    price: float | None
    rating: float | None
    rating_number: int
    material: str

    @classmethod
    def of(cls, product: Product) -> Facts:
        details = " ; ".join(f"{v}" for v in product.details.values())
        text = " ; ".join([product.title, details, *product.features]).lower()
        categories = [c.lower() for c in product.categories]
        material = " ; ".join(
            [product.details.get("Material", ""), product.details.get("Fabric Type", "")]
            + [f for f in product.features if "%" in f or _material_line(f)]
        )
        return cls(
            parent_asin=product.parent_asin,
            title=product.title,
            text=text,
            nodes=frozenset(categories),
            leaf=categories[-1] if categories else "",
            department=categories[1] if len(categories) > 1 else "",
            price=product.price,
            rating=product.average_rating,
            rating_number=product.rating_number or 0,
            material=material.lower(),
        )

    def has_any(self, words: Iterable[str]) -> bool:
        return any(_word_pattern(w).search(self.text) for w in words)

    def under(self, paths: Iterable[tuple[str, ...]]) -> bool:
        return any(all(node in self.nodes for node in path) for path in paths)


_PATTERNS: dict[str, re.Pattern[str]] = {}
_SPELLINGS = {"grey": "gr[ae]y", "gray": "gr[ae]y"}  # one colour, two spellings


def _word_pattern(word: str) -> re.Pattern[str]:
    """A word or phrase as a whole word, ignoring case, its plural allowed; grey is gray."""
    pattern = _PATTERNS.get(word)
    if pattern is None:
        body = r"\s+".join(_SPELLINGS.get(p, re.escape(p)) for p in word.lower().split())
        pattern = re.compile(rf"(?<![a-z0-9]){body}(?:s|es)?(?![a-z0-9])")
        _PATTERNS[word] = pattern
    return pattern


def mentions(text: str, words: Iterable[str]) -> bool:
    lowered = text.lower()
    return any(_word_pattern(w).search(lowered) for w in words)


# -- judging a turn ----------------------------------------------------------------------------


@dataclass(slots=True)
class TurnSeen:
    """What one turn gave: the list, the list before it, the reply and the requirements held."""

    shown: list[Facts]
    before: list[Facts]
    reply: str
    requirements: list[dict[str, Any]]


def _first(check: Check, shown: list[Facts]) -> list[Facts]:
    first = check.fields.get("first", DEFAULT_FIRST)
    return shown if first == "all" else shown[: int(first)]


def _judge_kind(check: Check, seen: TurnSeen) -> bool:
    paths = _paths(check.fields["path"])
    head = _first(check, seen.shown)
    return bool(head) and all(p.under(paths) for p in head)


def _judge_like(check: Check, seen: TurnSeen) -> bool:
    anchor = _nth(seen.before, check.fields["product"])
    head = _first(check, seen.shown)
    if anchor is None or not head:
        return False
    return all(p.leaf == anchor.leaf and p.department == anchor.department for p in head)


def _judge_has(check: Check, seen: TurnSeen) -> bool:
    words = _words(check.fields["words"])
    head = _first(check, seen.shown)
    return bool(head) and all(p.has_any(words) for p in head)


def _judge_none(check: Check, seen: TurnSeen) -> bool:
    words, paths = _words(check.fields.get("words")), _paths(check.fields.get("path"))
    return not any((words and p.has_any(words)) or (paths and p.under(paths)) for p in seen.shown)


def _judge_price(check: Check, seen: TurnSeen) -> bool:
    limit = float(check.fields["value"]) + 0.005
    return bool(seen.shown) and all(p.price is None or p.price <= limit for p in seen.shown)


def _held(check: Check, seen: TurnSeen) -> list[dict[str, Any]]:
    facet = check.fields["facet"]
    wanted_value = check.fields.get("value")
    held = [r for r in seen.requirements if r.get("facet") == facet]
    if wanted_value is None:
        return held
    if facet == "budget":
        return [r for r in held if _same_money(r.get("high"), wanted_value)]
    value = str(wanted_value).lower()
    return [r for r in held if _says(r, value) or _within(r, value)]


def _says(requirement: Mapping[str, Any], value: str) -> bool:
    """Does the value held, or the chip a person reads ("navy", held as blue), say `value`?"""
    return any(mentions(str(requirement.get(k, "")), [value]) for k in ("value", "label"))


def _within(requirement: Mapping[str, Any], value: str) -> bool:
    """Is the held value said within the checked one, as whole words ("men" is not in "women")?"""
    held = str(requirement.get("value", "")).lower()
    return bool(held) and mentions(value, [held])


def _same_money(held: Any, wanted: Any) -> bool:
    try:
        return abs(float(held) - float(wanted)) < 0.5
    except (TypeError, ValueError):
        return False


def _judge_keeps(check: Check, seen: TurnSeen) -> bool:
    negated = bool(check.fields.get("negated", False))
    return any(bool(r.get("negated")) == negated for r in _held(check, seen))


def _judge_dropped(check: Check, seen: TurnSeen) -> bool:
    return not _held(check, seen)


def _judge_mentions(check: Check, seen: TurnSeen) -> bool:
    return mentions(seen.reply, _words(check.fields["words"]))


def _judge_still_shows(check: Check, seen: TurnSeen) -> bool:
    asked = _nth(seen.before, check.fields["product"])
    return asked is not None and asked.parent_asin in {p.parent_asin for p in seen.shown}


def _nth(products: Sequence[Facts], position: int) -> Facts | None:
    return products[position - 1] if 1 <= position <= len(products) else None


# -- answers about shown products ------------------------------------------------------------

_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth",
             "ninth", "tenth")  # fmt: skip
_SUFFIX = {1: "st", 2: "nd", 3: "rd"}
NOT_SAID = ("doesn't say", "does not say", "don't say", "not listed", "doesn't list",
            "does not list", "no rating", "not rated", "no reviews", "isn't listed",
            "is not listed", "doesn't mention", "does not mention", "not say")  # fmt: skip
NEGATIVE = ("no", "not", "doesn't", "does not", "isn't", "is not", "don't", "only")


def names_position(reply: str, position: int) -> bool:
    text = reply.lower()
    forms = [rf"#\s*{position}(?!\d)", rf"(?<!\d){position}{_SUFFIX.get(position, 'th')}\b",
             rf"\bnumber {position}(?!\d)", rf"\bno\. ?{position}(?!\d)"]  # fmt: skip
    if position <= len(_ORDINALS):
        forms.append(rf"\b{_ORDINALS[position - 1]}\b")
    return any(re.search(form, text) for form in forms)


def states_price(reply: str, price: float | None) -> bool:
    if price is None:
        return mentions(reply, ["price", "no price"]) or any(s in reply.lower() for s in NOT_SAID)
    text = reply.replace(",", "")
    return f"{price:.2f}" in text or re.search(rf"\${round(price)}(?![\d.])", text) is not None


def _answer_has(reply: str, product: Facts, value: tuple[str, ...]) -> bool:
    if not mentions(reply, value):
        return False
    lowered = reply.lower()
    if product.has_any(value):
        return re.search(r"\byes\b", lowered) is not None
    negative = any(re.search(rf"(?<![a-z']){re.escape(w)}(?![a-z])", lowered) for w in NEGATIVE)
    return negative or any(s in lowered for s in NOT_SAID)


def _answer_material(reply: str, product: Facts) -> bool:
    words = {w for w in re.findall(r"[a-z]{4,}", product.material) if w not in _NOT_MATERIAL}
    if words:
        return mentions(reply, words)
    return any(s in reply.lower() for s in NOT_SAID)


_NOT_MATERIAL = frozenset({"lining", "shell", "body", "with", "made", "from", "imported", "fabric"})


def _judge_answers(check: Check, seen: TurnSeen) -> bool:
    fact, reply, before = check.fields["fact"], seen.reply, seen.before
    if fact in ("cheaper", "compare"):
        chosen = [_nth(before, p) for p in check.fields["products"]]
        if any(p is None for p in chosen):
            return False
        present = [p for p in chosen if p is not None]
        if fact == "compare":
            return all(states_price(reply, p.price) for p in present)
        priced = [(p.price, pos) for p, pos in zip(present, check.fields["products"], strict=True)]
        if any(price is None for price, _ in priced):
            return any(s in reply.lower() for s in NOT_SAID)
        return names_position(reply, min(priced)[1])
    if fact in ("cheapest", "best_rated"):
        return bool(before) and names_position(reply, _extreme(before, fact) + 1)
    product = _nth(before, check.fields["product"])
    if product is None:
        return False
    if fact == "price":
        return states_price(reply, product.price)
    if fact == "rating":
        if product.rating is None:
            return any(s in reply.lower() for s in NOT_SAID)
        return f"{product.rating:.1f}" in reply or f"{product.rating:g}" in reply
    if fact == "has":
        return _answer_has(reply, product, _words(check.fields["value"]))
    return _answer_material(reply, product)


def _extreme(products: Sequence[Facts], fact: str) -> int:
    """The index of the cheapest (or best-rated) product."""
    if fact == "cheapest":
        return min(
            range(len(products)), key=lambda i: (products[i].price is None, products[i].price or 0)
        )
    return min(
        range(len(products)), key=lambda i: (-(products[i].rating or 0), -products[i].rating_number)
    )


JUDGES: dict[str, Callable[[Check, TurnSeen], bool]] = {
    "kind": _judge_kind,
    "like": _judge_like,
    "has": _judge_has,
    "none": _judge_none,
    "price_at_most": _judge_price,
    "keeps": _judge_keeps,
    "dropped": _judge_dropped,
    "answers": _judge_answers,
    "mentions": _judge_mentions,
    "still_shows": _judge_still_shows,
}


def judge(check: Check, seen: TurnSeen) -> bool:
    return JUDGES[check.kind](check, seen)


# -- feasibility -----------------------------------------------------------------------------


def feasible(checks: Sequence[Check], catalog: Iterable[Facts]) -> bool:
    """Whether the catalog holds enough products meeting a turn's product checks together."""
    product_checks = [c for c in checks if c.kind in PRODUCT_CHECKS]
    if not product_checks:
        return True
    need = max(
        (
            1
            if c.fields.get("first", DEFAULT_FIRST) == "all"
            else int(c.fields.get("first", DEFAULT_FIRST))
            for c in product_checks
            if c.kind in ("kind", "has")
        ),
        default=1,
    )
    count = 0
    for product in catalog:
        if all(_meets(c, product) for c in product_checks):
            count += 1
            if count >= need:
                return True
    return False


def _meets(check: Check, product: Facts) -> bool:
    seen = TurnSeen([product], [], "", [])
    if check.kind in ("kind", "has"):
        return JUDGES[check.kind](Check(check.kind, {**check.fields, "first": 1}), seen)
    return JUDGES[check.kind](check, seen)


# -- the report --------------------------------------------------------------------------------


@dataclass(slots=True)
class Report:
    split: str
    conversations: int = 0
    turns: int = 0
    turns_passed: int = 0
    conversations_passed: int = 0
    by_check: Counter[str] = field(default_factory=Counter)
    by_check_passed: Counter[str] = field(default_factory=Counter)
    by_register: dict[str, list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0]))
    infeasible: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    misses: list[dict[str, Any]] = field(default_factory=list)

    def add(
        self, conversation: Conversation, outcomes: list[TurnOutcome], keep_misses: bool
    ) -> None:
        self.conversations += 1
        all_passed = True
        for number, outcome in enumerate(outcomes, 1):
            self.turns += 1
            for check, passed in outcome.results:
                self.by_check[check.kind] += 1
                self.by_check_passed[check.kind] += passed
                if not passed and keep_misses:
                    self.misses.append(outcome.miss(conversation, number, check))
            for check in outcome.infeasible:
                self.infeasible.append({"id": conversation.id, "turn": number, **check.to_dict()})
            passed_turn = all(p for _, p in outcome.results)
            self.turns_passed += passed_turn
            all_passed &= passed_turn
        self.conversations_passed += all_passed
        tally = self.by_register[conversation.register]
        tally[0] += 1
        tally[1] += all_passed

    def to_dict(self) -> dict[str, Any]:
        def rate(hits: int, count: int) -> float:
            return round(hits / count, 4) if count else 0.0

        return {
            "split": self.split,
            "n_conversations": self.conversations,
            "n_turns": self.turns,
            "turn_pass_rate": rate(self.turns_passed, self.turns),
            "conversation_pass_rate": rate(self.conversations_passed, self.conversations),
            "by_check": {
                kind: {
                    "pass_rate": rate(self.by_check_passed[kind], count),
                    "passed": self.by_check_passed[kind],
                    "count": count,
                }
                for kind, count in sorted(self.by_check.items())
            },
            "by_register": {
                register: {"conversations": n, "pass_rate": rate(passed, n)}
                for register, (n, passed) in sorted(self.by_register.items())
            },
            "n_infeasible_checks": len(self.infeasible),
            "infeasible": self.infeasible,
            "skipped": self.skipped,
        }


@dataclass(slots=True)
class TurnOutcome:
    user: str
    seen: TurnSeen
    results: list[tuple[Check, bool]]
    infeasible: list[Check]

    def miss(self, conversation: Conversation, number: int, check: Check) -> dict[str, Any]:
        return {
            "id": conversation.id,
            "catalog": conversation.catalog,
            "turn": number,
            "user": self.user,
            "check": check.to_dict(),
            "reply": self.seen.reply,
            "requirements": [r.get("label", r.get("value")) for r in self.seen.requirements],
            "shown": [f"{p.title} (${p.price})" for p in self.seen.shown[:5]],
            "before": [f"{p.title} (${p.price})" for p in self.seen.before[:5]],
        }


# -- playing a conversation ------------------------------------------------------------------


def play(agent: Any, conversation: Conversation, catalog: Mapping[str, Facts]) -> list[TurnOutcome]:
    """The conversation's turns, each judged; `catalog`: every product's facts by id."""
    session = f"conversation-{conversation.id}"
    agent.reset(session)
    before: list[Facts] = []
    outcomes = []
    for turn in conversation.turns:
        result = agent.respond_traced(session, turn.user, detailed=False)
        response = result.response
        ids = [r["parent_asin"] for r in response.get("recommendations", [])]
        shown = [catalog[asin] for asin in ids if asin in catalog]
        held = response.get("requirements")
        if held is None:  # an agent that does not list them: read them off its state
            held = [r.to_dict() for r in requirements(ShoppingState.from_dict(result.state))]
        seen = TurnSeen(shown, before, str(response.get("message", "")), list(held))
        ok = feasible(turn.checks, catalog.values())
        scored = [c for c in turn.checks if ok or c.kind not in PRODUCT_CHECKS]
        dropped = [c for c in turn.checks if not ok and c.kind in PRODUCT_CHECKS]
        outcomes.append(
            TurnOutcome(turn.user, seen, [(c, judge(c, seen)) for c in scored], dropped)
        )
        if shown:
            before = shown
    agent.forget(session)
    return outcomes


# -- running the suite -------------------------------------------------------------------------


def catalog_facts(agent: Any) -> dict[str, Facts]:
    """Every product of the agent's catalog as the checks see it, by id."""
    return {p.parent_asin: Facts.of(p) for _, p in agent.index.store.indexable()}


def evaluate(
    agents: Mapping[str, Any],
    conversations: Sequence[Conversation],
    split: str,
    progress: Callable[[], None] = lambda: None,
) -> Report:
    """Play every conversation on its catalog's agent (`agents`: catalog name -> agent; a
    conversation whose catalog has no agent is skipped and listed)."""
    report = Report(split)
    catalogs: dict[str, dict[str, Facts]] = {}
    for conversation in conversations:
        agent = agents.get(conversation.catalog)
        if agent is None:
            report.skipped.append(conversation.id)
            progress()
            continue
        if conversation.catalog not in catalogs:
            catalogs[conversation.catalog] = catalog_facts(agent)
        outcomes = play(agent, conversation, catalogs[conversation.catalog])
        report.add(conversation, outcomes, keep_misses=conversation.split == "dev")
        progress()
    return report


def report_table(summary: Mapping[str, Any]) -> Any:
    from rich.table import Table

    table = Table(title=f"conversation suite, {summary['split']}")
    table.add_column("measure")
    table.add_column("pass rate", justify="right")
    table.add_column("count", justify="right")
    table.add_row("turns", f"{summary['turn_pass_rate']:.3f}", str(summary["n_turns"]))
    table.add_row(
        "conversations", f"{summary['conversation_pass_rate']:.3f}", str(summary["n_conversations"])
    )
    for kind, row in summary["by_check"].items():
        table.add_row(f"  {kind}", f"{row['pass_rate']:.3f}", str(row["count"]))
    return table
