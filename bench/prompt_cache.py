"""Does the llama.cpp server reuse the shared prompt prefix of consecutive calls?

    .venv/bin/python bench/prompt_cache.py [--model local-small] [--k 8] [--question "What is HP?"]

Sends VERDICT's per-passage extraction prompt (fixed instructions, then the question, then one
passage: consecutive calls share everything but the passage) for the top-k demo passages one
after another, twice: with `cache_prompt` off (every call evaluates its whole prompt) and on
(the server's default). Prints, per run, the prompt tokens sent, the tokens the server took
from its cache (usage.prompt_tokens_details.cached_tokens, or timings.cache_n), the tokens it
evaluated (timings.prompt_n) and the prompt-evaluation time. Speculative decoding is timed by
bench/speculative.py. CPU figures are disturbed by whatever else runs on the machine.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def post(url: str, body: dict, timeout: float = 600) -> dict:
    """POST JSON to the llama.cpp server and read its JSON reply."""
    request = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return json.loads(response.read())


def prompts(question: str, k: int, index: str) -> list[list[dict]]:
    from agent.context import Context
    from agent.llm.prompts import render
    from agent.retrieval.retriever import get_retriever
    from agent.steps.extraction import passage_block

    passages = get_retriever(Context(model="local", index_dir=index)).search(question, "hybrid", k)
    role = {"system": "system", "human": "user"}
    return [[{"role": role[m.type], "content": str(m.content)}
             for m in render("extract_interpretation", question=question, passage=passage_block(p))]
            for p in passages]


def run(url: str, batch: list[list[dict]], cache: bool, max_tokens: int) -> dict:
    totals = {"calls": 0, "prompt_tokens": 0, "cached": 0, "evaluated": 0, "prompt_ms": 0.0, "seconds": 0.0}
    for messages in batch:
        started = time.time()
        reply = post(url, {"messages": messages, "max_tokens": max_tokens, "temperature": 0, "cache_prompt": cache})
        totals["seconds"] += time.time() - started
        usage, timings = reply.get("usage") or {}, reply.get("timings") or {}
        cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens", timings.get("cache_n", 0)) or 0
        totals["calls"] += 1
        totals["prompt_tokens"] += usage.get("prompt_tokens", 0)
        totals["cached"] += cached
        totals["evaluated"] += timings.get("prompt_n", usage.get("prompt_tokens", 0) - cached)
        totals["prompt_ms"] += timings.get("prompt_ms", 0.0)
    return totals


def main() -> int:
    from agent.context import Context
    from agent.llm.models import _local_base_url
    from bench.cost import build_demo_index

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="local-small")
    parser.add_argument("--k", type=int, default=8)
    parser.add_argument("--question", default="What is HP?")
    parser.add_argument("--index", help="index directory (default: the demo corpus)")
    parser.add_argument("--max-tokens", type=int, default=16, help="completion cap: the prompt is what is measured")
    args = parser.parse_args()
    batch = prompts(args.question, args.k, args.index or build_demo_index())
    url = _local_base_url(Context(model=args.model, local_parallel=1)) + "/chat/completions"
    post(url, {"messages": [{"role": "user", "content": "warm up"}], "max_tokens": 1, "cache_prompt": False})
    print(f"{args.model}: {len(batch)} extraction calls for {args.question!r}, one slot, completions capped at "
          f"{args.max_tokens} tokens")
    print("| cache_prompt | prompt tokens | from cache | evaluated | prompt eval ms | wall s |")
    print("|---|---|---|---|---|---|")
    for cache in (False, True):
        t = run(url, batch, cache, args.max_tokens)
        print(f"| {'on' if cache else 'off'} | {t['prompt_tokens']} | {t['cached']} | {t['evaluated']} | "
              f"{t['prompt_ms']:.0f} | {t['seconds']:.1f} |")
    return 0


if __name__ == "__main__":
    tempfile.tempdir = tempfile.gettempdir()
    raise SystemExit(main())
