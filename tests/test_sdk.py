"""The official Python client (`langgraph-sdk`) end to end against `disambig serve`, offline.

This is the contract other applications integrate with: threads, streamed runs of the chat
graph with the stream modes LangGraph UIs use, the clarification interrupt in the HITL shape
agent-chat-ui renders, every resume shape those clients send, and `runs.wait` on each method.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from langgraph_sdk import get_client
from langgraph_sdk.schema import Command

from graphs.registry import METHODS
from tests.chat_script import FOCUSED, ONE_MEANING, TWO_MEANINGS, fake_openai_reply
from tests.test_browser import Server
from bench.fake_openai import FakeOpenAI
from tests.test_server import server_env

FOCUSED_ANSWER = json.loads(FOCUSED)["answer"]
ALL_ANSWER = json.loads(TWO_MEANINGS)["answer"]
HP = [{"type": "text", "text": "What is HP?"}]  # how agent-chat-ui sends a human message


@pytest.fixture(scope="module")
def server(demo_index, tmp_path_factory):
    """`disambig serve` with the server's blocking-call detector on (no --allow-blocking)."""
    from agent.app.serve import server_command

    assert "--allow-blocking" not in server_command(tmp_path_factory.getbasetemp() / "x.json", "127.0.0.1", 1, False)
    base = tmp_path_factory.mktemp("sdk-server")
    with FakeOpenAI(reply=fake_openai_reply) as fake:
        running = Server(server_env(fake, demo_index), base / "state", base).start()
        yield running
        running.stop()
    assert "BlockingError" not in running.log()  # no sync call ran on the server's event loop


CHAT = {"downstream": "vanilla", "focus_answer": "model"}  # the protocol: vanilla answers, the model writes the answer
# after a choice (auto and the default answer after a choice are tested in test_chat and test_clarification_policy)


def run(coroutine):
    return asyncio.run(coroutine)


async def ask_hp(client) -> str:
    """A thread waiting at the HP clarification (asked with content blocks)."""
    thread = (await client.threads.create())["thread_id"]
    await client.runs.wait(thread, "chat", input={"messages": [{"type": "human", "content": HP}]}, context=CHAT)
    return thread


def test_stream_the_chat_graph_receive_the_interrupt_resume_with_command_and_read_the_state(server):
    async def scenario():
        client = get_client(url=server.url)
        assert "chat" in {a["graph_id"] for a in await client.assistants.search(limit=100)}
        thread = (await client.threads.create())["thread_id"]
        parts = [part async for part in client.runs.stream(
            thread, "chat", input={"messages": [{"type": "human", "content": HP}]}, context=CHAT,
            stream_mode=["updates", "messages-tuple", "custom"])]
        events = {part.event for part in parts}
        assert {"metadata", "updates", "custom", "messages"} <= events and "error" not in events
        stages = [p.data["node"] for p in parts if p.event == "custom" and p.data["event"] == "stage"]
        assert stages[:3] == ["read_message", "classify_ambiguity", "run_method"]
        [interrupt] = [p.data["__interrupt__"][0] for p in parts if p.event == "updates" and "__interrupt__" in p.data]
        request = interrupt["value"]
        assert [o["question"] for o in request["options"]] == ["What is HP, the company?", "What is hp, the unit?"]
        assert request["action_requests"][0]["name"] == "choose_interpretation"  # agent-chat-ui's HITL form
        assert request["review_configs"][0]["allowed_decisions"] == ["approve", "edit", "reject"]
        said = [p.data[0] for p in parts if p.event == "messages"]
        assert said and said[-1]["type"] == "ai" and said[-1]["content"].startswith("Which of these did you mean?")
        assert not any("interpretations" in str(m.get("content")) for m in said)  # no model-internal JSON

        state = await client.threads.get_state(thread)
        assert state["next"] == ["ask_clarification"] and state["interrupts"][0]["value"] == request
        assert (await client.threads.get(thread))["status"] == "interrupted"

        parts = [part async for part in client.runs.stream(
            thread, "chat", command=Command(resume=1), context=CHAT, stream_mode=["updates", "messages-tuple", "custom"])]
        tokens = "".join(p.data["text"] for p in parts if p.event == "custom" and p.data["event"] == "token")
        assert tokens == FOCUSED_ANSWER
        assert [p.data[0]["content"] for p in parts if p.event == "messages"][-1] == FOCUSED_ANSWER
        state = await client.threads.get_state(thread)
        values = state["values"]
        assert state["next"] == [] and values["answer"] == FOCUSED_ANSWER and values["decision"]["choice"] == 1
        assert [m["type"] for m in values["messages"]] == ["human", "ai", "human", "ai"]
        assert values["messages"][2]["content"] == request["options"][0]["label"]  # the sense chosen, by its name
        assert request["options"][0]["label"].startswith("Hewlett-Packard")
        history = await client.threads.get_history(thread)
        assert history[0]["values"]["answer"] == FOCUSED_ANSWER and "answer" not in history[-1]["values"]  # newest first
        assert (await client.threads.get(thread))["status"] == "idle"

    run(scenario())


