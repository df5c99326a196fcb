"""Any method on each demo topic's sample question with a real model: what it decided, what
it found, what it cost.

    DISAMBIG_LLM_THREADS=2 .venv/bin/python bench/demo_topics.py --index DIR --method adf [--model local]
        [--topics hp jaguar] [--set NAME=VALUE] [--out runs.jsonl]

Runs the questions one after another (the CPU is shared) and prints one row per topic with the
method's own decisions (ADF: gate, statistics, sub-questions, pathway overlap; DIVA/DtV: ambiguity
types, pseudo-interpretations, verdicts, grade, branch; VERDICT: extracted/abstained pairs,
grounding, clusters), the cited interpretations, and the LLM calls and tokens; then tokens/query
next to the figure the ADF paper measured for that method. Every result is appended as a JSON
line to `--out` for the record.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from importlib import resources
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.app import api  # noqa: E402
from agent.app.settings import parse_settings  # noqa: E402
from graphs.registry import load_method  # noqa: E402

# tokens/query measured by the ADF paper (hybrid retrieval rows)
PAPER_TOKENS = {"adf": 967, "diva": 707}


def sample_questions(topics: list[str] | None) -> list[tuple[str, str]]:
    data = json.loads(resources.files("agent").joinpath("data", "demo_questions.json").read_text())
    return [(t["topic"], t["sample_question"]) for t in data["topics"] if not topics or t["topic"] in topics]


def adf_columns(decision: dict) -> dict:
    return {
        "gate": f"{decision.get('gate')} (var {decision.get('variance', 0):.3f}, sep {decision.get('separability', 0):.3f})",
        "path": decision.get("path", "") + (f": {decision['fallback']}" if decision.get("fallback") else ""),
        "sub-questions": " / ".join(decision.get("sub_questions") or []) or "-",
        "overlap": f"{decision['pathway_overlap']:.2f}" if decision.get("pathway_overlap") is not None else "-",
    }


def diva_columns(decision: dict) -> dict:
    return {
        "types": ", ".join(decision.get("ambiguity_types") or []) or "-",
        "pseudo-interpretations": " / ".join(decision.get("pseudo_interpretations") or []) or "(none)",
        "verdicts": " ".join(v["verdict"] + ("?" if not v.get("parsed", True) else "")
                             for v in decision.get("verdicts", [])) or "-",
        "grade": str(decision.get("grade")),
        "branch": str(decision.get("branch", "")),
    }


def verdict_columns(decision: dict) -> dict:
    extraction, grounding = decision.get("extraction") or {}, decision.get("grounding") or {}
    consolidation = decision.get("consolidation") or {}
    return {
        "relaxed query": str(decision.get("search_query", "-")),
        "extracted/abstained/failed": f"{extraction.get('extracted', 0)}/{extraction.get('abstained', 0)}/"
                                      f"{extraction.get('failed', 0)}",
        "grounded": str(grounding.get("kept", "-")),
        "clusters": str(consolidation.get("clusters", "-")),
    }


COLUMNS = {"adf": adf_columns, "diva": diva_columns, "dtv": diva_columns, "verdict": verdict_columns}


def method_columns(method: str, decision: dict) -> dict:
    """The method's own decision columns (none for methods without a summary here)."""
    return COLUMNS[method]({**decision, **decision.get(method, {})}) if method in COLUMNS else {}


def interpretation_lines(row: dict) -> str:
    return " / ".join(f"{i['question']} -> {i['answer']} [{', '.join(i['citations'])}]"
                      for i in row["interpretations"]) or "(none)"


def run(topic: str, question: str, method: str, context: dict) -> dict:
    started = time.time()
    result = api.ask(question, method, context)
    usage, decision = result["usage"], result["decision"]
    columns = method_columns(method, decision)
    return {
        "topic": topic, "question": question, "method": method, "model": context["model"], **columns,
        "route": result["route"], "answer": result["answer"], "interpretations": result["interpretations"],
        "passages": [p["id"] for p in result["passages"]], "decision": decision,
        "llm_calls": usage["llm_calls"], "prompt_tokens": usage["prompt_tokens"],
        "completion_tokens": usage["completion_tokens"], "tokens": usage["prompt_tokens"] + usage["completion_tokens"],
        "timeouts": usage["timeouts"], "malformed": usage["malformed"], "seconds": round(time.time() - started, 1),
    }


def print_table(rows: list[dict], method: str, model: str) -> None:
    extra = list(method_columns(method, {}))
    header = ["topic", "question", *extra, "interpretations -> answer [citations]", "calls", "tokens", "s"]
    print(f"\n{method} on the demo topics with `{model}`\n")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for row in rows:
        cells = [row["topic"], row["question"], *(row[c] for c in extra), interpretation_lines(row),
                 row["llm_calls"], row["tokens"], row["seconds"]]
        print("| " + " | ".join(str(c).replace("|", "/").replace("\n", " ") for c in cells) + " |")
    if rows:
        tokens = sum(r["tokens"] for r in rows) / len(rows)
        prompt = sum(r["prompt_tokens"] for r in rows) / len(rows)
        calls = sum(r["llm_calls"] for r in rows) / len(rows)
        paper = f"; the ADF paper measured {PAPER_TOKENS[method]} for its {method.upper()}" if method in PAPER_TOKENS else ""
        print(f"\ntokens/query: {tokens:.0f} ({prompt:.0f} prompt + {tokens - prompt:.0f} completion), "
              f"LLM calls/query: {calls:.1f}, over {len(rows)} questions{paper}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", required=True, help="an index of the demo corpus (disambig ingest --demo --index DIR)")
    parser.add_argument("--method", default="adf", help="any of `disambig methods` except rewrite and chat")
    parser.add_argument("--model", default="local")
    parser.add_argument("--topics", nargs="*", help="only these demo topics")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="a method setting")
    parser.add_argument("--out", default="demo-topic-runs.jsonl")
    args = parser.parse_args(argv)
    schema = load_method(args.method).builder.context_schema
    context = {"model": args.model, "index_dir": args.index, **parse_settings(args.set, schema)}
    rows = []
    with open(args.out, "a", encoding="utf-8") as out:
        for topic, question in sample_questions(args.topics):
            row = run(topic, question, args.method, context)
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
            out.flush()
            rows.append(row)
            print(f"{topic}: {row['route']} ({row['llm_calls']} calls, {row['tokens']} tokens, {row['seconds']}s)",
                  file=sys.stderr, flush=True)
    print_table(rows, args.method, args.model)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
