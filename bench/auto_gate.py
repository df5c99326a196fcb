"""Calibration of `auto`'s gate (clear or ambiguous?) on dev data only, no LLM involved.

    .venv/bin/python bench/auto_gate.py [--mode hybrid] [--cache DIR] [--ambignq 200] [--no-pool]

For every cheap signal (agent/steps/ambiguity_signals.py: the query detector, ADF's variance and
separability with the packaged encoder, focus, title share) prints ROC-AUC on
1. the demo fixture's labelled questions over the demo corpus (clear vs ambiguous);
2. a seeded sample of AmbigNQ dev ids over the ASQA wiki pool (singleAnswer vs multipleQAs);
then sweeps the gate's two thresholds (detector OR low focus) on the demo fixture, prints the
chosen operating point, and its recall on the ASQA pool dev ids (all ambiguous by construction).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.adf_gate import ASQA, DEMO_CORPUS, DEMO_QUESTIONS, DETECTION_K, DEV_IDS, POOL_CORPUS, POOL_IDS, SHARED, ROOT, auc, ensure_index  # noqa: E402
from agent.context import Context, cache_dir  # noqa: E402
from agent.retrieval.retriever import get_retriever, passage_vectors  # noqa: E402
from agent.steps.ambiguity_signals import DEFAULT_THRESHOLDS, GateThresholds, detector_signal, edition_signal, is_ambiguous, passage_signals  # noqa: E402
from agent.steps.coherence import PRESETS, classify  # noqa: E402

SIGNALS = {"detector": 1, "separability": 1, "variance": 1, "focus": -1, "titles": 1, "editions": 1}  # sign: higher = more ambiguous
AMBIGNQ = SHARED / "ambignq" / "ambignq_dev_light.json"
AMBIGNQ_IDS = SHARED / "ambignq" / "dev_ids.txt"


def signals(index_dir: str, questions: list[str], mode: str) -> list[dict]:
    retriever = get_retriever(Context(index_dir=index_dir))
    rankings = retriever.search_batch(questions, mode, DETECTION_K)
    query_vectors = retriever.embed_queries(questions)
    rows = []
    for question, ranking, query_vector in zip(questions, rankings, query_vectors):
        vectors = passage_vectors(retriever, ranking) if ranking else []
        rows.append({**passage_signals(query_vector, vectors, ranking), **detector_signal(question),
                     **edition_signal(question, ranking[:Context().k])})
    return rows


def auc_row(name: str, rows: list[dict], gold: list[bool]) -> str:
    cells = [f"{auc([SIGNALS[s] * r[s] for r in rows], gold):.3f}" for s in SIGNALS]
    return f"| {name} | {len(rows)} ({sum(gold)} ambiguous) | " + " | ".join(cells) + " |"


def scores(predicted: list[bool], gold: list[bool]) -> dict:
    tp = sum(p and g for p, g in zip(predicted, gold))
    fp = sum(p and not g for p, g in zip(predicted, gold))
    fn = sum(g and not p for p, g in zip(predicted, gold))
    tn = len(gold) - tp - fp - fn
    precision, recall = tp / max(tp + fp, 1), tp / max(tp + fn, 1)
    return {"precision": precision, "recall": recall, "f1": 2 * precision * recall / max(precision + recall, 1e-9),
            "accuracy": (tp + tn) / len(gold), "tp": tp, "fp": fp, "fn": fn, "tn": tn}


def sweep(rows: list[dict], gold: list[bool]) -> list[tuple[float, GateThresholds, dict]]:
    """Every (detector, focus) threshold pair, by accuracy then F1."""
    results = []
    for detector in np.round(np.arange(0.3, 1.01, 0.05), 2):
        for focus in np.round(np.arange(0.0, 0.25, 0.01), 2):
            thresholds = GateThresholds(detector=float(detector), focus=float(focus))
            s = scores([is_ambiguous(r, thresholds)[0] for r in rows], gold)
            results.append(((s["accuracy"], s["f1"]), thresholds, s))
    return sorted(results, key=lambda item: item[0], reverse=True)


def line(name: str, s: dict) -> str:
    return (f"| {name} | {s['precision']:.3f} | {s['recall']:.3f} | {s['f1']:.3f} | {s['accuracy']:.3f} "
            f"| {s['tp']}/{s['fp']}/{s['fn']}/{s['tn']} |")


def ambignq_sample(size: int) -> tuple[list[str], list[bool]]:
    dev = set(AMBIGNQ_IDS.read_text().split())
    items = [i for i in json.loads(AMBIGNQ.read_text()) if i["id"] in dev]
    random.Random(0).shuffle(items)
    items = items[:size]
    return ([i["question"] for i in items],
            [any(a["type"] == "multipleQAs" for a in i["annotations"]) for i in items])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", default="hybrid", choices=["hybrid", "dense", "sparse"])
    parser.add_argument("--cache", default=str(cache_dir() / "bench"))
    parser.add_argument("--ambignq", type=int, default=200, help="AmbigNQ dev ids sampled (seed 0)")
    parser.add_argument("--no-pool", action="store_true", help="skip the wiki-pool parts")
    args = parser.parse_args(argv)
    cache = Path(args.cache).expanduser()
    if cache.resolve().is_relative_to(ROOT):
        parser.error("keep the bench indexes outside the repository")
    items = json.loads(DEMO_QUESTIONS.read_text())["questions"]
    questions, gold = [q["question"] for q in items], [q["label"] == "ambiguous" for q in items]
    demo = signals(ensure_index(cache / "demo-index", DEMO_CORPUS), questions, args.mode)
    print(f"# auto's gate: ROC-AUC of each cheap signal ({args.mode}, {DETECTION_K} detection passages, packaged encoder)\n")
    print("| data (dev only) | questions | " + " | ".join(f"{s}{' (lower = ambiguous)' if SIGNALS[s] < 0 else ''}"
                                                        for s in SIGNALS) + " |")
    print("|---|---|" + "---:|" * len(SIGNALS))
    print(auc_row("demo fixture", demo, gold))
    pool = None
    if not args.no_pool and all(p.exists() for p in (POOL_CORPUS, ASQA, POOL_IDS, DEV_IDS, AMBIGNQ)):
        pool = ensure_index(cache / "wiki-pool-index", POOL_CORPUS)
        texts, labels = ambignq_sample(args.ambignq)
        print(auc_row("AmbigNQ dev sample over wiki pool", signals(pool, texts, args.mode), labels))
    print("\n## Threshold sweep on the demo fixture (ambiguous = detector >= t_d OR focus < t_f)\n")
    print("| gate | precision | recall | F1 | accuracy | TP/FP/FN/TN |")
    print("|---|---|---|---|---|---|")
    for _, thresholds, s in sweep(demo, gold)[:5]:
        print(line(f"t_d {thresholds.detector}, t_f {thresholds.focus}", s))
    print(line(f"shipped default: t_d {DEFAULT_THRESHOLDS.detector}, t_f {DEFAULT_THRESHOLDS.focus}",
               scores([is_ambiguous(r, DEFAULT_THRESHOLDS)[0] for r in demo], gold)))
    for name, preset in PRESETS.items():
        adf = [classify(r["variance"], r["separability"], preset.tau_var, preset.tau_sep) != "Unambiguous" for r in demo]
        print(line(f"ADF gate, {name} preset (decompose)", scores(adf, gold)))
    best_adf = max(
        ((scores([classify(r["variance"], r["separability"], tv, ts) != "Unambiguous" for r in demo], gold), tv, ts)
         for tv in np.round(np.arange(0.0, 1.01, 0.05), 2) for ts in np.round(np.arange(0.0, 0.5, 0.02), 2)),
        key=lambda item: (item[0]["accuracy"], item[0]["f1"]))
    print(line(f"ADF gate, best swept: tau_var {best_adf[1]}, tau_sep {best_adf[2]}", best_adf[0]))
    print(line("detector alone (its own threshold + lexical rule)", scores([r["detector_label"] == "ambiguous" for r in demo], gold)))
    print(line("always ambiguous", scores([True] * len(gold), gold)))
    if pool:
        from agent.evaluation.datasets import load_dataset, read_ids

        dev = set(read_ids(DEV_IDS))
        examples = load_dataset("asqa", ASQA, ids=[i for i in read_ids(POOL_IDS) if i in dev])
        rows = signals(pool, [e.question for e in examples], args.mode)
        fired = [is_ambiguous(r, DEFAULT_THRESHOLDS)[0] for r in rows]
        print(f"\nASQA pool dev ids ({len(rows)}, all ambiguous): the shipped gate calls {sum(fired)} "
              f"ambiguous (recall {sum(fired) / len(rows):.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
