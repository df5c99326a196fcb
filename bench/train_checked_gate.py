"""Train the product gate that decides on the model's checked units; write it and its card.

    DISAMBIG_LLM_THREADS=2 .venv/bin/python bench/train_checked_gate.py --manuals-index DIR [--model local] \
        [--out agent/data/product_gate_checked.npz] [--card agent/data/product_gate_checked_card.md]

DIR is an index of the tune products alone (as for bench/train_product_gate.py); the fixture's
test split is never read. On the fast budget, with the model's guess of the option names, the
first gate (agent/data/product_gate_guessed.npz) reads the unit ranker's first unit of each
product; the model then checks the best four units of each product that gate gives CHECK_FLOOR or
more, and the unit it and the ranker prefer is stated (agent/assembly/unit_check.py). This gate
decides on that unit: for each tune question whose pool documents two or more products, each
product is a row of agent/assembly/product_gate.py's `checked_features`, labelled 1 when the
product is a labelled sense of the question. A logistic regression learns the weights; the
threshold is chosen as for the first gate (bench/train_product_gate.py: the best F0.5 of reading
precision and sense recall, each question scored by a model fitted without it and its rewordings,
averaged with the grid's neighbours), a reading precise when its checked unit states a short
answer of its product's sense. The card sets the first gate beside it, scored on the same checked
units, refitted the same way.
"""

from __future__ import annotations

import argparse
import datetime
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from agent.assembly.product_gate import (CHECK_FLOOR, CHECKED_FEATURES, CHECKED_MODEL_PATH, FEATURES,  # noqa: E402
                                         ProductGate, checked_features, checked_products, product_candidates,
                                         product_gate)
from agent.context import Context  # noqa: E402
from agent.evaluation.sentence_metrics import states_any  # noqa: E402
from train_product_gate import (GRID, best_threshold_row, f_half, fit, group_of, leave_one_group_out,  # noqa: E402
                                scores_at, sense_of, tune_pools)

CARD = CHECKED_MODEL_PATH.with_name("product_gate_checked_card.md")


def checked_rows(items: list[dict], context: Context) -> list[dict]:
    """One row per (tune question with a guess, product of its pool of two or more products):
    the first gate's features and probability, the checked gate's features, the label, and
    whether the checked unit states a short answer of the product's sense."""
    first = product_gate(True)
    rows = []
    for n, item in enumerate(items, 1):
        question = item["fixture"]
        found = product_candidates(question["question"], item["pool"], context, guessed=item["guessed"])
        if not found or not item["guessed"]:
            continue
        probabilities = first.probabilities(np.array([f.features for f in found]))
        products = checked_products(question["question"], found, probabilities, context, context.check_units)
        for product, features in zip(products, checked_features(products)):
            sense = sense_of(product.found.candidate.passage, question)
            rows.append({"question": question["id"], "group": group_of(question), "senses": len(question["senses"]),
                         "first": product.probability, "first_features": product.found.features,
                         "features": tuple(features), "label": int(sense is not None),
                         "precise": bool(sense) and states_any(product.unit.candidate.sentence, sense["answers"])})
        print(f"{n}/{len(items)} {question['question']}", file=sys.stderr, flush=True)
    return rows


def table_of(rows: list[dict], probabilities: np.ndarray) -> list[dict]:
    """scores_at over the grid; a product the first gate gives under CHECK_FLOOR is never stated."""
    allowed = np.array([r["first"] >= CHECK_FLOOR for r in rows])
    return [scores_at(rows, np.where(allowed, probabilities, 0.0), t) for t in GRID]


