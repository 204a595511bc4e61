"""Glue between the Agent (in memory, one per process) and the session store (on disk, shared).

The store is the source of truth. Before a session is used, this process's agent
is brought to the stored version (import_session) unless it already holds exactly
that version, so any worker process can serve any session and a restarted server
continues where it stopped. After each turn the agent's export and the turn's
record are written together. The agent keeps at most the store's session cap in
memory (the least recently used are forgotten; the store still has them).

Turns in one process run one at a time under a lock: the Agent is shared and
not documented as thread-safe. More throughput comes from more worker processes.
Inside that lock a turn takes its session's lock in the store, so two requests
for one session on two workers run one after the other, the second on the
first's result. Taking the process lock first means a worker holds at most one
session lock at a time: one killed mid-turn strands one session for the lock's
lease at most.
"""

from __future__ import annotations

import functools
import re
import threading
import uuid
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson
from fastapi.encoders import jsonable_encoder

from ..catalog.product import Product
from ..state.requirements import FACETS
from ..state.requirements import UnknownFacet as FacetNotKnown
from .store import SessionStore, StoredSession

KEY_FEATURES_SHOWN = 4
IMAGES_SHOWN = 4
CARDS_KEPT = 20_000  # product cards kept in memory (about 1 KB each)
EventCallback = Callable[[dict[str, Any]], None]
# The details a comparison of cards reads (material, colour, brand, ...), each cut to a line.
_COMPARED_DETAILS = re.compile(
    r"material|fabric|colou?r|brand|department|style|size|fit|pattern|care|closure|sole|heel",
    re.IGNORECASE,
)
DETAIL_CHARS = 120
# Feature lines that say nothing (catalog exports write a missing one as "null").
_EMPTY_FEATURES = frozenset({"", "null", "none", "n/a", "na", "-", "nan", "undefined"})


class UnknownFacet(ValueError):
    """A requirement facet the agent does not know (the answer is a 422 with the known ones)."""


class DemoRunDrop(Exception):
    """A demo run's requirements are the simulated customer's to change."""


@dataclass(frozen=True, slots=True)
class TurnPlan:
    """What to send the agent this turn, and what to record beside it.

    `follow_up` (demo mode) gets the finished turn's record and returns the demo
    record to store with it; it runs under the same lock as the turn.
    """

    message: str
    top_k: int = 10
    trace: bool = True  # False: the stages' timings and summaries only, as respond() keeps them
    follow_up: Callable[[dict[str, Any]], dict[str, Any]] | None = None
    # A structured turn: drop the requirements of this facet (of this value only, when given)
    # instead of reading `message`, which is then only what the record shows as said.
    drop: tuple[str, str | None] | None = None


