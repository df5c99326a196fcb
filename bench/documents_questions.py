"""Questions over real documents, answered by a method: sense recall, sentence precision,
whether each citation names the right section, questions answered, tokens and seconds.

    .venv/bin/python bench/documents.py corpus --work DIR
    .venv/bin/python bench/documents_questions.py --layout DIR     # DIR/qa/<format>: what is indexed
    .venv/bin/disambig ingest DIR/qa/markdown DIR/qa/html DIR/qa/pdf DIR/qa/text --index DIR/qa-index
    DISAMBIG_LLM_THREADS=2 .venv/bin/python bench/documents_questions.py --index DIR/qa-index \\
        [--method auto] [--model local] [--budget fast] [--out runs.jsonl] [--rescore runs.jsonl]

The default fixture (bench/fixtures/documents_questions.json) asks twenty questions over the
document bench corpus. The index holds the documents the questions name and, beside them, every
other document of the corpus cut into at most QA_MAX_PASSAGES passages (about 190 documents of
every format), so an index builds in minutes on a shared CPU; the whole corpus's speed is
bench/documents.py's. `--fixture bench/fixtures/manuals_questions.json --split test|tune` asks the
manuals benchmark instead, over the index bench/manuals.py describes; `--budget` is auto's alone
(the other methods take none).

Scoring: a sense is *recalled* when a sentence of the answer states one of its short answers
and cites a passage of one of its documents. Sentence precision is
agent/evaluation/sentence_metrics.py's (a sentence is precise when it states a short answer of
some sense). A citation *names the right section* when a passage the answer cites from a
sense's document has that sense's section in its heading path (or the sense names none). Every
answer is appended to `--out` with its sources as `disambig ask` prints them; `--rescore` reads
such a file again without asking the model.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.app import api  # noqa: E402
from agent.documents.citation import citation  # noqa: E402
from agent.evaluation.sentence_metrics import answer_sentences, sentence_scores, states_any, summarize  # noqa: E402
from agent.llm.answers import cited_numbers  # noqa: E402
from graphs.registry import METHODS  # noqa: E402

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "documents_questions.json"
QA_MAX_PASSAGES = 40
FORMATS = ("markdown", "html", "pdf", "text")
ASKING_METHODS = [name for name in METHODS if name != "rewrite"]  # rewrite rewrites a conversation's follow-up


def load_questions(fixture: Path, split: str | None = None) -> list[dict]:
    """The fixture's questions, only those of `split` when one is given (a fixture without
    splits has none to choose)."""
    questions = json.loads(fixture.read_text())["questions"]
    if split is None:
        return questions
    if not all("split" in question for question in questions):
        raise SystemExit(f"{fixture.name} has no splits: leave out --split")
    return [question for question in questions if question["split"] == split]


def layout(work: Path, fixture: Path = FIXTURE) -> None:
    """Link the indexed documents under work/qa/<format>/, ids as under work/corpus/<format>/."""
    import shutil

    from agent.retrieval.corpus import ReadReport, chunk_document, read_documents

    named = [prefix for q in load_questions(fixture) for s in q["senses"] for prefix in s["documents"]]
    if (work / "qa").exists():
        shutil.rmtree(work / "qa")
    kept = 0
    for kind in FORMATS:
        root = work / "corpus" / kind
        for document in read_documents([str(root)], ReadReport()):
            if any(document.id.startswith(p) for p in named) or len(chunk_document(document)) <= QA_MAX_PASSAGES:
                target = work / "qa" / kind / document.id
                target.parent.mkdir(parents=True, exist_ok=True)
                target.symlink_to((root / document.id).resolve())
                kept += 1
    print(f"{kept} documents under {work / 'qa'}")


def of_sense(passage: dict, sense: dict) -> bool:
    return any(str(passage.get("document") or passage["id"]).startswith(prefix) for prefix in sense["documents"])


def score(question: dict, result: dict) -> dict:
    passages, senses = result["passages"], question["senses"]
    recalled = []
    for sense in senses:
        for sentence in answer_sentences(result["answer"]):
            cited = [passages[n - 1] for n in cited_numbers(sentence) if 1 <= n <= len(passages)]
            if states_any(sentence, sense["answers"]) and any(of_sense(p, sense) for p in cited):
                recalled.append(sense["name"])
                break
    cited = [p for p in passages if p["id"] in set(result.get("cited") or [])]
    on_sense = [(p, s) for p in cited for s in senses if of_sense(p, s)]
    right = [p for p, s in on_sense if s["section"].lower() in (p.get("section") or "").lower()]
    golds = [answer for sense in senses for answer in sense["answers"]]
    return {"senses": len(senses), "recalled": recalled, "cited_of_sense": len(on_sense),
            "section_right": len(right), **sentence_scores(result["answer"], passages, golds, question["question"])}


def sources(result: dict) -> list[str]:
    cited = set(result.get("cited") or [])
    return [f"[{n}] {citation(p)} ({p['id']})" for n, p in enumerate(result["passages"], 1) if p["id"] in cited]


def report(rows: list[dict], method: str = "auto") -> None:
    """One row each for the ambiguous questions, the clear ones and all: the scores, then the
    mean tokens and the median seconds per question."""
    print(f"\n{len(rows)} questions, {method}\n")
    print("| questions | sense recall | sentence precision | citations naming the right section | answered "
          "| tokens/q | p50 s |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for label, group in (("ambiguous", [r for r in rows if r["ambiguous"]]),
                         ("clear", [r for r in rows if not r["ambiguous"]]), ("all", rows)):
        if not group:
            continue
        summary = summarize(group)
        of_sense, right = sum(r["cited_of_sense"] for r in group), sum(r["section_right"] for r in group)
        tokens = sum(r.get("tokens", 0) for r in group) / len(group)
        seconds = statistics.median(r.get("seconds", 0.0) for r in group)
        print(f"| {label} ({len(group)}) | {summary['sense_recall']:.3f} | {summary['sentence_precision']:.3f} | "
              f"{right}/{of_sense} = {right / of_sense if of_sense else 0:.3f} | {summary['answered']:.2f} | "
              f"{tokens:.0f} | {seconds:.1f} |")


def cost(result: dict, seconds: float) -> dict:
    """Tokens the answer took (prompt and completion) and its wall seconds."""
    usage = result.get("usage") or {}
    return {"tokens": usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0), "seconds": round(seconds, 2)}


def settings(args: argparse.Namespace) -> dict:
    """The run context: the model, the index, the `--set` settings and, for auto alone, the budget."""
    given = {"model": args.model, "index_dir": args.index}
    for item in args.set:
        key, equals, value = item.partition("=")
        if not equals or not key:
            raise SystemExit(f"--set takes KEY=VALUE, not {item!r}")
        given[key] = value
    if args.method == "auto":
        given["budget"] = args.budget or "fast"
    elif args.budget:
        raise SystemExit(f"--budget is auto's alone; {args.method} takes none")
    return given


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layout", metavar="WORK", help="lay out WORK/qa from WORK/corpus and stop")
    parser.add_argument("--index", help="an index of WORK/qa (or of the fixture's corpus)")
    parser.add_argument("--fixture", type=Path, default=FIXTURE, help="questions with labelled senses")
    parser.add_argument("--split", choices=["tune", "test"], help="only the fixture's questions of this split")
    parser.add_argument("--method", default="auto", choices=ASKING_METHODS)
    parser.add_argument("--model", default="local")
    parser.add_argument("--budget", choices=["instant", "fast", "thorough"], help="auto's budget (default fast)")
    parser.add_argument("--kind", choices=["ambiguous", "clear"], help="only the fixture's questions of this kind")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="a run setting beside the model, index and budget (e.g. check_units=0); repeatable")
    parser.add_argument("--limit", type=int, help="ask only the first N questions")
    parser.add_argument("--out", default="documents_questions.jsonl")
    parser.add_argument("--rescore", help="score the answers in this file instead of asking")
    args = parser.parse_args(argv)
    if args.layout:
        layout(Path(args.layout), args.fixture)
        return 0
    questions = [q for q in load_questions(args.fixture, args.split)
                 if args.kind is None or q["ambiguous"] == (args.kind == "ambiguous")][:args.limit]
    rows = []
    if args.rescore:
        stored = {json.loads(line)["question"]: json.loads(line) for line in Path(args.rescore).read_text().splitlines()}
        for question in questions:
            if question["question"] in stored:
                line = stored[question["question"]]
                rows.append({"ambiguous": question["ambiguous"], **score(question, line["result"]),
                             **{k: line.get("score", {}).get(k, 0) for k in ("tokens", "seconds")}})
        report(rows, args.method)
        return 0
    context = settings(args)
    with open(args.out, "a", encoding="utf-8") as out:
        for question in questions:
            started = time.time()
            result = api.ask(question["question"], args.method, context)
            row = {"ambiguous": question["ambiguous"], **score(question, result), **cost(result, time.time() - started)}
            out.write(json.dumps({"question": question["question"], "id": question.get("id"), "method": args.method,
                                  "seconds": row["seconds"], "answer": result["answer"], "sources": sources(result),
                                  "score": row, "result": {k: result[k] for k in ("answer", "passages", "cited", "route", "decision")}},
                                 ensure_ascii=False) + "\n")
            out.flush()
            rows.append(row)
            print(f"{question['question']} -> recalled {row['recalled']} ({time.time() - started:.0f}s)",
                  file=sys.stderr, flush=True)
    report(rows, args.method)
    return 0


if __name__ == "__main__":
    sys.exit(main())
