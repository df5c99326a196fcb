"""BM25 in SQL over the postings table, equal to the embedded index's (agent/retrieval/bm25.py,
itself equal to rank_bm25's BM25Okapi).

idf = ln(N - df + 0.5) - ln(df + 0.5), floored at EPSILON times the vocabulary's mean idf when
negative; a term's weight in a passage = idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len / avglen));
query terms count with repetition; ties go to the earlier passage (seq), as in the embedded matrix.

Common words (a query's "the", "of") have postings in most passages; summing them for every
passage is what makes exact BM25 slow at scale. So, MaxScore-style: the passages holding a rarer
query term are scored first, and only the best few of them get the common terms' weights added.
A passage left out can score at most the next rare score plus the common terms' largest possible
weights (tf saturates at k1 + 1); when the depth-th best full score beats that bound the ranking
is exact, else the plain query over every posting answers. Either way the result is the same.
"""

from __future__ import annotations

import math
from collections import Counter

from agent.retrieval.bm25 import tokenize

K1, B, EPSILON = 1.5, 0.75, 0.25
COMMON = 0.02  # a term in more than this share of the passages (and over MIN_COMMON) is scored last
MIN_COMMON = 2_000
CANDIDATES = 10  # times the depth: rare-term passages that get the common terms' weights

_WEIGHT = "w.weight * p.tf * (%(k1)s + 1) / (p.tf + %(k1)s * (1 - %(b)s + %(b)s * p.length / %(avg)s))"
_TERMS = "WITH w(term, weight) AS MATERIALIZED (SELECT * FROM unnest(%(terms)s::text[], %(weights)s::float8[]))"
FULL = f"""{_TERMS}
SELECT passage, score FROM (SELECT p.passage, sum({_WEIGHT}) AS score, min(p.seq) AS seq
                            FROM w JOIN disambig_postings p USING (term) GROUP BY p.passage) s
WHERE score <> 0 ORDER BY score DESC, seq LIMIT %(k)s"""
RARE = f"""{_TERMS}
SELECT p.passage, sum({_WEIGHT}) AS score, min(p.seq) AS seq FROM w JOIN disambig_postings p USING (term)
GROUP BY p.passage ORDER BY score DESC, seq LIMIT %(k)s"""
ADD = f"""{_TERMS}
SELECT p.passage, sum({_WEIGHT}) FROM w JOIN disambig_postings p USING (term)
WHERE p.passage = ANY(%(passages)s) GROUP BY p.passage"""


def mean_idf(db, passages: int) -> float:
    """The mean raw idf over the vocabulary (rank_bm25's floor is EPSILON times it)."""
    n = max(passages, 1)
    value = db.execute("SELECT avg(ln(%s::float8 - df + 0.5) - ln(df::float8 + 0.5)) FROM disambig_terms", (n,)).fetchone()[0]
    return float(value or 0.0)


def statistics(cursor) -> dict:
    """Version, N, average length and the idf floor of the snapshot the cursor reads."""
    settings = dict(cursor.execute("SELECT key, value FROM disambig_settings").fetchall())
    passages = int(settings.get("passages", 0))
    version = settings.get("version", "0")
    if settings.get("idf_mean_version") == version:
        mean = float(settings["idf_mean"])
    else:  # a write is under way (or was killed): compute the floor of this snapshot
        mean = mean_idf(cursor, passages)
    return {"version": int(version), "n": max(passages, 1), "passages": passages, "floor": EPSILON * mean,
            "avg": (int(settings.get("total_length", 0)) / max(passages, 1)) or 1.0}


def sparse_hits(cursor, stats: dict, query: str, depth: int) -> list[tuple[str, None, float]]:
    """Top `depth` (id, None, score) for the query, best first; passages with no query term left out."""
    counts = Counter(tokenize(query))
    if not counts:
        return []
    found = dict(cursor.execute("SELECT term, df FROM disambig_terms WHERE term = ANY(%s)", (list(counts),)).fetchall())
    n = stats["n"]
    weights, common = {}, set()
    for term, df in found.items():
        idf = math.log(n - df + 0.5) - math.log(df + 0.5)
        weights[term] = counts[term] * (stats["floor"] if idf < 0 else idf)
        if df > max(MIN_COMMON, COMMON * n):
            common.add(term)
    params = {"k1": K1, "b": B, "avg": stats["avg"]}
    rows = None
    if common and len(common) < len(weights):
        rows = _pruned(cursor, params, weights, common, depth)
    if rows is None:
        rows = cursor.execute(FULL, {**params, **_arrays(weights), "k": depth}).fetchall()
    return [(passage_id, None, round(float(score), 6)) for passage_id, score in rows]


def _arrays(weights: dict[str, float]) -> dict:
    return {"terms": list(weights), "weights": list(weights.values())}


def _pruned(cursor, params: dict, weights: dict[str, float], common: set[str], depth: int) -> list[tuple] | None:
    """The exact top `depth` from the rare terms' best passages, or None when that cannot be proved."""
    rare = {t: w for t, w in weights.items() if t not in common}
    size = CANDIDATES * depth
    best = cursor.execute(RARE, {**params, **_arrays(rare), "k": size + 1}).fetchall()
    chosen, rest = best[:size], best[size:]
    added = dict(cursor.execute(ADD, {**params, **_arrays({t: weights[t] for t in common}),
                                      "passages": [row[0] for row in chosen]}).fetchall())
    full = sorted(((rare_score + added.get(passage, 0.0), seq, passage) for passage, rare_score, seq in chosen),
                  key=lambda item: (-item[0], item[1]))
    ceiling = (rest[0][1] if rest else 0.0) + sum(max(weights[t], 0.0) * (K1 + 1) for t in common)
    if len(full) < depth or full[depth - 1][0] <= ceiling or any(score == 0 for score, _, _ in full[:depth]):
        return None
    return [(passage, score) for score, _, passage in full[:depth]]
