"""Which products answer, and with which unit: the readings of a pool over several products' manuals.

The selector and the reader learned from encyclopedia sentences, and their one threshold does not
carry to manuals: an option's row ("`-k, --keep` — keep the input files") is scored under it for
one product and over it for the next. Over manuals the decision splits in two, each learned or
measured on the manuals' tune products (`bench/train_product_gate.py`; card:
agent/data/product_gate_card.md; figures: docs/results/manuals.md):

- *which unit speaks for a product*: the unit ranker's first among all units of the product's
  documents (agent/assembly/manual_units.py), not only the pool's: the row that answers is often
  in a passage the search did not rank;
- *whether the product answers at all*: a logistic regression over how sure the reader and the
  unit ranker are of that unit, how far behind the surest product the ranker is, and whether the
  product's passage ranks first in the pool, with one threshold. The product's rank itself, how
  many passages it brought and how many of the question's words its unit says were read too, and
  left out: they describe the pool more than the product (three manuals that answer alike were cut
  to two by rank alone), and without them the gate's tune figures are the same
  (docs/results/manuals.md). On budgets that call the model, its check of the product's unit
  moves a product the gate is unsure of across it (`answers`).

A clear question over one product's manuals is answered with that product's best unit
(`one_product_answer`); records without documents (the demo corpus, JSONL) never come here.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

import numpy as np

from agent.assembly.features import Candidate
from agent.assembly.products import product_groups
from agent.assembly.manual_units import READ, RankedUnit, ranked_units
from agent.assembly.selector import SelectorModel, load_logistic, logit
from agent.assembly.unit_check import checked_first, checked_units
from agent.context import Context
from agent.documents.citation import location
from agent.retrieval.products import product_of

MODEL_PATH = Path(__file__).resolve().parents[1] / "data" / "product_gate.npz"
GUESSED_MODEL_PATH = MODEL_PATH.with_name("product_gate_guessed.npz")  # over the ranker that reads a guess
FEATURES = ("reader_logit", "ranker_logit", "behind_surest", "first_retrieved")


class ProductGate(SelectorModel):
    """The selector's logistic form (standardized features, one threshold) over FEATURES."""

    def save(self, path: Path, features: tuple[str, ...] = FEATURES) -> None:
        super().save(path, features)


@lru_cache(maxsize=4)
def load_product_gate(path: str = str(MODEL_PATH)) -> ProductGate:
    """The shipped gate."""
    return load_logistic(path, FEATURES, "product gate", "bench/train_product_gate.py", ProductGate)


def product_gate(guessed: bool) -> ProductGate:
    """The gate over the unit ranker that reads the model's guessed option names, or over the one without."""
    return load_product_gate(str(GUESSED_MODEL_PATH) if guessed else str(MODEL_PATH))


@dataclass(frozen=True)
class ProductCandidate:
    """A product's units read and what the gate reads about the product."""

    product: str
    features: tuple[float, ...]
    ranked: tuple[RankedUnit, ...]  # the product's units read, the ranker's order

    @property
    def candidate(self) -> Candidate:
        """The product's best unit by the ranker: the one the gate's features read."""
        return self.ranked[0].candidate


def product_candidates(question: str, pool: list[dict], context: Context,
                       ranker: SelectorModel | None = None, guessed: tuple[str, ...] = ()) -> list[ProductCandidate] | None:
    """Each product of the pool with its units read (the unit ranker's first is its best) and the
    gate's features, products in the order their first passage ranks; None when the pool documents
    fewer than two products (it is read as one pool). `guessed`: the option names the model
    guessed (option_guess.py)."""
    groups = {key: passages for key, passages in product_groups(pool).items() if key}
    if len(groups) < 2:
        return None
    found = []
    for rank, passages in enumerate(groups.values()):
        units = ranked_units(question, passages, context, ranker, READ, guessed)
        if units:
            found.append((passages[0]["product"], units, float(logit(units[0].reader)),
                          float(logit(units[0].probability)), float(rank == 0)))
    surest = max((ranked for *_, ranked, _ in found), default=0.0)  # a product as sure as the surest answers as surely
    return [ProductCandidate(product, (reader, ranked, ranked - surest, first), tuple(units))
            for product, units, reader, ranked, first in found]


def product_answers(question: str, pool: list[dict], context: Context, gate: ProductGate | None = None,
                    floor: float | None = None, guessed: tuple[str, ...] = (),
                    checked: int = 0) -> list[tuple[Candidate, float]] | None:
    """The products that answer, each as (its best unit, the gate's probability), the surest
    first: those the gate passes, or with `floor`, those it gives `floor` or more; None when the
    pool documents fewer than two products. With `guessed` option names, the ranker and gate
    trained with a guess decide. With `checked`, each product the gate passes or offers has as
    its unit the best mix of the ranker and the model's check of its first `checked`
    (agent/assembly/unit_check.py), and that check moves it across the gate (`answers`); the gate
    reads the ranker's first, as it was trained."""
    choice = choose_products(question, pool, context, gate, floor, guessed, checked)
    return None if choice is None else choice.answering


