"""Train the unit ranker and the product gate on the manuals benchmark's tune products; write both and their card.

    .venv/bin/python bench/train_product_gate.py --manuals-index DIR [--out agent/data/product_gate.npz] \
        [--ranker-out agent/data/unit_ranker.npz] [--card agent/data/product_gate_card.md]
    DISAMBIG_LLM_THREADS=2 .venv/bin/python bench/train_product_gate.py --manuals-index DIR --guess [--model local]

With `--guess` the model guesses each tune question's option names first, as auto does on the
fast and thorough budgets (agent/assembly/option_guess.py), and the ranker and gate that read
them are trained (agent/data/unit_ranker_guessed.npz, product_gate_guessed.npz and their card).

DIR is an index of the tune products alone (`bench/manuals.py split --split tune`, then
`disambig ingest WORK/tune/* --index DIR`); the fixture's test split is never read here. Each tune
question's pool is auto's (`bench/train_selector.py`'s `pools`: hybrid, 15 passages, each
document's best first).

First the unit ranker (agent/assembly/manual_units.py): for each labelled product of a pool, the
short list of its documents' units, each labelled 1 when it states a short answer of that
product's sense; a conditional logit that puts each list's labelled units first. Then the gate:
where a pool documents two or more products, each product is one row (agent/assembly/
product_gate.py's features of its best unit by that ranker), labelled 1 when the product is a
labelled sense of the question. A
logistic regression (standardized features) learns the weights; the threshold is the one whose
readings, each question scored by a model that did not see it (leave one question out), have the
best F0.5 of reading precision and sense recall, averaged with the grid's neighbouring thresholds:
a reading is precise when its unit states a short answer of its product's sense.
"""

from __future__ import annotations

import argparse
import datetime
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from agent.assembly.manual_units import (GUESSED_RANKER_FEATURES, GUESSED_RANKER_PATH, READER_COLUMN,  # noqa: E402
                                         RANKER_FEATURES, RANKER_PATH, read, shortlist, to_read)
from agent.assembly.option_guess import guess_option_names  # noqa: E402
from agent.assembly.product_gate import (FEATURES, GUESSED_MODEL_PATH, MODEL_PATH, ProductGate,  # noqa: E402
                                         product_candidates)
from agent.assembly.products import product_groups  # noqa: E402
from agent.assembly.selector import SelectorModel  # noqa: E402
from agent.context import Context  # noqa: E402
from agent.evaluation.sentence_metrics import states_any  # noqa: E402
from documents_questions import of_sense  # noqa: E402
from train_selector import MANUALS, fit_logistic, pools, standardization  # noqa: E402

CARD = MODEL_PATH.parent / "product_gate_card.md"
GUESSED_CARD = MODEL_PATH.parent / "product_gate_guessed_card.md"
GRID = [round(t, 2) for t in np.arange(0.1, 0.91, 0.05)]


def sense_of(passage: dict, question: dict) -> dict | None:
    """The question's labelled sense whose documents hold the passage, or None."""
    return next((s for s in question["senses"] if of_sense(passage, s)), None)


def tune_pools(index: str, model: str | None = None) -> list[dict]:
    """The tune questions, each with auto's pool over the tune products' index and, with a
    `model`, the option names it guesses the question asks for (`guessed`)."""
    questions = [q for q in json.loads(MANUALS.read_text())["questions"] if q["split"] == "tune"]
    items = pools([{"id": q["id"], "question": q["question"], "fixture": q} for q in questions], index)
    context = Context(index_dir=index, model=model) if model else None
    for item in items:
        item["guessed"] = tuple(guess_option_names(item["question"], context)) if context else ()
    return items


def unit_rows(items: list[dict], index: str) -> list[dict]:
    """One row per (tune question, labelled product of its pool): the product's short list
    (agent/assembly/manual_units.py), each unit labelled 1 when it states a short answer of that
    product's sense."""
    context = Context(index_dir=index)
    rows = []
    for item in items:
        question = item["fixture"]
        for key, passages in product_groups(item["pool"]).items():
            sense = next((found for p in passages if (found := sense_of(p, question))), None)
            if sense is None:
                continue
            units, features = shortlist(question["question"], passages, context, item["guessed"])
            if units:
                read(question["question"], units, features)
                rows.append({"question": question["id"], "group": group_of(question), "features": features,
                             "labels": np.array([int(states_any(u.sentence, sense["answers"])) for u in units]),
                             "text": question["question"], "product": passages[0].get("product") or "",
                             "units": [u.sentence for u in units]})
    return rows


def group_of(question: dict) -> str:
    """What is left out of a fit together: a question and the tune questions that reword it."""
    return question.get("rewords") or question["id"]


RANKER_L2 = 0.01  # on the standardized weights; 0.001 and 0.1 put the same units first (tune split)
RANKER_STEPS = 1000
RANKER_RATE = 0.5


