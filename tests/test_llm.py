"""The model-call layer against a fake OpenAI-compatible server: retries, faults, errors."""

import json
import socket

import pytest
from pydantic import BaseModel

from agent.context import Context
from agent.errors import InputError, ModelUnavailableError
from agent.errors import ModelOutputError
from agent.llm.calls import call_model, generate_structured, generate_text, parse_json_reply
from agent.llm.models import get_chat_model
from agent.usage import UsageRecorder, _current
from bench.fake_openai import FakeOpenAI


class Pair(BaseModel):
    question: str
    answer: str


@pytest.fixture
def openai_env(monkeypatch):
    def use(fake: FakeOpenAI, key: str = "sk-test-SECRET-KEY-123"):
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", key)
        return Context(model="openai:fake", max_retries=2, request_timeout=1.0)
    return use


@pytest.fixture
def recorder():
    recorder = UsageRecorder()
    token = _current.set(recorder)
    yield recorder.counts
    _current.reset(token)


def test_structured_reply_is_parsed_and_usage_taken_from_the_server(openai_env, recorder):
    with FakeOpenAI(reply=json.dumps({"question": "q?", "answer": "a"})) as fake:
        pair = generate_structured(openai_env(fake), Pair, "synthesize_answer", question="q", passages="", guidance="")
        assert pair == Pair(question="q?", answer="a")
        schema = fake.requests[0]["response_format"]["json_schema"]["schema"]
        assert set(schema["required"]) == {"question", "answer"}
    assert recorder["llm_calls"] == 1 and recorder["prompt_tokens"] == 10


def test_503s_are_retried_with_backoff_then_succeed(openai_env, recorder):
    with FakeOpenAI(reply="plain text", faults=["503", "503"]) as fake:
        assert generate_text(openai_env(fake), "synthesize_answer", question="q", passages="", guidance="") == "plain text"
        assert len(fake.requests) == 3
    assert recorder["retries"] == 2 and recorder["abstentions"] == 0


def test_persistent_failures_degrade_to_none_and_are_counted(openai_env, recorder):
    with FakeOpenAI(faults=lambda n: "503") as fake:
        assert call_model(openai_env(fake), [("user", "hi")]) is None
        assert len(fake.requests) == 3  # 1 + max_retries
    assert recorder["abstentions"] == 1 and recorder["retries"] == 2


def test_timeouts_are_counted_and_retried(openai_env, recorder):
    with FakeOpenAI(reply="ok", faults=["timeout"], hang_seconds=3) as fake:
        assert call_model(openai_env(fake), [("user", "hi")]).content == "ok"
    assert recorder["timeouts"] == 1 and recorder["retries"] == 1


def test_garbage_is_retried_once_then_abstains(openai_env, recorder):
    with FakeOpenAI(faults=lambda n: "garbage") as fake:
        assert generate_structured(openai_env(fake), Pair, "synthesize_answer", question="q", passages="", guidance="") is None
        assert len(fake.requests) == 2
    assert recorder["malformed"] == 2 and recorder["abstentions"] == 1


def test_unreachable_server_names_the_url_and_never_the_key(openai_env):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    fake = type("Closed", (), {"base_url": f"http://127.0.0.1:{port}/v1"})()
    context = openai_env(fake).replace(max_retries=0)
    with pytest.raises(ModelUnavailableError) as error:
        call_model(context, [("user", "hi")])
    assert f"127.0.0.1:{port}" in str(error.value)
    assert "SECRET" not in str(error.value)


def test_truncated_json_keeps_the_complete_part():
    class Answer(BaseModel):
        items: list[str]
        answer: str = ""

    parsed = parse_json_reply('Sure: ```json\n{"items": ["a", "b"], "answer": "cut off he', Answer)
    assert parsed.items == ["a", "b"] and parsed.answer.startswith("cut off")
    with pytest.raises(ModelOutputError, match="Answer: no JSON object"):
        parse_json_reply("no object here", Answer)
    with pytest.raises(ModelOutputError, match="do not fit the schema"):
        parse_json_reply('{"items": "not a list", "answer": 3}', Answer)


