"""The reading selector: which sentences of the retrieved passages state an answer to the question.

A logistic regression over `agent/assembly/features.py`'s features, trained on the tune splits
(`bench/train_selector.py`; card in agent/data/selector_card.md). A sentence becomes a reading
when its probability reaches one threshold chosen on the tune splits for precision; the best
sentence of each passage competes, near-repeats of a chosen reading are skipped, and at most
`max_readings` are stated. No fixed number of slots is filled: a question the passages answer
one way gets one reading.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from agent.assembly.features import FEATURES, Candidate, candidates, feature_rows
from agent.assembly.text import markup_residue, table_residue
from agent.assembly.units import asks_how, is_code_unit, says_how, unit_prose
from agent.context import Context
from agent.retrieval.arrays import open_npz
from agent.retrieval.products import product_title
from agent.retrieval.retriever import get_retriever, passage_vectors, sentence_vectors
from agent.steps.grounding import content_tokens, number_words

MODEL_PATH = Path(__file__).resolve().parents[1] / "data" / "selector_model.npz"
# a model to read instead of the shipped one (one `bench/train_selector.py --out` wrote), so a
# retrained selector is compared through the whole app before it overwrites MODEL_PATH
MODEL_ENV = "DISAMBIG_SELECTOR_MODEL"
NEAR_REPEAT = 0.8  # share of a reading's content words already in a chosen one: the same fact again
RESTATED_WORDS = 4  # an earlier sentence this long said again inside a longer one makes that one a repeat
SAME_PASSAGE_TEXT = 0.95  # cosine at which two passages are copies (a re-chunked or mirrored page)


def restates(words: set[str], earlier: set[str]) -> bool:
    """Whether a sentence's content words restate an earlier sentence's: most of them are there
    (NEAR_REPEAT) and so is every number it states. "The team received the first prize of
    $20,000" states another fact than "... of $15,000", though four words in five are the same."""
    return bool(words) and len(words & earlier) >= NEAR_REPEAT * len(words) and number_words(words) <= earlier


def says_again(words: set[str], earlier: set[str]) -> bool:
    """Whether a sentence says an earlier one again: it restates it, or it holds it whole with more
    after it ("England won the 1966 World Cup, hosted in England, 4-2 against West Germany after
    extra time ..." after "England won the World Cup in 1966 when it was hosted in England"). The
    answer metrics count both as repeats (agent/evaluation/sentence_metrics.py)."""
    return restates(words, earlier) or (len(earlier) >= RESTATED_WORDS and restates(earlier, words))


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

    def save(self, path: Path, features: tuple[str, ...] = FEATURES) -> None:
        np.savez(path, coef=self.coef, intercept=self.intercept, mean=self.mean, scale=self.scale,
                 threshold=self.threshold, features=np.array(features))


def load_selector(path: str | None = None) -> SelectorModel:
    """The model at `path`, else $DISAMBIG_SELECTOR_MODEL's, else the shipped one."""
    return _load_selector(path or os.environ.get(MODEL_ENV) or str(MODEL_PATH))


@lru_cache(maxsize=4)
def _load_selector(path: str) -> SelectorModel:
    """The shipped model (or one from `bench/train_selector.py --out`)."""
    return load_logistic(path, FEATURES, "selector model", "bench/train_selector.py")


