"""Build the answer-sentence reader's training pairs from development data only.

    .venv/bin/python bench/reader_data.py --out PAIRS.jsonl [--seed 13] [--max-pairs 36000]

Each line is one (query, sentence) pair with a 0/1 label and why it got it:

- `answer`: the sentence holds a normalized gold short answer of the query's sense (the
  ambiguous question: of any sense) and comes from that sense's page or the question's
  evidence; `mentions`: a sentence of the same passage holding no answer (about the subject,
  not answering); `other_sense`: a sentence stating another sense's answer, for a
  disambiguated sub-question; `elsewhere`: a sentence of another question's passages holding
  this answer's string in an unrelated context; `random`: a sentence of another question.

Sources (ids outside the dev lists, and every id of the repository's test splits, are never read):
ASQA dev (the question and each sub-question; passages: the annotations' knowledge and the
wiki pool's passages of the question's pages), CondAmbigQA dev (its 20 passages per question,
gold senses from the same question's ASQA dev entry), AmbigNQ dev (sub-questions of the
questions ASQA also holds; a question of its own over its 5 best BM25 wiki-pool passages when
one of them states its answer on a page the question names), and the demo tune splits (the demo
fixture's tune ids and the tune fixture, senses from the corpus rows' `sense`).
Groups: `source` for the public data, `demo:<topic>` for the fixtures (leave one topic out).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.assembly.text import passage_sentences  # noqa: E402
from agent.evaluation.sentence_metrics import states_any  # noqa: E402
from agent.steps.grounding import content_tokens  # noqa: E402
from bench.train_selector import (DATA, SHARED, SPLITS, TUNE_FIXTURE, fixture_questions, ids)  # noqa: E402

CAPS = {"answer": 6, "mentions": 5, "other_sense": 2, "elsewhere": 1, "random": 1}
POOL_PER_QUESTION = 8  # wiki pool passages of one question's pages


def test_ids() -> set[str]:
    """Every id of every test split of the repository: never read for training."""
    found: set[str] = set()
    for path in SPLITS.glob("*_test.txt"):
        found |= {line.strip() for line in path.read_text().splitlines() if line.strip()}
    return found


def dev_ids(name: str) -> set[str]:
    path = SHARED / name / "dev_ids.txt"
    return {line.strip() for line in path.read_text().splitlines() if line.strip()} if path.exists() else set()


def sentences_of(passage: dict) -> list[str]:
    return [s for s in passage_sentences(passage) if len(s) <= 600]


def question_record(qid: str, source: str, group: str, queries: list[dict], passages: list[dict]) -> dict:
    """One question: its queries ({text, kind, answers, page}) over its passages ({title, text, evidence})."""
    for p in passages:
        p["sentences"] = sentences_of(p)
    return {"qid": qid, "source": source, "group": group, "queries": queries, "passages": passages}


def asqa_items(excluded: set[str]) -> dict[str, dict]:
    path = SHARED / "asqa" / "asqa_dev.json"
    if not path.exists():
        return {}
    allowed = dev_ids("asqa") - excluded
    return {str(item["id"]): item for item in json.loads(path.read_text()) if str(item["id"]) in allowed}


def wiki_pool() -> dict[str, list[dict]]:
    path = SHARED / "corpus" / "wiki_pool.jsonl"
    by_title: dict[str, list[dict]] = defaultdict(list)
    if path.exists():
        for line in path.read_text().splitlines():
            row = json.loads(line)
            by_title[row["title"]].append({"title": row["title"], "text": row["text"], "evidence": False})
    return by_title


def asqa_queries(item: dict) -> list[dict]:
    senses = [p for p in item["qa_pairs"] if p.get("short_answers")]
    queries = [{"text": item["question"], "kind": "ambiguous", "answers": [a for p in senses for a in p["short_answers"]],
                "page": None, "others": []}]
    for n, pair in enumerate(senses):
        others = [a for m, p in enumerate(senses) if m != n for a in p["short_answers"]]
        text = pair["question"].split("|")[0].strip()  # "a?|a reworded?": the first wording
        queries.append({"text": text, "kind": "sub", "answers": pair["short_answers"],
                        "page": pair.get("wikipage"), "others": others})
    return queries


def asqa_records(items: dict[str, dict], pool: dict[str, list[dict]], rng: random.Random) -> list[dict]:
    records = []
    for qid, item in items.items():
        passages = [{"title": k["wikipage"] or "", "text": k["content"], "evidence": True}
                    for a in item["annotations"] for k in a["knowledge"] if k.get("content")]
        titles = {w["title"] for w in item.get("wikipages") or [] if w.get("title")} | set(item.get("relevant_docs") or [])
        from_pool = [p for t in sorted(titles) for p in pool.get(t, [])]
        rng.shuffle(from_pool)
        passages += [dict(p) for p in from_pool[:POOL_PER_QUESTION]]
        records.append(question_record(qid, "asqa", "asqa", asqa_queries(item), passages))
    return records


def condambigqa_records(asqa: dict[str, dict], excluded: set[str]) -> list[dict]:
    path = SHARED / "condambigqa" / "mcaqa.json"
    if not path.exists():
        return []
    allowed = dev_ids("condambigqa") - excluded
    by_question = {item["question"].strip().casefold(): item for item in asqa.values()}
    records = []
    for row in json.loads(path.read_text()):
        item = by_question.get(row["question"].strip().casefold())
        if row["id"] not in allowed or item is None:
            continue  # gold senses come from ASQA dev only, never from a test id
        passages = [{"title": c.get("title", ""), "text": c.get("text", ""), "evidence": True} for c in row["ctxs"]]
        records.append(question_record(row["id"], "condambigqa", "condambigqa", asqa_queries(item), passages))
    return records


def ambignq_records(asqa: dict[str, dict], pool: dict[str, list[dict]], excluded: set[str]) -> list[dict]:
    """AmbigNQ dev: sub-questions over the ASQA entry's passages when ASQA holds the question;
    else the question over its 5 best BM25 wiki pool passages, kept when an answer is stated
    on a page named by one of the question's words."""
    path = SHARED / "ambignq" / "ambignq_dev_light.json"
    if not path.exists():
        return []
    allowed = dev_ids("ambignq") - excluded
    from rank_bm25 import BM25Okapi

    flat = [p for ps in pool.values() for p in ps]
    bm25 = BM25Okapi([content_tokens(f"{p['title']} {p['text']}") or ["_"] for p in flat])
    records = []
    for row in json.loads(path.read_text()):
        if row["id"] not in allowed or row["id"] in asqa:
            continue  # ASQA's entry already reads it, with passages of its own
        pairs = [qa for a in row["annotations"] if a["type"] == "multipleQAs" for qa in a["qaPairs"]]
        answers = [x for a in row["annotations"] if a["type"] == "singleAnswer" for x in a["answer"]]
        answers += [x for qa in pairs for x in qa["answer"]]
        scores = bm25.get_scores(content_tokens(row["question"]) or ["_"])
        top = [dict(flat[i]) for i in scores.argsort()[::-1][:5]]
        asked = set(content_tokens(row["question"]))
        named = [p for p in top if asked & set(content_tokens(p["title"]))]
        if not any(states_any(s, answers) for p in named for s in sentences_of(p)):
            continue
        for p in top:
            p["evidence"] = p in named
        queries = [{"text": row["question"], "kind": "ambiguous" if pairs else "clear", "answers": answers,
                    "page": None, "others": []}]
        records.append(question_record(row["id"], "ambignq", "ambignq", queries, top))
    return records


