"""The per-stage trace: one event per stage, with timing, as plain data."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

EventSink = Callable[[dict[str, Any]], None]


@dataclass(slots=True)
class StageEvent:
    stage: str
    ms: float = 0.0
    summary: str = ""
    input: dict[str, Any] = field(default_factory=dict)
    output: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "stage": self.stage,
            "ms": round(self.ms, 3),
            "summary": self.summary,
            "input": self.input,
            "output": self.output,
        }


class Tracer:
    """Collects stage events and hands each to `on_event` as soon as it finishes.

    Timings and summaries are always kept; stages fill in their detailed outputs only when
    `detailed` (a traced turn), so a plain respond() does not pay for them."""

    def __init__(self, on_event: EventSink | None = None, detailed: bool = True) -> None:
        self.events: list[StageEvent] = []
        self._on_event = on_event
        self.detailed = detailed

    @contextmanager
    def stage(self, name: str, **inputs: Any) -> Iterator[StageEvent]:
        event = StageEvent(name, input=inputs)
        start = time.perf_counter()
        yield event
        event.ms = (time.perf_counter() - start) * 1000
        self.events.append(event)
        if self._on_event is not None:
            self._on_event(event.to_dict())

    def to_list(self) -> list[dict[str, Any]]:
        return [e.to_dict() for e in self.events]