def fit_ranker(rows: list[dict]) -> SelectorModel:
    """A conditional logit: a linear score over the standardized features whose softmax over each
    short list puts the list's labelled units first (lists holding none teach nothing). The ranker
    only has to order a product's units, and fitted so it finds a labelled unit first more often
    than a logistic regression over all rows pooled (docs/results/manuals.md). Saved in the
    logistic form with no intercept: the sigmoid of the score orders the units as the score does,
    and the gate reads the score itself (its logit)."""
    features = np.vstack([r["features"] for r in rows])
    mean, scale = standardization(features)
    lists = [((r["features"] - mean) / scale, r["labels"] / r["labels"].sum()) for r in rows if r["labels"].any()]
    weights = np.zeros(features.shape[1])
    for _ in range(RANKER_STEPS):  # full-batch gradient descent: the loss is convex, the result deterministic
        gradient = RANKER_L2 * weights
        for standardized, wanted in lists:
            scores = standardized @ weights
            chosen = np.exp(scores - scores.max())
            gradient += standardized.T @ (chosen / chosen.sum() - wanted) / len(lists)
        weights -= RANKER_RATE * gradient
    return SelectorModel(coef=weights, intercept=0.0, mean=mean, scale=scale, threshold=0.5)


def ranker_first_right(rows: list[dict]) -> tuple[int, int, int]:
    """(lists whose first unit is labelled, scoring each question by a ranker fitted without it and
    its rewordings (`group_of`), among the units it has the reader read (`to_read`), as the app
    does; the reader's first of the whole list; lists holding a labelled unit)."""
    ranked = reader = 0
    held = [r for r in rows if r["labels"].any()]
    for row in held:
        model = fit_ranker([r for r in rows if r["group"] != row["group"]])
        kept, kept_rows = to_read(list(range(len(row["labels"]))), row["features"], model)
        ranked += int(row["labels"][kept[int(np.argmax(model.probabilities(kept_rows)))]])
        reader += int(row["labels"][int(np.argmax(row["features"][:, READER_COLUMN]))])
    return ranked, reader, len(held)


def product_rows(items: list[dict], index: str, ranker: SelectorModel) -> list[dict]:
    """One row per (tune question, product of its pool), for pools of two or more products."""
    context = Context(index_dir=index)
    rows = []
    for item in items:
        question = item["fixture"]
        for found in product_candidates(question["question"], item["pool"], context, ranker, item["guessed"]) or []:
            sense = sense_of(found.candidate.passage, question)
            rows.append({"question": question["id"], "group": group_of(question), "senses": len(question["senses"]),
                         "features": found.features,
                         "label": int(sense is not None),
                         "precise": bool(sense) and states_any(found.candidate.sentence, sense["answers"])})
    return rows


def fit(rows: list[dict], threshold: float = 0.5) -> ProductGate:
    X = np.array([r["features"] for r in rows], dtype=float)
    y = np.array([r["label"] for r in rows])
    coef, intercept, mean, scale = fit_logistic(X, y)
    return ProductGate(coef=coef, intercept=intercept, mean=mean, scale=scale, threshold=threshold)


def leave_one_group_out(rows: list[dict]) -> np.ndarray:
    """Each row's probability by a gate fitted without its question and that question's rewordings."""
    probabilities = np.zeros(len(rows))
    for group in sorted({r["group"] for r in rows}):
        held = [i for i, r in enumerate(rows) if r["group"] == group]
        model = fit([r for r in rows if r["group"] != group])
        probabilities[held] = model.probabilities(np.array([rows[i]["features"] for i in held]))
    return probabilities


def scores_at(rows: list[dict], probabilities: np.ndarray, threshold: float) -> dict:
    stated = [r for r, p in zip(rows, probabilities) if p >= threshold]
    senses = sum({r["question"]: r["senses"] for r in rows}.values())
    precise = sum(r["precise"] for r in stated)
    return {"threshold": threshold, "readings_per_q": len(stated) / len({r["question"] for r in rows}),
            "precision": precise / len(stated) if stated else 0.0, "sense_recall": precise / senses,
            "right_product": sum(r["label"] for r in stated) / len(stated) if stated else 0.0}


def best_threshold_row(table: list[dict]) -> int:
    """The row of the best F0.5 averaged with its neighbours on the grid: over 38 questions the
    curve is flat and jagged near its top (0.446 to 0.455 from 0.50 to 0.65), and a threshold in
    the middle of a good stretch is surer to carry than one at a single high point."""
    scores = [f_half(row) for row in table]
    smoothed = [float(np.mean(scores[max(i - 1, 0):i + 2])) for i in range(len(scores))]
    return max(range(len(table)), key=lambda i: (round(smoothed[i], 3), table[i]["threshold"]))


def f_half(row: dict) -> float:
    p, r = row["precision"], row["sense_recall"]
    return 1.25 * p * r / (0.25 * p + r) if p + r else 0.0


