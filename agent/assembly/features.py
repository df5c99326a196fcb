"""What the reading selector sees: one feature row per candidate sentence of the pool.

A candidate is a whole sentence of a retrieved passage (`passage_sentences`). Its features are
the signals the hand-tuned scorer used to add up with fixed weights; the selector
(`agent/assembly/selector.py`) learns their weights from gold short answers instead.
"""

from __future__ import annotations

from dataclasses import dataclass

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
from agent.steps.coherence import cosine

FORMS = ("what", "who", "when", "where", "why", "how", "which", "other")
FEATURES = (
    "word_match", "cosine", "answer_type", "precise_and_typed", "precise_untyped", "lead", "acronym", "on_topic",
    "title_match", "other_year", "passage_rank", "passage_cosine", "novelty", "defines_question",
    "length", "excerpt", "cosine_gap", "match_gap", "best_in_passage", "typed_cosine", "typed_match",
    *[f"form_{f}" for f in FORMS],
    # where the sentence stands among the pool's sentences (RELATIVE): a question's answer is the
    # pool's best match, whatever the question's absolute cosines
    "cosine_rank", "match_rank", "combined_rank", "typed_rank", "best_match_in_passage", "cosine_z", "match_z",
)
RELATIVE = 7  # the last features, filled by `relative_columns`


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
    caller has them, saves embedding the passages again. `found` starts with the pool's own
    candidates; any after them (the model's sentences) are ranked among those, not each other."""
    found = candidates(pool) if found is None else found
    if not found:
        return found, np.zeros((0, len(FEATURES)))
    weights = rarity(question, pool)
    total = sum(weights.values()) or 1.0
    topic = topic_words(weights, pool)
    texts = [f"{c.passage.get('title', '')}: {c.sentence}" for c in found]
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
    for c, vector in zip(found, sentence_vectors):
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
            *[0.0] * RELATIVE,
        ])
    best_match = max(matches)
    match_gap = FEATURES.index("match_gap")
    for row, match in zip(rows, matches):
        row[match_gap] = best_match - match
    matrix = np.asarray(rows, dtype=float)
    own = min(len(candidates(pool)), len(found)) or len(found)
    matrix[:, -RELATIVE:] = relative_columns(matrix, [c.passage["id"] for c in found], own)
    return found, matrix


def relative_columns(rows: np.ndarray, passage_ids: list[str], own: int) -> np.ndarray:
    """The RELATIVE features of each row against the first `own` rows (the pool's sentences):
    1 / (1 + rank) by cosine, by word match, by both, and by both among sentences of the asked
    type; whether it is its passage's best match; cosine and match as z-scores."""
    cos, match = rows[:, FEATURES.index("cosine")], rows[:, FEATURES.index("word_match")]
    both, typed = cos + match, rows[:, FEATURES.index("answer_type")] > 0
    typed_both = np.where(typed, both, -9.0)

    def inverse_rank(values: np.ndarray) -> np.ndarray:
        reference = values[:own]
        return 1.0 / (1.0 + np.array([(reference > v).sum() for v in values], dtype=float))

    def z(values: np.ndarray) -> np.ndarray:
        return (values - values[:own].mean()) / (values[:own].std() + 1e-6)

    best_match: dict[str, float] = {}
    for pid, m in zip(passage_ids[:own], match[:own]):
        best_match[pid] = max(best_match.get(pid, -1.0), m)
    tops = np.array([float(m >= best_match.get(pid, -1.0)) for pid, m in zip(passage_ids, match)])
    return np.column_stack([inverse_rank(cos), inverse_rank(match), inverse_rank(both), inverse_rank(typed_both),
                            tops, z(cos), z(match)])
