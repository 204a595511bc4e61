"""The model resolver's connection: any OpenAI-compatible chat server (a hosted API, or a local
vLLM, llama.cpp or Ollama server) through the `openai` SDK, from the `llm` extra.

Off unless configured: SHOPCOPILOT_LLM_BASE_URL and SHOPCOPILOT_LLM_MODEL name the server and the
model, SHOPCOPILOT_LLM_API_KEY its key (local servers take any), SHOPCOPILOT_LLM_TIMEOUT the
seconds one call may take (default 2). With the variables set but the extra not installed, one
line says so and the rules work alone.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import Any

from .state.resolver import Reply, Resolver

DEFAULT_TIMEOUT = 2.0
MAX_ANSWER_TOKENS = 400  # an observation is a small JSON object


class LlmConfigError(ValueError):
    """A SHOPCOPILOT_LLM_* variable is malformed; the message names it."""


@dataclass(frozen=True, slots=True)
class LlmSettings:
    base_url: str
    model: str
    api_key: str = "none"  # local servers want a key, any key
    timeout: float = DEFAULT_TIMEOUT

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> LlmSettings | None:
        """The settings from the environment; None when the resolver is not configured."""
        env = dict(os.environ if env is None else env)
        base_url = env.get("SHOPCOPILOT_LLM_BASE_URL", "").strip()
        model = env.get("SHOPCOPILOT_LLM_MODEL", "").strip()
        if not base_url and not model:
            return None
        if not base_url or not model:
            missing = "SHOPCOPILOT_LLM_MODEL" if base_url else "SHOPCOPILOT_LLM_BASE_URL"
            raise LlmConfigError(f"{missing} is not set (the LLM resolver needs both)")
        raw = env.get("SHOPCOPILOT_LLM_TIMEOUT", "").strip() or str(DEFAULT_TIMEOUT)
        try:
            timeout = float(raw)
        except ValueError:
            timeout = -1.0
        if not 0 < timeout <= 60:
            raise LlmConfigError(f"SHOPCOPILOT_LLM_TIMEOUT={raw!r}: seconds between 0 and 60")
        api_key = env.get("SHOPCOPILOT_LLM_API_KEY", "").strip() or "none"
        return cls(base_url, model, api_key, timeout)


class OpenAIAsk:
    """One chat completion per call, in JSON mode where the server has it, bounded by the
    timeout; the SDK's own retries are off (they wait out a 429's Retry-After): the Resolver
    retries once itself."""

    def __init__(self, settings: LlmSettings) -> None:
        import openai  # the `llm` extra; resolver_from_env checks that it is there

        self.settings = settings
        self._json_mode = True  # until the server turns `response_format` down
        self._bad_request = openai.BadRequestError
        self._client = openai.OpenAI(
            base_url=settings.base_url,
            api_key=settings.api_key,
            timeout=settings.timeout,
            max_retries=0,
        )

    def __call__(self, messages: list[dict[str, str]]) -> Reply:
        # The SDK types messages as a union of TypedDicts; these are plain role/content pairs.
        chat: Any = messages
        options: dict[str, Any] = {"temperature": 0, "max_tokens": MAX_ANSWER_TOKENS}
        if self._json_mode:
            options["response_format"] = {"type": "json_object"}
        try:
            completion = self._client.chat.completions.create(
                model=self.settings.model, messages=chat, **options
            )
        except self._bad_request as error:
            # A server without JSON mode says so with a 400 naming the field: the retry and
            # later calls go without it (the prompt asks for JSON alone anyway).
            if self._json_mode and "response_format" in str(error):
                self._json_mode = False
            raise
        text = completion.choices[0].message.content if completion.choices else None
        if not text:
            raise ValueError("the server answered no text")
        usage = completion.usage
        return Reply(
            text,
            usage.prompt_tokens if usage else 0,
            usage.completion_tokens if usage else 0,
        )


def resolver_from_env(env: dict[str, str] | None = None) -> Resolver | None:
    """The model resolver the environment configures, or None (the rules alone)."""
    settings = LlmSettings.from_env(env)
    if settings is None:
        return None
    try:
        import openai  # noqa: F401
    except ImportError:
        print(
            "SHOPCOPILOT_LLM_* is set but the openai SDK is not installed "
            "(pip install 'shopcopilot[llm]'): the rules work alone",
            file=sys.stderr,
        )
        return None
    return Resolver(OpenAIAsk(settings), label=settings.model)