def demo_records() -> list[dict]:
    """The demo fixture's tune ids and the tune fixture: senses are the corpus rows' `sense`."""
    rows = {}
    for path in (DATA / "demo_corpus.jsonl", TUNE_FIXTURE / "tune_corpus.jsonl"):
        for line in path.read_text().splitlines():
            if line.strip():
                row = json.loads(line)
                rows[row["id"]] = row
    questions = fixture_questions("demo_questions.json", ids("demo_tune"))
    questions += fixture_questions("tune_questions.json", None, TUNE_FIXTURE)
    raw = {q["id"]: q for path in (DATA / "demo_questions.json", TUNE_FIXTURE / "tune_questions.json")
           for q in json.loads(path.read_text())["questions"]}
    records = []
    for q in questions:
        topic_rows = [r for r in rows.values() if r.get("topic") == q["topic"]]
        interpretations = raw[q["id"]]["interpretations"]
        queries = [{"text": q["question"], "kind": q["label"], "answers": [i["answer"] for i in interpretations],
                    "page": None, "senses": [i["sense"] for i in interpretations], "others": []}]
        if q["label"] == "ambiguous":
            for n, i in enumerate(interpretations):
                queries.append({"text": i["question"], "kind": "sub", "answers": [i["answer"]], "page": None,
                                "senses": [i["sense"]],
                                "others": [o["answer"] for m, o in enumerate(interpretations) if m != n]})
        passages = [{"title": r.get("title", ""), "text": r["text"], "evidence": True, "sense": r.get("sense")}
                    for r in topic_rows]
        records.append(question_record(q["id"], "demo", f"demo:{q['topic']}", queries, passages))
    return records


