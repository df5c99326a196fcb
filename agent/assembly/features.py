"""What the reading selector sees: one feature row per candidate sentence of the pool.

A candidate is a whole sentence of a retrieved passage, or a unit of a manual (a lead-in with its
code block, a table row, a list item: `passage_sentences`). Its features are
the signals the hand-tuned scorer used to add up with fixed weights; the selector
(`agent/assembly/selector.py`) learns their weights from gold short answers instead.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from agent.assembly.text import (
    about_other_years,
    answers_type,
    content_tokens,
    defined_subject,
    mentions,
    passage_sentences,
    passage_words,
    precise_type,
    question_form,
    question_words,
    rarity,
    spells_out,
    topic_words,
)
from agent.assembly.units import unit_prose
from agent.steps.coherence import cosine

FORMS = ("what", "who", "when", "where", "why", "how", "which", "other")
FEATURES = (
    "word_match", "cosine", "answer_type", "precise_and_typed", "precise_untyped", "lead", "acronym", "on_topic",
    "title_match", "other_year", "passage_rank", "passage_cosine", "novelty", "defines_question",
    "length", "excerpt", "cosine_gap", "match_gap", "best_in_passage", "typed_cosine", "typed_match",
    *[f"form_{f}" for f in FORMS],
)


@dataclass
class Candidate:
    passage: dict
    position: int  # sentence index in its passage
    sentence: str
    rank: int  # passage rank in the pool (0 = best)


def candidates(pool: list[dict]) -> list[Candidate]:
    return [Candidate(p, i, s, rank) for rank, p in enumerate(pool) for i, s in enumerate(passage_sentences(p))]


def feature_rows(question: str, pool: list[dict], embed, found: list[Candidate] | None = None,
                 passage_vectors=None) -> tuple[list[Candidate], np.ndarray]:
    """(candidates, matrix of FEATURES) for the question over its retrieved `pool` (best first).
    `embed` maps texts to unit vectors (the retriever's encoder); `passage_vectors`, when the
    caller has them, saves embedding the passages again. A unit (a lead-in with its code block)
    is read as the prose sentence it says (`unit_prose`): the weights were learned on prose."""
    found = candidates(pool) if found is None else found
    if not found:
        return found, np.zeros((0, len(FEATURES)))
    read = [replace(c, sentence=unit_prose(c.sentence)) for c in found]
    weights = rarity(question, pool)
    total = sum(weights.values()) or 1.0
    topic = topic_words(weights, pool)
    texts = [f"{c.passage.get('title', '')}: {c.sentence}" for c in read]
    vectors = embed([question, *texts])
    query, sentence_vectors = vectors[0], vectors[1:]
    if passage_vectors is None:
        passage_vectors = embed([f"{p.get('title', '')}: {p['text']}" for p in pool])
    passage_cos = [float(cosine(query, v)) for v in passage_vectors]
    novelty = [1.0 - max([float(cosine(passage_vectors[i], passage_vectors[j])) for j in range(i)], default=0.0)
               for i in range(len(pool))]
    on_topic = {p["id"]: topic <= set(content_tokens(passage_words(p))) for p in pool}
    asked = question_words(question)
    precise = precise_type(question)
    defining = defined_subject(question) is not None
    form = question_form(question)
    rows = []
    cosines = [float(cosine(query, v)) for v in sentence_vectors]
    best_cos, best_in = max(cosines), {}
    for c, cos in zip(found, cosines):
        best_in[c.passage["id"]] = max(best_in.get(c.passage["id"], -1.0), cos)
    matches = []
    for c, vector in zip(read, sentence_vectors):
        words = set(content_tokens(c.sentence))
        match = sum(w for word, w in weights.items() if mentions(word, words)) / total
        title = set(content_tokens(c.passage.get("title", "")))
        typed = answers_type(question, c.sentence, c.passage.get("title", ""))
        matches.append(match)
        cos = float(cosine(query, vector))
        rows.append([
            match, cos, float(typed), float(precise and typed), float(precise and not typed),
            float(c.position == 0), float(spells_out(question, c.sentence)), float(on_topic[c.passage["id"]]),
            (sum(mentions(w, title) for w in asked) / len(asked)) if asked else 0.0,
            float(about_other_years([c.passage], question)), 1.0 / (1 + c.rank), passage_cos[c.rank],
            novelty[c.rank], float(defining), min(len(c.sentence), 300) / 300,
            float(c.sentence.rstrip()[-1:] not in '.!?"\')'), best_cos - cos, 0.0,
            float(cos >= best_in[c.passage["id"]]), cos * typed, match * typed, *[float(form == f) for f in FORMS],
        ])
    best_match = max(matches)
    match_gap = FEATURES.index("match_gap")
    for row, match in zip(rows, matches):
        row[match_gap] = best_match - match
    return found, np.asarray(rows, dtype=float)
