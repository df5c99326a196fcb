"""The reading selector: which sentences of the retrieved passages state an answer to the question.

A logistic regression over `agent/assembly/features.py`'s features, trained on the tune splits
(`bench/train_selector.py`; card in agent/data/selector_card.md). A sentence becomes a reading
when its probability reaches one threshold chosen on the tune splits for precision; the best
sentence of each passage competes, near-repeats of a chosen reading are skipped, and at most
`max_readings` are stated. No fixed number of slots is filled: a question the passages answer
one way gets one reading.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from agent.assembly.features import FEATURES, Candidate, candidates, feature_rows
from agent.assembly.text import markup_residue, table_residue
from agent.context import Context
from agent.retrieval.retriever import get_retriever, passage_vectors, sentence_vectors
from agent.steps.grounding import content_tokens, number_words

MODEL_PATH = Path(__file__).resolve().parents[1] / "data" / "selector_model.npz"
NEAR_REPEAT = 0.8  # share of a reading's content words already in a chosen one: the same fact again
SAME_PASSAGE_TEXT = 0.95  # cosine at which two passages are copies (a re-chunked or mirrored page)


def restates(words: set[str], earlier: set[str]) -> bool:
    """Whether a sentence's content words restate an earlier sentence's: most of them are there
    (NEAR_REPEAT) and so is every number it states. "The team received the first prize of
    $20,000" states another fact than "... of $15,000", though four words in five are the same."""
    return bool(words) and len(words & earlier) >= NEAR_REPEAT * len(words) and number_words(words) <= earlier


@dataclass(frozen=True)
class SelectorModel:
    coef: np.ndarray
    intercept: float
    mean: np.ndarray
    scale: np.ndarray
    threshold: float

    def probabilities(self, rows: np.ndarray) -> np.ndarray:
        if not len(rows):
            return np.zeros(0)
        z = ((rows - self.mean) / self.scale) @ self.coef + self.intercept
        return 1.0 / (1.0 + np.exp(-z))

    def save(self, path: Path) -> None:
        np.savez(path, coef=self.coef, intercept=self.intercept, mean=self.mean, scale=self.scale,
                 threshold=self.threshold, features=np.array(FEATURES))


@lru_cache(maxsize=4)
def load_selector(path: str = str(MODEL_PATH)) -> SelectorModel:
    """The shipped model (or one from `bench/train_selector.py --out`); its feature list must
    be this code's, or the weights would be read against the wrong columns."""
    data = np.load(path)
    if tuple(str(f) for f in data["features"]) != FEATURES:
        raise ValueError(f"selector model {path} was trained on other features; retrain with bench/train_selector.py")
    return SelectorModel(coef=data["coef"], intercept=float(data["intercept"]), mean=data["mean"],
                         scale=data["scale"], threshold=float(data["threshold"]))


def scored_candidates(question: str, pool: list[dict], embed, model: SelectorModel, passage_vectors=None,
                      written: list[tuple[str, dict]] = ()) -> list[tuple[Candidate, float]]:
    """Every candidate sentence with its probability of stating an answer; then each sentence
    someone else wrote (`written`: the model's prose, with the pool passage it cites), read as a
    sentence of that passage beside the pool's own: the question that chose the readings."""
    ranks = {p["id"]: rank for rank, p in enumerate(pool)}
    found = candidates(pool) + [Candidate(passage, 1, sentence, ranks.get(passage["id"], len(pool)))
                                for sentence, passage in written]
    found, rows = feature_rows(question, pool, embed, found=found, passage_vectors=passage_vectors)
    return list(zip(found, model.probabilities(rows).tolist()))


def score_pool(question: str, pool: list[dict], context: Context, written: list[tuple[str, dict]] = ()
               ) -> list[tuple[Candidate, float]]:
    """`scored_candidates` with the shipped model and the retriever's encoder, whose sentence
    vectors are remembered: the gate, the readings and the prose floor score one pool in turn."""
    retriever = get_retriever(context)
    return scored_candidates(question, pool, lambda texts: sentence_vectors(retriever, texts), load_selector(),
                             passage_vectors(retriever, pool), written)


def written_probabilities(question: str, pool: list[dict], context: Context,
                          written: list[tuple[str, dict]]) -> list[float]:
    """The selector's probability for each sentence someone else wrote, read as a sentence of
    the pool passage paired with it (`score_pool`'s `written`); none written, none scored."""
    if not written:
        return []
    return [p for _, p in score_pool(question, pool, context, written)[-len(written):]]


def whole(sentence: str) -> bool:
    """A sentence that ends as sentences do: a passage cut mid-sentence (a chunk boundary)
    gives no reading, since the user would read a fragment."""
    return sentence.rstrip()[-1:] in '.!?"\')'


def choose(scored: list[tuple[Candidate, float]], threshold: float, max_readings: int,
           skip_ids: set[str] = frozenset(), said: list[set[str]] | None = None,
           per_passage: int = 1) -> list[tuple[Candidate, float]]:
    """The readings: each passage's best whole sentence (or best `per_passage`; no table row, no
    markup) at or over `threshold`, most probable first, less near-repeats of a chosen one (or of
    `said`, the sentences already stated)."""
    best: dict[str, list[tuple[Candidate, float]]] = {}
    for candidate, p in scored:
        pid = candidate.passage["id"]
        readable = (whole(candidate.sentence) and not table_residue(candidate.sentence)
                    and not markup_residue(candidate.sentence))
        if readable and pid not in skip_ids and p >= threshold:
            best.setdefault(pid, []).append((candidate, p))
    kept = [item for found in best.values() for item in sorted(found, key=lambda item: -item[1])[:per_passage]]
    chosen: list[tuple[Candidate, float]] = []
    stated = list(said or [])
    for candidate, p in sorted(kept, key=lambda item: (-item[1], item[0].rank)):
        words = set(content_tokens(candidate.sentence))
        if not words or any(restates(words, earlier) for earlier in stated):
            continue
        chosen.append((candidate, p))
        stated.append(words)
        if len(chosen) >= max_readings:
            break
    return chosen