def labelled(record: dict, query: dict) -> dict[str, list[tuple[dict, str]]]:
    """The query's sentences by why: positives and the in-question hard negatives."""
    found: dict[str, list[tuple[dict, str]]] = defaultdict(list)
    page = (query.get("page") or "").casefold()
    senses = query.get("senses")
    for passage in record["passages"]:
        from_sense = (passage["evidence"] or (page and passage["title"].casefold() == page)) and (
            senses is None or passage.get("sense") in senses)
        sentences = passage["sentences"]
        holds = [states_any(s, query["answers"]) for s in sentences]
        for sentence, answers in zip(sentences, holds):
            if answers and from_sense:
                found["answer"].append((passage, sentence))
            elif not answers and query["others"] and states_any(sentence, query["others"]):
                found["other_sense"].append((passage, sentence))
            elif not answers and any(holds) and not states_any(sentence, record["all_answers"]):
                found["mentions"].append((passage, sentence))  # beside an answer, about the subject
            elif not answers and not any(holds) and not states_any(sentence, record["all_answers"]) and passage["evidence"]:
                found["mentions_far"].append((passage, sentence))
    return found


def build(records: list[dict], seed: int, max_pairs: int) -> list[dict]:
    rng = random.Random(seed)
    for record in records:
        record["all_answers"] = [a for q in record["queries"] for a in q["answers"]] + \
                                [a for q in record["queries"] for a in q["others"]]
    sentences_by_word: dict[str, list[tuple[int, dict, str]]] = defaultdict(list)
    everything: list[tuple[int, dict, str]] = []
    for n, record in enumerate(records):
        for passage in record["passages"]:
            for sentence in passage["sentences"]:
                everything.append((n, passage, sentence))
                for word in set(content_tokens(sentence)):
                    sentences_by_word[word].append((n, passage, sentence))
    pairs = []
    for n, record in enumerate(records):
        for query in record["queries"]:
            found = labelled(record, query)
            mentions = found["mentions"] + ([] if len(found["mentions"]) >= CAPS["mentions"] else found["mentions_far"])
            chosen = {"answer": found["answer"], "mentions": mentions, "other_sense": found["other_sense"]}
            chosen["elsewhere"] = elsewhere(query["answers"], n, records, sentences_by_word)
            chosen["random"] = [(p, s) for m, p, s in rng.sample(everything, 6) if m != n]
            for why, items in chosen.items():
                items = list(dict.fromkeys((p["title"], s) for p, s in items))
                rng.shuffle(items)
                for title, sentence in items[:CAPS[why]]:
                    pairs.append({"qid": record["qid"], "source": record["source"], "group": record["group"],
                                  "query": query["text"], "kind": query["kind"], "title": title,
                                  "sentence": sentence, "label": int(why == "answer"), "why": why})
    rng.shuffle(pairs)
    public = [p for p in pairs if p["source"] != "demo"]
    return public[:max_pairs] + [p for p in pairs if p["source"] == "demo"]  # the tune splits stay whole


def elsewhere(answers: list[str], n: int, records: list[dict], by_word: dict) -> list[tuple[dict, str]]:
    """Sentences holding one of the answers in other questions' passages: not a passage of this
    question's pages, nor of its fixture topic (a topic's questions share their passages)."""
    found = []
    mine = {p["title"] for p in records[n]["passages"]}
    group = records[n]["group"]
    for answer in answers:
        words = content_tokens(answer)
        if not words:
            continue
        rarest = min(words, key=lambda w: len(by_word.get(w, ())))
        for m, passage, sentence in by_word.get(rarest, [])[:200]:
            elsewhere_ = m != n and passage["title"] not in mine and not (group.startswith("demo:") and
                                                                          records[m]["group"] == group)
            if elsewhere_ and states_any(sentence, [answer]):
                found.append((passage, sentence))
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="JSONL file of pairs (keep it outside the repository)")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--max-pairs", type=int, default=36000, help="cap on the public data's pairs")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    excluded = test_ids()
    asqa = asqa_items(excluded)
    pool = wiki_pool()
    records = asqa_records(asqa, pool, rng) + condambigqa_records(asqa, excluded)
    records += ambignq_records(asqa, pool, excluded) + demo_records()
    pairs = build(records, args.seed, args.max_pairs)
    assert not {p["qid"] for p in pairs} & excluded, "a test id reached the training pairs"
    Path(args.out).write_text("".join(json.dumps(p) + "\n" for p in pairs), encoding="utf-8")
    counts: dict[str, int] = defaultdict(int)
    for p in pairs:
        counts[f"{p['source']}:{p['why']}"] += 1
    print(json.dumps({"questions": len({p["qid"] for p in pairs}), "pairs": len(pairs),
                      "positives": sum(p["label"] for p in pairs), **dict(sorted(counts.items()))}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
