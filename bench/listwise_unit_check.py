"""Compare the model's check of a product's units one at a time (agent/assembly/unit_check.py: a
yes/no per unit, mixed with the unit ranker) with one request that shows the same units numbered
and reads which number the model picks (prompts/choose_unit.md), on the manuals benchmark's tune
products.

    DISAMBIG_LLM_THREADS=2 .venv/bin/python bench/listwise_unit_check.py --manuals-index DIR [--checked 4]

DIR is an index of the tune products alone (as for bench/fit_unit_check.py). For each labelled
product of each tune question's pool, its short list ranked with the model's guessed option names
(as the fast budget ranks) by a ranker fitted without the question and its rewordings: the first
`--checked` units get the per-unit check and the one numbered choice. The table counts the lists
whose best unit is labelled: by the ranker alone, its mix with the per-unit check (the shipped
weight and neighbours), its mix with the choice's log-probability, the choice with each position's
mean log-probability taken off (fitted on these same lists, so an upper bound), and both.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from agent.assembly.judge import TOP_LOGPROBS  # noqa: E402
from agent.assembly.manual_units import to_read  # noqa: E402
from agent.assembly.selector import logit  # noqa: E402
from agent.assembly.unit_check import UNIT_CHARS, unit_yes  # noqa: E402
from agent.context import Context  # noqa: E402
from agent.llm.calls import call_model  # noqa: E402
from agent.llm.prompts import as_data, render  # noqa: E402
from train_product_gate import fit_ranker, tune_pools, unit_rows  # noqa: E402

FLOOR = 1e-6  # the probability of a number the reply's alternatives leave out


def choice(question: str, product: str, units: list[str], context: Context) -> np.ndarray:
    """The model's probability of each numbered unit, over the numbers among its first reply
    token's alternatives (each floored at FLOOR, normalized)."""
    lines = "\n".join(f"{n}. {as_data(unit)[:UNIT_CHARS]}" for n, unit in enumerate(units, 1))
    messages = render("choose_unit", question=as_data(question), product=as_data(product or "the product"),
                      lines=lines)
    reply = call_model(context, messages, bind={"logprobs": True, "top_logprobs": TOP_LOGPROBS}, max_tokens=1)
    tokens = ((reply.response_metadata or {}).get("logprobs") or {}).get("content") or [] if reply else []
    mass = np.full(len(units), FLOOR)
    for top in (tokens[0].get("top_logprobs") or []) if tokens else []:
        said = str(top.get("token", "")).strip()
        if said.isdigit() and 1 <= int(said) <= len(units):
            mass[int(said) - 1] += math.exp(top.get("logprob", -math.inf))
    return mass / mass.sum()


def checked_lists(rows: list[dict], context: Context, checked: int) -> list[dict]:
    """For each list holding a labelled unit: the ranker's logits of its first `checked` units (each
    question left out of the ranker's fit), the per-unit check's logits, the choice's
    probabilities and the units' labels."""
    models = {group: fit_ranker([r for r in rows if r["group"] != group]) for group in {r["group"] for r in rows}}
    out = []
    for n, row in enumerate([r for r in rows if r["labels"].any()], 1):
        model = models[row["group"]]
        kept, kept_rows = to_read(list(range(len(row["labels"]))), row["features"], model)
        ranker = logit(model.probabilities(kept_rows))
        head = np.argsort(-ranker, kind="stable")[:checked]
        units = [row["units"][kept[i]] for i in head]
        yes = [unit_yes(row["text"], row["product"], unit, context) for unit in units]
        out.append({"ranker": ranker[head], "labels": row["labels"][[kept[i] for i in head]],
                    "check": np.array([0.0 if y is None else float(logit(y)) for y in yes]),
                    "choice": choice(row["text"], row["product"], units, context)})
        print(f"{n} {row['question']} {row['product']}", file=sys.stderr, flush=True)
    return out


def first_right(lists: list[dict], score) -> int:
    """Lists whose best unit by `score` is labelled."""
    return sum(int(item["labels"][int(np.argmax(score(item)))]) for item in lists)


def report(lists: list[dict], checked: int, seconds: float) -> None:
    """Print the table."""
    position = np.mean([np.log(item["choice"]) for item in lists], axis=0)
    print(f"{len(lists)} short lists holding a labelled unit, {checked} units each checked ({seconds:.0f} s); "
          f"a labelled unit among them in {sum(int(i['labels'].any()) for i in lists)}")
    print(f"mean log-probability of the choice by position: {np.round(position, 2).tolist()}\n")
    print("| best unit by | lists whose best unit is labelled |\n|---|---:|")
    print(f"| the ranker | {first_right(lists, lambda i: i['ranker'])} |")
    for w in (1.0, 2.0, 3.0):
        print(f"| ranker + {w:g} x per-unit check | {first_right(lists, lambda i: i['ranker'] + w * i['check'])} |")
    for w in (0.5, 1.0, 2.0, 100.0):
        print(f"| ranker + {w:g} x log choice | {first_right(lists, lambda i: i['ranker'] + w * np.log(i['choice']))} |")
        print(f"| ranker + {w:g} x log choice less its position's mean | "
              f"{first_right(lists, lambda i: i['ranker'] + w * (np.log(i['choice']) - position))} |")
    for v in (1.0, 2.0):
        print(f"| ranker + 2 x per-unit check + {v:g} x log choice | "
              f"{first_right(lists, lambda i: i['ranker'] + 2 * i['check'] + v * np.log(i['choice']))} |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--manuals-index", required=True, help="index of the manuals benchmark's tune products alone")
    parser.add_argument("--checked", type=int, default=4, help="units of each list checked and numbered")
    parser.add_argument("--model", default="local", help="the model that guesses, checks and chooses")
    args = parser.parse_args(argv)
    started = time.time()
    items = tune_pools(args.manuals_index, args.model)
    lists = checked_lists(unit_rows(items, args.manuals_index),
                          Context(index_dir=args.manuals_index, model=args.model), args.checked)
    report(lists, args.checked, time.time() - started)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
