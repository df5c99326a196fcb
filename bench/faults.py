"""Fault soak and concurrent load for every method graph, against the fake OpenAI server.

    .venv/bin/python bench/faults.py [--questions 50] [--methods vanilla,diva] [--index DIR]
                                     [--timeout 1.0] [--load 16] [--skip-soak] [--skip-load]

Soak: each method answers `questions` demo questions (cycled) on its own fault-injecting fake
server: 20% HTTP 503, 10% malformed JSON, 5% replies slower than the request timeout (seeded
draws; with several questions in flight the order of requests varies). The faults of a method
count as survived when every run ended with an answer or an explicit abstention / closed-book
flag and none raised; "usage ok" checks that usage balances over the method's runs:
retries + abstentions == 503s + timeouts + malformed structured replies.

Load: `load` concurrent api.ask calls (threads) at 100 ms fake latency, compared with the
sequential results for the same questions; the index generation and size must not change.
The local llama.cpp server is never started.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.fake_openai import FakeOpenAI  # noqa: E402
from bench.schema_reply import schema_reply  # noqa: E402

COUNTERS = ("retries", "timeouts", "malformed", "abstentions")


class SeededFaults:
    """20% 503, 10% garbage, 5% hang, by a seeded draw per request; remembers each injection."""

    def __init__(self, seed: int):
        self.rng, self.fake, self.log = random.Random(seed), None, []

    def __call__(self, number: int) -> str | None:
        draw = self.rng.random()
        fault = "503" if draw < 0.20 else "garbage" if draw < 0.30 else "timeout" if draw < 0.35 else None
        if fault == "garbage" and "response_format" not in self.fake.requests[number]:
            fault = "garbage_text"  # odd prose for a plain-text call: nothing to parse, still sent
        self.log.append(fault)
        return "garbage" if fault == "garbage_text" else fault


def soak_method(method: str, questions: list[str], index_dir: str, timeout: float, workers: int, seed: int) -> dict:
    """Run the questions `workers` at a time; faults and usage are totalled per method."""
    from agent.app import api

    faults = SeededFaults(seed)
    row = {"method": method, "runs": len(questions), "answered": 0, "abstained": 0, "crashed": 0, "errors": [],
           **{"usage_" + name: 0 for name in COUNTERS}}
    with FakeOpenAI(reply=schema_reply, faults=faults, hang_seconds=timeout + 0.5) as fake:
        faults.fake = fake
        os.environ["OPENAI_BASE_URL"] = fake.base_url
        context = {"model": "openai:fake", "index_dir": index_dir, "request_timeout": timeout}
        if method == "verdict":  # the fake's generic extractions fail overlap grounding: keep them, so
            context["grounding"] = "off"  # consolidation and synthesis run under faults too

        def one(question: str):
            try:
                return api.ask(question, method, context)
            except Exception as error:  # the soak counts escapes instead of stopping
                return error

        started = time.time()
        with ThreadPoolExecutor(max_workers=workers) as pool:
            results = list(pool.map(one, questions))
        row["seconds"] = time.time() - started
        row["requests"] = len(fake.requests)
    for result in results:
        if isinstance(result, Exception):
            row["crashed"] += 1
            row["errors"].append(f"{type(result).__name__}: {result}"[:160])
            continue
        for name in COUNTERS:
            row["usage_" + name] += result["usage"].get(name, 0)
        row["abstained" if _abstained(result) else "answered"] += 1
    log = faults.log
    row["injected"] = {kind: log.count(kind) for kind in ("503", "garbage", "timeout", "garbage_text")}
    row["survived"] = row["crashed"] == 0
    expected = row["injected"]["503"] + row["injected"]["timeout"] + row["injected"]["garbage"]
    row["accounted"] = row["usage_retries"] + row["usage_abstentions"] == expected
    return row


def _abstained(result: dict) -> bool:
    decision = result["decision"]
    flagged = decision.get("abstained") is True or any(detail.get("supported_by_corpus") is False for detail in decision.values() if isinstance(detail, dict))
    return flagged or not result["answer"].strip()


def print_soak(rows: list[dict]) -> None:
    print("\nFault soak: faults injected / survived per method (survived = every run ended with an answer"
          " or an abstention flag, no exception)")
    header = (f"{'method':<10} {'runs':>4} {'answer':>6} {'abstain':>7} {'crash':>5} {'reqs':>5} {'503':>7} "
              f"{'malformed':>9} {'slow':>7} {'retries':>7} {'timeouts':>8} {'malf.':>5} {'abst.':>5} {'usage ok':>8} {'s':>5}")
    print(header)
    print("-" * len(header))
    for r in rows:
        injected, survived = r["injected"], r["survived"]

        def pair(kind: str) -> str:
            return f"{injected[kind]}/{injected[kind] if survived else 0}"

        print(f"{r['method']:<10} {r['runs']:>4} {r['answered']:>6} {r['abstained']:>7} {r['crashed']:>5} {r['requests']:>5} "
              f"{pair('503'):>7} {pair('garbage'):>9} {pair('timeout'):>7} {r['usage_retries']:>7} {r['usage_timeouts']:>8} "
              f"{r['usage_malformed']:>5} {r['usage_abstentions']:>5} {str(r['accounted']):>8} {r['seconds']:>5.0f}")
        for error in r["errors"][:3]:
            print(f"    ! {error}")
    print("malformed = garbage sent for a structured call; garbage sent for plain-text calls (not a fault the"
          " client can detect): " + ", ".join(f"{r['method']} {r['injected']['garbage_text']}" for r in rows))


def run_soak(methods: list[str], questions: list[str], index_dir: str, timeout: float, workers: int) -> None:
    rows = [soak_method(method, questions, index_dir, timeout, workers, seed=number)
            for number, method in enumerate(methods)]
    print_soak(rows)


def _comparable(result: dict) -> str:
    keep = {k: result[k] for k in ("answer", "interpretations", "route", "decision")}
    keep["passages"] = [p["id"] for p in result["passages"]]
    return json.dumps(keep, sort_keys=True)


def run_load(method: str, questions: list[str], index_dir: str, workers: int) -> None:
    from agent.app import api
    from agent.retrieval.index import IndexStore

    store = IndexStore(index_dir)
    before = (store.count(), store.generation())
    with FakeOpenAI(reply=schema_reply, latency=0.1) as fake:
        os.environ["OPENAI_BASE_URL"] = fake.base_url
        context = {"model": "openai:fake", "index_dir": index_dir}
        sequential = [_comparable(api.ask(q, method, context)) for q in questions]
        latencies: list[float] = []

        def timed(question: str) -> str:
            start = time.perf_counter()
            result = _comparable(api.ask(question, method, context))
            latencies.append(time.perf_counter() - start)
            return result

        started = time.perf_counter()
        with ThreadPoolExecutor(max_workers=workers) as pool:
            concurrent = list(pool.map(timed, questions))
        elapsed = time.perf_counter() - started
    store = IndexStore(index_dir)
    after = (store.count(), store.generation())
    quantiles = statistics.quantiles(latencies, n=100, method="inclusive")
    print(f"\nLoad: {len(questions)} concurrent api.ask ({method}, {workers} threads, fake latency 100 ms)")
    print(f"  all succeeded: {len(concurrent) == len(questions)}; identical to sequential: "
          f"{sum(a == b for a, b in zip(sequential, concurrent))}/{len(questions)}; index unchanged: {before == after}")
    print(f"  throughput {len(questions) / elapsed:.2f} q/s; latency p50 {quantiles[49]:.2f} s, "
          f"p95 {quantiles[94]:.2f} s, p99 {quantiles[98]:.2f} s (wall {elapsed:.1f} s)")


def demo_questions(count: int) -> list[str]:
    pool = [q["question"] for q in json.loads((ROOT / "agent/data/demo_questions.json").read_text())["questions"]]
    return [pool[i % len(pool)] for i in range(count)]


def main() -> None:
    from graphs.registry import METHODS

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=int, default=50)
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--index", help="a demo index (default: build one in a temporary directory)")
    parser.add_argument("--timeout", type=float, default=1.0, help="request_timeout; slow replies take 0.5 s longer")
    parser.add_argument("--load", type=int, default=16, help="concurrent asks in the load test")
    parser.add_argument("--load-method", default="vanilla")
    parser.add_argument("--workers", type=int, default=4, help="questions in flight per method in the soak")
    parser.add_argument("--skip-soak", action="store_true")
    parser.add_argument("--skip-load", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench-fake")
    os.environ.setdefault("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    index_dir = args.index or _build_demo_index()
    if not args.skip_soak:
        run_soak(args.methods.split(","), demo_questions(args.questions), index_dir, args.timeout, args.workers)
    if not args.skip_load:
        run_load(args.load_method, demo_questions(args.load), index_dir, args.load)


def _build_demo_index() -> str:
    from agent.retrieval.corpus import ReadReport, read_passages
    from agent.retrieval.index import IndexStore, ingest

    path = tempfile.mkdtemp(prefix="bench-faults-")
    ingest(IndexStore(path, create=True), read_passages([str(ROOT / "agent/data/demo_corpus.jsonl")], ReadReport()))
    return path


if __name__ == "__main__":
    main()
