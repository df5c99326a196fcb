"""The reader alone beside the logistic selector (and the 1.5B judge); fits the reader's mix.

    .venv/bin/python bench/reader_eval.py --demo-index DIR --tune-index DIR [--wiki-index DIR]
        [--fit [--fit-on untrained]] [--judge 150] [--loto-scores FILE ...] [--out report.json]

Candidates are what the product reads: every whole sentence of auto's 15-passage hybrid pool,
labelled 1 when it states a gold short answer (the selector card's labels). Splits: tune (the
demo tune ids and the tune fixture's trained topics), demo test, the held-out fixture, and with
--wiki-index the ASQA pool test split. Per scorer: ROC-AUC, average precision, and F1 at the
scorer's shipped threshold. The logistic selector's leave-one-topic-out probabilities on tune
come from bench/train_selector.py's `cross_validated`; the reader's held-out-topic scores from
`bench/train_reader.py --holdout-groups ... --scores-out` runs (`--loto-scores`).

--fit: the mix of the reader's and the selector's logits (agent/assembly/selector.py ReaderMix),
a logistic regression on the tune candidates, and its threshold: the best F1 of readings-only
precision and sense recall on the tune questions (`--criterion f0.5` weighs precision as the
selector's threshold was picked; the answer targets weigh the two alike), written to
agent/data/reader_selector.npz. The mix is fitted alone; the readings each split reports are
stated as the product states them, less every sentence the reader gives under its floor.
--fit-on untrained fits it on the tune fixture's topics that no model learned from instead (the
reader trained with them held out: `bench/train_reader.py`), so its weights and threshold are not
chosen on questions the reader was adapted on.
--judge N: a seeded sample of N candidates per test split (every positive up to N/4, the rest
negatives) also judged by the model (agent/assembly/judge.py); all three scorers are scored on it.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.assembly.reader import reader_threshold  # noqa: E402
from agent.assembly.selector import (MIX_PATH, NOT_READ, ReaderMix, load_selector, reader_floor, reader_read,  # noqa: E402
                                     reader_scores)
from agent.context import Context  # noqa: E402
from bench.train_selector import (MEMOS, asqa_questions, corpus_senses, cross_validated, fixture_questions,  # noqa: E402
                                  ids, pools, rows_and_labels, selection_scores, trained_topics,
                                  tune_fixture_questions)


def metrics(labels: np.ndarray, probabilities: np.ndarray, threshold: float) -> dict:
    from sklearn.metrics import average_precision_score, roc_auc_score
    if not 0 < labels.sum() < len(labels):
        return {}
    chosen = probabilities >= threshold
    tp = float((chosen & (labels == 1)).sum())
    f1 = 2 * tp / (chosen.sum() + labels.sum())
    return {"auc": round(float(roc_auc_score(labels, probabilities)), 3),
            "ap": round(float(average_precision_score(labels, probabilities)), 3), "f1": round(float(f1), 3)}


READ = Context().reader_candidates  # the product's reader reads the selector's best READ candidates
FLOOR = reader_floor(Context())  # and states no sentence it gives less


def vetoed(mixed: list[float], reader: list[float]) -> list[float]:
    """The mix's probabilities less what the reader rejects, as the product states readings
    (agent/assembly/selector.py `vetoed`; a candidate the reader did not read counts as rejected)."""
    return [0.0 if r < FLOOR else p for p, r in zip(mixed, reader)]


COST: dict = {"seconds": [], "pairs": []}  # the reader's time per question (a pool read once, cold)


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def scored(questions: list[dict]) -> list[dict]:
    """Each question's candidates with labels, the selector's and the reader's probabilities."""
    rows_and_labels(questions)
    selector = load_selector()
    if "rss_before" not in COST:
        COST["rss_before"] = rss_mb()
        reader_scores("warm up", questions[0]["candidates"][:1]) if questions and questions[0]["candidates"] else None
        COST["rss_after_load"] = rss_mb()
    for q in questions:
        q["logistic"] = selector.probabilities(q["rows"]).tolist()
        read = reader_read(list(zip(q["candidates"], q["logistic"])), READ)
        started = time.perf_counter()
        found = dict(zip(read, reader_scores(q["question"], [q["candidates"][i] for i in read])))
        COST["seconds"].append(time.perf_counter() - started)  # what the product reads: cold, one question
        COST["pairs"].append(len(read))
        q["reader_read"] = [found.get(i, NOT_READ) for i in range(len(q["candidates"]))]
        q["reader"] = reader_scores(q["question"], q["candidates"])  # every candidate: the reader alone
    return questions


def flat(questions: list[dict], key: str) -> np.ndarray:
    return np.concatenate([np.asarray(q[key], dtype=float) for q in questions]) if questions else np.zeros(0)


