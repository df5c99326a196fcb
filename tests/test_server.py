"""LangGraph Studio and `disambig serve`: real server processes, offline, with a fake model.

Each test starts its own server on a free port (analytics, version check and tracing off),
talks to it over HTTP like Studio or a client app would, and stops the process it started.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.chat_script import FOCUSED, TWO_MEANINGS, fake_openai_reply
from bench.fake_openai import FakeOpenAI
from bench.postgres import free_port
from bench.replicas import stop_group as stop, wait_ready

ROOT = Path(__file__).resolve().parents[1]


def server_env(fake: FakeOpenAI, index: str) -> dict:
    env = {**os.environ, "OPENAI_BASE_URL": fake.base_url, "OPENAI_API_KEY": "test-key",
           "DISAMBIG_INDEX": index, "LANGGRAPH_CLI_NO_ANALYTICS": "1", "LANGGRAPH_NO_VERSION_CHECK": "1",
           "LANGSMITH_TRACING": "false"}
    env.pop("DISAMBIG_MODEL", None)
    return env


def start(command: list[str], cwd: Path, env: dict, port: int, log: Path) -> subprocess.Popen:
    """Start a server in its own process group and wait for /ok."""
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT,
                               start_new_session=True)
    try:
        wait_ready(process, f"http://127.0.0.1:{port}/ok", log)
    except RuntimeError as error:
        stop(process)
        pytest.fail(str(error))
    return process


def sse_events(response: httpx.Response) -> list[tuple[str, object]]:
    events, name = [], None
    for line in response.iter_lines():
        if line.startswith("event: "):
            name = line[len("event: "):]
        elif line.startswith("data: ") and name:
            events.append((name, json.loads(line[len("data: "):])))
    return events


@pytest.fixture
def fake():
    with FakeOpenAI(reply=fake_openai_reply) as server:
        yield server


IMPORT_CHECK = """
import importlib.util, json, re, sys
from agent.llm import models
from agent.retrieval import embeddings, retriever as retrieval
graphs = json.load(open("langgraph.json"))["graphs"]
for name, spec in graphs.items():
    assert re.fullmatch(r"[a-z][a-z0-9_]*", name), name
    path, attribute = spec.split(":")
    module_spec = importlib.util.spec_from_file_location(f"studio_{name}", path)
    module = sys.modules[module_spec.name] = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    graph = getattr(module, attribute)
    assert graph.checkpointer is None, name
    assert graph.builder.context_schema is not None, name
assert not models._models and not models._servers, "a chat model was built at import time"
assert embeddings.get_embedder.cache_info().currsize == 0, "an embedder was loaded at import time"
assert retrieval._retriever.cache_info().currsize == 0, "a retriever was opened at import time"
print(sorted(graphs))
"""


def test_langgraph_json_graphs_load_without_checkpointers_or_clients():
    """Import each graph the way the server does, in a fresh interpreter."""
    from graphs.registry import METHODS

    done = subprocess.run([sys.executable, "-c", IMPORT_CHECK], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert set(eval(done.stdout.strip().splitlines()[-1])) == set(METHODS) | {"chat"}


def test_langgraph_dev_loads_every_graph_for_studio_and_runs_one(fake, demo_index, tmp_path):
    port = free_port()
    command = [str(Path(sys.executable).parent / "langgraph"), "dev", "--port", str(port), "--no-browser", "--no-reload"]
    process = start(command, ROOT, server_env(fake, demo_index), port, tmp_path / "server.log")
    try:
        base = f"http://127.0.0.1:{port}"
        graphs = json.loads((ROOT / "langgraph.json").read_text())["graphs"]
        assistants = httpx.post(f"{base}/assistants/search", json={"limit": 100}, timeout=30).json()
        assert {a["graph_id"] for a in assistants} == set(graphs) and "chat" in graphs
        for assistant in assistants:  # what Studio shows: input form, output, per-run settings
            schemas = httpx.get(f"{base}/assistants/{assistant['assistant_id']}/schemas", timeout=60).json()
            assert "question" in schemas["input_schema"]["properties"], assistant["graph_id"]
            assert {"answer", "interpretations", "usage"} <= set(schemas["output_schema"]["properties"])
            assert {"model", "retrieval_mode", "k", "concurrency"} <= set(schemas["context_schema"]["properties"])
        run = httpx.post(f"{base}/runs/wait", timeout=300, json={
            "assistant_id": "vanilla", "input": {"question": "What is HP?"},
            "context": {"model": "openai:fake", "index_dir": demo_index}})
        output = run.json()
        assert run.status_code == 200, output
        assert output["answer"] == json.loads(TWO_MEANINGS)["answer"]
        assert [i["question"] for i in output["interpretations"]][:2] == ["What is HP, the company?",
                                                                            "What is hp, the unit?"]
        assert output["route"] == ["retrieve", "synthesize_answer"] and output["usage"]["llm_calls"] == 1
        assert len(output["passages"]) == 5 and fake.requests[-1]["model"] == "fake"
    finally:
        stop(process)
    assert process.returncode is not None


def test_disambig_serve_streams_a_chat_thread_through_a_clarification(fake, demo_index, tmp_path):
    port = free_port()
    command = [sys.executable, "-m", "agent.app.cli", "serve", "--port", str(port), "--state-dir", str(tmp_path / "srv")]
    process = start(command, tmp_path, server_env(fake, demo_index), port, tmp_path / "server.log")
    try:
        base = f"http://127.0.0.1:{port}"
        context = {"model": "openai:fake", "index_dir": demo_index, "focus_answer": "model"}  # the model answers the choice
        thread = httpx.post(f"{base}/threads", json={}, timeout=30).json()["thread_id"]
        with httpx.stream("POST", f"{base}/threads/{thread}/runs/stream", timeout=300, json={
                "assistant_id": "chat", "input": {"question": "What is HP?"}, "context": context,
                "stream_mode": ["custom", "updates"]}) as response:
            events = sse_events(response)
        custom = [data for name, data in events if name == "custom"]
        assert [e["node"] for e in custom if e["event"] == "stage"][:3] == ["read_message", "classify_ambiguity",
                                                                           "run_method"]
        assert not [e for e in custom if e["event"] == "token"]  # held back while asking
        interrupts = [data["__interrupt__"] for name, data in events if name == "updates" and "__interrupt__" in data]
        request = interrupts[0][0]["value"]
        # auto, chat's default, offers the model's two grounded readings, then its extractive readings
        # (the games passages' sense first)
        questions = [option["question"] for option in request["options"]]
        assert request["type"] == "clarification" and 2 <= len(questions) <= 4  # one per sense, at most four
        assert questions[:2] == ["What is HP, the company?", "What is hp, the unit?"]

        with httpx.stream("POST", f"{base}/threads/{thread}/runs/stream", timeout=300, json={
                "assistant_id": "chat", "command": {"resume": 1}, "context": context,
                "stream_mode": ["custom", "values"]}) as response:
            events = sse_events(response)
        tokens = "".join(data["text"] for name, data in events if name == "custom" and data["event"] == "token")
        assert tokens == json.loads(FOCUSED)["answer"]
        state = httpx.get(f"{base}/threads/{thread}/state", timeout=30).json()
        assert state["values"]["answer"] == tokens and state["next"] == []
        assert [m["type"] for m in state["values"]["messages"]] == ["human", "ai", "human", "ai"]
        assert (tmp_path / "srv" / "langgraph.json").exists()
        assert "NO AUTHENTICATION" in (tmp_path / "server.log").read_text()  # said at start-up
    finally:
        stop(process)
