"""Request and response bodies of the REST API (they become the OpenAPI schema at /docs).

State, diff and trace payloads are open objects: their keys belong to the agent
and may grow, and the page renders them generically.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .defaults import DEFAULT_MESSAGE_CHARS, MAX_MESSAGE_CHARS

MAX_TOP_K = 50


class StrictBody(BaseModel):
    # Unknown fields are a client mistake worth reporting, not silently ignoring.
    model_config = ConfigDict(extra="forbid")


class NewSession(StrictBody):
    profile: dict[str, Any] = Field(
        default_factory=dict,
        description=(
            "The shopper's profile (official layout: purchase_frequency, "
            "average_prior_rating, rating_style, preference_tags, summary). Optional."
        ),
    )


class NewMessage(StrictBody):
    message: str = Field(
        min_length=1,
        max_length=MAX_MESSAGE_CHARS,
        pattern=r"\S",
        description=(
            f"What the shopper says: 1 to {DEFAULT_MESSAGE_CHARS} characters (or the server's "
            f"configured limit, at most {MAX_MESSAGE_CHARS}), not only whitespace."
        ),
    )
    top_k: int = Field(
        default=10, ge=1, le=MAX_TOP_K, description="How many recommendations at most."
    )


class NewDemoRun(StrictBody):
    sample_id: str = Field(
        min_length=1, max_length=200, description="A sample_id from GET /api/demo/sessions."
    )
    protocol: Literal["official", "natural"] = Field(
        default="official",
        description="Which simulated customer talks: the official one or the natural one.",
    )
    seed: int = Field(
        default=0, ge=0, le=2**31 - 1, description="Seed of the natural customer's phrasing."
    )


class ProductCard(BaseModel):
    parent_asin: str
    title: str
    price: float | None
    store: str
    average_rating: float | None
    rating_number: int | None
    categories: list[str]
    features: list[str] = Field(description="Key features; none empty.")
    details: dict[str, str] = Field(
        default_factory=dict,
        description="The details a comparison reads (material, colour, brand, size, ...).",
    )
    images: list[str] = Field(
        default_factory=list,
        description="Image addresses, largest first per image; empty when the record has none.",
    )


class ProductDetail(BaseModel):
    parent_asin: str
    title: str
    features: list[str]
    description: list[str]
    price: float | None
    categories: list[str]
    details: dict[str, str]
    average_rating: float | None
    rating_number: int | None
    store: str
    attributes: dict[str, Any] = Field(
        description="Attributes the catalog stage derived (category path, color, ...)."
    )


class Recommendation(BaseModel):
    parent_asin: str
    score: float | None
    reason: str
    shown_before: bool
    new: bool = Field(default=False, description="Not in the previous turn's list.")
    product: ProductCard | None = Field(description="Null when the id is not in the catalog.")


class Requirement(BaseModel):
    facet: str = Field(description="What it is about: item, color, size, budget, ...")
    value: str | None = Field(
        default=None, description="Its value; send it as ?value= to drop this one only."
    )
    label: str = Field(description='How to show it: "women", "not green", "≤ $60".')
    negated: bool = Field(default=False, description="Something the shopper does not want.")
    turn: int | None = Field(default=None, description="The turn it was said in.")


class Answer(BaseModel):
    positions: list[int] = Field(
        default_factory=list, description="The shown products it is about (1 = first)."
    )
    parent_asins: list[str] = Field(default_factory=list)
    fact: str = Field(default="", description="What was asked: price, color, size, ...")
    text: str = Field(default="", description="The answer, as the reply says it.")


class Examples(BaseModel):
    examples: list[str] = Field(description="Requests that work on the served catalog.")


class DemoHit(BaseModel):
    turn: int
    rank: int


class DemoRun(BaseModel):
    sample_id: str
    source: str = Field(description="file, generated or public")
    protocol: str
    seed: int
    scenario_type: str
    target_asin: str = Field(
        description="Known to the demo controller and the viewer, never to the agent."
    )
    turns: int
    override_sent: bool
    next_message: str = Field(
        description="What the simulated customer says next (empty when done)."
    )
    done: bool
    hit: DemoHit | None
    last_target_rank: int | None = Field(
        description="Where the target appeared in the last turn, counted or not."
    )


class SessionSummary(BaseModel):
    session_id: str
    turns: int = Field(description="Completed turns.")
    profile: dict[str, Any]
    state: dict[str, Any]
    demo: DemoRun | None


class StageEvent(BaseModel):
    stage: str
    ms: float
    summary: str
    input: dict[str, Any]
    output: dict[str, Any]


class TurnResult(BaseModel):
    session_id: str
    turn: int
    user_message: str
    message: str
    ask_attribute: str | None
    options: list[str] = Field(description="Suggested answers to the question, for chips.")
    recommendations: list[Recommendation]
    requirements: list[Requirement] = Field(
        default_factory=list,
        description="What the shopper has asked for, in force after this turn, in showing order.",
    )
    answers: list[Answer] = Field(
        default_factory=list,
        description="Answers about shown products this turn (the message says them too).",
    )
    usage: dict[str, Any]
    state: dict[str, Any]
    diff: dict[str, Any]
    trace: list[StageEvent]
    demo: DemoRun | None


class DemoSessionInfo(BaseModel):
    sample_id: str
    scenario_type: str
    source: str
    category_bucket: str | None
    difficulty_bucket: str | None
    profile_summary: str


class DemoSessionList(BaseModel):
    sessions: list[DemoSessionInfo]
    notes: list[str] = Field(description="Why some sessions were left out, if any were.")


class Health(BaseModel):
    status: Literal["ok"]
    catalog: str
    live_sessions: int


class ErrorBody(BaseModel):
    detail: str


STREAM_DESCRIPTION = (
    "Server-sent events, in order: one `stage` event per pipeline stage as it finishes "
    "(data: a StageEvent), then one `turn` event (data: the TurnResult), or an `error` "
    'event (data: {"detail": ...}) if the turn failed after the stream began.'
)
