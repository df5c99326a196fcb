"""Speculative decoding on this CPU: the 0.5B (`local-small`) drafting for the 1.5B (`local`).

    .venv/bin/python bench/speculative.py [--questions 3] [--draft-max 8] [--max-tokens 200]

Starts two embedded llama.cpp servers on the 1.5B weights, one plain and one with the 0.5B as
draft model (same Qwen2.5 tokenizer), and sends each the same vanilla answer prompts over the
demo corpus (the demo sample questions), alternating plain and speculative call by call so
load from other processes hits both alike. Prints generated tokens, generation tokens/s and
wall seconds per server, and the draft acceptance the server reports. The product keeps
speculative decoding only if it wins here.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.prompt_cache import post as post_json  # noqa: E402


def post(url: str, body: dict) -> dict:
    return post_json(url, body, timeout=1200)


def server(model: Path, draft: Path | None, threads: int, draft_max: int):
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = str(model)
    params.n_ctx = 8192
    params.n_parallel = 1
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.port = 0
    params.verbosity = -1
    if draft is not None:
        params.speculative.types = [xllamacpp.common_speculative_type.COMMON_SPECULATIVE_TYPE_DRAFT_SIMPLE]
        params.speculative.draft.mparams.path = str(draft)
        params.speculative.draft.n_max = draft_max
        params.speculative.draft.n_min = 0
        params.speculative.draft.cpuparams.n_threads = threads
        params.speculative.draft.cpuparams_batch.n_threads = threads
    return xllamacpp.Server(params)


def vanilla_prompts(count: int) -> list[list[dict]]:
    from agent.context import Context
    from agent.llm.prompts import format_passages, render
    from agent.retrieval.retriever import get_retriever
    from bench.cost import build_demo_index, demo_questions

    retriever = get_retriever(Context(model="local", index_dir=build_demo_index()))
    role = {"system": "system", "human": "user"}
    batch = []
    for question in demo_questions(count):
        passages = retriever.search(question, "hybrid", 5)
        messages = render("synthesize_answer", question=question, passages=format_passages(passages), guidance="")
        batch.append([{"role": role[m.type], "content": str(m.content)} for m in messages])
    return batch


def main() -> int:
    from agent.llm.models import PACKAGED, assemble_weights

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=int, default=3)
    parser.add_argument("--draft-max", type=int, default=8, help="tokens drafted per step at most")
    parser.add_argument("--max-tokens", type=int, default=200)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    target, draft = assemble_weights(PACKAGED["local"]), assemble_weights(PACKAGED["local-small"])
    servers = {"plain": server(target, None, args.threads, args.draft_max),
               "speculative": server(target, draft, args.threads, args.draft_max)}
    urls = {name: s.listening_address + "/v1/chat/completions" for name, s in servers.items()}
    totals = {name: {"tokens": 0, "gen_ms": 0.0, "wall": 0.0, "drafted": 0, "accepted": 0} for name in servers}
    same = True
    for messages in vanilla_prompts(args.questions):
        texts = {}
        for name, url in urls.items():
            started = time.time()
            reply = post(url, {"messages": messages, "max_tokens": args.max_tokens, "temperature": 0,
                               "cache_prompt": False})
            timings = reply.get("timings") or {}
            t = totals[name]
            t["wall"] += time.time() - started
            t["tokens"] += timings.get("predicted_n", 0)
            t["gen_ms"] += timings.get("predicted_ms", 0.0)
            t["drafted"] += timings.get("draft_n", 0)
            t["accepted"] += timings.get("draft_n_accepted", 0)
            texts[name] = reply["choices"][0]["message"]["content"]
        same = same and texts["plain"] == texts["speculative"]
    print(f"{args.questions} vanilla answer prompts (demo corpus), {args.threads} threads, draft max {args.draft_max}, "
          f"completion cap {args.max_tokens}; identical output: {same}")
    print("| server | generated tokens | generation tok/s | wall s | drafted | accepted |")
    print("|---|---|---|---|---|---|")
    for name, t in totals.items():
        rate = 1000 * t["tokens"] / t["gen_ms"] if t["gen_ms"] else 0.0
        print(f"| {name} | {t['tokens']} | {rate:.1f} | {t['wall']:.1f} | {t['drafted']} | {t['accepted']} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