class SessionService:
    def __init__(self, agent: Any, store: SessionStore) -> None:
        self.agent = agent
        # A demo replays a benchmark session, so it runs under the benchmark's own settings
        # (a sibling sharing the agent's index and caches); people get the agent's.
        self.replay = _benchmark_sibling(agent)
        self.store = store
        self._lock = threading.Lock()
        # Which sessions this process's agents hold, at which version, least recently used first.
        self._loaded_versions: OrderedDict[str, int] = OrderedDict()
        # Product cards, kept: the catalog is read-only, and reading a product back from the
        # product store for every card of every turn cost more than the rest of the record.
        # Shared between records, which are only ever serialized.
        self._card = functools.lru_cache(maxsize=CARDS_KEPT)(self._read_card)
        self._examples: dict[int, list[str]] = {}

    def examples(self, count: int) -> list[str]:
        """Requests that work on the served catalog, for the page's greeting (none when the
        agent offers none)."""
        if not hasattr(self.agent, "examples"):
            return []
        if count not in self._examples:  # the catalog is read-only: the same every time
            with self._lock:
                found = [str(example) for example in self.agent.examples(n=count)]
            self._examples[count] = found[:count]
        return list(self._examples[count])

    def drop_plan(
        self, facet: str, value: str | None, top_k: int = 10, trace: bool = False
    ) -> Callable[[StoredSession], TurnPlan]:
        """The plan of a turn that drops a requirement: refused for an unknown facet, a demo
        run, or an agent that cannot; recorded as "(removed <its label>)"."""
        if facet not in FACETS:
            raise UnknownFacet(f"unknown facet {facet!r}; the facets are {', '.join(FACETS)}")

        def plan(stored: StoredSession) -> TurnPlan:
            if stored.demo:
                raise DemoRunDrop(
                    f"session {stored.session_id} is a demo run: its simulated customer changes "
                    "the requirements"
                )
            said = f"(removed {self._drop_label(stored, facet, value)})"
            return TurnPlan(said, top_k, trace, drop=(facet, value))

        return plan

    def _drop_label(self, stored: StoredSession, facet: str, value: str | None) -> str:
        """How the page showed the requirements dropped ("not green", "size 10.5")."""
        shown: list[dict[str, Any]] = []
        if stored.turns:
            shown = self.store.turn(stored.session_id, stored.turns).get("requirements") or []
        labels = [
            str(r.get("label") or r.get("value") or facet)
            for r in shown
            if r.get("facet") == facet and (value is None or str(r.get("value")) == value)
        ]
        if labels:
            return ", ".join(dict.fromkeys(labels))
        return f"{facet} {value}" if value is not None else facet

    def create(self, profile: dict[str, Any], demo: dict[str, Any] | None = None) -> dict[str, Any]:
        """A new session; returns its summary (id, turn 0, state)."""
        session_id = uuid.uuid4().hex
        with self._lock:
            agent = self._agent(demo)
            agent.reset(session_id, dict(profile))
            state = plain(agent.export_session(session_id))
            evicted = self.store.create(session_id, profile, state, demo)
            self._loaded(session_id, 1)
            for gone in evicted:
                self._forget(gone)
        return {
            "session_id": session_id,
            "turns": 0,
            "profile": profile,
            "state": state,
            "demo": demo,
        }

    def summary(self, session_id: str) -> dict[str, Any]:
        """The session as stored plus the agent's current state for it."""
        with self._lock:
            stored = self.store.get(session_id)
            self._bring_up_to_date(stored)
            state = plain(self._agent(stored.demo).export_session(session_id))
        return {
            "session_id": session_id,
            "turns": stored.turns,
            "profile": stored.profile,
            "state": state,
            "demo": stored.demo,
        }

    def run_turn(
        self,
        session_id: str,
        plan: Callable[[StoredSession], TurnPlan],
        on_event: EventCallback | None = None,
    ) -> dict[str, Any]:
        """One turn: read the session, run the agent, record the result; returns the turn record."""
        with self._lock, self.store.open_turn(session_id) as opened:
            stored = opened.stored
            turn_plan = plan(stored)
            self._bring_up_to_date(stored)
            try:
                record, exported = self._respond(stored, turn_plan, on_event)
                version = opened.save(record["turn"], exported, record, record["demo"])
            except BaseException:
                # The agent may hold a turn the store never got; reload it before its next use.
                self._loaded_versions.pop(session_id, None)
                raise
            self._loaded(session_id, version)
        return record

    def _respond(
        self, stored: StoredSession, plan: TurnPlan, on_event: EventCallback | None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        turn = stored.turns + 1
        agent = self._agent(stored.demo)
        structured = {"drop": plan.drop} if plan.drop is not None else {}
        try:
            result = agent.respond_traced(
                stored.session_id,
                plan.message,
                turn=turn,
                top_k=plan.top_k,
                on_event=on_event,
                detailed=plan.trace,
                **structured,
            )
        except FacetNotKnown as exc:
            raise UnknownFacet(str(exc)) from exc
        record = self._turn_record(stored.session_id, turn, plan.message, result)
        record["demo"] = plan.follow_up(record) if plan.follow_up else None
        # The state after the turn is what export_session would return: stored as it is.
        return record, record["state"]

    def _agent(self, demo: dict[str, Any] | None) -> Any:
        return self.replay if demo else self.agent

    def _bring_up_to_date(self, stored: StoredSession) -> None:
        if self._loaded_versions.get(stored.session_id) != stored.version:
            self._agent(stored.demo).import_session(stored.session_id, stored.agent_data)
        self._loaded(stored.session_id, stored.version)

    def _loaded(self, session_id: str, version: int) -> None:
        """Note the version the agent holds; forget the least recently used past the cap."""
        self._loaded_versions[session_id] = version
        self._loaded_versions.move_to_end(session_id)
        while len(self._loaded_versions) > self.store.max_sessions:
            self._forget(next(iter(self._loaded_versions)))

    def _forget(self, session_id: str) -> None:
        self._loaded_versions.pop(session_id, None)
        for agent in {id(self.agent): self.agent, id(self.replay): self.replay}.values():
            if hasattr(agent, "forget"):
                agent.forget(session_id)

    def _turn_record(self, session_id: str, turn: int, message: str, result: Any) -> dict[str, Any]:
        response = plain(result.response)
        trace = plain(result.trace)
        return {
            "session_id": session_id,
            "turn": turn,
            "user_message": message,
            "message": response.get("message", ""),
            "ask_attribute": response.get("ask_attribute"),
            # Suggested answers belong to a question: a turn that asks none offers none.
            "options": _question_options(trace) if response.get("ask_attribute") else [],
            "recommendations": [
                self._with_product(item) for item in response.get("recommendations", [])
            ],
            "requirements": [_requirement(item) for item in response.get("requirements", []) or []],
            "answers": list(response.get("answers", []) or []),
            "usage": response.get("usage") or {},
            "response": response,
            "state": plain(result.state),
            "diff": plain(result.diff),
            "trace": trace,
        }

    def _with_product(self, recommendation: dict[str, Any]) -> dict[str, Any]:
        asin = str(recommendation.get("parent_asin", ""))
        return {
            "parent_asin": asin,
            "score": recommendation.get("score"),
            "reason": recommendation.get("reason") or "",
            "shown_before": bool(recommendation.get("shown_before", False)),
            "new": bool(recommendation.get("new", False)),
            "product": self._card(asin),
        }

    def _read_card(self, asin: str) -> dict[str, Any] | None:
        product = self.agent.index.store.get(asin)
        return product_card(product) if product is not None else None


def plain(value: Any) -> Any:
    """`value` as JSON data (enums as their values, tuples as lists, keys as strings): what
    FastAPI's jsonable_encoder gives, at a small fraction of its cost on a turn's record."""
    return orjson.loads(
        orjson.dumps(value, default=jsonable_encoder, option=orjson.OPT_NON_STR_KEYS)
    )


def product_card(product: Product) -> dict[str, Any]:
    """What a recommendation card shows (and what the page's comparison table reads): the key
    features that say something, the details, and the images when the record has some."""
    features = [f for f in product.features if f.strip().lower() not in _EMPTY_FEATURES]
    card = {
        "parent_asin": product.parent_asin,
        "title": product.title,
        "price": product.price,
        "store": product.store,
        "average_rating": product.average_rating,
        "rating_number": product.rating_number,
        "categories": list(product.categories),
        "features": features[:KEY_FEATURES_SHOWN],
        "details": {
            key: value[:DETAIL_CHARS]
            for key, value in product.details.items()
            if _COMPARED_DETAILS.search(key) and value.strip().lower() not in _EMPTY_FEATURES
        },
    }
    if product.images:
        card["images"] = list(product.images[:IMAGES_SHOWN])
    return card


def _requirement(item: dict[str, Any]) -> dict[str, Any]:
    """One requirement as the page shows it; its value as text (it comes back as ?value=)."""
    value = item.get("value")
    return {
        **item,
        "facet": str(item.get("facet", "")),
        "value": None if value is None else str(value),
        "label": str(item.get("label") or value or item.get("facet", "")),
        "negated": bool(item.get("negated", False)),
    }


def _question_options(trace: list[dict[str, Any]]) -> list[str]:
    for event in trace:
        if event.get("stage") == "dialogue":
            options = (event.get("output") or {}).get("options") or []
            return [str(option) for option in options]
    return []


def _benchmark_sibling(agent: Any) -> Any:
    from ..agent import AgentSettings  # local: importing the web layer builds no pipeline

    return agent.with_settings(AgentSettings()) if hasattr(agent, "with_settings") else agent
