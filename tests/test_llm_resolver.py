"""The optional model resolver against a fake OpenAI-compatible server on 127.0.0.1: good answers
make an unsure turn's state better; malformed JSON, a wrong shape, a slow answer, HTTP 500 and
429 and a refused connection all leave the rules' answers, within timeout + one retry; a turn the
rules are sure of asks nothing. Also the schema, the merge (rules win) and the configuration."""

from __future__ import annotations

import contextlib
import json
import socket
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import openai
import pytest

from shopcopilot.agent import FOR_PEOPLE, Agent
from shopcopilot.llm import LlmConfigError, LlmSettings, OpenAIAsk, resolver_from_env
from shopcopilot.state import Lexicon, ShoppingState
from shopcopilot.state.critique import Shown
from shopcopilot.state.parse import parse_message
from shopcopilot.state.resolver import (
    SCHEMA,
    ObservationAnswer,
    Resolver,
    merge,
    read_answer,
    unsure,
)
from shopcopilot.state.update import read_critiques

TIMEOUT = 0.3  # seconds per call: short, so that the failure tests are quick
BOUND = 2 * TIMEOUT + 1.0  # a turn's wall time, generously: two calls plus the pipeline
USAGE = {"prompt_tokens": 120, "completion_tokens": 9}
UNREAD = "something to keep my feet dry on hikes"  # no item read: the rules are unsure
SURE = "I need a black dress"


# -- the fake server ----------------------------------------------------------------------------


@dataclass
class Script:
    """What the fake server does with the next requests: a behaviour and an answer."""

    behaviour: str = "good"
    answer: dict[str, Any] = field(default_factory=dict)
    requests: list[dict[str, Any]] = field(default_factory=list)


def _completion(content: str) -> bytes:
    body = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": "fake",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {**USAGE, "total_tokens": sum(USAGE.values())},
    }
    return json.dumps(body).encode()


def _handler(script: Script) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: Any) -> None:  # quiet test output
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", 0))
            request = json.loads(self.rfile.read(length))
            script.requests.append({"path": self.path, **request})
            if self.path != "/v1/chat/completions":
                return self._send(404, b'{"error": {"message": "not found"}}')
            behaviour = script.behaviour
            if behaviour == "no_json_mode" and "response_format" in request:
                error = b'{"error": {"message": "unknown field: response_format"}}'
                return self._send(400, error)
            if behaviour == "slow":
                time.sleep(3 * TIMEOUT)
                return self._send(200, _completion(json.dumps(script.answer)))
            if behaviour in ("500", "429"):
                extra = {"Retry-After": "30"} if behaviour == "429" else {}
                error = b'{"error": {"message": "scripted failure"}}'
                return self._send(int(behaviour), error, extra)
            content = {
                "good": json.dumps(script.answer),
                "no_json_mode": json.dumps(script.answer),
                "fenced": "```json\n" + json.dumps(script.answer) + "\n```",
                "malformed": '{"category_text": "boots", "values": [',
                "wrong_shape": json.dumps({"item": "boots", "values": "black"}),
            }[behaviour]
            self._send(200, _completion(content))

        def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.wfile.write(body)  # unless the client gave up (the timeout test)

    return Handler


READER = replace(FOR_PEOPLE, people=False)


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, Script]]:
    script = Script()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(script))
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", script
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def script(server: tuple[str, Script]) -> Script:
    _, script = server
    script.behaviour, script.answer = "good", {}
    script.requests.clear()
    return script