def mix_weights(tune: list[dict], selector_key: str = "logistic") -> ReaderMix:
    """The mix's weights: a logistic regression over the selector's (`selector_key`) and the
    read reader's logits on the tune candidates; its threshold left at 0.5 for `fit_mix` to choose."""
    from sklearn.linear_model import LogisticRegression

    from agent.assembly.selector import logit
    X = np.column_stack([logit(flat(tune, selector_key)), logit(flat(tune, "reader_read"))])
    y = flat(tune, "labels").astype(int)
    clf = LogisticRegression(C=1.0, max_iter=1000).fit(X, y)
    return ReaderMix(float(clf.coef_[0][0]), float(clf.coef_[0][1]), float(clf.intercept_[0]), 0.5)


def fit_mix(tune: list[dict], senses: dict, beta: float = 1.0) -> tuple[ReaderMix, list[dict]]:
    mix = mix_weights(tune)
    if mix.reader_weight <= 0:  # a reader that only subtracts is not used: the selector alone, at its threshold
        print(f"the reader's fitted weight is {mix.reader_weight:+.3f}: the mix keeps the selector alone",
              file=sys.stderr)
        return ReaderMix(1.0, 0.0, 0.0, load_selector().threshold), []
    for q in tune:  # the mix alone: the reader's veto is chosen on tune answers (docs/results/reader.md)
        q["mixed"] = mix.mixed(q["logistic"], q["reader_read"])
    labelled = [q for q in tune if q["sense_names"]]
    table = [{"threshold": t, **selection_scores(labelled, None, t, senses, probabilities="mixed", one_per_sense=True)}
             for t in np.round(np.arange(0.1, 0.91, 0.05), 2)]

    def f_beta(row: dict) -> float:
        p, r = row["precision"], row["sense_recall"] or 0.0
        return (1 + beta ** 2) * p * r / (beta ** 2 * p + r) if p + r else 0.0
    best = max(table, key=lambda row: (round(f_beta(row), 3), row["threshold"]))
    return ReaderMix(mix.selector_weight, mix.reader_weight, mix.intercept, float(best["threshold"])), table


