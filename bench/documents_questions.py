"""Twenty questions over the document bench corpus, answered by `auto` with a real model: sense
recall, sentence precision and whether each citation names the right section.

    .venv/bin/python bench/documents.py corpus --work DIR
    .venv/bin/python bench/documents_questions.py --layout DIR     # DIR/qa/<format>: what is indexed
    .venv/bin/disambig ingest DIR/qa/markdown DIR/qa/html DIR/qa/pdf DIR/qa/text --index DIR/qa-index
    DISAMBIG_LLM_THREADS=2 .venv/bin/python bench/documents_questions.py --index DIR/qa-index \\
        [--model local] [--budget fast] [--out runs.jsonl] [--rescore runs.jsonl]

The index holds the documents the questions name and, beside them, every other document of the
corpus cut into at most QA_MAX_PASSAGES passages (about 190 documents of every format), so an
index builds in minutes on a shared CPU; the whole corpus's speed is bench/documents.py's.

Scoring (bench/fixtures/documents_questions.json): a sense is *recalled* when a sentence of the
answer states one of its short answers and cites a passage of one of its documents. Sentence
precision is agent/evaluation/sentence_metrics.py's (a sentence is precise when it states a
short answer of some sense). A citation *names the right section* when a passage the answer
cites from a sense's document has that sense's section in its heading path (or the sense names
none). Every answer is appended to `--out` with its sources as `disambig ask` prints them;
`--rescore` reads such a file again without asking the model.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.app import api  # noqa: E402
from agent.documents.citation import citation  # noqa: E402
from agent.evaluation.sentence_metrics import answer_sentences, sentence_scores, states_any, summarize  # noqa: E402
from agent.llm.answers import cited_numbers  # noqa: E402

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "documents_questions.json"
QA_MAX_PASSAGES = 40
FORMATS = ("markdown", "html", "pdf", "text")


def layout(work: Path) -> None:
    """Link the indexed documents under work/qa/<format>/, ids as under work/corpus/<format>/."""
    import shutil

    from agent.retrieval.corpus import ReadReport, chunk_document, read_documents

    named = [prefix for q in json.loads(FIXTURE.read_text())["questions"] for s in q["senses"] for prefix in s["documents"]]
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


def report(rows: list[dict]) -> None:
    print(f"\n{len(rows)} questions, auto\n")
    print("| questions | sense recall | sentence precision | citations naming the right section | answered |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for label, group in (("ambiguous", [r for r in rows if r["ambiguous"]]),
                         ("clear", [r for r in rows if not r["ambiguous"]]), ("all", rows)):
        if not group:
            continue
        summary = summarize(group)
        of_sense, right = sum(r["cited_of_sense"] for r in group), sum(r["section_right"] for r in group)
        print(f"| {label} ({len(group)}) | {summary['sense_recall']:.3f} | {summary['sentence_precision']:.3f} | "
              f"{right}/{of_sense} = {right / of_sense if of_sense else 0:.3f} | {summary['answered']:.2f} |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layout", metavar="WORK", help="lay out WORK/qa from WORK/corpus and stop")
    parser.add_argument("--index", help="an index of WORK/qa")
    parser.add_argument("--model", default="local")
    parser.add_argument("--budget", default="fast", choices=["instant", "fast", "thorough"])
    parser.add_argument("--out", default="documents_questions.jsonl")
    parser.add_argument("--rescore", help="score the answers in this file instead of asking")
    args = parser.parse_args(argv)
    if args.layout:
        layout(Path(args.layout))
        return 0
    questions = json.loads(FIXTURE.read_text())["questions"]
    rows = []
    if args.rescore:
        stored = {json.loads(line)["question"]: json.loads(line) for line in Path(args.rescore).read_text().splitlines()}
        for question in questions:
            if question["question"] in stored:
                result = stored[question["question"]]["result"]
                rows.append({"ambiguous": question["ambiguous"], **score(question, result)})
        report(rows)
        return 0
    with open(args.out, "a", encoding="utf-8") as out:
        for question in questions:
            started = time.time()
            result = api.ask(question["question"], "auto",
                             {"model": args.model, "index_dir": args.index, "budget": args.budget})
            row = {"ambiguous": question["ambiguous"], **score(question, result)}
            out.write(json.dumps({"question": question["question"], "seconds": round(time.time() - started, 1),
                                  "answer": result["answer"], "sources": sources(result), "score": row,
                                  "result": {k: result[k] for k in ("answer", "passages", "cited", "route")}},
                                 ensure_ascii=False) + "\n")
            out.flush()
            rows.append(row)
            print(f"{question['question']} -> recalled {row['recalled']} ({time.time() - started:.0f}s)",
                  file=sys.stderr, flush=True)
    report(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
