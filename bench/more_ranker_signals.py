"""Try more unit-ranker signals on the manuals benchmark's tune lists, ranked with the model's
guessed option names as the fast budget ranks.

    DISAMBIG_LLM_THREADS=2 .venv/bin/python bench/more_ranker_signals.py --manuals-index DIR

DIR is an index of the tune products alone (as for bench/train_product_gate.py). Each signal is
added to the shipped features and the ranker refitted with each question and its rewordings left
out of their own fit; the count is of lists whose first unit (of the six the reader reads) is
labelled.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from agent.assembly.manual_units import to_read  # noqa: E402
from agent.assembly.unit_options import is_option_unit, said_alone  # noqa: E402
from agent.steps.grounding import content_tokens  # noqa: E402
from train_product_gate import fit_ranker, tune_pools, unit_rows  # noqa: E402

NEGATION = re.compile(r"\b(not|don't|don’t|do not|never|no|without|disabled?|ignored?|skip|instead)\b", re.I)


def description(unit: str) -> str:
    """What a unit says, without the option's name of an option's row."""
    unit = said_alone(unit)
    return unit.split(" — ", 1)[1] if " — " in unit else unit


def signals(question: str, unit: str) -> dict[str, float]:
    """Each signal tried, for one unit."""
    asked, said = set(content_tokens(question)), content_tokens(description(unit))
    return {
        "its length (log of its description's content words)": float(np.log1p(len(said))),
        "an option's row": float(is_option_unit(unit)),
        "a lead-in with its code block": float("```" in unit),
        "a question word opening the description": float(any(word in asked for word in said[:2])),
        "a negation the question does not ask for": float(bool(NEGATION.search(description(unit)))
                                                          and not NEGATION.search(question)),
        "the share of the question's words in the description": len(set(said) & asked) / (len(asked) or 1),
    }


def with_signals(rows: list[dict], names: list[str]) -> list[dict]:
    """The rows with the named signals' columns added."""
    out = []
    for row in rows:
        added = np.array([[signals(row["text"], unit)[name] for name in names] for unit in row["units"]])
        out.append({**row, "features": np.hstack([row["features"], added.reshape(len(row["units"]), len(names))])})
    return out


def first_right(rows: list[dict]) -> int:
    """Lists whose first unit is labelled, each question's group left out of its ranker's fit."""
    held = [r for r in rows if r["labels"].any()]
    models = {group: fit_ranker([r for r in rows if r["group"] != group]) for group in {r["group"] for r in held}}
    right = 0
    for row in held:
        kept, kept_rows = to_read(list(range(len(row["labels"]))), row["features"], models[row["group"]])
        right += int(row["labels"][kept[int(np.argmax(models[row["group"]].probabilities(kept_rows)))]])
    return right


def report(rows: list[dict]) -> None:
    """Print the table."""
    names = list(signals("", ""))
    print(f"| signal added | first unit labelled, of {sum(int(r['labels'].any()) for r in rows)} |\n|---|---:|")
    print(f"| none (the shipped features) | {first_right(rows)} |")
    for tried in [[name] for name in names] + [names[:2]]:
        print(f"| {' and '.join(tried)} | {first_right(with_signals(rows, tried))} |", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--manuals-index", required=True, help="index of the manuals benchmark's tune products alone")
    parser.add_argument("--model", default="local", help="the model that guesses the option names")
    args = parser.parse_args(argv)
    report(unit_rows(tune_pools(args.manuals_index, args.model), args.manuals_index))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
