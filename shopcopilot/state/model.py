"""ShoppingState: the explicit, revisable model of what the shopper wants.

Everything here is plain data (JSON round-trips through to_dict/from_dict) so a
session can be stored, restored, shown in the web demo and asserted in tests.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ..terms import Attribute, Level, Status


@dataclass(slots=True, kw_only=True)
class Constraint:
    """One thing the shopper asked for. `value` is canonical; `text` is what they said.
    `data` holds what the later stages read: the facet, the category words, a price range."""

    attribute: Attribute
    value: str
    level: Level = Level.HARD
    status: Status = Status.ACTIVE
    source_turn: int = 0
    confidence: float = 1.0
    epoch: int = 0
    text: str = ""
    data: dict[str, Any] = field(default_factory=dict)

    @property
    def active(self) -> bool:
        return self.status == Status.ACTIVE

    def described(self) -> dict[str, Any]:
        """The constraint as a state diff lists it (added or replaced)."""
        return {
            "attribute": self.attribute,
            "value": self.value,
            "level": self.level,
            "turn": self.source_turn,
            "epoch": self.epoch,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Constraint:
        return cls(
            **{
                **data,
                "attribute": Attribute(data["attribute"]),
                "level": Level(data.get("level", Level.HARD)),
                "status": Status(data.get("status", Status.ACTIVE)),
            }
        )


@dataclass(slots=True)
class Fragment:
    """Free requirement text kept as evidence ("95% cotton", "adjustable strap")."""

    text: str
    source_turn: int
    epoch: int
    level: Level = Level.SOFT
    status: Status = Status.ACTIVE
    # It asks nothing of its own: every word of it was read as a typed reading too ("size 18"),
    # or the learned reader marks nothing in it ("so proud!!"). Kept for the search only.
    covered: bool = False
    # Its words no dictionary has that the catalog uses ("rfid", "crossbody"): no typos.
    catalog_words: tuple[str, ...] = ()

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Fragment:
        return cls(
            **{
                **data,
                "level": Level(data.get("level", Level.SOFT)),
                "status": Status(data.get("status", Status.ACTIVE)),
                "catalog_words": tuple(data.get("catalog_words", ())),
            }
        )


@dataclass(slots=True)
class Rejection:
    attribute: str
    value: str
    source_turn: int


@dataclass(frozen=True, slots=True)
class AudienceFact:
    """One thing known about who the item is for, the turn and the words it came from. `cue`:
    "recipient" (a person's word: "my wife" is an adult), "age" (a number: "8 year old"), "word"
    (an age word: "toddler") or "pronoun" ("she")."""

    value: str
    source_turn: int
    text: str
    cue: str


@dataclass(slots=True)
class Audience:
    """Who the item is for: the recipient ("wife", "son", "child"), their age group ("adult",
    "teen", "kid", "toddler", "baby") and a gender no recipient word gave ("female" from "she")."""

    recipient: AudienceFact | None = None
    age_group: AudienceFact | None = None
    gender: AudienceFact | None = None

    def copy(self) -> Audience:
        return Audience(self.recipient, self.age_group, self.gender)  # facts are immutable

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> Audience:
        facts = {k: AudienceFact(**v) for k, v in (data or {}).items() if v is not None}
        return cls(**facts)


@dataclass(slots=True)
class CritiqueRecord:
    """What one critique of shown products did, for the ranking, the web page and the trace.
    `anchor` holds the facts of the product a "more like that one" points at (the
    reranker's soft anchor); `products` are the ids the critique spoke of."""

    kind: str
    turn: int
    epoch: int
    positions: list[int] = field(default_factory=list)
    products: list[str] = field(default_factory=list)
    text: str = ""
    effect: str = ""
    anchor: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CritiqueRecord:
        return cls(**data)

    def copy(self) -> CritiqueRecord:
        return CritiqueRecord(
            self.kind,
            self.turn,
            self.epoch,
            list(self.positions),
            list(self.products),
            self.text,
            self.effect,
            _copied(self.anchor),
        )


@dataclass(slots=True)
class Turn:
    turn: int
    user: str
    agent: str = ""
    ask_attribute: str | None = None


@dataclass(slots=True)
class ShoppingState:
    turn: int = 0
    epoch: int = 0
    intent: str = "browsing"
    intent_confidence: float = 0.5
    constraints: list[Constraint] = field(default_factory=list)
    fragments: list[Fragment] = field(default_factory=list)
    rejected: list[Rejection] = field(default_factory=list)
    unconstrained: list[str] = field(default_factory=list)
    questions: list[tuple[int, str]] = field(default_factory=list)
    shown: dict[int, list[str]] = field(default_factory=dict)
    turns_without_progress: int = 0
    profile: dict[str, Any] = field(default_factory=dict)
    history: list[Turn] = field(default_factory=list)
    last_shown: list[str] = field(default_factory=list)  # what "the second one" points into
    critiques: list[CritiqueRecord] = field(default_factory=list)
    audience: Audience = field(default_factory=Audience)

    # -- views used by later stages -------------------------------------
    def active(self, attribute: str | None = None) -> list[Constraint]:
        """The active constraints, all or those of one attribute."""
        return [
            c
            for c in self.constraints
            if c.active and (attribute is None or c.attribute == attribute)
        ]

    def active_fragments(self) -> list[Fragment]:
        return [f for f in self.fragments if f.status == Status.ACTIVE]

    def shown_this_epoch(self) -> list[str]:
        return self.shown.get(self.epoch, [])

    def anchor(self) -> CritiqueRecord | None:
        """The latest product this epoch the shopper wants more like, if any."""
        for record in reversed(self.critiques):
            if record.epoch != self.epoch or record.kind == "none_of_these":
                return None  # a list turned down leaves no neighbourhood to stay in
            if record.kind == "more_like" and record.anchor:
                return record
        return None

    def pointed_at(self) -> list[str]:
        """Ids of the product(s) the shopper spoke of last this epoch ("the second one is close"),
        what a later "not that brand" is about; none after a whole list was turned down."""
        for record in reversed(self.critiques):
            if record.epoch != self.epoch or record.kind == "none_of_these":
                return []
            if record.products and record.kind != "not_style":  # not one turned down
                return list(record.products) if len(record.products) <= 2 else []
        return []

    def turned_down(self) -> list[str]:
        """Ids of products the shopper rejected as a list ("none of these"), in any epoch."""
        return [i for r in self.critiques if r.kind == "none_of_these" for i in r.products]

    def priced_out(self) -> list[str]:
        """Ids of products said to cost too much or too little this epoch ("the first one is
        too expensive", "the second one but cheaper"): what is asked for is another price."""
        return [
            i
            for r in self.critiques
            if r.kind in ("cheaper", "pricier") and r.epoch == self.epoch
            for i in r.products
        ]

    def last_question(self) -> str | None:
        return self.questions[-1][1] if self.questions else None

    def asked(self, attribute: str) -> int:
        return sum(1 for _, a in self.questions if a == attribute)

    def copy(self) -> ShoppingState:
        """An independent copy: what update() changes is new, shared values are immutable.
        (copy.deepcopy did the same at several times the cost, every turn.)"""
        return ShoppingState(
            turn=self.turn,
            epoch=self.epoch,
            intent=self.intent,
            intent_confidence=self.intent_confidence,
            constraints=[
                Constraint(
                    attribute=c.attribute,
                    value=c.value,
                    level=c.level,
                    status=c.status,
                    source_turn=c.source_turn,
                    confidence=c.confidence,
                    epoch=c.epoch,
                    text=c.text,
                    data=_copied(c.data),
                )
                for c in self.constraints
            ],
            fragments=[
                Fragment(
                    f.text, f.source_turn, f.epoch, f.level, f.status, f.covered, f.catalog_words
                )
                for f in self.fragments
            ],
            rejected=[Rejection(r.attribute, r.value, r.source_turn) for r in self.rejected],
            unconstrained=list(self.unconstrained),
            questions=list(self.questions),
            shown={epoch: list(ids) for epoch, ids in self.shown.items()},
            turns_without_progress=self.turns_without_progress,
            profile=_copied(self.profile),
            history=[Turn(t.turn, t.user, t.agent, t.ask_attribute) for t in self.history],
            last_shown=list(self.last_shown),
            critiques=[r.copy() for r in self.critiques],
            audience=self.audience.copy(),
        )

    # -- serialisation ---------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["shown"] = {str(k): v for k, v in self.shown.items()}
        data["questions"] = [{"turn": t, "attribute": a} for t, a in self.questions]
        data["intent"] = {"mode": self.intent, "confidence": round(self.intent_confidence, 3)}
        del data["intent_confidence"]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ShoppingState:
        intent = data.get("intent") or {}
        return cls(
            turn=data.get("turn", 0),
            epoch=data.get("epoch", 0),
            intent=intent.get("mode", "browsing"),
            intent_confidence=intent.get("confidence", 0.5),
            constraints=[Constraint.from_dict(c) for c in data.get("constraints", [])],
            fragments=[Fragment.from_dict(f) for f in data.get("fragments", [])],
            rejected=[Rejection(**r) for r in data.get("rejected", [])],
            unconstrained=list(data.get("unconstrained", [])),
            questions=[(q["turn"], q["attribute"]) for q in data.get("questions", [])],
            shown={int(k): list(v) for k, v in data.get("shown", {}).items()},
            turns_without_progress=data.get("turns_without_progress", 0),
            profile=dict(data.get("profile", {})),
            history=[Turn(**t) for t in data.get("history", [])],
            last_shown=list(data.get("last_shown", [])),
            critiques=[CritiqueRecord.from_dict(r) for r in data.get("critiques", [])],
            audience=Audience.from_dict(data.get("audience")),
        )


def _copied(value: Any) -> Any:
    """A copy of plain JSON-like data (dicts, lists, scalars)."""
    if isinstance(value, dict):
        return {key: _copied(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_copied(item) for item in value]
    return value


@dataclass(slots=True)
class StateDiff:
    """What one turn changed, for the trace and the web demo."""

    added: list[dict[str, Any]] = field(default_factory=list)
    replaced: list[dict[str, Any]] = field(default_factory=list)
    negated: list[dict[str, Any]] = field(default_factory=list)
    unconstrained: list[str] = field(default_factory=list)
    fragments: list[str] = field(default_factory=list)
    new_epoch: bool = False
    intent: str | None = None
    references: list[dict[str, Any]] = field(default_factory=list)  # shown products pointed at
    critiques: list[dict[str, Any]] = field(default_factory=list)  # what was said of them, did
    audience: dict[str, str] = field(default_factory=dict)  # what changed: recipient, age_group...
    resolver: dict[str, Any] = field(default_factory=dict)  # the model resolver's record, if asked
    read: list[dict[str, Any]] = field(default_factory=list)  # the message's readings and words

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        if not self.resolver:
            del out["resolver"]  # a turn the resolver was not asked reads as before
        return out