def _free_port() -> int:
    """A port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _resolver(base_url: str) -> Resolver:
    return Resolver(OpenAIAsk(LlmSettings(base_url, "fake", "key", TIMEOUT)), label="fake")


@pytest.fixture(scope="module")
def rules_agent(synthetic_index) -> Agent:
    # Without the people's answers to questions about shown products: those are answered from
    # the products' records, never resolved by the model.
    return Agent(index=synthetic_index, warm_up=False, resolver=None, settings=READER)


@pytest.fixture(scope="module")
def llm_agent(rules_agent: Agent, server: tuple[str, Script]) -> Agent:
    agent = rules_agent.with_settings(READER)
    agent.resolver = _resolver(server[0])
    return agent


def _play(agent: Agent, session: str, messages: list[str]) -> list[tuple[dict, dict, float]]:
    """(response, state, seconds) per turn."""
    agent.reset(session, {})
    out = []
    for turn, message in enumerate(messages, start=1):
        start = time.perf_counter()
        response = agent.respond(session, message, turn, 10)
        out.append((response, agent.export_session(session), time.perf_counter() - start))
    return out


def _without_usage(response: dict) -> dict:
    return {k: v for k, v in response.items() if k != "usage"}


# -- the copilot with the fake server -------------------------------------------------------------


def test_a_good_answer_gives_an_unsure_turn_the_item_the_rules_missed(
    rules_agent, llm_agent, script
):
    script.answer = {"category_text": "boots", "values": [{"facet": "use_case", "value": "hike"}]}
    [(rules, rules_state, _)] = _play(rules_agent, "rules", [UNREAD])
    [(answer, state, _)] = _play(llm_agent, "llm", [UNREAD])
    assert len(script.requests) == 1
    request = script.requests[0]
    assert request["model"] == "fake" and request["response_format"] == {"type": "json_object"}
    assert UNREAD in request["messages"][1]["content"]
    assert not [c for c in rules_state["constraints"] if c["attribute"] == "category"]
    items = [c for c in state["constraints"] if c["attribute"] == "category"]
    assert [c["value"] for c in items] == ["boots"]
    titles = [llm_agent.index.store.get(r["parent_asin"]).title for r in answer["recommendations"]]
    boots = sum("boot" in t.lower() for t in titles)
    assert boots > sum(
        "boot" in rules_agent.index.store.get(r["parent_asin"]).title.lower()
        for r in rules["recommendations"]
    )
    assert answer["usage"] == USAGE
    assert rules["usage"] == {"prompt_tokens": 0, "completion_tokens": 0}


def test_the_trace_says_what_the_model_said_and_what_was_used(llm_agent, script):
    script.behaviour = "fenced"  # a code fence around the JSON is tolerated
    script.answer = {"category_text": "boots", "values": [{"facet": "color", "value": "black"}]}
    llm_agent.reset("traced", {})
    result = llm_agent.respond_traced("traced", UNREAD, 1)
    state_event = result.trace[0]
    record = state_event["output"]["resolver"]
    assert record["asked"] and record["reasons"] == ["unread"] and record["error"] is None
    assert read_answer(record["said"]) == ObservationAnswer.model_validate(script.answer)
    assert record["used"] == ["color=black", "item 'boots'"]
    assert "model asked, used" in state_event["summary"]


def test_an_unresolved_reference_becomes_a_critique(rules_agent, llm_agent, script):
    script.answer = {"critiques": [{"kind": "more_like", "positions": [2]}]}
    talk = [SURE, "which one is warmer, the first or the second?"]
    rules_turns = _play(rules_agent, "rules-ref", talk)
    llm_turns = _play(llm_agent, "llm-ref", talk)
    assert len(script.requests) == 1  # the first message is sure: not asked
    assert rules_turns[1][1]["critiques"] == []
    [critique] = llm_turns[1][1]["critiques"]
    assert critique["kind"] == "more_like" and critique["positions"] == [2]
    shown = rules_turns[0][0]["recommendations"]
    assert critique["products"] == [shown[1]["parent_asin"]]


def test_a_server_without_json_mode_is_asked_again_without_it(server, script):
    script.behaviour, script.answer = "no_json_mode", {"category_text": "boots"}
    ask = OpenAIAsk(LlmSettings(server[0], "fake", "key", TIMEOUT))
    messages = [{"role": "user", "content": "hello"}]
    with pytest.raises(openai.BadRequestError, match="response_format"):
        ask(messages)
    assert json.loads(ask(messages).text) == script.answer
    assert json.loads(ask(messages).text) == script.answer  # and it stays off
    assert ["response_format" in r for r in script.requests] == [True, False, False]


def test_the_resolver_is_not_called_when_the_rules_are_sure(llm_agent, script):
    script.answer = {"category_text": "boots"}
    _play(llm_agent, "sure", [SURE, "under $80"])
    assert script.requests == []


@pytest.mark.parametrize("behaviour", ["malformed", "wrong_shape", "slow", "500", "429"])
def test_a_failing_server_leaves_the_rules_answers(rules_agent, llm_agent, script, behaviour):
    script.behaviour = behaviour
    script.answer = {"category_text": "boots"}
    talk = [UNREAD, "the 12th one", "black please"]
    rules_turns = _play(rules_agent, "rules-" + behaviour, talk)
    llm_turns = _play(llm_agent, "llm-" + behaviour, talk)
    assert len(script.requests) == 4  # two unsure turns, each asked twice (one retry)
    for (rules, rules_state, _), (answer, state, seconds) in zip(
        rules_turns, llm_turns, strict=True
    ):
        assert _without_usage(answer) == _without_usage(rules)
        assert state == rules_state
        assert seconds < BOUND
    # Tokens are counted when the server answered, even unusably; never on an HTTP failure.
    spent = behaviour in ("malformed", "wrong_shape")
    expected = {k: 2 * v for k, v in USAGE.items()} if spent else {k: 0 for k in USAGE}
    assert llm_turns[0][0]["usage"] == expected


def test_a_refused_connection_leaves_the_rules_answers(rules_agent, llm_agent):
    agent = llm_agent.with_settings(READER)
    agent.resolver = _resolver(f"http://127.0.0.1:{_free_port()}/v1")
    agent.reset("refused-traced", {})
    record = agent.respond_traced("refused-traced", UNREAD, 1).trace[0]["output"]["resolver"]
    assert record["attempts"] == 2 and "Connection" in record["error"]
    [(rules, rules_state, _)] = _play(rules_agent, "rules-refused", [UNREAD])
    [(answer, state, seconds)] = _play(agent, "refused", [UNREAD])
    assert answer == rules and state == rules_state and seconds < BOUND


# -- the parts alone -----------------------------------------------------------------------------


def test_the_schema_is_the_typed_observation():
    assert set(SCHEMA["properties"]) == {
        "category_text",
        "values",
        "negated",
        "budget",
        "no_preference",
        "critiques",
    }
    assert SCHEMA["additionalProperties"] is False
    read_answer('{"values": [{"facet": "color", "value": "navy"}]}')
    for wrong in (
        '{"values": "red"}',
        '{"values": [{"facet": "budget", "value": "40"}]}',
        '{"budget": {"min_price": 50, "max_price": 20}}',
        '{"critiques": [{"kind": "love_it", "positions": [1]}]}',
        '{"answer": "the second one"}',
        "[1, 2]",
        "not json",
    ):
        with pytest.raises(ValueError):
            read_answer(wrong)


@pytest.mark.parametrize(
    "answer",
    [
        {},
        {"category_text": "hiking boots", "values": [{"facet": "use_case", "value": "hiking"}]},
        {"negated": [{"facet": "material", "value": "wool"}], "no_preference": ["color"]},
        {"budget": {"max_price": 40}, "critiques": [{"kind": "cheaper", "positions": [2]}]},
        {"values": [{"facet": "budget", "value": "40"}]},
        {"values": [{"facet": "color"}]},
        {"critiques": [{"kind": "cheaper", "positions": []}]},
        {"no_preference": ["colour"]},
        {"item": "boots"},
    ],
)
def test_the_schema_sent_and_the_validator_agree(answer):
    """The model is shown SCHEMA; what it answers is checked by the pydantic model it came from."""
    jsonschema = pytest.importorskip("jsonschema")
    schema_says = jsonschema.Draft202012Validator(SCHEMA).is_valid(answer)
    try:
        read_answer(json.dumps(answer))
        validator_says = True
    except ValueError:
        validator_says = False
    assert schema_says == validator_says


def test_rules_win_on_conflict(lexicon: Lexicon):
    obs = parse_message("a black dress under $40", lexicon, None, first_turn=True)
    answer = ObservationAnswer.model_validate(
        {
            "category_text": "necklace",
            "values": [{"facet": "color", "value": "red"}, {"facet": "material", "value": "silk"}],
            "budget": {"max_price": 100},
            "critiques": [{"kind": "cheaper", "positions": [1]}],
        }
    )
    shown = [Shown(1, "A1", price=30.0)]
    merged, used, dropped = merge(obs, answer, lexicon, shown, reasons=["unread"])
    assert merged.category_text == obs.category_text
    assert merged.budget == obs.budget
    assert [(m.facet, m.value) for m in merged.values] == [
        *[(m.facet, m.value) for m in obs.values],
        ("material", "silk"),
    ]
    assert merged.added_critiques == []  # the rules resolved what was talked of
    assert used == ["material=silk"]
    assert len(dropped) == 4


def test_values_the_catalog_does_not_know_are_dropped(lexicon: Lexicon):
    obs = parse_message("something for the weekend", lexicon, None, first_turn=True)
    answer = ObservationAnswer.model_validate({"values": [{"facet": "color", "value": "blorple"}]})
    merged, used, dropped = merge(obs, answer, lexicon, [], reasons=["unread"])
    assert merged.values == obs.values and used == [] and "not a value" in dropped[0]


def test_unsure_reasons(lexicon: Lexicon):
    state = ShoppingState()
    shown = [Shown(1, "A1", price=30.0), Shown(2, "A2", price=50.0)]

    def reasons(message: str) -> list[str]:
        obs = parse_message(message, lexicon, None, first_turn=False)
        return unsure(obs, shown, read_critiques(state, obs, shown))

    assert reasons("a black dress") == []
    assert reasons("the second one") == []  # resolved
    assert reasons("the fifth one") == ["reference"]  # only two shown
    assert reasons("the cheaper one") == []  # a description, resolved by price
    assert reasons("the second one but cheaper") == []
    assert reasons("the ck one is too pricey") == ["reference"]  # no shown product is "ck"
    assert reasons("compare the first and the second") == ["comparison"]
    assert "unread" in reasons("something to keep my feet dry on hikes")


def test_configuration_from_the_environment(monkeypatch, capsys):
    assert LlmSettings.from_env({}) is None
    settings = LlmSettings.from_env(
        {"SHOPCOPILOT_LLM_BASE_URL": "http://127.0.0.1:11434/v1", "SHOPCOPILOT_LLM_MODEL": "m"}
    )
    assert settings == LlmSettings("http://127.0.0.1:11434/v1", "m", "none", 2.0)
    with pytest.raises(LlmConfigError, match="SHOPCOPILOT_LLM_MODEL"):
        LlmSettings.from_env({"SHOPCOPILOT_LLM_BASE_URL": "http://x/v1"})
    with pytest.raises(LlmConfigError, match="SHOPCOPILOT_LLM_TIMEOUT"):
        LlmSettings.from_env(
            {
                "SHOPCOPILOT_LLM_BASE_URL": "http://x/v1",
                "SHOPCOPILOT_LLM_MODEL": "m",
                "SHOPCOPILOT_LLM_TIMEOUT": "soon",
            }
        )
    env = {"SHOPCOPILOT_LLM_BASE_URL": "http://x/v1", "SHOPCOPILOT_LLM_MODEL": "m"}
    assert isinstance(resolver_from_env(env), Resolver)
    monkeypatch.setitem(sys.modules, "openai", None)  # the extra absent
    assert resolver_from_env(env) is None
    assert "pip install 'shopcopilot[llm]'" in capsys.readouterr().err


# -- the web page ----------------------------------------------------------------------------------

CHROMIUM = Path("/usr/bin/chromium")


@pytest.fixture(scope="module")
def web_url(server, synthetic_catalog, synthetic_cache, tmp_path_factory) -> Iterator[str]:
    """The web demo with the resolver pointed at the fake server (env, as a user configures it)."""
    if not CHROMIUM.exists():
        pytest.skip("needs Debian's Chromium at /usr/bin/chromium (run `make browser-deps`)")
    pytest.importorskip("playwright")
    import uvicorn

    from shopcopilot.web.app import WebSettings, create_app

    root = tmp_path_factory.mktemp("llm-web")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SHOPCOPILOT_CACHE", str(synthetic_cache))
        patch.setenv("SHOPCOPILOT_LLM_BASE_URL", server[0])
        patch.setenv("SHOPCOPILOT_LLM_MODEL", "fake")
        patch.setenv("SHOPCOPILOT_LLM_TIMEOUT", str(TIMEOUT))
        settings = WebSettings(
            catalog_path=synthetic_catalog,
            session_store=root / "sessions.sqlite3",
            demo_generated=3,
        )
        port = _free_port()
        web = uvicorn.Server(
            uvicorn.Config(create_app(settings), host="127.0.0.1", port=port, log_level="warning")
        )
        thread = threading.Thread(target=web.run, daemon=True)
        thread.start()
        deadline = time.monotonic() + 120
        while not web.started:
            if time.monotonic() > deadline or not thread.is_alive():
                raise RuntimeError("the web server did not start")
            time.sleep(0.05)
        for name in ("BASE_URL", "MODEL", "TIMEOUT"):  # the agent has read them; no other test
            patch.delenv(f"SHOPCOPILOT_LLM_{name}")
        yield f"http://127.0.0.1:{port}/"
        web.should_exit = True
        thread.join(10)


@pytest.mark.parametrize("behaviour", ["good", "500"])
def test_the_page_shows_when_the_model_was_asked_and_what_was_used(web_url, script, behaviour):
    from playwright.sync_api import expect, sync_playwright

    script.behaviour, script.answer = behaviour, {"category_text": "boots"}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=["--headless", "--no-sandbox", "--disable-gpu"]
        )
        try:
            page = browser.new_page()
            page.set_default_timeout(30_000)
            page.goto(web_url)
            page.wait_for_selector("body[data-ready=true]")
            page.fill("#message", UNREAD)
            page.press("#message", "Enter")
            panel = page.locator("#pipeline .stage[data-stage=state] .resolver")
            expect(panel).to_contain_text("Model asked (rules unsure: unread)")
            if behaviour == "good":
                expect(panel).to_contain_text("used: item 'boots'")
                expect(page.locator("#state-constraints")).to_contain_text("boots")
            else:
                expect(panel).to_contain_text("not used: InternalServerError")
                expect(panel).to_contain_text("the rules' reading stands")
        finally:
            browser.close()


def test_a_half_set_configuration_is_one_error_line(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from shopcopilot.cli import main

    monkeypatch.setenv("SHOPCOPILOT_LLM_BASE_URL", "http://127.0.0.1:11434/v1")
    monkeypatch.delenv("SHOPCOPILOT_LLM_MODEL", raising=False)
    result = CliRunner().invoke(main, ["chat", "--catalog", str(tmp_path / "none.jsonl")])
    assert result.exit_code == 1
    assert result.output.strip() == (
        "Error: SHOPCOPILOT_LLM_MODEL is not set (the LLM resolver needs both)"
    )
