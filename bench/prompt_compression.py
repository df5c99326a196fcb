"""Prompt tokens of the shared synthesis prompt with and without extractive compression.

    .venv/bin/python bench/prompt_compression.py [--split test|tune|all] [--k 5] [--index DIR]
    .venv/bin/python bench/prompt_compression.py --questions asqa --index WIKI_POOL_INDEX [--split test]
    .venv/bin/python bench/prompt_compression.py --baseline 4971195^   # "before": that revision's prompt file

For each demo fixture question (or ASQA pool question of the split, over the wiki-pool index): vanilla's retrieval (hybrid, top k), the `synthesize_answer`
prompt rendered with whole passages and with `compress_passages` (agent/steps/compression.py),
counted with tiktoken (cl100k). Also a quality proxy that needs no LLM: of the gold answers the
whole passages hold (demo: >= 80% of their content words in one passage; ASQA: a short answer's
alias as a substring), the share the compressed passages still hold. The LLM's quality with the switch on is measured separately.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def questions(split: str) -> list[dict]:
    fixture = json.loads((ROOT / "agent" / "data" / "demo_questions.json").read_text())["questions"]
    if split == "all":
        return fixture
    wanted = set((ROOT / "bench" / "splits" / f"demo_{split}.txt").read_text().split())
    return [q for q in fixture if q["id"] in wanted]


def asqa_items(split: str) -> list[dict]:
    """ASQA pool questions of the split, with each QA pair's short-answer aliases as gold answers."""
    import os

    from agent.evaluation.datasets import load_asqa

    data = Path(os.environ.get("DISAMBIG_SHARED_DATA") or ROOT.parent / "shared" / "data") / "asqa" / "asqa_dev.json"
    names = ["tune", "test"] if split == "all" else [split]
    wanted = {i for name in names for i in (ROOT / "bench" / "splits" / f"asqa_pool_{name}.txt").read_text().split()}
    return [{"question": e.question, "aliases": [[a for group in pair["short_answers"] for a in group]
                                                for pair in e.qa_pairs]}
            for e in load_asqa(data) if e.id in wanted]


def _folded(text: str) -> str:
    import re

    return " ".join(re.findall(r"\w+", text.casefold()))


def golds_held(item: dict, passages: list[dict]) -> list[bool]:
    """Per gold answer of the question: whether the passages hold it."""
    from agent.steps.grounding import answer_support

    if "aliases" in item:
        text = " " + " ".join(_folded(f"{p['title']} {p['text']}") for p in passages) + " "
        return [any(f" {_folded(a)} " in text for a in aliases if _folded(a)) for aliases in item["aliases"]]
    return [any(answer_support(g["answer"], p["text"]) >= 0.8 for p in passages) for g in item["interpretations"]]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=["test", "tune", "all"], default="all")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--index", help="an index of the demo corpus (default: built in a temp dir), or the wiki pool's")
    parser.add_argument("--questions", choices=["demo", "asqa"], default="demo")
    parser.add_argument("--baseline", metavar="REV", help="render the whole-passage prompt with prompts/synthesize_answer.md "
                        "as of this git revision (e.g. 4971195^, before compression and the shorter prompt)")
    args = parser.parse_args()
    if args.questions == "asqa" and not args.index:
        parser.error("--questions asqa needs --index (the wiki-pool index)")

    from agent.context import Context
    from agent.llm.prompts import format_passages, messages_of, parse_prompt, render
    from agent.retrieval.retriever import get_retriever
    from agent.retrieval.tokens import count_tokens
    from agent.steps.compression import compress_passages
    from bench.cost import build_demo_index

    context = Context(index_dir=args.index or build_demo_index(), k=args.k)
    retriever = get_retriever(context)

    def prompt_tokens(question: str, passages: list[dict], prompt_text: str | None = None) -> int:
        values = {"question": question, "passages": format_passages(passages), "guidance": ""}
        messages = (render("synthesize_answer", **values) if prompt_text is None
                    else messages_of(*parse_prompt(prompt_text), **values))
        return sum(count_tokens(str(m.content)) for m in messages)

    baseline = None
    if args.baseline:
        baseline = subprocess.run(["git", "show", f"{args.baseline}:prompts/synthesize_answer.md"], cwd=ROOT,
                                  capture_output=True, text=True, check=True).stdout

    before, after, held, kept = [], [], 0, 0
    items = asqa_items(args.split) if args.questions == "asqa" else questions(args.split)
    for item in items:
        passages = retriever.search(item["question"], "hybrid", args.k)
        short = compress_passages(item["question"], passages, retriever.embed_queries)
        before.append(prompt_tokens(item["question"], passages, baseline))
        after.append(prompt_tokens(item["question"], short))
        for whole, part in zip(golds_held(item, passages), golds_held(item, short)):
            held += whole
            kept += whole and part
    cuts = [1 - a / b for a, b in zip(after, before)]
    name = "ASQA pool" if args.questions == "asqa" else "demo fixture"
    print(f"{name} ({args.split}, n={len(before)}), k={args.k}, synthesize_answer prompt, tiktoken cl100k")
    print("| | prompt tokens/q mean | median | min | max |\n|---|---|---|---|---|")
    first = f"whole passages, prompt of {args.baseline}" if args.baseline else "whole passages"
    for name, values in ((first, before), ("compressed", after)):
        print(f"| {name} | {statistics.mean(values):.0f} | {statistics.median(values):.0f} | {min(values)} | {max(values)} |")
    print(f"cut per question: mean {100 * statistics.mean(cuts):.1f}%, min {100 * min(cuts):.1f}%, "
          f"max {100 * max(cuts):.1f}%")
    print(f"gold answers held by the passages: {held}; still held after compression: {kept} "
          f"({100 * kept / max(held, 1):.1f}%)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