@pytest.mark.parametrize("resume, choice", [
    (2, 2),  # a raw option number
    ("What is hp, the unit?", 2),  # the option's text
    ([{"type": "response", "args": "1"}], 1),  # the agent-inbox HumanResponse list
    ({"decisions": [{"type": "edit", "edited_action": {"name": "choose_interpretation", "args": {"choice": "2"}}}]}, 2),
    ({"decisions": [{"type": "reject", "message": "1"}]}, 1),  # agent-chat-ui's free-text reply
    ({"decisions": [{"type": "approve"}]}, "all"),  # accepting the offered choice: all of them
])
def test_every_resume_shape_answers_the_clarification(server, resume, choice):
    async def scenario():
        client = get_client(url=server.url)
        thread = await ask_hp(client)
        values = await client.runs.wait(thread, "chat", command=Command(resume=resume), context=CHAT)
        assert values["decision"]["choice"] == choice
        assert values["answer"] == (ALL_ANSWER if choice == "all" else FOCUSED_ANSWER)
        assert (await client.threads.get_state(thread))["next"] == []

    run(scenario())


def test_a_new_human_message_on_a_waiting_thread_is_the_answer_not_a_new_question(server):
    """agent-chat-ui sends a typed reply as a new run with input, not as a resume command."""
    async def scenario():
        client = get_client(url=server.url)
        thread = await ask_hp(client)
        values = await client.runs.wait(thread, "chat", input={
            "messages": [{"type": "human", "content": [{"type": "text", "text": "2"}]}]}, context=CHAT)
        assert values["decision"]["choice"] == 2 and values["decision"]["original_query"] == "What is HP?"
        assert values["answer"] == FOCUSED_ANSWER
        state = await client.threads.get_state(thread)
        assert state["next"] == [] and not state["interrupts"]
        texts = [m["content"] if isinstance(m["content"], str) else m["content"][0]["text"]
                 for m in state["values"]["messages"]]
        assert texts[0] == "What is HP?" and texts[2:] == ["2", FOCUSED_ANSWER]
        values = await client.runs.wait(thread, "chat", input={"messages": [{"type": "human", "content": "What is a jaguar?"}]},
                                        context=CHAT)
        # afterwards a message is a new question (rewritten from the history: its own passage numbers)
        assert values["answer"].startswith("A jaguar is a big cat of the Americas [")

    run(scenario())


def test_runs_wait_on_each_method_graph(server):
    async def scenario():
        client = get_client(url=server.url)
        for name in [*METHODS, "chat"]:
            values = await client.runs.wait(None, name, input={"question": "What is a jaguar?"})
            assert isinstance(values.get("answer"), str) and values["answer"], name
            assert values["route"] and values["usage"]["llm_calls"] >= 1, name
            if name == "vanilla":
                assert values["answer"] == json.loads(ONE_MEANING)["answer"], name
            if name in ("rac", "adf", "iterative"):  # their own passages: their own citation numbers
                assert values["answer"].startswith("A jaguar is a big cat of the Americas ["), name

    run(scenario())


def test_a_run_on_an_empty_index_reports_the_error_to_the_client(server, tmp_path):
    async def scenario():
        client = get_client(url=server.url)
        values = await client.runs.wait(None, "vanilla", input={"question": "What is HP?"},
                                        context={"index_dir": str(tmp_path / "no-index")}, raise_error=False)
        error = values["__error__"]
        assert error["error"] == "IndexMissingError" and "no-index" in error["message"]

    run(scenario())
