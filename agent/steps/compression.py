"""Extractive compression of the synthesis prompt: per passage, the sentences that bear on the question.

A 1.5B model on 2 cores reads about 60 prompt tokens a second, so every passage sentence that
says nothing about the question costs the user time before the first word of prose. Each
passage keeps its first sentence (it says what the passage is about, often which sense) and
its sentences that score best on the question: the share of the question's content words they
hold plus their cosine with the question under the retriever's encoder. Numbering, titles and
the <documents> format stay as they were; only the prompt's copy is shortened, every check
after the model still reads the whole passages.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from agent.llm.streaming import split_sentences
from agent.retrieval.tokens import count_tokens
from agent.steps.grounding import content_tokens

KEEP_SHARE = 0.35  # of a passage's tokens kept at most, beyond its first sentence and its best one


def sentence_scores(question: str, sentences: list[str], vectors: np.ndarray, question_vector: np.ndarray) -> list[float]:
    """Word overlap (share of the question's content words the sentence holds) + cosine."""
    wanted = set(content_tokens(question))
    overlap = [len(wanted & set(content_tokens(s))) / len(wanted) if wanted else 0.0 for s in sentences]
    return [o + float(c) for o, c in zip(overlap, vectors @ question_vector)]


def kept_sentences(sentences: list[str], scores: list[float], share: float = KEEP_SHARE) -> list[str]:
    """The first sentence, the best-scoring other one, then more of the best while the kept
    part stays within `share` of the passage's tokens; in the passage's order."""
    if len(sentences) <= 2:
        return sentences
    costs = [count_tokens(s) for s in sentences]
    budget = math.ceil(share * sum(costs))
    ranked = sorted(range(1, len(sentences)), key=lambda i: -scores[i])
    keep = {0, ranked[0]}
    used = costs[0] + costs[ranked[0]]
    for index in ranked[1:]:
        if used + costs[index] > budget:
            break
        keep.add(index)
        used += costs[index]
    return [sentences[i] for i in sorted(keep)]


SentenceRanker = Callable[[list[dict], list[list[str]]], list[list[float]]]


def compress_passages(question: str, passages: list[dict], embed, rank: SentenceRanker | None = None) -> list[dict]:
    """The passages with only the sentences that bear on the question (see the module doc);
    `embed(texts) -> normalized vectors` is the retriever's encoder, called once. `rank(passages,
    their sentences)`, when a method has a better judge of which sentences answer (auto: its
    learned reading selector), scores them instead of word overlap plus cosine."""
    split = [split_sentences(p["text"]) for p in passages]
    flat = [s for sentences in split for s in sentences]
    if not flat:
        return passages
    ranked = rank(passages, split) if rank else heuristic(question, split, embed)
    return [{**passage, "text": " ".join(kept_sentences(sentences, scores)) or passage["text"]}
            for passage, sentences, scores in zip(passages, split, ranked)]


def heuristic(question: str, split: list[list[str]], embed) -> list[list[float]]:
    """Each passage's sentence scores by `sentence_scores`, with one call to the encoder."""
    vectors = embed([question, *[s for sentences in split for s in sentences]])
    question_vector, vectors = vectors[0], vectors[1:]
    scores, offset = [], 0
    for sentences in split:
        scores.append(sentence_scores(question, sentences, vectors[offset:offset + len(sentences)], question_vector))
        offset += len(sentences)
    return scores
