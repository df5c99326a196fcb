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
  (docs/results/manuals.md).

Where the model checks the units (the fast and thorough budgets, with the model's guess of the
option names), the gate then decides again on the unit that will be stated: the products the first
gives CHECK_FLOOR or more get their units checked (agent/assembly/unit_check.py), and a second
logistic regression (`load_checked_gate`) reads the checked unit's score in place of the ranker's,
and how far behind the surest product's it is.

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
from agent.assembly.unit_check import checked_best, checked_first
from agent.context import Context
from agent.documents.citation import location
from agent.retrieval.products import product_of

MODEL_PATH = Path(__file__).resolve().parents[1] / "data" / "product_gate.npz"
GUESSED_MODEL_PATH = MODEL_PATH.with_name("product_gate_guessed.npz")  # over the ranker that reads a guess
FEATURES = ("reader_logit", "ranker_logit", "behind_surest", "first_retrieved")
CHECKED_MODEL_PATH = MODEL_PATH.with_name("product_gate_checked.npz")  # over the checked units, with a guess
CHECKED_FEATURES = ("reader_logit", "checked_logit", "behind_surest_checked", "first_retrieved")


class ProductGate(SelectorModel):
    """The selector's logistic form (standardized features, one threshold) over FEATURES."""

    def save(self, path: Path, features: tuple[str, ...] = FEATURES) -> None:
        super().save(path, features)


@lru_cache(maxsize=4)
def load_product_gate(path: str = str(MODEL_PATH)) -> ProductGate:
    """The shipped gate."""
    return load_logistic(path, FEATURES, "product gate", "bench/train_product_gate.py", ProductGate)


@lru_cache(maxsize=2)
def load_checked_gate(path: str = str(CHECKED_MODEL_PATH)) -> ProductGate:
    """The shipped gate over the model's checked units (bench/train_checked_gate.py)."""
    return load_logistic(path, CHECKED_FEATURES, "checked product gate", "bench/train_checked_gate.py", ProductGate)


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


@dataclass(frozen=True)
class CheckedProduct:
    """A product with the unit that speaks for it after the model's check, and that unit's score."""

    found: ProductCandidate
    probability: float  # the first gate's, over the ranker's first unit
    unit: RankedUnit  # the best mix of the ranker and the model's check; the ranker's first when unchecked
    score: float  # the unit's checked_score: the ranker's logit plus CHECK_WEIGHT times the model's


def checked_products(question: str, found: list[ProductCandidate], probabilities: np.ndarray, context: Context,
                     checked: int) -> list[CheckedProduct]:
    """Each product, its units checked by the model when the first gate gives it CHECK_FLOOR or
    more (the others can pass neither gate: asking about them costs requests and changes nothing)."""
    products = []
    for f, p in zip(found, probabilities):
        unit, score = checked_best(question, f.product, f.ranked, context, checked if p >= CHECK_FLOOR else 0)
        products.append(CheckedProduct(f, float(p), unit, score))
    return products


def checked_features(products: list[CheckedProduct]) -> np.ndarray:
    """The checked gate's rows (CHECKED_FEATURES): the first gate's own rows with the ranker's
    first unit's logit, and how far behind the surest product that is, read off the checked units."""
    surest = max(p.score for p in products)
    return np.array([[p.found.features[0], p.score, p.score - surest, p.found.features[3]] for p in products])


def product_answers(question: str, pool: list[dict], context: Context, gate: ProductGate | None = None,
                    floor: float | None = None, guessed: tuple[str, ...] = (),
                    checked: int = 0) -> list[tuple[Candidate, float]] | None:
    """The products that answer, each as (its best unit, the gate's probability), the surest
    first: those the gate passes, or with `floor`, those it gives `floor` or more; None when the
    pool documents fewer than two products. With `guessed` option names, the ranker and gate
    trained with a guess decide. With `checked`, each answering product's unit is the best mix of
    the ranker and the model's check of its first `checked` (agent/assembly/unit_check.py); with a
    guess too, the checked gate decides which products answer, from those units (`choose_products`)."""
    choice = choose_products(question, pool, context, gate, floor, guessed, checked)
    return None if choice is None else choice.answering


class ProductChoice(NamedTuple):
    """Which products answer and which are offered, each as (its unit, the deciding gate's
    probability), the surest first."""

    answering: list[tuple[Candidate, float]]
    offered: list[tuple[Candidate, float]]  # those the first gate gives OFFER_FLOOR or more that do not answer
    checked: bool  # the checked gate decided (over the model's checked units)


def choose_products(question: str, pool: list[dict], context: Context, gate: ProductGate | None = None,
                    floor: float | None = None, guessed: tuple[str, ...] = (), checked: int = 0
                    ) -> ProductChoice | None:
    """The products that answer and those offered when asking (`product_answers`); None when the
    pool documents fewer than two products."""
    found = product_candidates(question, pool, context, guessed=guessed)
    if found is None:
        return None
    gate = gate or product_gate(bool(guessed))
    probabilities = gate.probabilities(np.array([f.features for f in found]))
    if checked > 0 and guessed and floor is None:
        products = checked_products(question, found, probabilities, context, checked)
        second = load_checked_gate()
        decided = second.probabilities(checked_features(products))
        answering = [(c.unit.candidate, float(p)) for c, p in zip(products, decided)
                     if c.probability >= CHECK_FLOOR and p >= second.threshold]
        offered = [(c.unit.candidate, float(p)) for c, p in zip(products, decided)
                   if c.probability >= OFFER_FLOOR and p < second.threshold]
    else:
        floor = gate.threshold if floor is None else floor
        units = [checked_first(question, f.product, f.ranked, context, checked if p >= floor else 0)[0].candidate
                 for f, p in zip(found, probabilities)]
        answering = [(unit, float(p)) for unit, p in zip(units, probabilities) if p >= floor]
        offered = [(unit, float(p)) for unit, p in zip(units, probabilities) if OFFER_FLOOR <= p < floor]
    return ProductChoice(sorted(answering, key=lambda item: -item[1]), sorted(offered, key=lambda item: -item[1]),
                         checked > 0 and bool(guessed) and floor is None)


# The gate's probability from which a product it does not pass is still offered when the person is
# asked which product they mean: a choice costs the person less than a product left out of it.
# With the simulated user on the manuals' tune split, offering from 0.3 raised success on ambiguous
# questions from 0.47 to 0.50 and option recall from 0.45 to 0.48; from 0.2 the same, with more
# options that match no sense; from 0.45 no gain (docs/results/clarification.md).
OFFER_FLOOR = 0.3
# The first gate's probability from which a product's units are checked by the model: a product it
# gives less is neither offered nor, on the tune products, passed by the checked gate.
CHECK_FLOOR = OFFER_FLOOR


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
