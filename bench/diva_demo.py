"""DIVA (or DtV) on each demo topic's sample question with a real model: grade, route, cost.

    DISAMBIG_LLM_THREADS=2 .venv/bin/python bench/diva_demo.py --index /tmp/diva-demo [--model local] [--method diva]

Runs the questions one after another (the CPU is shared) and prints, per topic, the ambiguity
types, the pseudo-interpretations, each verdict, the grade and the branch taken, the LLM calls
and tokens; then tokens/query next to the 707 tokens/query the ADF paper measured for its
DIVA re-implementation. Results are also written as JSON lines (`--out`) for the record.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from importlib import resources
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent import api  # noqa: E402

ADF_DIVA_TOKENS = 707  # seed 003, hybrid retrieval row


def sample_questions(topics: list[str] | None) -> list[tuple[str, str]]:
    data = json.loads(resources.files("agent").joinpath("data", "demo_questions.json").read_text())
    return [(t["topic"], t["sample_question"]) for t in data["topics"] if not topics or t["topic"] in topics]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", required=True, help="an index of the demo corpus (disambig ingest --demo)")
    parser.add_argument("--model", default="local")
    parser.add_argument("--method", default="diva", choices=["diva", "dtv"])
    parser.add_argument("--topics", nargs="*", help="only these demo topics")
    parser.add_argument("--out", default="/tmp/diva-demo-runs.jsonl")
    args = parser.parse_args(argv)
    context = {"model": args.model, "index_dir": args.index}
    rows = []
    with open(args.out, "a", encoding="utf-8") as out:
        for topic, question in sample_questions(args.topics):
            started = time.time()
            result = api.ask(question, args.method, context)
            usage, decision = result["usage"], result["decision"]
            row = {
                "topic": topic, "question": question, "method": args.method, "model": args.model,
                "types": decision.get("ambiguity_types"), "readings": decision.get("pseudo_interpretations"),
                "verdicts": [v["verdict"] + ("?" if not v["parsed"] else "") for v in decision.get("verdicts", [])],
                "grade": decision.get("grade"), "branch": decision.get("branch", result["route"][-1]),
                "route": result["route"], "answer": result["answer"], "interpretations": result["interpretations"],
                "passages": [p["id"] for p in result["passages"]], "llm_calls": usage["llm_calls"],
                "tokens": usage["prompt_tokens"] + usage["completion_tokens"], "prompt_tokens": usage["prompt_tokens"],
                "completion_tokens": usage["completion_tokens"], "timeouts": usage["timeouts"],
                "seconds": round(time.time() - started, 1),
            }
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
            out.flush()
            rows.append(row)
            print(f"{topic}: {row['grade']} -> {row['branch']} ({row['llm_calls']} calls, {row['tokens']} tokens, "
                  f"{row['seconds']}s)", file=sys.stderr, flush=True)
    print(f"\n{args.method} on the demo topics with `{args.model}`\n")
    print("| topic | question | types | pseudo-interpretations | verdicts | grade | branch | calls | tokens |")
    print("|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        print(f"| {row['topic']} | {row['question']} | {', '.join(row['types'] or []) or '-'} | "
              f"{' / '.join(row['readings'] or []) or '(none)'} | {' '.join(row['verdicts'])} | {row['grade']} | "
              f"{row['branch']} | {row['llm_calls']} | {row['tokens']} |")
    if rows:
        tokens = sum(r["tokens"] for r in rows) / len(rows)
        prompt = sum(r["prompt_tokens"] for r in rows) / len(rows)
        print(f"\ntokens/query: {tokens:.0f} ({prompt:.0f} prompt + {tokens - prompt:.0f} completion) over {len(rows)} "
              f"questions; the ADF paper measured {ADF_DIVA_TOKENS} tokens/query for its DIVA; "
              f"LLM calls/query: {sum(r['llm_calls'] for r in rows) / len(rows):.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
