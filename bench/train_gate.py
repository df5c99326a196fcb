"""Train the learned gate on the tune splits; write the model and its card.

    .venv/bin/python bench/train_gate.py --demo-index DIR --tune-index DIR --wiki-index DIR [--ambignq N]
        [--out agent/data/gate_model.npz] [--card agent/data/gate_card.md]

--tune-index: the tune fixture's trained topics over their own index (bench/tune_fixture_corpus.py).

Data: the demo fixture's tune ids and the tune fixture (bench/fixtures/; labels clear/ambiguous)
and a seeded sample of N AmbigNQ dev tune ids (bench/splits/ambignq_tune.txt; ambiguous when an annotation is multipleQAs), their
pools retrieved as auto retrieves (15 hybrid passages; AmbigNQ over the wiki pool index).
Features: agent/assembly/gate.py GATE_FEATURES. The threshold is the highest whose tune recall
reaches TARGET_RECALL (an ambiguous question judged clear loses senses; a clear one judged
ambiguous only gets readings the selector is sure of). Test: demo test, the held-out fixture,
an AmbigNQ test sample: ROC-AUC, precision and recall, next to the rule gate's.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.assembly.gate import GATE_FEATURES, GATE_MODEL_PATH, GateModel, gate_row, gate_signals  # noqa: E402
from agent.context import Context  # noqa: E402
from agent.retrieval.retriever import get_retriever  # noqa: E402
from agent.steps.ambiguity_signals import is_ambiguous  # noqa: E402
from bench.train_selector import (POOL, SHARED, fit_logistic, fixture_questions, ids,  # noqa: E402
                                  tune_fixture_questions)

ROOT = Path(__file__).resolve().parents[1]
TARGET_RECALL = 0.9


def ambignq(split: str, n: int) -> list[dict]:
    path = SHARED / "ambignq" / "ambignq_dev_light.json"
    if not path.exists() or not n:
        return []
    wanted = ids(f"ambignq_{split}")
    rows = [r for r in json.loads(path.read_text()) if str(r["id"]) in wanted]
    rows = random.Random(0).sample(sorted(rows, key=lambda r: str(r["id"])), min(n, len(rows)))
    return [{"id": str(r["id"]), "question": r["question"],
             "label": "ambiguous" if any(a["type"] == "multipleQAs" for a in r["annotations"]) else "clear"} for r in rows]


def signals_of(questions: list[dict], index_dir: str) -> list[dict]:
    context = Context(index_dir=index_dir)
    retriever = get_retriever(context)
    for q in questions:
        pool = retriever.search(q["question"], "hybrid", POOL, depth=20)
        q["signals"], _ = gate_signals(q["question"], pool, context)
    return questions


def scores(y: np.ndarray, predicted: np.ndarray) -> dict:
    tp = int(((predicted == 1) & (y == 1)).sum())
    return {"precision": tp / max(int(predicted.sum()), 1), "recall": tp / max(int(y.sum()), 1),
            "accuracy": float((predicted == y).mean())}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--demo-index", required=True)
    parser.add_argument("--wiki-index")
    parser.add_argument("--tune-index", help="index of the tune fixture with the demo corpus (see train_selector.py); "
                                             "its questions join the training rows")
    parser.add_argument("--all-tune-topics", action="store_true",
                        help="train on all the tune fixture's topics, not the shipped models' 8 (see train_selector.py)")
    parser.add_argument("--ambignq", type=int, default=80, help="AmbigNQ questions per split (0: none)")
    parser.add_argument("--out", default=str(GATE_MODEL_PATH))
    parser.add_argument("--card", default=str(ROOT / "agent" / "data" / "gate_card.md"))
    args = parser.parse_args(argv)
    from sklearn.metrics import roc_auc_score

    tune = signals_of(fixture_questions("demo_questions.json", ids("demo_tune")), args.demo_index)
    if args.tune_index:
        tune += signals_of(tune_fixture_questions(args.all_tune_topics), args.tune_index)
    tests = {"demo test": signals_of(fixture_questions("demo_questions.json", ids("demo_test")), args.demo_index),
             "held-out fixture": signals_of(fixture_questions("heldout_questions.json", None), args.demo_index)}
    if args.wiki_index:
        tune += signals_of(ambignq("tune", args.ambignq), args.wiki_index)
        tests["AmbigNQ test sample"] = signals_of(ambignq("test", args.ambignq), args.wiki_index)
    X = np.vstack([gate_row(q["signals"]) for q in tune])
    y = np.asarray([q["label"] == "ambiguous" for q in tune], dtype=int)
    coef, intercept, mean, scale = fit_logistic(X, y)
    model = GateModel(coef=coef, intercept=intercept, mean=mean, scale=scale, threshold=0.5)
    probs = np.asarray([model.probability(q["signals"]) for q in tune])
    grid = sorted({round(t, 2) for t in np.arange(0.05, 0.96, 0.05)}, reverse=True)
    threshold = next((t for t in grid if scores(y, (probs >= t).astype(int))["recall"] >= TARGET_RECALL), 0.05)
    model = GateModel(model.coef, model.intercept, mean, scale, threshold)
    model.save(Path(args.out))
    report = {}
    for name, questions in {"tune": tune, **tests}.items():
        if not questions:
            continue
        yt = np.asarray([q["label"] == "ambiguous" for q in questions], dtype=int)
        pt = np.asarray([model.probability(q["signals"]) for q in questions])
        rules = np.asarray([is_ambiguous(q["signals"])[0] for q in questions], dtype=int)
        report[name] = {"n": len(questions), "ambiguous": int(yt.sum()),
                        "auc": float(roc_auc_score(yt, pt)) if 0 < yt.sum() < len(yt) else None,
                        "learned": scores(yt, (pt >= threshold).astype(int)), "rules": scores(yt, rules)}
    Path(args.card).write_text(card(model, report), encoding="utf-8")
    print(json.dumps(report, indent=1))
    return 0


def card(model: GateModel, report: dict) -> str:
    lines = ["# Learned gate: model card", "",
             "Logistic regression (scikit-learn, standardized features): is the question ambiguous over its",
             "retrieved passages? Trained by `bench/train_gate.py --demo-index DIR --tune-index DIR --wiki-index DIR`",
             "on the demo fixture's tune ids, the tune fixture's first 8 topics (over an index of their passages:",
             "bench/tune_fixture_corpus.py, as for the selector) and a seeded",
             "AmbigNQ dev tune sample (wiki pool index). Labels: the fixtures' clear/ambiguous; AmbigNQ: ambiguous",
             "when an annotation is multipleQAs.", "",
             "Two runs of this command wrote the same bytes. Before, runs differed by up to 0.06 in",
             "a weight: the vector store's narrow HNSW search gave one AmbigNQ question other passages in some",
             "processes. The wider search (agent/retrieval/index.py EF_SEARCH) misses far fewer neighbours but",
             "is still approximate, so a run may yet differ on a rare question.", "",
             f"Threshold {model.threshold:.2f}: the highest on the tune grid with recall >= {TARGET_RECALL}.", "",
             "| feature | weight (standardized) |", "|---|---:|"]
    lines += [f"| {name} | {w:+.2f} |" for name, w in sorted(zip(GATE_FEATURES, model.coef), key=lambda x: -abs(x[1]))]
    lines += ["", "| split | n | ambiguous | ROC-AUC | learned P | learned R | learned acc | rules P | rules R | rules acc |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, r in report.items():
        auc = "–" if r["auc"] is None else f"{r['auc']:.3f}"
        lines.append(f"| {name} | {r['n']} | {r['ambiguous']} | {auc} | " + " | ".join(
            f"{r[kind][m]:.3f}" for kind in ("learned", "rules") for m in ("precision", "recall", "accuracy")) + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    raise SystemExit(main())
