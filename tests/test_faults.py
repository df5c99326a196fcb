"""Every method graph survives a misbehaving model server, and counts what went wrong.

The fake OpenAI server answers every structured call with a valid instance of the requested
schema (bench.schema_reply) and injects faults on a fixed schedule: HTTP 503s, malformed JSON,
and replies slower than the request timeout. Each run must end with an answer or an explicit
abstention / closed-book flag, never an exception or a hang, and `usage` must account for
every injected fault: the model layer turns each failed attempt into one retry or, on the
last attempt, one abstention, so retries + abstentions == transport faults + malformed replies.
"""

from __future__ import annotations

import json
import threading

import pytest

import agent.llm.calls
from agent.app import api
from agent.app.cli import main
from agent.errors import ModelUnavailableError
from graphs.registry import METHODS
from tests.conftest import ROOT
from bench.fake_openai import FakeOpenAI, closed_port_url
from bench.schema_reply import schema_reply

QUESTIONS = json.loads((ROOT / "agent" / "data" / "demo_questions.json").read_text())["questions"]
SAMPLE = [QUESTIONS[0]["question"], next(q["question"] for q in QUESTIONS if q["label"] != "ambiguous")]
SCHEDULE = ["503", None, "garbage", None, "timeout", None, None, "503", None]  # cycled over request numbers
RUN_LIMIT_S = 120  # a guard against hangs only; a healthy run takes a few seconds


class FaultLog:
    """Injects SCHEDULE by request number and remembers what it injected."""

    def __init__(self) -> None:
        self.fake: FakeOpenAI | None = None
        self.injected = {"503": 0, "timeout": 0, "garbage_structured": 0, "garbage_text": 0}

    def __call__(self, number: int) -> str | None:
        fault = SCHEDULE[number % len(SCHEDULE)]
        if fault == "garbage":
            structured = "response_format" in self.fake.requests[number]
            self.injected["garbage_structured" if structured else "garbage_text"] += 1
        elif fault:
            self.injected[fault] += 1
        return fault


@pytest.fixture
def fast_backoff(monkeypatch):
    """Keep the bounded backoff but make it short, so the suite stays fast."""
    monkeypatch.setattr(agent.llm.calls, "_backoff", lambda attempt: 0.01 * (attempt + 1))


def run_guarded(question: str, method: str, context: dict) -> dict:
    """api.ask in a thread, so a hung run fails the test instead of stalling the suite."""
    outcome: dict = {}

    def target():
        try:
            outcome["result"] = api.ask(question, method, context)
        except BaseException as error:  # noqa: BLE001 - the test reports any escape
            outcome["error"] = error

    worker = threading.Thread(target=target, daemon=True)
    worker.start()
    worker.join(RUN_LIMIT_S)
    assert not worker.is_alive(), f"{method} hung on {question!r}"
    if "error" in outcome:
        raise AssertionError(f"{method} raised {outcome['error']!r} on {question!r}") from outcome["error"]
    return outcome["result"]


def finished_properly(result: dict) -> bool:
    decision = result["decision"]
    flagged = decision.get("abstained") is True or any(detail.get("supported_by_corpus") is False for detail in decision.values() if isinstance(detail, dict))
    return bool(result["answer"].strip()) or flagged


@pytest.mark.parametrize("method", list(METHODS))
def test_every_method_survives_faults_and_counts_them(method, demo_index, monkeypatch, fast_backoff):
    log = FaultLog()
    with FakeOpenAI(reply=schema_reply, faults=log, hang_seconds=0.8) as fake:
        log.fake = fake
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-faults")
        context = {"model": "openai:fake", "index_dir": demo_index, "request_timeout": 0.5, "max_retries": 2}
        results = [run_guarded(question, method, context) for question in SAMPLE]
        requests = len(fake.requests)
    totals = {name: sum(r["usage"].get(name, 0) for r in results) for name in ("retries", "timeouts", "malformed", "abstentions", "llm_calls")}
    injected = log.injected
    assert requests > 0 and sum(injected.values()) > 0, f"{method} made {requests} requests; no fault was injected"
    for result in results:
        assert finished_properly(result), f"{method}: neither an answer nor an abstention flag: {result['decision']}"
    assert totals["timeouts"] == injected["timeout"]
    assert totals["malformed"] == injected["garbage_structured"]
    transport = injected["503"] + injected["timeout"]
    assert totals["retries"] + totals["abstentions"] == transport + injected["garbage_structured"]
    assert totals["llm_calls"] == requests - transport  # every answered request is counted once


def test_a_server_that_always_fails_gives_abstentions_not_exceptions(demo_index, monkeypatch, fast_backoff):
    with FakeOpenAI(reply=schema_reply, faults=lambda n: "503") as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-faults")
        result = run_guarded(SAMPLE[0], "vanilla", {"model": "openai:fake", "index_dir": demo_index, "max_retries": 1})
    assert result["decision"].get("abstained") is True
    assert result["usage"]["abstentions"] >= 1 and result["usage"]["retries"] >= 1
    assert result["usage"]["llm_calls"] == 0


def test_connection_refused_names_the_url(demo_index, monkeypatch, fast_backoff):
    url = closed_port_url()
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-REFUSED-KEY")
    with pytest.raises(ModelUnavailableError) as error:
        api.ask(SAMPLE[0], "vanilla", {"model": "openai:fake", "index_dir": demo_index, "max_retries": 1})
    assert url.removesuffix("/v1") in str(error.value) and "REFUSED-KEY" not in str(error.value)


def test_cli_reports_connection_refused_in_one_line(demo_index, monkeypatch, capsys, fast_backoff):
    url = closed_port_url()
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-REFUSED-KEY")
    monkeypatch.setenv("DISAMBIG_MAX_RETRIES", "0")
    code = main(["ask", SAMPLE[0], "--model", "openai:fake", "--index", demo_index, "--json"])
    err = capsys.readouterr().err.strip()
    assert code != 0
    assert len(err.splitlines()) == 1 and url.removesuffix("/v1") in err and "Traceback" not in err
    assert "REFUSED-KEY" not in err


def test_garbage_with_a_brace_is_malformed_not_an_empty_answer():
    from pydantic import BaseModel

    class Lenient(BaseModel):
        items: list[str] = []

    with pytest.raises(ValueError):
        agent.llm.calls.parse_json_reply("this is not json {", Lenient)
    assert agent.llm.calls.parse_json_reply('{"items": ["a", "b"', Lenient).items == ["a", "b"]


def test_concurrent_first_asks_open_the_index_once_and_match_sequential(demo_index, monkeypatch):
    """Threads asking at once on a cold process used to race chromadb's client registry."""
    import agent.retrieval.retriever
    from concurrent.futures import ThreadPoolExecutor

    questions = [q["question"] for q in QUESTIONS[:8]]
    with FakeOpenAI(reply=schema_reply, latency=0.05) as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-load")
        context = {"model": "openai:fake", "index_dir": demo_index}
        agent.retrieval.retriever._retriever.cache_clear()
        with ThreadPoolExecutor(max_workers=8) as pool:
            concurrent = list(pool.map(lambda q: api.ask(q, "vanilla", context), questions))
        sequential = [api.ask(q, "vanilla", context) for q in questions]

    def comparable(result):
        return result["answer"], result["route"], [p["id"] for p in result["passages"]]

    assert [comparable(r) for r in concurrent] == [comparable(r) for r in sequential]
