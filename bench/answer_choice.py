"""Which sentence of the right passage answers a clear question: every signal the product has, out of fold.

    .venv/bin/python bench/answer_choice.py --work FOLDS --demo-index DIR --tune-index DIR \
        --tune-all-index DIR [--model local] [--out answer-choice.json]

Every conversation the chat holds ends in answering one specific question: the question itself,
the sense the person chose, or the words they restated it in. So the share of specific questions
whose first stated sentence answers them bounds what clarification can reach. This measures it
on the 87 clear tune questions with the out-of-fold reader scores `bench/reader_folds.py` wrote
to `FOLDS/oof.json` (each question read by a reader that never saw its topic), and asks where the
misses are:

- the mix's first sentence; whether the passage it comes from holds an answer at all; whether
  an answer is among that passage's best 2 or 3 sentences;
- inside that passage: the reader, the selector, the mix, and a pairwise logistic regression over
  the reader's and the selector's logits and the selector's features, trained on the other
  topics' passages (leave one topic out);
- with `--model`: the LLM choosing the sentence by its number (one call a question, 4 tokens), and
  questions the LLM writes for each sentence at index time, matched to the user's question by the
  encoder's cosine (one call a passage).

Tune data only. Prints and writes a JSON report; the model's replies go to `--out`'s `.replies.json`.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent.assembly.features import FEATURES  # noqa: E402
from agent.assembly.selector import logit, load_mix, whole  # noqa: E402
from agent.context import Context  # noqa: E402
from bench.reader_folds import PARTS, add_scores, tune_candidates  # noqa: E402

PICK_PROMPT = ("Question: {question}\n\nPassage \"{title}\", in numbered sentences:\n{numbered}\n\n"
               "Which sentence answers the question? Reply with its number only.")
QUESTIONS_PROMPT = ("Below is a passage split into numbered sentences. For each sentence, write one short question that "
                    "the sentence answers and that someone who has not read the passage might ask. Write exactly one "
                    "line per sentence, as 'N. question'.\n\nTitle: {title}\n{numbered}")


def tune_questions(args) -> list[dict]:
    """The tune questions as bench/reader_folds.py scores them, with its out-of-fold reader scores."""
    questions = tune_candidates(args)
    oof = {row["id"]: row for row in json.loads((args.work / "oof.json").read_text())}
    for q in questions:
        scored = oof[q["id"]]
        if [bool(x) for x in scored["labels"]] != [bool(x) for x in q["labels"]]:
            raise SystemExit(f"{q['id']}: the candidates differ from those oof.json scored; run bench/reader_folds.py again")
        add_scores(q, scored["reader"])
        q["mix"] = load_mix().mixed(q["selector"], q["reader_read"])
    return questions


def first_passage(q: dict) -> list[int]:
    """The whole sentences of the passage holding the mix's best sentence, in passage order."""
    readable = [i for i, c in enumerate(q["candidates"]) if whole(c.sentence)]
    best = max(readable, key=lambda i: q["mix"][i])
    passage = q["candidates"][best].passage["id"]
    return sorted((i for i in readable if q["candidates"][i].passage["id"] == passage),
                  key=lambda i: q["candidates"][i].position)


def features(q: dict) -> np.ndarray:
    """Per candidate: the reader's and the selector's logits, then the selector's features."""
    logits = np.stack([logit(np.asarray(q["reader_read"])), logit(np.asarray(q["selector"]))], axis=1)
    return np.hstack([logits, np.asarray(q["rows"])])


def pairwise_model(train: list[dict]) -> np.ndarray:
    """Weights of a logistic regression on (answer - other sentence) differences inside a passage."""
    from sklearn.linear_model import LogisticRegression
    differences = []
    for q in train:
        X = features(q)
        by_passage: dict[str, list[int]] = {}
        for i, c in enumerate(q["candidates"]):
            if whole(c.sentence):
                by_passage.setdefault(c.passage["id"], []).append(i)
        for found in by_passage.values():
            differences += [X[i] - X[j] for i in found if q["labels"][i] for j in found if not q["labels"][j]]
    D = np.asarray(differences)
    scale = D.std(axis=0) + 1e-9
    model = LogisticRegression(fit_intercept=False, max_iter=5000).fit(
        np.vstack([D, -D]) / scale, np.r_[np.ones(len(D)), np.zeros(len(D))])
    return model.coef_[0] / scale


def chooses(q: dict, inside: list[int], scores) -> bool:
    return bool(q["labels"][inside[int(np.argmax(np.asarray(scores, dtype=float)))]])


def numbered(q: dict, inside: list[int]) -> str:
    return "\n".join(f"{n}. {q['candidates'][i].sentence}" for n, i in enumerate(inside, 1))


