"""Which grounding check after VERDICT's extraction: token overlap or a Yes/No entailment call?

    .venv/bin/python bench/verdict_grounding.py RESULT-<topic>.json [...] [--model local] [--out rows.json]

Input: results of `disambig ask --method verdict --json` on demo-corpus sample questions
(their `decision.pairs` hold every extracted pair before grounding). Each pair gets the
overlap support (free, recomputed) and one entailment call to `--model`. The label is the
demo fixture's: a pair is grounded when its passage is one of the question's answer passages.
Prints precision/recall of the kept pairs per check, and the extra LLM calls and time.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent.context import make_context  # noqa: E402
from agent.steps.grounding import answer_support, entailed  # noqa: E402
from agent.usage import UsageRecorder, _current, map_concurrent  # noqa: E402
from graphs.verdict import VERDICTContext, llm_concurrency  # noqa: E402


def load_demo() -> tuple[dict, dict, dict]:
    """(passage by id, answer passages by question, sample question by topic) from the demo files."""
    passages = {}
    for line in (ROOT / "agent" / "data" / "demo_corpus.jsonl").read_text().splitlines():
        record = json.loads(line)
        passages[record["id"]] = record
    demo = json.loads((ROOT / "agent" / "data" / "demo_questions.json").read_text())
    answers = {q["question"]: set(q.get("answer_passages") or []) for q in demo["questions"]}
    return passages, answers, {t["topic"]: t["sample_question"] for t in demo["topics"]}


def topic_of(path: Path, topics: dict) -> str:
    """The demo topic a result file is for: its name ends with `-<topic>.json`."""
    for topic in sorted(topics, key=len, reverse=True):
        if path.stem.endswith(topic):
            return topic
    raise SystemExit(f"{path}: name it <anything>-<topic>.json with a demo topic ({', '.join(topics)})")


def score(rows: list[dict], keep) -> tuple[int, float, float]:
    kept = [row for row in rows if keep(row)]
    good = sum(row["label"] for row in kept)
    total_good = sum(row["label"] for row in rows)
    return len(kept), good / len(kept) if kept else 0.0, good / total_good if total_good else 0.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", nargs="+", help="`disambig ask --method verdict --json` results, named *-<topic>.json")
    parser.add_argument("--model", default="local")
    parser.add_argument("--out", help="write the per-pair rows here (JSON)")
    args = parser.parse_args()
    passages, answer_passages, samples = load_demo()
    context = make_context(VERDICTContext, {"model": args.model})
    rows = []
    for name in args.results:
        path = Path(name)
        asked = samples[topic_of(path, samples)]
        if asked not in answer_passages:
            print(f"skipped {path.name}: the fixture has no answer passages for {asked!r}")
            continue
        result = json.loads(path.read_text())
        for pair in (p for p in result["decision"]["verdict"]["pairs"] if p["status"] == "extracted"):
            passage = passages[pair["passage_id"]]
            rows.append({"asked": asked, **pair, "passage": passage,
                         "support": answer_support(pair["answer"], passage["text"]),
                         "label": pair["passage_id"] in answer_passages.get(asked, set())})
    recorder = UsageRecorder()
    token = _current.set(recorder)
    started = time.perf_counter()
    verdicts = map_concurrent(lambda row: entailed(context, row, row["passage"]), rows, llm_concurrency(context))
    seconds = time.perf_counter() - started
    _current.reset(token)
    for row, verdict in zip(rows, verdicts):
        row["entailed"] = verdict
    print(f"{len(rows)} extracted pairs from {len(args.results)} questions; "
          f"{sum(r['label'] for r in rows)} come from an answer passage (label)\n")
    print("| check | kept | precision | recall | extra LLM calls | extra seconds |")
    print("|---|---:|---:|---:|---:|---:|")
    checks = [("off", lambda r: True, 0, 0.0)]
    for threshold in (0.34, 0.5, 0.67):
        checks.append((f"overlap >= {threshold}", lambda r, t=threshold: r["support"] >= t, 0, 0.0))
    checks.append(("entailment (Yes/No call)", lambda r: r["entailed"] is not False, recorder.counts["llm_calls"], seconds))
    checks.append(("overlap >= 0.5 and entailment", lambda r: r["support"] >= 0.5 and r["entailed"] is not False,
                   recorder.counts["llm_calls"], seconds))
    for name, keep, calls, spent in checks:
        kept, precision, recall = score(rows, keep)
        print(f"| {name} | {kept}/{len(rows)} | {precision:.2f} | {recall:.2f} | {calls} | {spent:.0f} |")
    if args.out:
        Path(args.out).write_text(json.dumps([{k: v for k, v in r.items() if k != "passage"} for r in rows], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