def judged(questions: list[dict], n: int, seed: int) -> dict:
    """Judge a seeded sample of candidates with the model; the three scorers on that sample."""
    from agent.assembly.judge import judge
    from agent.context import Context
    items = [(q, i) for q in questions for i in range(len(q["candidates"]))]
    rng = random.Random(seed)
    positives = [x for x in items if q_label(x)]
    negatives = [x for x in items if not q_label(x)]
    sample = rng.sample(positives, min(len(positives), n // 4))
    sample += rng.sample(negatives, min(len(negatives), n - len(sample)))
    context = Context(model="local")
    verdicts, started = [], time.time()
    for q, i in sample:
        verdict = judge(q["question"], q["candidates"][i], context)
        verdicts.append(0.5 if verdict is None else verdict)
    labels = np.array([q_label(x) for x in sample])
    mix = load_mix_or_none()
    out = {"sample": len(sample), "positives": int(labels.sum()), "judge_seconds_per_call":
           round((time.time() - started) / max(len(sample), 1), 2),
           "judge": metrics(labels, np.array(verdicts), 0.5),
           "logistic": metrics(labels, np.array([q["logistic"][i] for q, i in sample]), load_selector().threshold),
           "reader": metrics(labels, np.array([q["reader"][i] for q, i in sample]), reader_threshold())}
    if mix is not None:
        out["mixed"] = metrics(labels, np.array(mix.mixed([q["logistic"][i] for q, i in sample],
                                                          [q["reader_read"][i] for q, i in sample])), mix.threshold)
    return out


def q_label(item) -> int:
    q, i = item
    return int(q["labels"][i])


def load_mix_or_none() -> ReaderMix | None:
    from agent.assembly.selector import load_mix
    load_mix.cache_clear()
    return load_mix() if MIX_PATH.exists() else None


def split_report(questions: list[dict], senses: dict) -> dict:
    labels = flat(questions, "labels")
    read = flat(questions, "reader_read") != NOT_READ
    report = {"questions": len(questions), "candidates": int(len(labels)), "positives": int(labels.sum()),
              "positives_read": int((labels[read] == 1).sum()),
              "logistic": metrics(labels, flat(questions, "logistic"), load_selector().threshold),
              "reader": metrics(labels, flat(questions, "reader"), reader_threshold())}
    mix = load_mix_or_none()
    if mix is not None:
        for q in questions:
            q["mixed"] = mix.mixed(q["logistic"], q["reader_read"])
            q["stated"] = vetoed(q["mixed"], q["reader_read"])
        report["mixed"] = metrics(labels, flat(questions, "mixed"), mix.threshold)
        report["mixed_readings"] = selection_scores(questions, None, mix.threshold, senses, probabilities="stated",
                                                    one_per_sense=True)
    report["logistic_readings"] = selection_scores(questions, None, load_selector().threshold, senses,
                                                   probabilities="logistic")
    report["reader_readings"] = selection_scores(questions, None, reader_threshold(), senses, probabilities="reader",
                                                 one_per_sense=True)
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--demo-index", required=True)
    parser.add_argument("--tune-index", required=True)
    parser.add_argument("--wiki-index")
    parser.add_argument("--fit", action="store_true", help="fit and write the reader's mix (agent/data/reader_selector.npz)")
    parser.add_argument("--criterion", choices=("f1", "f0.5"), default="f1",
                        help="--fit: what the mix's threshold maximizes on tune (readings' precision and sense recall)")
    parser.add_argument("--fit-on", choices=("trained", "untrained"), default="trained",
                        help="--fit: the tune questions the mix is fitted on: the demo tune ids and the tune fixture's "
                             "trained topics, or the tune fixture's other topics, which no model learned from when the "
                             "reader was trained with them held out (--tune-index must then hold every topic's "
                             "passages: bench/tune_fixture_corpus.py --all-topics)")
    parser.add_argument("--judge", type=int, default=0)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--loto-scores", nargs="*", default=[],
                        help="bench/train_reader.py --scores-out files: the reader's held-out-topic pair scores")
    parser.add_argument("--out", default="reader-eval.json")
    args = parser.parse_args(argv)
    senses = corpus_senses()
    tune = scored(pools(fixture_questions("demo_questions.json", ids("demo_tune")), args.demo_index)
                  + pools(tune_fixture_questions(), args.tune_index))
    report: dict = {}
    untrained = []
    if args.fit_on == "untrained":
        untrained = scored(pools([q for q in tune_fixture_questions(all_topics=True) if q["topic"] not in trained_topics()],
                                 args.tune_index))
    if args.fit:
        mix, table = fit_mix(untrained or tune, senses, beta=1.0 if args.criterion == "f1" else 0.5)
        np.savez(MIX_PATH, selector_weight=mix.selector_weight, reader_weight=mix.reader_weight,
                 intercept=mix.intercept, threshold=mix.threshold)
        report["mix"] = {"selector_weight": mix.selector_weight, "reader_weight": mix.reader_weight,
                         "intercept": mix.intercept, "threshold": mix.threshold, "grid": table}
    demo = [q for q in tune if q["sense_names"]]
    cross_validated(demo, [q for q in tune if not q["sense_names"]])
    labels = flat(demo, "labels")
    report["tune, leave one topic out (logistic)"] = metrics(labels, flat(demo, "cv_probs"), load_selector().threshold)
    report["tune"] = split_report(tune, senses)
    if untrained:
        report["tune, untrained topics"] = split_report(untrained, senses)
    if args.loto_scores:
        rows = [json.loads(line) for path in args.loto_scores for line in Path(path).read_text().splitlines()]
        report["fixture pairs, leave topics out (reader)"] = metrics(
            np.array([r["label"] for r in rows]), np.array([r["score"] for r in rows]), reader_threshold())
    tests = {"demo test": pools(fixture_questions("demo_questions.json", ids("demo_test")), args.demo_index),
             "held-out fixture": pools(fixture_questions("heldout_questions.json", None), args.demo_index)}
    if args.wiki_index:
        tests["ASQA pool test"] = pools(asqa_questions(ids("asqa_pool_test")), args.wiki_index)
    for name, questions in tests.items():
        scored(questions)
        report[name] = split_report(questions, senses)
        if args.judge and name != "ASQA pool test":
            report[name]["judged sample"] = judged(questions, args.judge, args.seed)
    for memo in MEMOS.values():
        memo.save()
    from agent.assembly.reader import reader_onnx_path
    report["cost"] = {"questions": len(COST["seconds"]), "pairs_p50": float(np.median(COST["pairs"])),
                      "seconds_p50": round(float(np.percentile(COST["seconds"], 50)), 3),
                      "seconds_p95": round(float(np.percentile(COST["seconds"], 95)), 3),
                      "rss_mb_added_by_loading": round(COST["rss_after_load"] - COST["rss_before"], 1),
                      "onnx_mb": round(reader_onnx_path().stat().st_size / 2**20, 1)}
    Path(args.out).write_text(json.dumps(report, indent=1))
    print(json.dumps({k: {kk: vv for kk, vv in v.items() if kk != "grid"} if isinstance(v, dict) else v
                      for k, v in report.items()}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