def card(model: ProductGate, ranker: SelectorModel, ranker_check: tuple[int, int, int], rows: list[dict],
         table: list[dict], command: str, guessed: bool = False) -> str:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    ranked, reader, held = ranker_check
    lines = [
        "# Product gate card" + (", with the model's guess of the option names" if guessed else ""), "",
        "Which unit speaks for a product of a pool over several manuals (the unit ranker,",
        "agent/assembly/manual_units.py) and which products answer the question (the gate,",
        "agent/assembly/product_gate.py).",
        f"Trained {datetime.date.today()} at commit `{commit}` by `{command}` on the manuals benchmark's tune",
        "products (bench/fixtures/manuals_questions.json, split tune). The test products were never read.", "",
        "## Unit ranker", "",
        "A conditional logit: the softmax over each short list of a linear score puts the list's labelled units",
        "first (the weights below; the ranker's logit is that score).",
        *(["With the option names the model guesses the question asks for (agent/assembly/option_guess.py),",
            "as auto asks for them on the fast and thorough budgets."] if guessed else []), "",
        "Rows: the short list of each labelled product of each tune question's pool, a unit labelled 1 when",
        "it states a short answer of that product's sense; the reader reads every unit here. Scored with each",
        "question and its rewordings left out of their own fit, the ranker's first of the units it has the",
        f"reader read (as the app does: `to_read`) is a labelled one for {ranked} of the {held} lists that",
        f"hold one; the reader's first of the whole list, {reader}.", "",
        "| feature | weight (standardized) |", "| --- | ---: |",
        *[f"| {name} | {weight:+.2f} |"
          for name, weight in zip(GUESSED_RANKER_FEATURES if guessed else RANKER_FEATURES, ranker.coef)],
        f"| intercept | {ranker.intercept:+.2f} |", "",
        "## Gate", "",
        f"{len(rows)} product rows from {len({r['question'] for r in rows})} questions whose pool documents two or "
        f"more products, {sum(r['label'] for r in rows)} of them a labelled sense.", "",
        "| feature | weight (standardized) |", "| --- | ---: |",
        *[f"| {name} | {weight:+.2f} |" for name, weight in zip(FEATURES, model.coef)],
        f"| intercept | {model.intercept:+.2f} |", "",
        f"Threshold {model.threshold:.2f}: the best F0.5 of reading precision and sense recall averaged with the",
        "neighbouring thresholds', each question scored by a model fitted without it and its rewordings (a",
        "reading: a product's best unit by the unit ranker; precise when it states a short answer of that",
        "product's sense).", "",
        "| threshold | readings/q | precision | sense recall | right product |", "| ---: | ---: | ---: | ---: | ---: |",
        *[f"| {r['threshold']:.2f} | {r['readings_per_q']:.2f} | {r['precision']:.3f} | {r['sense_recall']:.3f} | "
          f"{r['right_product']:.3f} |" for r in table], "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--manuals-index", required=True, help="index of the manuals benchmark's tune products alone")
    parser.add_argument("--guess", action="store_true",
                        help="rank with the option names the model guesses (writes the guessed ranker, gate and card)")
    parser.add_argument("--model", default="local", help="the model that guesses, with --guess")
    parser.add_argument("--out", help=f"default {MODEL_PATH} ({GUESSED_MODEL_PATH} with --guess)")
    parser.add_argument("--ranker-out", help=f"default {RANKER_PATH} ({GUESSED_RANKER_PATH} with --guess)")
    parser.add_argument("--card", help=f"default {CARD} ({GUESSED_CARD} with --guess)")
    args = parser.parse_args(argv)
    args.out = args.out or str(GUESSED_MODEL_PATH if args.guess else MODEL_PATH)
    args.ranker_out = args.ranker_out or str(GUESSED_RANKER_PATH if args.guess else RANKER_PATH)
    args.card = args.card or str(GUESSED_CARD if args.guess else CARD)
    items = tune_pools(args.manuals_index, args.model if args.guess else None)
    lists = unit_rows(items, args.manuals_index)
    if not any(r["labels"].any() for r in lists):
        print("no labelled unit in any short list: is the index the tune products'?", file=sys.stderr)
        return 1
    ranker = fit_ranker(lists)
    ranker.save(Path(args.ranker_out), GUESSED_RANKER_FEATURES if args.guess else RANKER_FEATURES)
    ranker_check = ranker_first_right(lists)
    print(f"{len(lists)} short lists")
    print(f"unit ranker: first unit labelled in {ranker_check[0]} of {ranker_check[2]} lists "
          f"(reader alone {ranker_check[1]}); wrote {args.ranker_out}")
    rows = product_rows(items, args.manuals_index, ranker)
    if not rows or len({r["label"] for r in rows}) < 2:
        print("no pool of two or more products with both labels: is the index the tune products'?", file=sys.stderr)
        return 1
    probabilities = leave_one_group_out(rows)
    table = [scores_at(rows, probabilities, t) for t in GRID]
    best = table[best_threshold_row(table)]
    model = fit(rows, best["threshold"])
    model.save(Path(args.out))
    command = "bench/train_product_gate.py --manuals-index TUNE_INDEX" + (" --guess" if args.guess else "")
    Path(args.card).write_text(card(model, ranker, ranker_check, rows, table, command, args.guess))
    for row in table:
        print(f"{row['threshold']:.2f} readings/q {row['readings_per_q']:.2f} precision {row['precision']:.3f} "
              f"recall {row['sense_recall']:.3f} right product {row['right_product']:.3f}")
    print(f"threshold {model.threshold:.2f}; wrote {args.out} and {args.card}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
