"""Production serving on real components: two Aegra replicas over one PostgreSQL, a Chroma server, the fake model.

The module starts PostgreSQL (bench/postgres.py), `chroma run`, a fake OpenAI server and two
`disambig serve --backend postgres` replicas on free loopback ports, and talks to them over HTTP
with two users' API keys, as langgraph-sdk or a web client would.
"""

import json
import uuid

import psycopg
import pytest

from bench.fake_openai import FakeOpenAI
from bench.replicas import Replica, interrupt_of, replica_env, sse_events
from tests.chat_script import FOCUSED, fake_openai_reply

ALICE, BOB = "alice-key-2f9c1e7a55d04b1e", "bob-key-8d21c0aa3e4f4c77"
KEYS = f"alice:{ALICE},bob:{BOB}"


@pytest.fixture(scope="module")
def deployment(postgres, chroma_server, tmp_path_factory):
    from agent.retrieval.corpus import ReadReport, read_passages
    from agent.retrieval.index import IndexStore, ingest
    from tests.conftest import DEMO_CORPUS

    index = str(tmp_path_factory.mktemp("server-index"))
    ingest(IndexStore(index, chroma_server, create=True), read_passages([str(DEMO_CORPUS)], ReadReport()))
    url = postgres.create_database("deployment")
    with FakeOpenAI(reply=fake_openai_reply) as fake:
        env = replica_env(fake.base_url, index, KEYS, DISAMBIG_CHROMA_URL=chroma_server)
        replicas = [Replica(url, env).launch() for _ in range(2)]  # together: migrations must not race
        try:
            for replica in replicas:
                replica.wait_ready()
            yield {"replicas": replicas, "url": url, "fake": fake, "context": {"model": "openai:fake", "downstream": "vanilla",
                                                                                 "focus_answer": "model"}}
        finally:
            for replica in replicas:
                replica.stop()


def stream_turn(client, thread: str, body: dict) -> list:
    with client.stream("POST", f"/threads/{thread}/runs/stream", json={"assistant_id": "chat", **body,
                                                                          "stream_mode": ["custom", "values"]}) as reply:
        assert reply.status_code == 200, reply.read()
        return list(sse_events(reply))


def test_two_replicas_serve_one_thread_through_a_clarification(deployment):
    first, second = deployment["replicas"]
    context = deployment["context"]
    with first.client(ALICE) as a, second.client(ALICE) as b:
        thread = a.post("/threads", json={}).json()["thread_id"]
        events = stream_turn(a, thread, {"input": {"question": "What is HP?"}, "context": context})
        assert [d["node"] for n, d in events if n == "custom" and d["event"] == "stage"][:3] == [
            "read_message", "classify_ambiguity", "run_method"]
        asked = [i for i in (interrupt_of(n, d) for n, d in events) if i]
        assert asked and [o["question"] for o in asked[0]["options"]] == ["What is HP, the company?",
                                                                           "What is hp, the unit?"]
        waiting = b.get(f"/threads/{thread}/state").json()  # the other replica sees the waiting question
        assert waiting["next"] == ["ask_clarification"]
        assert waiting["interrupts"][0]["value"]["options"] == asked[0]["options"]

        events = stream_turn(b, thread, {"command": {"resume": 1}, "context": context})
        tokens = "".join(d["text"] for n, d in events if n == "custom" and d["event"] == "token")
        assert tokens == json.loads(FOCUSED)["answer"]
        state = a.get(f"/threads/{thread}/state").json()
        assert state["next"] == [] and [m["type"] for m in state["values"]["messages"]] == ["human", "ai", "human", "ai"]
        assert state["values"]["passages"] and deployment["fake"].requests[-1]["model"] == "fake"
    with psycopg.connect(deployment["url"]) as db:  # threads, runs and checkpoints are rows in PostgreSQL
        owner, status = db.execute("SELECT user_id, status FROM thread WHERE thread_id = %s", (thread,)).fetchone()
        runs = db.execute("SELECT status FROM runs WHERE thread_id = %s ORDER BY created_at", (thread,)).fetchall()
        checkpoints = db.execute("SELECT count(*) FROM checkpoints WHERE thread_id = %s", (thread,)).fetchone()[0]
    assert (owner, status) == ("alice", "idle") and [r[0] for r in runs] == ["interrupted", "success"]
    assert checkpoints >= 4


def test_anonymous_and_unknown_keys_are_refused(deployment):
    replica = deployment["replicas"][0]
    for key in (None, "not-a-key-0123456789", ALICE[:-1]):
        with replica.client(key) as client:
            assert client.post("/threads", json={}).status_code == 401
            assert client.post("/threads/search", json={}).status_code == 401
            assert client.post(f"/threads/{uuid.uuid4()}/runs/wait", json={
                "assistant_id": "vanilla", "input": {"question": "What is HP?"}}).status_code == 401
            assert client.post("/assistants/search", json={}).status_code == 401
    with replica.client(None) as client:
        assert client.get("/health").status_code == 200  # only the health checks are open
        by_header = client.post("/threads", json={}, headers={"X-Api-Key": ALICE})  # the sdk's api_key= header
        assert by_header.status_code == 200 and by_header.json()["user_id"] == "alice"
    assert ALICE not in replica.log() and BOB not in replica.log()  # keys are never logged


def test_threads_belong_to_their_creator(deployment):
    first, second = deployment["replicas"]
    context = deployment["context"]
    with first.client(ALICE) as alice, second.client(BOB) as bob:
        thread = alice.post("/threads", json={"metadata": {"topic": "hp"}}).json()["thread_id"]
        stream_turn(alice, thread, {"input": {"question": "What is HP?"}, "context": context})  # waits at a question
        guessed = str(uuid.uuid4())
        for target in (thread, guessed):
            assert bob.get(f"/threads/{target}").status_code == 404
            assert bob.get(f"/threads/{target}/state").status_code == 404
            assert bob.post(f"/threads/{target}/history", json={}).status_code == 404
            listed = bob.get(f"/threads/{target}/runs")
            assert listed.status_code == 404 or listed.json() == []
        assert thread not in {t["thread_id"] for t in bob.post("/threads/search", json={}).json()}
        # stream, resume and delete on alice's thread: refused, and nothing of hers changes
        resumed = bob.post(f"/threads/{thread}/runs/stream", json={"assistant_id": "chat", "command": {"resume": 1},
                                                                     "context": context})
        assert resumed.status_code in (403, 404)
        assert bob.delete(f"/threads/{thread}").status_code == 404
        # creating a thread under her id: a conflict (Aegra alone answered 500), her thread untouched
        taken = bob.post("/threads", json={"thread_id": thread})
        assert taken.status_code == 409 and "already in use" in taken.json()["message"]
        mine = bob.post("/threads", json={"thread_id": guessed})  # a free id is his to take
        assert mine.status_code == 200 and mine.json()["user_id"] == "bob"
        asked = bob.post(f"/threads/{thread}/runs/stream", json={"assistant_id": "chat", "context": context,
                                                                   "input": {"question": "What is a jaguar?"}})
        assert asked.status_code in (403, 404)
        state = alice.get(f"/threads/{thread}/state").json()
        # her question and the clarification it asked; nothing of Bob's
        assert state["next"] == ["ask_clarification"] and len(state["values"]["messages"]) == 2
        assert thread in {t["thread_id"] for t in alice.post("/threads/search", json={}).json()}
        assert alice.delete(f"/threads/{thread}").status_code in (200, 204)
        assert alice.get(f"/threads/{thread}").status_code == 404
