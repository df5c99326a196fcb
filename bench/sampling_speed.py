"""What the sampling options cost in generation speed on the embedded model: the synthesis
prompt vanilla sends, with and without the JSON-schema grammar and the DRY repetition controls
local requests once carried (now off, agent/llm/models.py SAMPLING_OPTIONS).

    .venv/bin/python bench/sampling_speed.py [--model local] [--question "What is HP?"] [--max-tokens 300]

Each configuration answers the same prompt (prompt cache on, so after the first call only the
generation differs); the server's own timings give tokens generated and tokens/second. Run it on
an otherwise idle machine: every other process on the 2 cores slows generation.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.prompt_cache import post  # noqa: E402

# The DRY repetition controls local requests once carried (now off: agent/llm/models.py)
DRY = {"dry_multiplier": 0.8, "dry_base": 1.75, "dry_allowed_length": 8}


def synthesis_messages(question: str, index: str) -> list[dict]:
    from agent.context import Context
    from agent.llm.prompts import format_passages, render
    from agent.retrieval.retriever import get_retriever

    context = Context(model="local", index_dir=index)
    passages = get_retriever(context).search(question, "hybrid", context.k)
    role = {"system": "system", "human": "user"}
    return [{"role": role[m.type], "content": str(m.content)}
            for m in render("synthesize_answer", question=question, passages=format_passages(passages, 900), guidance="")]


def main() -> int:
    from agent.context import Context
    from agent.llm.models import SAMPLING_OPTIONS, _local_base_url
    from agent.llm.schemas import Synthesis
    from bench.cost import build_demo_index

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="local")
    parser.add_argument("--question", default="What is HP?")
    parser.add_argument("--index", help="index directory (default: the demo corpus)")
    parser.add_argument("--max-tokens", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    messages = synthesis_messages(args.question, args.index or build_demo_index())
    url = _local_base_url(Context(model=args.model, local_parallel=1)) + "/chat/completions"
    grammar = {"response_format": {"type": "json_schema",
                                   "json_schema": {"name": "Synthesis", "schema": Synthesis.model_json_schema()}}}
    configs = {"plain": dict(SAMPLING_OPTIONS), "DRY": DRY, "grammar (the product)": {**grammar, **SAMPLING_OPTIONS},
               "grammar + DRY (the product's former setting)": {**grammar, **DRY}}
    post(url, {"messages": messages, "max_tokens": 1, "temperature": 0})  # the prompt into the cache
    print(f"{args.model}, vanilla's synthesis prompt for {args.question!r}, temperature 0, cap {args.max_tokens}")
    print("| sampling | tokens generated | tokens/s | generation s |")
    print("|---|---|---|---|")
    for name, extra in configs.items():
        runs = [post(url, {"messages": messages, "max_tokens": args.max_tokens, "temperature": 0, **extra})["timings"]
                for _ in range(args.repeat)]
        n = sum(t["predicted_n"] for t in runs)
        ms = sum(t["predicted_ms"] for t in runs)
        print(f"| {name} | {n / len(runs):.0f} | {1000 * n / ms:.1f} | {ms / 1000 / len(runs):.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
