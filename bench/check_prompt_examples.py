"""Compare the model's check of a product's units (agent/assembly/unit_check.py) under the bare
instruction and under the shipped prompt with worked examples (prompts/check_unit.md), on the
manuals benchmark's tune products.

    DISAMBIG_LLM_THREADS=2 .venv/bin/python bench/check_prompt_examples.py --manuals-index DIR

DIR is an index of the tune products alone (as for bench/fit_unit_check.py). For each labelled
product of each tune question's pool, its short list ranked with the model's guessed option names
(as the fast budget ranks) by a ranker fitted without the question and its rewordings; each of the
first four units is checked under both prompts (one 1-token request each). The table counts the
lists whose best mix of ranker and check is a labelled unit, for each weight of the check, and
how well each prompt's P(yes) tells labelled units from the others (ROC AUC).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from langchain_core.messages import HumanMessage, SystemMessage  # noqa: E402

from agent.assembly.judge import TOP_LOGPROBS, yes_probability  # noqa: E402
from agent.assembly.manual_units import to_read  # noqa: E402
from agent.assembly.selector import logit  # noqa: E402
from agent.assembly.unit_check import UNIT_CHARS, unit_yes  # noqa: E402
from agent.context import Context  # noqa: E402
from agent.llm.calls import call_model  # noqa: E402
from agent.llm.prompts import as_data  # noqa: E402
from train_product_gate import fit_ranker, tune_pools, unit_rows  # noqa: E402

CHECKED = 4
WEIGHTS = (0.5, 1.0, 2.0, 3.0, 5.0, 100.0)
# the check's prompt before the worked examples: one user message
BARE = ("You check a line from a product's manual against a question. Answer yes if the line tells how to do "
        "what the question asks (the command, option or setting that does it), otherwise no.\n---\n"
        "Question about {product}: {question}\nLine: {unit}")


def bare_yes(question: str, product: str, unit: str, context: Context) -> float | None:
    """P(yes) under the bare instruction."""
    text = BARE.format(question=as_data(question), product=as_data(product or "the product"),
                       unit=as_data(unit)[:UNIT_CHARS])
    system, _, user = text.partition("\n---\n")
    reply = call_model(context, [SystemMessage(system), HumanMessage(user)],
                       bind={"logprobs": True, "top_logprobs": TOP_LOGPROBS}, max_tokens=1)
    return yes_probability(reply)


def checked_lists(rows: list[dict], context: Context) -> list[dict]:
    """For each list holding a labelled unit: the ranker's logits of its first CHECKED units (each
    question left out of the ranker's fit), both prompts' logits of them, and their labels."""
    models = {group: fit_ranker([r for r in rows if r["group"] != group]) for group in {r["group"] for r in rows}}
    as_logit = np.vectorize(lambda y: 0.0 if np.isnan(y) else float(logit(min(max(y, 1e-4), 1 - 1e-4))))
    out = []
    for n, row in enumerate([r for r in rows if r["labels"].any()], 1):
        model = models[row["group"]]
        kept, kept_rows = to_read(list(range(len(row["labels"]))), row["features"], model)
        ranker = logit(model.probabilities(kept_rows))
        head = np.argsort(-ranker, kind="stable")[:CHECKED]
        units = [row["units"][kept[i]] for i in head]
        said = {name: np.array([np.nan if y is None else y for y in
                                (ask(row["text"], row["product"], unit, context) for unit in units)], dtype=float)
                for name, ask in (("bare", bare_yes), ("examples", unit_yes))}
        out.append({"ranker": ranker[head], "labels": row["labels"][[kept[i] for i in head]],
                    **{name: as_logit(p) for name, p in said.items()}, **{f"{name}_p": p for name, p in said.items()}})
        print(f"{n} {row['question']} {row['product']}", file=sys.stderr, flush=True)
    return out


def auc(lists: list[dict], name: str) -> float:
    """How often a labelled unit's P(yes) beats another unit's (ties count half)."""
    pos = np.concatenate([i[f"{name}_p"][i["labels"].astype(bool)] for i in lists])
    neg = np.concatenate([i[f"{name}_p"][~i["labels"].astype(bool)] for i in lists])
    pos, neg = pos[~np.isnan(pos)], neg[~np.isnan(neg)]
    return float(((pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()) / (len(pos) * len(neg)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--manuals-index", required=True, help="index of the manuals benchmark's tune products alone")
    parser.add_argument("--model", default="local", help="the model that guesses and checks")
    args = parser.parse_args(argv)
    started = time.time()
    items = tune_pools(args.manuals_index, args.model)
    lists = checked_lists(unit_rows(items, args.manuals_index), Context(index_dir=args.manuals_index, model=args.model))
    print(f"{len(lists)} short lists holding a labelled unit, the first {CHECKED} checked ({time.time() - started:.0f} s)")
    first = lambda score: sum(int(i["labels"][int(np.argmax(score(i)))]) for i in lists)  # noqa: E731
    print(f"ranker alone: {first(lambda i: i['ranker'])}\n")
    print("| prompt | AUC | " + " | ".join(f"w={w:g}" for w in WEIGHTS) + " |\n|---|---:|" + "---:|" * len(WEIGHTS))
    for name in ("bare", "examples"):
        print(f"| {name} | {auc(lists, name):.3f} | "
              + " | ".join(str(first(lambda i: i["ranker"] + w * i[name])) for w in WEIGHTS) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
