"""Sense recall on the demo fixture (or the held-out one), per method, with a real model.

    DISAMBIG_LLM_THREADS=2 .venv/bin/python bench/sense_recall.py --index DIR --methods auto vanilla
        [--fixture demo|heldout|tune] [--model local] [--sample 12] [--seed 0] [--out runs.jsonl] [--cache replies.sqlite]

Ambiguous questions: sense recall = the share of labelled senses whose short answer appears in a
sentence of the final answer that cites a passage of that sense (passage senses come from the demo
and held-out corpora). Clear questions: the share whose answer cites no passage of another sense or
topic (no invented second sense). `--fixture heldout` asks the held-out, test-only questions
(agent/data/heldout_questions.json: report on them, never tune on them); `--fixture tune` the
tune fixture (bench/fixtures/, tune only, over an index of all its topics with the demo corpus:
`bench/tune_fixture_corpus.py --all-topics`; a question none of whose answer passages is indexed is
skipped and counted on stderr). Prints one row per method
with the cost columns; every result is appended to `--out` as a JSON line. `--cache` replays the
model's replies from an eval response store (a rerun after a change to the code around the calls
costs no model time; its seconds are then not model time either).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.app import api  # noqa: E402
from agent.evaluation.llm_cache import ResponseStore, register_cached_model, replay_scope  # noqa: E402
from agent.llm.answers import cited_numbers  # noqa: E402
from agent.steps.grounding import answer_support  # noqa: E402
from agent.steps.interpretations import SUPPORT, sentences  # noqa: E402
from agent.evaluation.sentence_metrics import sentence_scores, summarize  # noqa: E402
from bench.train_selector import CORPORA, DATA, TUNE_FIXTURE  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = {"demo": DATA / "demo_questions.json", "heldout": DATA / "heldout_questions.json",
            "tune": TUNE_FIXTURE / "tune_questions.json"}  # tune: over its own index (train_selector.py --tune-index)


def passage_senses() -> dict[str, tuple[str, str]]:
    """passage id -> (topic, sense) from the demo and held-out corpora (`ingest --demo` indexes both)."""
    rows = [json.loads(line) for path in CORPORA if path.exists() for line in path.read_text().splitlines() if line.strip()]
    return {row["id"]: (row.get("topic", ""), row.get("sense", "")) for row in rows}


def cited_senses(sentence: str, passages: list[dict], senses: dict) -> set[tuple[str, str]]:
    return {senses.get(passages[n - 1]["id"], ("", "")) for n in cited_numbers(sentence) if 1 <= n <= len(passages)}


def score(question: dict, result: dict, senses: dict) -> dict:
    """Recalled senses (ambiguous) or whether another sense was cited (clear), with the
    sentence metrics (agent/evaluation/sentence_metrics.py) against every gold short answer."""
    golds = [item["answer"] for item in question["interpretations"]]
    return {**sense_score(question, result, senses), **sentence_scores(result["answer"], result["passages"], golds,
                                                                   question["question"])}


def sense_score(question: dict, result: dict, senses: dict) -> dict:
    parts = sentences(result["answer"])
    topic = question["topic"]
    if question["label"] == "ambiguous":
        recalled = [
            item["sense"] for item in question["interpretations"]
            if any(answer_support(item["answer"], s) >= SUPPORT and (topic, item["sense"]) in cited_senses(s, result["passages"], senses)
                   for s in parts)
        ]
        return {"senses": len(question["interpretations"]), "recalled": recalled}
    wanted = {(topic, item["sense"]) for item in question["interpretations"]}
    cited = set().union(*(cited_senses(s, result["passages"], senses) for s in parts)) if parts else set()
    return {"invented": sorted(f"{t}/{s}" for t, s in cited - wanted)}


def result_row(question: dict, result: dict, method: str, seconds: float) -> dict:
    """One run as `--out` stores it (a result of `api.ask`, or a run's final state): what
    `--rescore` needs to score it again."""
    usage, decision = result.get("usage") or {}, result.get("decision") or {}
    return {"method": method, "id": question["id"], "label": question["label"], "seconds": round(seconds, 1),
            "llm_calls": usage.get("llm_calls", 0),
            "tokens": usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0),
            "answer": result.get("answer", ""), "ambiguous": decision.get("ambiguous"),
            "passages": [{k: p.get(k, "") for k in ("id", "title", "text")} for p in result.get("passages") or []],
            "question": question["question"]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", required=True, help="an index of the demo corpus (disambig ingest --demo --index DIR)")
    parser.add_argument("--methods", nargs="+", default=["auto", "vanilla"])
    parser.add_argument("--fixture", choices=sorted(FIXTURES), default="demo",
                        help="demo (split in tune/test), heldout (test only, never tune on it) or tune (tune only)")
    parser.add_argument("--model", default="local")
    parser.add_argument("--sample", type=int, default=0, help="seeded sample of questions (0: all)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--ids", nargs="*", help="only these question ids")
    parser.add_argument("--out", default="sense-recall-runs.jsonl")
    parser.add_argument("--cache", help="replay and store the model's replies in this SQLite file")
    parser.add_argument("--split", choices=["tune", "test", "all"], default="all",
                        help="the demo fixture's half (bench/splits/demo_*.txt); the held-out fixture is test only")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="a method setting")
    parser.add_argument("--rescore", metavar="RUNS", help="score the rows of an earlier --out file again, run nothing")
    args = parser.parse_args(argv)
    if args.rescore:
        return report([json.loads(line) for line in Path(args.rescore).read_text().splitlines() if line.strip()],
                      args.fixture, args.model, rescore=True)
    model = register_cached_model(args.model, ResponseStore(args.cache)) if args.cache else args.model
    questions = json.loads(FIXTURES[args.fixture].read_text())["questions"]
    if args.split != "all" and args.fixture == "demo":
        wanted = set((ROOT / "bench" / "splits" / f"demo_{args.split}.txt").read_text().split())
        questions = [q for q in questions if q["id"] in wanted]
    if args.ids:
        questions = [q for q in questions if q["id"] in args.ids]
    elif args.sample:
        questions = random.Random(args.seed).sample(questions, min(args.sample, len(questions)))
    questions = answerable(questions, args.index)
    senses = passage_senses()
    rows = []
    with open(args.out, "a", encoding="utf-8") as out:
        for method in args.methods:
            for question in questions:
                started = time.time()
                with replay_scope():
                    result = api.ask(question["question"], method,
                                     {"model": model, "index_dir": args.index, **dict(p.split("=", 1) for p in args.set)})
                row = {**result_row(question, result, method, time.time() - started),
                       **score(question, result, senses)}
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
                out.flush()
                rows.append(row)
                print(f"{method} {question['id']}: {row.get('recalled', row.get('invented'))} ({row['seconds']}s)",
                      file=sys.stderr, flush=True)
    return report(rows, args.fixture, args.model)


def answerable(questions: list[dict], index_dir: str) -> list[dict]:
    """The questions with an answer passage in the index. An index of part of a fixture's corpus
    (the tune fixture's trained topics, as the model cards build it) cannot answer the other
    topics' questions; scoring them would count the index's gaps as the method's."""
    from agent.retrieval.index import IndexStore

    wanted = sorted({pid for q in questions for pid in q.get("answer_passages", [])})
    if not wanted:
        return questions
    indexed = IndexStore(index_dir).existing_ids(wanted)
    kept = [q for q in questions if not q.get("answer_passages") or indexed & set(q["answer_passages"])]
    if len(kept) < len(questions):
        print(f"skipped {len(questions) - len(kept)} of {len(questions)} questions: none of their answer passages "
              f"is in {index_dir}", file=sys.stderr)
    return kept


def report(rows: list[dict], fixture: str, model: str, rescore: bool = False) -> int:
    """One row per method and label: sense recall, sentence precision, broken sentences per 100
    answers, characters, sense F1, answered share and cost."""
    if rescore:
        questions = {q["id"]: q for path in FIXTURES.values() for q in json.loads(path.read_text())["questions"]}
        senses = passage_senses()
        rows = [{**row, **score(questions[row["id"]], row, senses)} for row in rows]
    print(f"\nAnswer quality on the {fixture} fixture with `{model}` ({len({r['id'] for r in rows})} questions)\n")
    print("| method | label | n | sense recall | sentence precision | broken /100 answers | chars/answer | sense F1 "
          "| answered | clear without an invented sense | LLM calls/q | tokens/q | s/q |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for method in dict.fromkeys(r["method"] for r in rows):
        for label in ("ambiguous", "clear"):
            mine = [r for r in rows if r["method"] == method and r["label"] == label]
            if not mine:
                continue
            s = summarize(mine)
            clean = f"{sum(not r['invented'] for r in mine) / len(mine):.3f}" if label == "clear" else "–"
            recall = "–" if s["sense_recall"] is None else f"{s['sense_recall']:.3f}"
            n = len(mine)
            print(f"| {method} | {label} | {n} | {recall} | {s['sentence_precision']:.3f} "
                  f"| {100 * s['broken_per_answer']:.0f} | {s['chars_per_answer']:.0f} | {s['sense_f1']:.3f} "
                  f"| {s['answered']:.2f} | {clean} | {sum(r['llm_calls'] for r in mine) / n:.1f} "
                  f"| {sum(r['tokens'] for r in mine) / n:.0f} | {sum(r['seconds'] for r in mine) / n:.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