def llm_choices(args, clear: list[dict], replies: dict) -> dict:
    """The LLM picking the sentence by number, and the LLM's questions per sentence matched by cosine."""
    from langchain_core.messages import HumanMessage

    from agent.llm.models import get_chat_model
    from agent.retrieval.retriever import get_retriever, sentence_vectors
    context = Context(model=args.model, index_dir=args.tune_all_index)
    chat, retriever = get_chat_model(context), get_retriever(context)
    picked = written = judged = 0
    for q in clear:
        inside = q["first passage"]
        if not any(q["labels"][i] for i in inside):
            continue
        judged += 1
        title = q["candidates"][inside[0]].passage.get("title", "")
        key = f"pick:{q['id']}"
        if key not in replies:
            replies[key] = str(chat.invoke([HumanMessage(PICK_PROMPT.format(
                question=q["question"], title=title, numbered=numbered(q, inside)))], max_tokens=4).content)
        number = re.search(r"\d+", replies[key])
        picked += bool(number and 1 <= int(number.group()) <= len(inside) and q["labels"][inside[int(number.group()) - 1]])
        key = f"questions:{q['candidates'][inside[0]].passage['id']}"
        if key not in replies:
            replies[key] = str(chat.invoke([HumanMessage(QUESTIONS_PROMPT.format(
                title=title, numbered=numbered(q, inside)))], max_tokens=300).content)
        asked = [m.group(2).strip() for m in re.finditer(r"^\s*(\d+)[.)]\s*(.+)$", replies[key], re.M)]
        if asked:
            # a small model skips or merges lines: each question belongs to the sentence it is closest to
            sentence_vecs = sentence_vectors(retriever, [q["candidates"][i].sentence for i in inside])
            asked_vecs = sentence_vectors(retriever, asked)
            owner = [int(np.argmax(sentence_vecs @ v)) for v in asked_vecs]
            query = sentence_vectors(retriever, [q["question"]])[0]
            scores = [max([float(query @ asked_vecs[j]) for j in range(len(asked)) if owner[j] == k], default=-1.0)
                      for k in range(len(inside))]
            written += chooses(q, inside, scores)
    return {"first passages holding an answer": judged, "LLM picks the sentence by number": picked,
            "LLM-written question per sentence, closest to the question": written}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, required=True, help="bench/reader_folds.py --work (its oof.json)")
    parser.add_argument("--demo-index", required=True)
    parser.add_argument("--tune-index", required=True)
    parser.add_argument("--tune-all-index", required=True)
    parser.add_argument("--model", help="also measure this LLM setting (e.g. local) choosing the sentence")
    parser.add_argument("--out", type=Path, default=Path("answer-choice.json"))
    args = parser.parse_args(argv)
    questions = tune_questions(args)
    clear = [q for q in questions if q["label"] != "ambiguous"]
    report: dict = {"clear tune questions": len(clear)}
    for q in clear:
        q["first passage"] = first_passage(q)
    for part in (*PARTS, "all"):
        mine = [q for q in clear if part in (q["part"], "all")]
        row = {"questions": len(mine)}
        for k in (1, 2, 3):
            row[f"an answer among the first passage's best {k} (mix)"] = sum(
                any(q["labels"][i] for i in sorted(q["first passage"], key=lambda i: -q["mix"][i])[:k]) for q in mine)
        row["the first passage holds an answer"] = sum(any(q["labels"][i] for i in q["first passage"]) for q in mine)
        report[part] = row
    inside_rows = {"reader": 0, "selector": 0, "mix": 0, "pairwise, leave one topic out": 0}
    for topic in sorted({q["topic"] for q in clear}):
        weights = pairwise_model([q for q in questions if q["topic"] != topic])
        for q in (q for q in clear if q["topic"] == topic):
            inside = q["first passage"]
            if not any(q["labels"][i] for i in inside):
                continue
            for name, key in (("reader", "reader_read"), ("selector", "selector"), ("mix", "mix")):
                inside_rows[name] += chooses(q, inside, [q[key][i] for i in inside])
            inside_rows["pairwise, leave one topic out"] += chooses(q, inside, features(q)[inside] @ weights)
    report["inside the first passage, when it holds an answer: the first sentence answers"] = inside_rows
    if args.model:
        replies_path = args.out.with_suffix(".replies.json")
        replies = json.loads(replies_path.read_text()) if replies_path.exists() else {}
        report[f"inside the first passage, {args.model}"] = llm_choices(args, clear, replies)
        replies_path.write_text(json.dumps(replies, indent=1))
    args.out.write_text(json.dumps(report, indent=1))
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
