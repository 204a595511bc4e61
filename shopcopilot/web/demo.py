"""Demo mode: a simulated customer talks to the agent, one turn per step.

Only this controller knows the session's target; the agent sees the profile and
the customer's messages, exactly as in the benchmark. The customer and the
scoring come from the benchmark harness (shopcopilot.bench); this module only
steps its session loop one turn at a time, because the harness runs a whole
session in one call.

A run lives in the session store beside its web session (the `demo` record), so
it survives restarts and any worker can step it. The customer object is not
stored: it is rebuilt by replaying the stored agent responses through a fresh
customer, which is deterministic for a given protocol and seed.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import paths
from ..bench.customer import Customer, make_customer
from ..bench.official import MAX_TURNS, TOP_K, score_recommendations
from ..bench.runner import BenchData, load_bench_data, sanitize_response
from ..bench.sessions import SessionGenerationError, generate_sessions
from ..bench.sessions_io import Session, load_sessions
from .sessions import SessionService, TurnPlan
from .store import StoredSession

PUBLIC_SET_FILE = "public_set.jsonl"
GENERATED_KIND = "iid"  # targets drawn like the catalog's own mix


class DemoError(Exception):
    """A demo request that cannot be served; the message says why."""


class UnknownDemoSession(DemoError):
    pass


class NotADemoRun(DemoError):
    pass


class DemoFinished(DemoError):
    pass


@dataclass(frozen=True, slots=True)
class DemoSource:
    """Where demo sessions come from."""

    catalog_path: Path
    sessions_path: Path | None = None
    generated: int = 12
    seed: int = 0


@dataclass(frozen=True, slots=True)
class DemoSet:
    sessions: dict[str, tuple[Session, str]]  # sample_id -> (session, source label)
    bench_data: BenchData
    notes: tuple[str, ...]


class DemoController:
    def __init__(self, service: SessionService, source: DemoSource) -> None:
        self.service = service
        self.source = source
        self._set: DemoSet | None = None
        self._set_lock = threading.Lock()

    # ---- which sessions can be played ---------------------------------------------------------

    def demo_set(self) -> DemoSet:
        """Built on first use (it reads the catalog once), then kept."""
        with self._set_lock:
            if self._set is None:
                self._set = self._build_set()
            return self._set

    def listing(self) -> dict[str, Any]:
        demo_set = self.demo_set()
        return {
            "sessions": [
                {
                    "sample_id": session.sample_id,
                    "scenario_type": session.scenario_type,
                    "source": source,
                    "category_bucket": session.category_bucket,
                    "difficulty_bucket": session.difficulty_bucket,
                    "profile_summary": str(session.user_profile.get("summary", "")),
                }
                for session, source in demo_set.sessions.values()
            ],
            "notes": list(demo_set.notes),
        }

    def _build_set(self) -> DemoSet:
        candidates: list[tuple[Session, str]] = []
        notes: list[str] = []
        if self.source.sessions_path is not None:
            candidates += [(s, "file") for s in load_sessions(self.source.sessions_path)]
        public = paths.shared_data_dir()
        public_sessions = load_sessions(public / PUBLIC_SET_FILE) if public is not None else []
        if self.source.generated > 0:
            exclude = {session.target_asin for session in public_sessions}
            candidates += [(s, "generated") for s in self._generated(exclude, notes)]
        candidates += [(s, "public") for s in public_sessions]
        playable = self._playable(candidates, notes)
        data = load_bench_data(self.source.catalog_path, [session for session, _ in playable])
        return DemoSet(
            {session.sample_id: (session, label) for session, label in playable}, data, tuple(notes)
        )

    def _generated(self, exclude: set[str], notes: list[str]) -> list[Session]:
        try:
            return generate_sessions(
                self.source.catalog_path,
                GENERATED_KIND,
                self.source.generated,
                self.source.seed,
                exclude,
            )
        except SessionGenerationError as exc:  # e.g. a catalog smaller than the set asked for
            notes.append(f"no generated sessions: {exc}")
            return []

    def _playable(
        self, candidates: list[tuple[Session, str]], notes: list[str]
    ) -> list[tuple[Session, str]]:
        """Sessions whose target is in the served catalog; the first of a repeated sample_id
        wins."""
        products = self.service.agent.index.store
        kept: dict[str, tuple[Session, str]] = {}
        missing: dict[str, int] = {}
        for session, label in candidates:
            if products.get(session.target_asin) is None:
                missing[label] = missing.get(label, 0) + 1
            elif session.sample_id not in kept:
                kept[session.sample_id] = (session, label)
        for label, count in missing.items():
            notes.append(
                f"{count} {label} session(s) left out: their target is not in the served catalog"
            )
        return list(kept.values())

    # ---- runs
    # ---------------------------------------------------------------------------------------

    def start(self, sample_id: str, protocol: str, seed: int) -> dict[str, Any]:
        """A new web session driven by the simulated customer of `sample_id`."""
        demo_set = self.demo_set()
        if sample_id not in demo_set.sessions:
            raise UnknownDemoSession(
                f"no demo session {sample_id!r}; GET /api/demo/sessions lists them"
            )
        session, label = demo_set.sessions[sample_id]
        run = {
            "sample_id": sample_id,
            "source": label,
            "protocol": protocol,
            "seed": seed,
            "scenario_type": session.scenario_type,
            "target_asin": session.target_asin,
            "turns": 0,
            "override_sent": False,
            "next_message": "",
            "done": False,
            "hit": None,
            "last_target_rank": None,
            "responses": [],
        }
        customer = self._customer(run)
        run["override_sent"] = customer.override_turn() is None
        run["next_message"] = customer.first_message()
        return self.service.create(session.user_profile, demo=run)

    def plan_step(self, stored: StoredSession) -> TurnPlan:
        """The next turn of a demo run: the customer's pending message, then the customer's move."""
        run = stored.demo
        if run is None:
            raise NotADemoRun(f"session {stored.session_id!r} is not a demo run")
        if run["done"]:
            raise DemoFinished(f"demo run {stored.session_id!r} has finished; start another")
        return TurnPlan(
            run["next_message"], TOP_K, follow_up=lambda record: self._advance(run, record)
        )

    def _advance(self, run: Mapping[str, Any], record: dict[str, Any]) -> dict[str, Any]:
        """The run after the agent answered: hit, miss, or the customer's next message."""
        response, _ = sanitize_response(record["response"])
        turn = record["turn"]
        ranked = score_recommendations(
            response.get("recommendations"), self.demo_set().bench_data.catalog_ids, TOP_K
        )
        target = run["target_asin"]
        rank = ranked.index(target) + 1 if target in ranked else None
        after = {
            **run,
            "turns": turn,
            "last_target_rank": rank,
            "responses": [*run["responses"], _slim(response)],
        }
        if rank is not None and run["override_sent"]:
            return {**after, "done": True, "hit": {"turn": turn, "rank": rank}, "next_message": ""}
        if turn >= MAX_TURNS:
            return {**after, "done": True, "next_message": ""}
        customer = self._customer(run, replay=True)
        override_sent, message = _customer_move(customer, run["override_sent"], response, turn)
        return {**after, "override_sent": override_sent, "next_message": message}

    def _customer(self, run: Mapping[str, Any], replay: bool = False) -> Customer:
        """A fresh customer for the run; with `replay`, brought to where the run stands."""
        session, _ = self.demo_set().sessions[run["sample_id"]]
        record = self.demo_set().bench_data.target_records[session.target_asin]
        try:
            customer = make_customer(
                run["protocol"],
                session,
                self.demo_set().bench_data.target_product(session.target_asin),
                run["seed"],
                record=record,
            )
        except (ImportError, ValueError) as exc:
            raise DemoError(f"protocol {run['protocol']!r} is not available: {exc}") from exc
        if replay:
            customer.first_message()
            override_sent = customer.override_turn() is None
            for turn, response in enumerate(run["responses"], start=1):
                override_sent, _ = _customer_move(customer, override_sent, response, turn)
        return customer


def _customer_move(
    customer: Customer, override_sent: bool, response: Mapping[str, Any], turn: int
) -> tuple[bool, str]:
    """The benchmark loop's rule for the message after a non-hit `turn` (see bench.runner)."""
    if not override_sent and turn + 1 == customer.override_turn():
        return True, customer.override_message()
    return override_sent, customer.reply(response, turn)


def _slim(response: Mapping[str, Any]) -> dict[str, Any]:
    # What a customer may read, kept for replay: the question and the ids shown.
    return {
        "message": response.get("message", ""),
        "ask_attribute": response.get("ask_attribute"),
        "recommendations": [
            {"parent_asin": item.get("parent_asin")} if isinstance(item, dict) else item
            for item in response.get("recommendations") or []
        ],
    }
