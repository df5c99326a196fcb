"""How far better reading selection could take auto's answers: the selector against an oracle and the 1.5B as a judge.

    .venv/bin/python bench/relevance_ceiling.py --demo-index DIR --tune-index DIR [--judge 8 --model local]

Tune data only (the demo tune split and the tune fixture, as bench/train_selector.py reads them);
readings only, no model prose, at most `max_readings` readings chosen by `choose` as auto does.
Prints, as markdown:
- the pool's ceiling: the share of labelled senses some pool sentence states, and the readings an
  oracle selector (probability 1 for a sentence stating a gold answer, else 0) would give;
- the learned selector's curve, each topic scored by a model that did not see it (leave one
  topic out): precision and sense recall per threshold;
- with --judge N: the model as a pointwise judge of each question's N best candidates, as the
  product's `judge_readings` asks it (agent/assembly/judge.py), its ROC-AUC beside
  the selector's on the same sentences, and readings chosen by a mix of the two logits. The mix's
  weight and threshold are fitted on the same questions: an optimistic figure, a ceiling, not a
  result. The fast budget allows one call, so only the thorough budget judges by default.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path


sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.train_selector import (  # noqa: E402
    MEMOS, TUNE_FIXTURE, corpus_senses, cross_validated, fixture_questions, ids, pools,
    rows_and_labels, selection_scores)
from agent.assembly.judge import judged_scores, mixed  # noqa: E402
from agent.context import Context  # noqa: E402
from agent.evaluation.sentence_metrics import states_any  # noqa: E402


def mixed_scores(questions: list[dict], senses: dict, weight: float, threshold: float) -> dict:
    """Readings-only scores when each judged candidate's probability is the mix of the two logits."""
    for q in questions:
        q["mix_probs"] = [mixed(p, q["judged"][id(c)], weight) if id(c) in q["judged"] else 0.0
                          for c, p in zip(q["candidates"], q["cv_probs"])]
    return selection_scores(questions, None, threshold, senses, probabilities="mix_probs")


def row(name: str, scores: dict) -> str:
    p, r = scores["precision"], scores["sense_recall"] or 0.0
    f1 = 2 * p * r / (p + r) if p + r else 0.0
    return f"| {name} | {scores['readings_per_q']:.2f} | {p:.3f} | {r:.3f} | {f1:.3f} |"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--demo-index", required=True)
    parser.add_argument("--tune-index", required=True)
    parser.add_argument("--judge", type=int, default=0, help="judge each question's N best candidates with the model")
    parser.add_argument("--model", default="local")
    args = parser.parse_args(argv)
    from sklearn.metrics import roc_auc_score

    senses = corpus_senses()
    tune = pools(fixture_questions("demo_questions.json", ids("demo_tune")), args.demo_index)
    tune += pools(fixture_questions("tune_questions.json", None, TUNE_FIXTURE), args.tune_index)
    rows_and_labels(tune)
    for memo in MEMOS.values():
        memo.save()
    cross_validated(tune, [])
    ambiguous = [q for q in tune if q["label"] == "ambiguous"]
    wanted = sum(len(q["senses"]) for q in ambiguous)
    in_pool = sum(any(states_any(c.sentence, answers) and senses.get(c.passage["id"]) == name
                      for c in q["candidates"])
                  for q in ambiguous for answers, name in zip(q["senses"], q["sense_names"]))
    print(f"{len(tune)} tune questions, {len(ambiguous)} ambiguous with {wanted} labelled senses; "
          f"some pool sentence states {in_pool} of them ({in_pool / wanted:.3f}).\n")
    print("| readings chosen by | readings/q | precision | sense recall | F1 |\n|---|---:|---:|---:|---:|")
    for q in tune:
        q["oracle_probs"] = [float(y) for y in q["labels"]]
    print(row("oracle (1 = states a gold answer)", selection_scores(tune, None, 0.5, senses, "oracle_probs")))
    for threshold in (0.1, 0.2, 0.3, 0.35, 0.4, 0.5, 0.6):
        print(row(f"selector >= {threshold} (leave one topic out)", selection_scores(tune, None, threshold, senses)))
    if args.judge <= 0:
        return 0
    # every one of the N best, as the product judges them with judge_min=0 judge_max=1
    context = Context(model=args.model, judge_readings=args.judge, judge_min=0.0, judge_max=1.0)
    started = time.time()
    for q in tune:
        _, q["judged"] = judged_scores(q["question"], list(zip(q["candidates"], q["cv_probs"])), context)
    seconds = time.time() - started
    pairs = [(q, c, p) for q in tune for c, p in zip(q["candidates"], q["cv_probs"]) if id(c) in q["judged"]]
    calls = len(pairs)  # judgments that came back
    y = [int(states_any(c.sentence, [a for s in q["senses"] for a in s])) for q, c, _ in pairs]
    judged = [q["judged"][id(c)] for q, c, _ in pairs]
    selector = [p for _, _, p in pairs]
    print(f"\nJudge: {calls} judgments, {seconds / calls:.2f} s each. On the {len(y)} judged sentences ({sum(y)} state "
          f"an answer): ROC-AUC judge {roc_auc_score(y, judged):.3f}, selector {roc_auc_score(y, selector):.3f}, "
          f"half and half (logits) {roc_auc_score(y, [mixed(s, j, 0.5) for s, j in zip(selector, judged)]):.3f}.\n")
    print("| readings chosen by | readings/q | precision | sense recall | F1 |\n|---|---:|---:|---:|---:|")
    for weight in (0.5, 0.7, 1.0):
        for threshold in (0.3, 0.4, 0.5, 0.6):
            print(row(f"judge weight {weight}, >= {threshold} (fitted here)",
                      mixed_scores(tune, senses, weight, threshold)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
