"""The model's check of which unit speaks for a product, on budgets that call it.

The unit ranker reads words and MiniLM vectors, and misses a question that says it otherwise:
"keep the original file" for xz's "`-k, --keep` — Don't delete the input files", "not corrupted"
for "`-t, --test` — Test the integrity of compressed files". The model reads the line. Each of a
product's best `check_units` units (by the ranker) gets one request, prompts/check_unit.md, with
one completion token; its P(yes) (judge.yes_probability) is mixed with the ranker's score in
logit space, CHECK_WEIGHT to the ranker's 1, and the best mix speaks for the product. A check
that times out or holds no yes/no leaves that unit's ranker score as it is. The gate (over one
product's manuals, the reader's floor) still reads the ranker's first unit, as it was fitted; over
several products the model's P(yes) of the unit it puts first then moves a product the gate is
unsure of across it (agent/assembly/product_gate.py, `answers`).

The weight and the four units checked (`check_units`): on the manuals' tune products, each
question left out of the ranker's fit, the ranker that reads the model's guessed option names (as
the fast budget ranks) puts a labelled unit first in 79 of the 123 short lists that hold one, the
mix of its best four in 87 (six: 88); the ranker without a guess 70 of 119, the mix 78
(bench/fit_unit_check.py; docs/results/manuals.md).
"""

from __future__ import annotations

from typing import Sequence

from agent.assembly.judge import TOP_LOGPROBS, yes_probability
from agent.assembly.manual_units import RankedUnit
from agent.assembly.selector import logit
from agent.context import Context
from agent.llm.calls import call_model
from agent.llm.prompts import as_data, render

# the model's logit against the ranker's, fitted on the tune lists (bench/fit_unit_check.py): the best
# weight with four units checked for the ranker that reads the guessed option names and for the one without
CHECK_WEIGHT = 2.0
UNIT_CHARS = 300  # of a unit shown: an option's row or a lead-in with the start of its command


def unit_yes(question: str, product: str, unit: str, context: Context) -> float | None:
    """The model's P(yes) that `unit` tells how to do what `question` asks of `product`; None when
    the request fails or its reply holds no yes/no."""
    messages = render("check_unit", question=as_data(question), product=as_data(product or "the product"),
                      unit=as_data(unit)[:UNIT_CHARS])
    reply = call_model(context, messages, bind={"logprobs": True, "top_logprobs": TOP_LOGPROBS}, max_tokens=1)
    return yes_probability(reply)


def checked_score(ranked: RankedUnit, yes: float | None) -> float:
    """The ranker's score (the logit of its probability) plus CHECK_WEIGHT times the model's logit."""
    score = float(logit(ranked.probability))
    return score if yes is None else score + CHECK_WEIGHT * float(logit(yes))


def checked_first(question: str, product: str, ranked: Sequence[RankedUnit], context: Context, checked: int
                  ) -> list[RankedUnit]:
    """`ranked` (the ranker's order) with the best mix of its first `checked` units first."""
    return checked_units(question, product, ranked, context, checked)[0]


def checked_units(question: str, product: str, ranked: Sequence[RankedUnit], context: Context, checked: int
                  ) -> tuple[list[RankedUnit], float | None]:
    """(`ranked` with the best mix of its first `checked` units first, the model's P(yes) of that
    unit: None when it was not checked or the check said nothing). The gate reads the P(yes)
    (product_gate.answers)."""
    if checked <= 0 or len(ranked) < 2:
        return list(ranked), None
    head = ranked[:checked]
    verdicts = [unit_yes(question, product, unit.candidate.sentence, context) for unit in head]
    scores = [checked_score(unit, yes) for unit, yes in zip(head, verdicts)]
    best = max(range(len(head)), key=lambda i: scores[i])
    return [head[best]] + [unit for unit in ranked if unit is not head[best]], verdicts[best]