def load_logistic(path: str, features: tuple[str, ...], what: str, trainer: str, kind: type = SelectorModel):
    """A logistic model `SelectorModel.save` wrote, as `kind`; its feature list must be `features`
    (this code's), or the weights would be read against the wrong columns."""
    with open_npz(path) as data:
        if tuple(str(f) for f in data["features"]) != features:
            raise ValueError(f"{what} {path} was trained on other features; retrain with {trainer}")
        return kind(coef=data["coef"], intercept=float(data["intercept"]), mean=data["mean"],
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
    """Every candidate's probability of stating an answer: the selector's, mixed with the
    reader's when `reading_scorer` is `reader` (`ReaderMix`)."""
    logistic, reader = scored_parts(question, pool, context, written)
    return logistic if reader is None else mixed_scores(logistic, reader)


def _logistic_pool(question: str, pool: list[dict], context: Context, written: list[tuple[str, dict]] = ()
                   ) -> list[tuple[Candidate, float]]:
    """`scored_candidates` with the shipped model and the retriever's encoder, whose sentence
    vectors are remembered: the gate, the readings and the prose floor score one pool in turn."""
    retriever = get_retriever(context)
    return scored_candidates(question, pool, lambda texts: sentence_vectors(retriever, texts), load_selector(),
                             passage_vectors(retriever, pool), written)


MIX_PATH = Path(__file__).resolve().parents[1] / "data" / "reader_selector.npz"


@dataclass(frozen=True)
class ReaderMix:
    """The reader's score beside the selector's features: a logistic regression over the two
    probabilities' logits, fitted on the tune splits (bench/reader_eval.py), and its threshold."""

    selector_weight: float
    reader_weight: float
    intercept: float
    threshold: float

    def mixed(self, selector: list[float], reader: list[float]) -> list[float]:
        s, r = logit(np.asarray(selector, dtype=float)), logit(np.asarray(reader, dtype=float))
        return (1.0 / (1.0 + np.exp(-(self.selector_weight * s + self.reader_weight * r + self.intercept)))).tolist()


def logit(p):
    """log(p / (1 - p)), p clipped to [1e-4, 1 - 1e-4]: the mixes' and gates' one logit."""
    p = np.clip(p, 1e-4, 1 - 1e-4)
    return np.log(p / (1 - p))


@lru_cache(maxsize=2)
def load_mix(path: str = str(MIX_PATH)) -> ReaderMix:
    """The shipped mix (none fitted yet: the reader alone, at its own threshold)."""
    if not Path(path).is_file():
        from agent.assembly.reader import reader_threshold
        return ReaderMix(0.0, 1.0, 0.0, reader_threshold())
    with open_npz(path) as data:
        return ReaderMix(*(float(data[name]) for name in ("selector_weight", "reader_weight", "intercept", "threshold")))


def reader_scores(question: str, found: list[Candidate]) -> list[float]:
    """The reader's probability that each candidate sentence answers the question, read under its
    passage's title (led by its product where the title does not name it: `product_title`)."""
    from agent.assembly.reader import reader_probabilities
    return reader_probabilities([(question, unit_prose(c.sentence), product_title(c.passage)) for c in found])


def scored_parts(question: str, pool: list[dict], context: Context, written: list[tuple[str, dict]] = ()
                 ) -> tuple[list[tuple[Candidate, float]], list[float] | None]:
    """(the selector's scored candidates, the reader's probabilities of the same candidates, or
    None with `reading_scorer=logistic`): the gate reads both apart."""
    logistic = _logistic_pool(question, pool, context, written)
    if context.reading_scorer != "reader" or not logistic:
        return logistic, None
    read = reader_read(logistic, context.reader_candidates)
    found = dict(zip(read, reader_scores(question, [logistic[i][0] for i in read])))
    return logistic, [found.get(i, NOT_READ) for i in range(len(logistic))]


NOT_READ = 0.0  # the reader's probability for a sentence it did not read: the selector ranked it too low


def reader_read(logistic: list[tuple[Candidate, float]], most: int) -> list[int]:
    """The indices of the candidates the reader reads: the selector's best `most` (0: all). On
    two cores the reader costs about its pairs' tokens; the selector's ranking is cheap."""
    order = sorted(range(len(logistic)), key=lambda i: -logistic[i][1])
    return sorted(order if most <= 0 else order[:most])


def mixed_scores(logistic: list[tuple[Candidate, float]], reader: list[float]) -> list[tuple[Candidate, float]]:
    return list(zip([c for c, _ in logistic], load_mix().mixed([p for _, p in logistic], reader)))


def vetoed(question: str, scored: list[tuple[Candidate, float]], floor: float, threshold: float
           ) -> list[tuple[Candidate, float]]:
    """`scored` less what the reader rejects: a candidate at or over `threshold` that the reader
    gives under `floor` gets 0. The selector weighs most in the mix, so without the veto a
    sentence about the subject that answers nothing ("the largemouth bass, the most popular
    game fish" for "Who made the bass popular?") was stated on its features. Only candidates
    over the threshold are read, most of them already by the gate (the reader remembers)."""
    over = [i for i, (_, p) in enumerate(scored) if p >= threshold]
    rejected = dict(zip(over, under_floor(question, [scored[i][0] for i in over], floor)))
    return [(c, 0.0 if rejected.get(i) is not None else p) for i, (c, p) in enumerate(scored)]


def under_floor(question: str, found: list[Candidate], floor: float) -> list[float | None]:
    """For each candidate: the reader's probability when it is under `floor` (the reader rejects
    it as an answer to `question`), else None. The one test the readings, the model's sentences
    and the gap notes apply."""
    return [p if p < floor else None for p in reader_scores(question, found)]


def reader_floor(context: Context) -> float:
    """The reader probability a sentence needs to be stated, a reading or a model sentence
    (`reader_floor`, else the shipped reader's threshold)."""
    from agent.assembly.reader import reader_threshold
    return context.reader_floor if context.reader_floor > 0 else reader_threshold()


def written_probabilities(question: str, pool: list[dict], context: Context,
                          written: list[tuple[str, dict]]) -> list[float]:
    """The selector's probability for each sentence someone else wrote, read as a sentence of
    the pool passage paired with it (`score_pool`'s `written`); none written, none scored."""
    if not written:
        return []
    # the selector's alone under either scorer: the draft prompt's compression ranks with it, so
    # the model's one call is the same and the reader decides only what of the reply is kept
    return [p for _, p in _logistic_pool(question, pool, context, written)[-len(written):]]


def whole(sentence: str) -> bool:
    """A sentence that ends as sentences do: a passage cut mid-sentence (a chunk boundary)
    gives no reading, since the user would read a fragment. A lead-in with its code block is
    whole by construction."""
    return sentence.rstrip()[-1:] in '.!?"\')' or is_code_unit(sentence)


def readable(candidate: Candidate) -> bool:
    """A unit a reading may state: whole, no table residue, no markup."""
    return whole(candidate.sentence) and not table_residue(candidate.sentence) \
        and not markup_residue(candidate.sentence)


def choose(scored: list[tuple[Candidate, float]], threshold: float, max_readings: int,
           skip_ids: set[str] = frozenset(), said: list[set[str]] | None = None,
           per_passage: int = 1, sense_of=None, prefer=None) -> list[tuple[Candidate, float]]:
    """The readings: each passage's best whole sentence (or best `per_passage`; no table row, no
    markup) at or over `threshold`, most probable first, less near-repeats of a chosen one (or of
    `said`, the sentences already stated); with `sense_of` (a passage -> its sense's name, as
    compose's `sense_name`), at most one per sense: the best sentence speaks for its sense, and
    the next reading goes to another one; with `prefer` (a candidate -> bool, as `how_preference`),
    the preferred candidates over the threshold come first, in the passage and in the answer.
    Nothing over the threshold: no reading (abstains)."""
    first = (lambda item: not prefer(item[0])) if prefer else (lambda item: False)
    best: dict[str, list[tuple[Candidate, float]]] = {}
    for candidate, p in scored:
        pid = candidate.passage["id"]
        if readable(candidate) and pid not in skip_ids and p >= threshold:
            best.setdefault(pid, []).append((candidate, p))
    kept = [item for found in best.values()
            for item in sorted(found, key=lambda item: (first(item), -item[1]))[:per_passage]]
    chosen: list[tuple[Candidate, float]] = []
    stated = list(said or [])
    senses: set[str] = set()
    for candidate, p in sorted(kept, key=lambda item: (first(item), -item[1], item[0].rank)):
        words = set(content_tokens(candidate.sentence))
        if not words or any(restates(words, earlier) for earlier in stated):
            continue
        if sense_of:
            sense = sense_of(candidate.passage).casefold()
            if sense in senses:
                continue
            senses.add(sense)
        chosen.append((candidate, p))
        stated.append(words)
        if len(chosen) >= max_readings:
            break
    return chosen


def how_preference(question: str):
    """For a question asking how to do something: a candidate that tells how (a code block with
    its lead-in, an option's row, an instruction; `says_how`) is preferred over the sentences
    that only describe, among those the selector passes. No weight: the selector's probability
    still decides whether a unit is stated at all. Else None (no preference)."""
    if not asks_how(question):
        return None
    return lambda candidate: says_how(candidate.passage, candidate.sentence)
