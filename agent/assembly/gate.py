"""The learned gate: is the question ambiguous over these passages?

A logistic regression over the cheap signals the rule gate thresholds (query detector, focus,
coherence, editions) and the reading selector's view of the pool: how many passages hold a
sentence it would state, how sure it is of the best and of the second-best sense. Trained by
`bench/train_gate.py` on the tune splits (card: agent/data/gate_card.md). Over documents of
several products, the products that answer (`products`, agent/assembly/products.py) are a
signal of their own: auto calls a question two of them answer ambiguous whatever the model says.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from agent.assembly.compose import sense_name
from agent.assembly.features import Candidate
from agent.assembly.product_gate import product_answers
from agent.assembly.selector import load_logistic, mixed_scores, reader_floor, scored_parts, whole
from agent.retrieval.retriever import get_retriever, passage_vectors
from agent.steps.ambiguity_signals import detector_signal, edition_signal, passage_signals

GATE_POOL = 2  # x k passages the rule signals look at (their thresholds were calibrated on 2k)

# the selector probability at which the gate counts a passage readable: fixed, so the gate's
# features mean what they meant in training whatever reading threshold a user sets
READABLE_AT = 0.45
GATE_MODEL_PATH = Path(__file__).resolve().parents[1] / "data" / "gate_model.npz"
GATE_FEATURES = ("detector", "focus", "separability", "variance", "editions",
                 "readable_passages", "best_probability", "second_probability")


def selector_view(scored: list[tuple[Candidate, float]], threshold: float) -> dict:
    """How many passages hold a sentence over the threshold, and the best two passages' probabilities."""
    best: dict[str, float] = {}
    for candidate, p in scored:
        best[candidate.passage["id"]] = max(best.get(candidate.passage["id"], 0.0), p)
    ranked = sorted(best.values(), reverse=True) + [0.0, 0.0]
    return {"readable_passages": sum(p >= threshold for p in best.values()),
            "best_probability": round(ranked[0], 4), "second_probability": round(ranked[1], 4)}


def gate_row(signals: dict) -> np.ndarray:
    return np.asarray([float(signals.get(name) or 0.0) for name in GATE_FEATURES])


@dataclass(frozen=True)
class GateModel:
    coef: np.ndarray
    intercept: float
    mean: np.ndarray
    scale: np.ndarray
    threshold: float

    def probability(self, signals: dict) -> float:
        """The learned gate's probability; with the reader's view of the pool (`confident_senses`),
        at least the threshold when the reader is sure the passages answer CONFIDENT_SENSES senses
        of the question or more: readings of two senses answer an ambiguous question whatever the
        cheap signals say."""
        z = float(((gate_row(signals) - self.mean) / self.scale) @ self.coef + self.intercept)
        learned = float(1.0 / (1.0 + np.exp(-z)))  # a plain float: the verdict is a plain bool in state and JSON
        if (signals.get("confident_senses") or 0) >= CONFIDENT_SENSES:
            return max(learned, self.threshold)
        return learned

    def save(self, path: Path) -> None:
        np.savez(path, coef=self.coef, intercept=self.intercept, mean=self.mean, scale=self.scale,
                 threshold=self.threshold, features=np.array(GATE_FEATURES))


@lru_cache(maxsize=4)
def load_gate(path: str = str(GATE_MODEL_PATH)) -> GateModel | None:
    """The shipped gate, or None when there is none (the rule gate decides then)."""
    if not Path(path).exists():
        return None
    return load_logistic(path, GATE_FEATURES, "gate model", "bench/train_gate.py", GateModel)


def gate_signals(question: str, pool: list[dict], context,
                 guessed: tuple[str, ...] = ()) -> tuple[dict, list[tuple[Candidate, float]]]:
    """(signals, the selector's scored candidates of the whole pool): the rule gate's signals
    over the top 2k passages, and the selector's view of the pool; `guessed`: the option names
    the model guessed the question asks for (agent/assembly/option_guess.py)."""
    retriever = get_retriever(context)
    vectors = passage_vectors(retriever, pool) if pool else []
    top = GATE_POOL * context.k
    query_vector = retriever.embed_queries([question])[0]
    signals = {**passage_signals(query_vector, vectors[:top], pool[:top]), **detector_signal(question),
               **edition_signal(question, pool[:context.k])}
    logistic, reader = scored_parts(question, pool, context) if pool else ([], None)
    signals |= selector_view(logistic, READABLE_AT)  # the learned gate's features keep their trained meaning
    if reader is not None:
        signals["confident_senses"] = confident_senses(logistic, reader, max(reader_floor(context), GATE_CONFIDENT_AT))
    answering = product_answers(question, pool, context, guessed=guessed)
    if answering is not None:  # several products' documents: which of them answer (their readings are these)
        signals["products"] = [c.passage["product"] for c, _ in answering]
    return signals, logistic if reader is None else mixed_scores(logistic, reader)


CONFIDENT_SENSES = 2  # senses with a reading the reader is sure of that make a question ambiguous
# The reader probability that makes a sense "confident" for the gate. The reader gives 0.8 or more
# to sentences of several senses of many clear questions ("How many watts is one mechanical
# horsepower?": 5 senses), so at the sentence floor the count called clear tune questions
# ambiguous (clear precision 0.913 -> 0.840 on the demo tune split); 0.95 and 0.99 tie on tune.
GATE_CONFIDENT_AT = 0.95


def confident_senses(scored: list[tuple[Candidate, float]], reader: list[float], floor: float) -> int:
    """How many senses (passage titles, `sense_name`) hold a whole sentence the reader gives `floor` or more."""
    return len({sense_name(c.passage).casefold() for (c, _), p in zip(scored, reader)
                if p >= floor and whole(c.sentence)})
