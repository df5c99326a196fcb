"""BM25 in SQL over the postings table, equal to the embedded index's (agent/retrieval/bm25.py,
itself equal to rank_bm25's BM25Okapi).

idf = ln(N - df + 0.5) - ln(df + 0.5), floored at EPSILON times the vocabulary's mean idf when
negative; a term's weight in a passage = idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len / avglen));
query terms count with repetition; ties (to 9 decimals) go to the earlier passage (seq), as in the
embedded matrix.

Common words (a query's "the", "of") have postings in most passages; summing them for every
passage is what makes exact BM25 slow at scale. So, MaxScore: a term adds at most its weight
times (k1 + 1) / (1 + k1 (1 - b) / max_tf + k1 b min_ratio / avglen) to a passage, from its largest
tf and smallest length / tf (disambig_terms; a bound whatever the average length, and below the
k1 + 1 where tf saturates, about half as many postings read). The passages holding one of the rarest terms
(the *essential* ones) are the candidates: their essential scores are summed from those postings,
the best few get the other terms' weights added by index probes, and the depth-th best full
score so found is a floor for the final one. A passage holding no essential term scores at most
the other terms' bounds, so when those sum below the floor it cannot rank; else the next rarest
term becomes essential too. Candidates whose essential score plus those bounds reaches the floor
are scored in full as well; the rest cannot rank. When the essential postings would pass
MAX_ESSENTIAL of all the query terms' postings, the plain query over every posting answers.
Either way the result is the same.
"""

from __future__ import annotations

import math
from collections import Counter

from agent.retrieval.bm25 import tokenize

K1, B, EPSILON = 1.5, 0.75, 0.25
MAX_ESSENTIAL = 0.2  # share of all the query terms' postings that essential terms may hold; more: the plain query

_WEIGHT = "w.weight * p.tf * (%(k1)s + 1) / (p.tf + %(k1)s * (1 - %(b)s + %(b)s * p.length / %(avg)s))"
_TERMS = "WITH w(term, weight) AS MATERIALIZED (SELECT * FROM unnest(%(terms)s::text[], %(weights)s::float8[]))"
FULL = f"""{_TERMS}
SELECT passage, score FROM (SELECT p.passage, sum({_WEIGHT}) AS score, min(p.seq) AS seq
                            FROM w JOIN disambig_postings p USING (term) GROUP BY p.passage) s
WHERE score <> 0 ORDER BY round(score::numeric, 9) DESC, seq LIMIT %(k)s"""
_ESSENTIAL = f"""SELECT p.passage, sum({_WEIGHT}) AS score, min(p.seq) AS seq FROM w JOIN disambig_postings p USING (term)
GROUP BY p.passage"""
BEST_ESSENTIAL = f"{_TERMS}\n{_ESSENTIAL} ORDER BY score DESC, seq LIMIT %(k)s"
ESSENTIAL_AT_LEAST = f"{_TERMS}\nSELECT * FROM ({_ESSENTIAL}) s WHERE score >= %(least)s AND NOT passage = ANY(%(seen)s)"
ADD = f"""{_TERMS}
SELECT p.passage, sum({_WEIGHT}) FROM w JOIN disambig_postings p USING (term)
WHERE p.passage = ANY(%(passages)s) GROUP BY p.passage"""
SEEDS = 10  # times the depth: candidates scored in full first, for the floor


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
    found = {term: rest for term, *rest in cursor.execute(
        "SELECT term, df, max_tf, min_ratio FROM disambig_terms WHERE term = ANY(%s)", (list(counts),)).fetchall()}
    n = stats["n"]
    weights, bounds = {}, {}
    for term, (df, max_tf, min_ratio) in found.items():
        idf = math.log(n - df + 0.5) - math.log(df + 0.5)
        weights[term] = counts[term] * (stats["floor"] if idf < 0 else idf)
        bounds[term] = weights[term] * _saturation(max_tf, min_ratio, stats["avg"])
    params = {"k1": K1, "b": B, "avg": stats["avg"], **_arrays(weights), "k": depth}
    df = {term: row[0] for term, row in found.items()}
    rows = _max_score(cursor, params, weights, bounds, df, depth) if len(weights) > 1 else None
    if rows is None:
        rows = cursor.execute(FULL, params).fetchall()
    return [(passage_id, None, round(float(score), 6)) for passage_id, score in rows]