def card(model: ProductGate, rows: list[dict], table: list[dict], first_table: list[dict], command: str) -> str:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    changed = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], capture_output=True,
                             text=True).stdout.strip()
    at = f"commit `{commit}`" + (" with changes not yet committed (this gate's code among them)" if changed else "")
    best, first_best = table[best_threshold_row(table)], first_table[best_threshold_row(first_table)]

    def row(r: dict) -> str:
        return (f"| {r['threshold']:.2f} | {r['readings_per_q']:.2f} | {r['precision']:.3f} | {r['sense_recall']:.3f} | "
                f"{r['right_product']:.3f} |")
    return "\n".join([
        "# Checked product gate card", "",
        "Which products of a pool over several manuals answer, decided on the unit that will be stated for",
        "each: the best mix of the unit ranker and the model's check of its first units",
        "(agent/assembly/unit_check.py; the gate: agent/assembly/product_gate.py `choose_products`). Used on",
        "the budgets that check units, when the model guessed the option names the question asks for.",
        f"Trained {datetime.date.today()} at {at} by `{command}` on the manuals benchmark's tune",
        "products (bench/fixtures/manuals_questions.json, split tune). The test products were never read.", "",
        f"{len(rows)} product rows from {len({r['question'] for r in rows})} questions whose pool documents two or more",
        f"products, {sum(r['label'] for r in rows)} of them a labelled sense; the model checked the units of the",
        f"{sum(r['first'] >= CHECK_FLOOR for r in rows)} the first gate gives {CHECK_FLOOR} or more.", "",
        "| feature | weight (standardized) |", "| --- | ---: |",
        *[f"| {name} | {weight:+.2f} |" for name, weight in zip(CHECKED_FEATURES, model.coef)],
        f"| intercept | {model.intercept:+.2f} |", "",
        f"Threshold {model.threshold:.2f}: the best F0.5 of reading precision and sense recall averaged with the",
        "neighbouring thresholds', each question scored by a model fitted without it and its rewordings (a",
        "reading: a product's checked unit; precise when it states a short answer of that product's sense).",
        f"At it: precision {best['precision']:.3f}, sense recall {best['sense_recall']:.3f}. The first gate's",
        f"features refitted the same way, on the same checked units, at its own best threshold"
        f" ({first_best['threshold']:.2f}): precision {first_best['precision']:.3f}, sense recall "
        f"{first_best['sense_recall']:.3f}.", "",
        "The checked gate:", "",
        "| threshold | readings/q | precision | sense recall | right product |", "| ---: | ---: | ---: | ---: | ---: |",
        *[row(r) for r in table], "",
        f"The first gate's features ({', '.join(FEATURES)}), on the same checked units:", "",
        "| threshold | readings/q | precision | sense recall | right product |", "| ---: | ---: | ---: | ---: | ---: |",
        *[row(r) for r in first_table], "",
    ])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--manuals-index", required=True, help="index of the manuals benchmark's tune products alone")
    parser.add_argument("--model", default="local", help="the model that guesses the option names and checks the units")
    parser.add_argument("--out", default=str(CHECKED_MODEL_PATH))
    parser.add_argument("--card", default=str(CARD))
    args = parser.parse_args(argv)
    started = time.time()
    items = tune_pools(args.manuals_index, args.model)
    rows = checked_rows(items, Context(index_dir=args.manuals_index, model=args.model))
    if not rows or len({r["label"] for r in rows}) < 2:
        print("no pool of two or more products with both labels: is the index the tune products'?", file=sys.stderr)
        return 1
    table = table_of(rows, leave_one_group_out(rows))
    first_rows = [{**r, "features": r["first_features"]} for r in rows]
    first_table = table_of(first_rows, leave_one_group_out(first_rows))
    model = fit(rows, table[best_threshold_row(table)]["threshold"])
    model.save(Path(args.out), CHECKED_FEATURES)
    Path(args.card).write_text(card(model, rows, table, first_table, "bench/train_checked_gate.py --manuals-index "
                                                                     "TUNE_INDEX"))
    for checked, first in zip(table, first_table):
        print(f"{checked['threshold']:.2f} checked: precision {checked['precision']:.3f} recall "
              f"{checked['sense_recall']:.3f} F0.5 {f_half(checked):.3f} | first gate's features: precision "
              f"{first['precision']:.3f} recall {first['sense_recall']:.3f} F0.5 {f_half(first):.3f}")
    print(f"threshold {model.threshold:.2f}; wrote {args.out} and {args.card} ({time.time() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