class ProductChoice(NamedTuple):
    """Which products answer and which are offered, each as (its unit, the gate's probability),
    the surest first."""

    answering: list[tuple[Candidate, float]]
    offered: list[tuple[Candidate, float]]  # those the gate gives OFFER_FLOOR or more that do not answer


def choose_products(question: str, pool: list[dict], context: Context, gate: ProductGate | None = None,
                    floor: float | None = None, guessed: tuple[str, ...] = (), checked: int = 0
                    ) -> ProductChoice | None:
    """The products that answer (`product_answers`) and those offered when asking: options beside
    them, never stated in the answer; None when the pool documents fewer than two products. One
    pass serves both: each product's units are ranked, and those passed or offered checked, once."""
    found = product_candidates(question, pool, context, guessed=guessed)
    if found is None:
        return None
    gate = gate or product_gate(bool(guessed))
    probabilities = gate.probabilities(np.array([f.features for f in found]))
    floor = gate.threshold if floor is None else floor
    verdicts = [checked_units(question, f.product, f.ranked, context, checked if p >= min(floor, OFFER_FLOOR) else 0)
                for f, p in zip(found, probabilities)]
    units = [ranked[0].candidate for ranked, _ in verdicts]
    passes = [answers(p, yes, floor) for p, (_, yes) in zip(probabilities, verdicts)]
    if passes and not any(passes) and max(probabilities) >= floor:  # the check's no is weaker evidence than no answer
        passes[int(np.argmax(probabilities))] = True
    answering = [(unit, float(p)) for unit, p, ok in zip(units, probabilities, passes) if ok]
    offered = [(unit, float(p)) for unit, p, ok in zip(units, probabilities, passes) if not ok and p >= OFFER_FLOOR]
    return ProductChoice(sorted(answering, key=lambda item: -item[1]), sorted(offered, key=lambda item: -item[1]))


def answers(probability: float, yes: float | None, floor: float) -> bool:
    """Whether a product answers: the gate's `probability` at its `floor`, moved where the model
    checked the product's unit (`yes`, its P(yes); None: unchecked): a product the gate passes is
    held back when the model says no (under CHECK_NO), one it would only offer answers when the
    model says yes (CHECK_YES or more)."""
    if yes is None:
        return probability >= floor
    return (probability >= floor and yes >= CHECK_NO) or (probability >= OFFER_FLOOR and yes >= CHECK_YES)


# The gate's probability from which a product it does not pass is still offered when the person is
# asked which product they mean: a choice costs the person less than a product left out of it.
# With the simulated user on the manuals' tune split, offering from 0.3 raised success on ambiguous
# questions from 0.47 to 0.50 and option recall from 0.45 to 0.48; from 0.2 the same, with more
# options that match no sense; from 0.45 no gain (docs/results/clarification.md).
OFFER_FLOOR = 0.3

# The model's check of a product's unit (agent/assembly/unit_check.py) where the gate is unsure either
# way: on the manuals' tune products (38 ambiguous questions, 254 products, every product from
# OFFER_FLOOR checked), holding back a passed product whose unit the model gives under 0.5 and passing
# an offered one it gives 0.75 or more raised the readings' precision 0.701 -> 0.746 and their sense
# recall 0.418 -> 0.449 (docs/results/manuals.md, "The model's check moves a product across the gate").
CHECK_NO = 0.5
CHECK_YES = 0.75


# the reader's probability at which a clear question's one manual unit is stated: picked on the
# manuals' tune split (0.2, 0.5, 0.7: docs/results/manuals.md), under the reader's own threshold,
# which it learned on encyclopedia sentences and rarely gives an option's row
ONE_PRODUCT_FLOOR = 0.2


def one_product_answer(question: str, pool: list[dict], context: Context,
                       guessed: tuple[str, ...] = ()) -> list[tuple[Candidate, float]] | None:
    """A clear question over one product's manuals: its best unit when the reader gives the unit
    ranker's first ONE_PRODUCT_FLOOR or more, else nothing; None when the pool is not manuals
    (records without documents), or documents several products. The best unit is the best mix of
    the ranker and the model's check of its first `context.check_units`, as over several products'
    (product_answers); the floor reads the ranker's first, as it was fitted."""
    if not pool or not all(location(p).get("document") for p in pool):
        return None
    if len([key for key in product_groups(pool) if key]) >= 2:
        return None
    ranked = ranked_units(question, pool, context, read_at_most=None, guessed=guessed)  # no other product: all is read
    if not ranked or ranked[0].reader < ONE_PRODUCT_FLOOR:
        return []
    product = next(filter(None, (p.get("product") or product_of(p) for p in pool)), "")  # a one-product pool drops its tags
    best = checked_first(question, product, ranked, context, context.check_units)[0]
    return [(best.candidate, ranked[0].reader)]