def _saturation(max_tf: int | None, min_ratio: float | None, avg: float) -> float:
    """The most a term's postings add per unit of its weight, from its largest tf and smallest
    length / tf (each posting's tf (k1 + 1) / (tf + k1 (1 - b + b length / avg)) is at most this);
    raised a hair so a float's rounding never makes the bound fall below a score it bounds."""
    if not max_tf or min_ratio is None:  # no bound stored: tf's saturation
        return K1 + 1
    return (K1 + 1) / (1 + K1 * (1 - B) / max_tf + K1 * B * min_ratio / avg) * (1 + 1e-9)


def _arrays(weights: dict[str, float]) -> dict:
    return {"terms": list(weights), "weights": list(weights.values())}


def _max_score(cursor, params: dict, weights: dict[str, float], bound: dict[str, float], df: dict[str, int],
               depth: int) -> list[tuple] | None:
    """The exact top `depth` from the passages holding the rarest terms, or None when proving it
    would read more than MAX_ESSENTIAL of the postings."""
    rarest_first = sorted(weights, key=lambda term: (df[term], term))
    ceiling_from = [sum(bound[t] for t in rarest_first[cut:]) for cut in range(len(rarest_first) + 1)]
    read_from = [sum(df[t] for t in rarest_first[:cut]) for cut in range(len(rarest_first) + 1)]
    budget = MAX_ESSENTIAL * sum(df.values())
    cut, floor = 1, None
    while cut + 1 < len(rarest_first) and read_from[cut] < SEEDS * depth and read_from[cut + 1] <= budget:
        cut += 1  # enough candidates for a useful floor
    while cut < len(rarest_first) and read_from[cut] <= budget:
        essential = {t: weights[t] for t in rarest_first[:cut]}
        rest = {t: weights[t] for t in rarest_first[cut:]}
        seeds = cursor.execute(BEST_ESSENTIAL, {**params, **_arrays(essential), "k": SEEDS * depth}).fetchall()
        full = _completed(cursor, params, rest, seeds)
        if len(full) >= depth:  # a depth-th best score of real passages: the final one is at least this
            floor = full[depth - 1][0] if floor is None else max(floor, full[depth - 1][0])
        if floor is None or floor <= ceiling_from[cut]:  # passages without an essential term could rank
            cut = next((c for c in range(cut + 1, len(rarest_first)) if floor is None or ceiling_from[c] < floor),
                       len(rarest_first))
            continue
        if len(seeds) == SEEDS * depth:  # other candidates that could reach the floor
            least = floor - ceiling_from[cut] - 1e-9  # a float's rounding never drops a tie
            more = cursor.execute(ESSENTIAL_AT_LEAST, {**params, **_arrays(essential), "least": least,
                                                       "seen": [row[0] for row in seeds]}).fetchall()
            full += _completed(cursor, params, rest, more)
        full.sort(key=_rank)
        return [(passage, score) for score, _, passage in full[:depth]]
    return None


def _completed(cursor, params: dict, rest: dict[str, float], partial: list[tuple]) -> list[tuple]:
    """(full score, seq, passage) for candidates (passage, essential score, seq): the other
    terms' weights added by index probes, best first."""
    if not partial:
        return []
    added = dict(cursor.execute(ADD, {**params, **_arrays(rest), "passages": [row[0] for row in partial]}).fetchall())
    return sorted(((score + added.get(passage, 0.0), seq, passage) for passage, score, seq in partial), key=_rank)


def _rank(item: tuple) -> tuple:
    """Best score first, then the earlier passage: scores equal but for the order of a float sum
    (copies of one passage) count as tied, whichever way the database added them up."""
    return -round(item[0], 9), item[1]
