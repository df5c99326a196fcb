"""Fit how much the model's check of a product's units weighs against the unit ranker
(agent/assembly/unit_check.py: CHECK_WEIGHT, and how many units are checked), on the manuals
benchmark's tune products.

    DISAMBIG_LLM_THREADS=2 .venv/bin/python bench/fit_unit_check.py --manuals-index DIR [--guess] [--model local]

DIR is an index of the tune products alone (as for bench/train_product_gate.py). For each
labelled product of each tune question's pool, its short list (bench/train_product_gate.py's
`unit_rows`; with `--guess`, ranked with the model's guessed option names, as the fast budget
ranks): a ranker fitted without the question and its rewordings keeps the six units the app
reads, the model checks each (one 1-token request), and for each number of units checked and
each weight the table counts the lists whose best mix is a labelled unit; a second table does the
same with the ranker fitted on every list, as the shipped one is (it has seen these lists, so on
the tune split it may be surer of its first unit than on products it never saw).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from agent.assembly.manual_units import to_read  # noqa: E402
from agent.assembly.selector import logit  # noqa: E402
from agent.assembly.unit_check import unit_yes  # noqa: E402
from agent.context import Context  # noqa: E402
from train_product_gate import fit_ranker, tune_pools, unit_rows  # noqa: E402

WEIGHTS = (0.0, 0.5, 1.0, 2.0, 3.0, 4.0, 5.0, 8.0)
CHECKED = (2, 3, 4, 6)


def checked_lists(rows: list[dict], context: Context) -> tuple[list, list]:
    """For each list holding a labelled unit, (the ranker's logits of the six units read, the
    model's logits of them, their labels): by a ranker fitted without the question and its
    rewordings, and by one fitted on every list, as the shipped ranker is (it has seen these)."""
    left_out, everything = [], []
    models = {group: fit_ranker([r for r in rows if r["group"] != group]) for group in {r["group"] for r in rows}}
    shipped = fit_ranker(rows)
    held = [r for r in rows if r["labels"].any()]
    for n, row in enumerate(held, 1):
        said: dict[int, float] = {}
        for model, out in ((models[row["group"]], left_out), (shipped, everything)):
            kept, kept_rows = to_read(list(range(len(row["labels"]))), row["features"], model)
            for i in kept:
                if i not in said:
                    yes = unit_yes(row["text"], row["product"], row["units"][i], context)
                    said[i] = 0.0 if yes is None else float(logit(yes))
            out.append((logit(model.probabilities(kept_rows)), np.array([said[i] for i in kept]), row["labels"][kept]))
        print(f"{n}/{len(held)} {row['question']} {row['product']}", file=sys.stderr, flush=True)
    return left_out, everything


def first_right(lists, checked: int, weight: float) -> int:
    """Lists whose best mix among the ranker's first `checked` units is labelled."""
    right = 0
    for ranker, model, labels in lists:
        head = np.argsort(-ranker, kind="stable")[:checked]
        right += int(labels[head[int(np.argmax(ranker[head] + weight * model[head]))]])
    return right


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--manuals-index", required=True, help="index of the manuals benchmark's tune products alone")
    parser.add_argument("--guess", action="store_true", help="rank with the option names the model guesses")
    parser.add_argument("--model", default="local", help="the model that checks (and guesses, with --guess)")
    args = parser.parse_args(argv)
    started = time.time()
    items = tune_pools(args.manuals_index, args.model if args.guess else None)
    rows = unit_rows(items, args.manuals_index)
    left_out, everything = checked_lists(rows, Context(index_dir=args.manuals_index, model=args.model))
    print(f"{len(left_out)} short lists holding a labelled unit ({time.time() - started:.0f} s)")
    for title, lists in (("ranker fitted without the question", left_out), ("ranker fitted on every list", everything)):
        print(f"\n{title}\n\n| units checked | " + " | ".join(f"w={w:g}" for w in WEIGHTS) + " |")
        print("|---:|" + "---:|" * len(WEIGHTS))
        for checked in CHECKED:
            print(f"| {checked} | " + " | ".join(str(first_right(lists, checked, w)) for w in WEIGHTS) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