def test_unknown_models_are_refused_clearly():
    with pytest.raises(InputError, match="unknown model 'gpt5'"):
        get_chat_model(Context(model="gpt5"))
    with pytest.raises(ModelUnavailableError, match="GGUF file not found"):
        get_chat_model(Context(model="gguf:/nonexistent/model.gguf"))


def test_an_unknown_value_for_an_enumerated_setting_is_an_input_error():
    """A typo in a Literal setting (any method's) names the setting, the value and the choices."""
    import pytest

    from agent.app.settings import method_context
    from agent.context import Context
    from agent.errors import InputError

    with pytest.raises(InputError, match=r"structured_output='json_shema' is not one of: json_schema, json_object, prompt"):
        Context(structured_output="json_shema")
    with pytest.raises(InputError, match=r"retrieval_mode='dens' is not one of: dense, sparse, hybrid"):
        method_context("vanilla", {"retrieval_mode": "dens"})
    with pytest.raises(InputError, match=r"grounding='entail' is not one of: overlap, entailment, off"):
        method_context("verdict", {"grounding": "entail"})
    assert Context(structured_output="prompt").structured_output == "prompt"


def test_a_per_call_completion_cap_is_sent_and_never_exceeds_the_context_cap(openai_env, recorder):
    with FakeOpenAI(reply="ok") as fake:
        context = openai_env(fake).replace(max_tokens=300)
        call_model(context, [("user", "hi")], max_tokens=40)
        call_model(context, [("user", "hi")], max_tokens=5000)
        assert [r["max_completion_tokens"] for r in fake.requests] == [40, 300]
    assert recorder["llm_rounds"] == 2


def test_parallel_calls_count_as_one_round_per_wave():
    from agent.usage import map_concurrent, record_round

    recorder = UsageRecorder()
    token = _current.set(recorder)
    try:
        map_concurrent(lambda n: [record_round() for _ in range(n)], [1, 2, 1, 1, 1], limit=4)
        map_concurrent(lambda n: record_round(), [1], limit=4)  # one item runs inline: one round
    finally:
        _current.reset(token)
    # first wave of 4: its longest item made 2 calls one after the other; second wave: 1; then 1
    assert recorder.counts["llm_rounds"] == 2 + 1 + 1


def test_local_requests_turn_dry_off_next_to_a_response_format(monkeypatch):
    """DRY penalized the model's copies of the passages (glued and broken words): every local
    request turns it off, whatever per-call options (a response format) it carries."""
    from langchain_core.messages import HumanMessage

    from agent.context import Context
    from agent.llm import models

    monkeypatch.setattr(models, "_local_base_url", lambda _context: "http://127.0.0.1:9/v1")  # no server
    model = models._build(Context(model="local"))
    payload = model._get_request_payload([HumanMessage("hi")], extra_body={"response_format": {"type": "json_object"}})
    assert payload["extra_body"] == {"dry_multiplier": 0.0, "response_format": {"type": "json_object"}}
    assert model._get_request_payload([HumanMessage("hi")])["extra_body"] == {"dry_multiplier": 0.0}


def test_a_reply_cut_at_the_token_limit_keeps_its_complete_part():
    """The 1.5B often spends its 250 tokens on interpretations: the complete ones are kept and
    the answer not reached is empty, instead of a retry that would be cut the same way."""
    from agent.llm.calls import parse_json_reply
    from agent.llm.schemas import Synthesis

    cut = ('{"interpretations": [{"question": "What is Apple, the company?", "answer": "a company", "citations": [1]}, '
           '{"question": "What is an apple?", "answer": "a fru')
    reply = parse_json_reply(cut, Synthesis)
    assert [i.answer for i in reply.interpretations] == ["a company"] and reply.answer == ""
    reply = parse_json_reply('{"interpretations": [], "answer": "Apple is a company [1]. Apple is a fru', Synthesis)
    assert reply.answer.startswith("Apple is a company [1].")
