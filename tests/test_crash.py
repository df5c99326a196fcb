"""Crash: SIGKILL a production replica while a chat run streams; the other replica carries on from PostgreSQL.

Two `disambig serve --backend postgres` replicas share one database; the fake model answers after
SLOW seconds so the kill lands while the answering step's model call is in flight. The killed run's
row stays "running" until the survivor takes the thread over and marks it interrupted.
"""

import time

import psycopg
import pytest

from agent.app.run_takeover import MESSAGE
from agent.steps.clarify import PROMPT
from bench.fake_openai import FakeOpenAI
from bench.replicas import Replica, interrupt_of, replica_env, sse_events
from tests.chat_script import fake_openai_reply

KEY = "alice-key-2f9c1e7a55d04b1e"
SLOW = 4.0


@pytest.fixture
def replicas(postgres, demo_index):
    url = postgres.create_database("crash")
    with FakeOpenAI(reply=fake_openai_reply, latency=SLOW) as fake:
        env = replica_env(fake.base_url, demo_index, f"alice:{KEY}")
        pair = [Replica(url, env).launch() for _ in range(2)]
        try:
            yield [replica.wait_ready() for replica in pair]
        finally:
            for replica in pair:
                replica.stop()


def run_rows(url: str, thread: str) -> list[tuple]:
    """(status, error message) of the thread's runs, oldest first, read straight from PostgreSQL."""
    with psycopg.connect(url) as connection:
        return connection.execute("SELECT status, error_message FROM runs WHERE thread_id = %s ORDER BY created_at",
                                  (thread,)).fetchall()


def run_statuses(url: str, thread: str) -> list[str]:
    return [status for status, _ in run_rows(url, thread)]


def checkpoint_saved(client, thread: str, seconds: float = SLOW / 2) -> bool:
    """Whether the run's checkpoint before its answering step reaches PostgreSQL within `seconds`.
    LangGraph writes a step's checkpoint while the next step runs (durability "async"), so on a
    loaded machine a kill the instant the model call starts can land before that write."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if client.get(f"/threads/{thread}/state").json().get("next") == ["run_method"]:
            return True
        time.sleep(0.05)
    return False


def run_body(**body) -> dict:
    return {"assistant_id": "chat", "context": {"model": "openai:fake", "downstream": "vanilla"}, "stream_mode": ["custom", "values"], **body}


def test_sigkill_mid_stream_the_other_replica_resumes_from_the_last_checkpoint(replicas):
    doomed, survivor = replicas
    with doomed.client(KEY) as a, survivor.client(KEY) as b:
        waiting = a.post("/threads", json={}).json()["thread_id"]  # a thread already waiting at a clarification
        with a.stream("POST", f"/threads/{waiting}/runs/stream", json=run_body(input={"question": "What is HP?"})) as r:
            options = [i for i in (interrupt_of(n, d) for n, d in sse_events(r)) if i][0]["options"]

        streaming = a.post("/threads", json={}).json()["thread_id"]
        seen = []
        with a.stream("POST", f"/threads/{streaming}/runs/stream", json=run_body(input={"question": "What is HP?"})) as r:
            for name, data in sse_events(r):
                seen.append(data.get("node") if name == "custom" else name)
                if name == "custom" and data.get("node") == "synthesize_answer":  # the model call is in flight
                    saved = checkpoint_saved(b, streaming)
                    doomed.kill()
                    break
        assert saved and doomed.process.returncode == -9 and "read_message" in seen
        assert run_statuses(doomed.database_url, streaming) == ["running"]  # nobody is left to end it

        state = b.get(f"/threads/{streaming}/state").json()  # the last checkpoint, read by the other replica
        assert [m["content"] for m in state["values"]["messages"]] == ["What is HP?"]  # the message is kept
        assert state["next"] == ["run_method"] and not state["interrupts"]

        # carry on from the checkpoint: LangGraph's way is input null, which Aegra turns into {} (a new, empty
        # turn); a Command whose update rewrites the unchanged question continues the pending step instead
        carry_on = {"update": {"question": state["values"]["question"]}}
        resumed = b.post(f"/threads/{streaming}/runs/stream", json=run_body(command=carry_on))
        assert resumed.status_code == 200, resumed.text
        events = [(n, d) for n, d in sse_events(resumed)]
        stages = [d["node"] for n, d in events if n == "custom" and d.get("event") == "stage"]
        assert stages, events
        assert stages[0] == "run_method" and "read_message" not in stages  # from the checkpoint, not from scratch
        # the survivor took the thread over: the dead replica's run is interrupted, none is left running
        killed, resumed_run = run_rows(doomed.database_url, streaming)
        assert killed == ("interrupted", MESSAGE) and resumed_run[0] != "running"
        asked = [i for i in (interrupt_of(n, d) for n, d in events) if i]
        assert [o["question"] for o in asked[0]["options"]] == ["What is HP, the company?", "What is hp, the unit?"]

        still = b.get(f"/threads/{waiting}/state").json()  # the other thread is still waiting, with its options
        assert still["next"] == ["ask_clarification"] and still["interrupts"][0]["value"]["options"] == options
        with b.stream("POST", f"/threads/{waiting}/runs/stream", json=run_body(command={"resume": 2})) as r:
            tokens = "".join(d["text"] for n, d in sse_events(r) if n == "custom" and d.get("event") == "token")
        assert tokens and b.get(f"/threads/{waiting}/state").json()["next"] == []
        history = b.get(f"/threads/{streaming}/state").json()["values"]["messages"]
        # waiting at its clarification question (recorded as the assistant's message), nothing doubled
        assert [m["type"] for m in history] == ["human", "ai"] and history[1]["content"].startswith(PROMPT)
