"""Load: N concurrent chat threads against two production replicas (Aegra on one PostgreSQL), fake model.

    python bench/load_postgres.py [--threads 50] [--latency 0.3]

Everything runs on 127.0.0.1 and is stopped at the end: a throwaway PostgreSQL (bench/postgres.py),
the fixed-latency fake OpenAI server (bench/fake_openai.py), two `disambig serve --backend postgres`
replicas. Each thread, alternating replicas between steps:
  1. asks "What is HP?" on replica i%2 -> waits at a clarification (two options),
  2. answers option 1 on the other replica -> the focused answer streams,
  3. asks "What is a jaguar?" on the first replica again -> a one-meaning answer streams.
Then its history is read back and must be exactly [human, ai, human, ai] with the right texts.
Printed: failed runs, incomplete or out-of-order histories, and p50/p95 time to first token (TTFT)
and overhead over the model's own latency (TTFT - latency x model calls made before the first
token) for the streamed steps. Bounded: each request times out after --timeout seconds.
The machine's 2 cores are shared with other work: timings are indicative only.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.fake_openai import FakeOpenAI  # noqa: E402
from bench.postgres import PostgresServer  # noqa: E402
from bench.replicas import Replica, interrupt_of, replica_env  # noqa: E402

KEY = "load-key-7c1d9e0b2a4f4e55"
HP_ANSWER = "HP is Hewlett-Packard, an American technology company [1]."
JAGUAR_ANSWER = "A jaguar is a big cat of the Americas [1]."


def reply(request: dict) -> str:
    """The chat script of tests/chat_script.py, restated here (benches do not import tests)."""
    prompt = "\n".join(str(m.get("content")) for m in request.get("messages", []))
    if "The user was asked what they meant" in prompt:
        return json.dumps({"answer": HP_ANSWER, "interpretations": [
            {"question": "What is HP, the company?", "answer": "Hewlett-Packard", "citations": [1]}]})
    if "Latest message:" in prompt:
        return json.dumps({"question": "What is a jaguar, the animal?"})
    if "jaguar" in prompt.split("Question:")[-1].split("\n")[0].lower():
        return json.dumps({"answer": JAGUAR_ANSWER, "interpretations": [
            {"question": "What is a jaguar, the animal?", "answer": "a big cat", "citations": [1]}]})
    return json.dumps({"answer": "HP can mean Hewlett-Packard [1] or horsepower [3].",
                       "interpretations": [
                           {"question": "What is HP, the company?", "answer": "Hewlett-Packard", "citations": [1, 2]},
                           {"question": "What is hp, the unit?", "answer": "horsepower", "citations": [3]}]})


async def stream(client: httpx.AsyncClient, thread: str, body: dict) -> dict:
    """One run: its interrupt (if any), the streamed text, and the time to its first token."""
    started, first, text, asked, error = time.perf_counter(), None, "", None, None
    body = {"assistant_id": "chat", "context": {"model": "openai:fake"}, "stream_mode": ["custom", "values"], **body}
    async with client.stream("POST", f"/threads/{thread}/runs/stream", json=body) as response:
        if response.status_code != 200:
            return {"error": f"HTTP {response.status_code}"}
        name = None
        async for line in response.aiter_lines():
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: ") and name:
                data = json.loads(line[6:])
                if name == "error":
                    error = str(data)
                elif name == "custom" and data.get("event") == "token":
                    first = first or time.perf_counter()
                    text += data["text"]
                asked = asked or interrupt_of(name, data)
    return {"error": error, "asked": asked, "text": text, "ttft": first and first - started}


async def one_thread(number: int, clients: list, latency: float) -> dict:
    here, there = clients[number % 2], clients[(number + 1) % 2]
    thread = (await here.post("/threads", json={})).json()["thread_id"]
    ask = await stream(here, thread, {"input": {"question": "What is HP?"}})
    focus = await stream(there, thread, {"command": {"resume": 1}})
    follow = await stream(here, thread, {"input": {"question": "What is a jaguar?"}})
    state = (await there.get(f"/threads/{thread}/state")).json()
    steps = [ask, focus, follow]
    failed = sum(1 for s in steps if s.get("error")) + (0 if ask.get("asked") else 1)
    history = [(m["type"], m["content"]) for m in state["values"].get("messages", [])]
    complete = history == [("human", "What is HP?"), ("ai", HP_ANSWER), ("human", "What is a jaguar?"),
                           ("ai", JAGUAR_ANSWER)]
    calls = (state["values"].get("usage") or {}).get("llm_calls", 0)  # the last turn's model calls
    return {"failed": failed, "complete": complete, "ttft_focus": focus.get("ttft"), "ttft_follow": follow.get("ttft"),
            "overhead_focus": focus.get("ttft") and focus["ttft"] - latency,
            "overhead_follow": follow.get("ttft") and follow["ttft"] - latency * calls}


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


async def load(replicas: list, threads: int, latency: float, timeout: float) -> list[dict]:
    limits = httpx.Limits(max_connections=threads * 2)
    clients = [httpx.AsyncClient(base_url=r.base, headers={"Authorization": f"Bearer {KEY}"}, timeout=timeout,
                                 limits=limits) for r in replicas]
    try:
        results = await asyncio.gather(*(one_thread(i, clients, latency) for i in range(threads)),
                                       return_exceptions=True)
    finally:
        for client in clients:
            await client.aclose()
    return [r if isinstance(r, dict) else {"failed": 3, "complete": False, "exception": repr(r)} for r in results]


def report(results: list[dict], threads: int, latency: float, wall: float) -> None:
    print(f"\n{threads} concurrent chat threads x 3 runs, 2 replicas, fake model {latency * 1000:.0f} ms; "
          f"wall {wall:.1f}s (shared 2-core machine: indicative only)")
    print(f"failed runs: {sum(r['failed'] for r in results)} of {3 * threads}; "
          f"histories complete and in order: {sum(r['complete'] for r in results)} of {threads}")
    for r in results:
        if "exception" in r:
            print("  error:", r["exception"][:300])
    print(f"\n{'streamed step':34} {'n':>4} {'TTFT p50':>9} {'TTFT p95':>9} {'overhead p50':>13} {'overhead p95':>13}")
    for label, key in (("answer after clarification (1 call)", "focus"), ("follow-up turn (its calls)", "follow")):
        ttft = [r[f"ttft_{key}"] for r in results if r.get(f"ttft_{key}")]
        over = [r[f"overhead_{key}"] for r in results if r.get(f"overhead_{key}") is not None]
        if ttft:
            print(f"{label:34} {len(ttft):4} {percentile(ttft, .5):8.2f}s {percentile(ttft, .95):8.2f}s "
                  f"{percentile(over, .5):12.2f}s {percentile(over, .95):12.2f}s")
    if results and all(r.get("ttft_focus") for r in results):
        print(f"mean TTFT after clarification {statistics.mean(r['ttft_focus'] for r in results):.2f}s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=50)
    parser.add_argument("--latency", type=float, default=0.3, help="the fake model's latency in seconds")
    parser.add_argument("--timeout", type=float, default=300, help="per-request timeout in seconds")
    args = parser.parse_args()
    from agent.retrieval.corpus import ReadReport, read_passages
    from agent.retrieval.index import IndexStore, ingest

    root = Path(__file__).resolve().parents[1]
    index = tempfile.mkdtemp(prefix="load-index-")
    ingest(IndexStore(index, create=True), read_passages([str(root / "agent/data/demo_corpus.jsonl")], ReadReport()))
    with PostgresServer() as pg, FakeOpenAI(reply=reply, latency=args.latency) as fake:
        env = replica_env(fake.base_url, index, f"load:{KEY}", PYTHONPATH=str(root))
        replicas = [Replica(pg.create_database("load"), env).launch()]
        replicas.append(Replica(replicas[0].database_url, env).launch())
        try:
            for replica in replicas:
                replica.wait_ready()
            started = time.perf_counter()
            results = asyncio.run(load(replicas, args.threads, args.latency, args.timeout))
            report(results, args.threads, args.latency, time.perf_counter() - started)
        finally:
            for replica in replicas:
                replica.stop()
    return 0 if all(r["failed"] == 0 and r["complete"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
