"""VERDICT's parallel extraction against a fixed-latency OpenAI-compatible fake server.

    .venv/bin/python bench/verdict_parallel.py [--latency 0.2] [--k 20] [--repeats 3] [--index DIR]

Every chat call takes `latency` seconds on the fake server (bench/fake_openai.py), so the LLM
critical path of one question is relax + ceil(k / concurrency) extraction rounds + synthesis.
The whole graph (retrieval, embedding, clustering included) is timed at concurrency 1 and 8
(and 4 for reference); grounding is `overlap` (no extra calls). Targets: concurrency 8 at
least 4x faster than 1, and within 15% of its critical path. The llama.cpp server is not used.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.fake_openai import FakeOpenAI  # noqa: E402

SENSES = {"Hewlett-Packard": "the technology company", "orsepower": "the unit of power", "it points": "games"}


def fake_reply(request: dict) -> str:
    """Plausible replies per prompt: a relaxed query, a pair grounded in the passage, an answer."""
    text = request["messages"][-1]["content"]
    if "broader search query" in text:
        return "HP"
    if "Disambiguate from this one passage" in text:
        title, _, body = re.search(r"Passage:\n<documents>\n(.*)", text).group(1).partition(": ")
        sense = next((value for key, value in SENSES.items() if key in title), None)
        if sense is None:
            return json.dumps({"sense": None, "interpretation": None, "answer": None})
        answer = " ".join(body.split()[:4])
        return json.dumps({"sense": sense, "interpretation": f"What is HP, {sense}?", "answer": answer})
    return json.dumps({"answer": "HP names a company [1], a unit of power [2] and a game statistic [3]."})


def build_index(directory: str) -> str:
    from agent.retrieval.corpus import ReadReport, read_passages
    from agent.retrieval.index import IndexStore, ingest

    store = IndexStore(directory, create=True)
    if store.count() == 0:
        ingest(store, read_passages([str(ROOT / "agent" / "data" / "demo_corpus.jsonl")], ReadReport()))
    return directory


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def run_once(index: str, k: int, concurrency: int) -> tuple[float, float, dict]:
    """(wall s, process CPU s, result) of one question; the CPU time includes the fake server."""
    from agent.app import api

    context = {"model": "openai:fake", "index_dir": index, "k": k, "concurrency": concurrency, "max_retries": 0}
    started, cpu = time.perf_counter(), cpu_seconds()
    result = api.ask("What is HP?", "verdict", context)
    return time.perf_counter() - started, cpu_seconds() - cpu, result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=0.2, help="seconds per fake LLM call (default 0.2)")
    parser.add_argument("--k", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3, help="runs per concurrency; the median is shown")
    parser.add_argument("--index", help="an index of the demo corpus (default: build one in a temp dir)")
    args = parser.parse_args()

    # one encoder thread: on a shared, oversubscribed CPU two spinning torch threads make each
    # small embedding call 3-15x slower, which would be measured here instead of the LLM path
    os.environ.setdefault("DISAMBIG_TORCH_THREADS", "1")
    with tempfile.TemporaryDirectory() as scratch, FakeOpenAI(reply=fake_reply, latency=args.latency) as fake:
        os.environ.update(OPENAI_BASE_URL=fake.base_url, OPENAI_API_KEY="fake", DISAMBIG_TIMEOUT="30")
        index = args.index or build_index(scratch)
        run_once(index, args.k, 8)  # warm up: encoder, retriever, HTTP client
        rows = []
        for concurrency in (1, 4, 8):
            walls, cpus, result = [], [], None
            for _ in range(args.repeats):
                before = len(fake.requests)
                wall, cpu, result = run_once(index, args.k, concurrency)
                walls.append(wall)
                cpus.append(cpu)
                calls = len(fake.requests) - before
            critical = args.latency * (1 + math.ceil(args.k / concurrency) + 1)
            rows.append((concurrency, calls, result["usage"]["llm_calls"], statistics.median(walls), critical,
                         statistics.median(cpus)))
    print(f"VERDICT, k={args.k}, fake LLM latency {args.latency * 1000:.0f} ms, median of {args.repeats} runs, "
          f"torch threads {os.environ['DISAMBIG_TORCH_THREADS']}, load average {os.getloadavg()[0]:.1f} "
          f"on {os.cpu_count()} CPUs\n")
    print("| concurrency | LLM calls (server/usage) | wall s | LLM critical path s | wall / critical | speedup vs 1 "
          "| process CPU s |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for concurrency, calls, counted, wall, critical, cpu in rows:
        print(f"| {concurrency} | {calls}/{counted} | {wall:.3f} | {critical:.3f} | {wall / critical:.3f} | "
              f"{rows[0][3] / wall:.2f}x | {cpu:.2f} |")
    wall8, critical8 = rows[-1][3], rows[-1][4]
    speedup = rows[0][3] / wall8
    print(f"\nspeedup 8 vs 1: {speedup:.2f}x (target >= 4x, ideal {rows[0][4] / critical8:.2f}x): "
          f"{'PASS' if speedup >= 4 else 'FAIL'}")
    print(f"concurrency 8 vs its critical path: +{(wall8 / critical8 - 1) * 100:.1f}% (target <= 15%): "
          f"{'PASS' if wall8 <= 1.15 * critical8 else 'FAIL'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
