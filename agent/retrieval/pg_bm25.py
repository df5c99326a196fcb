"""BM25 in SQL over the postings table, equal to the embedded index's (agent/retrieval/bm25.py,
itself equal to rank_bm25's BM25Okapi).

idf = ln(N - df + 0.5) - ln(df + 0.5), floored at EPSILON times the vocabulary's mean idf when
negative; a term's weight in a passage = idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len / avglen));
query terms count with repetition; ties (to 9 decimals) go to the earlier passage (seq), as in the
embedded matrix.

Common words (a query's "the", "of") have postings in most passages; summing them for every
passage is what makes exact BM25 slow at scale. So, MaxScore:
- A term adds at most its weight x (k1 + 1) / (1 + k1 (1 - b) / max_tf + k1 b min_ratio / avglen)
  to a passage, from its largest tf and smallest length / tf (disambig_terms): a bound whatever
  the average length, and about half of the k1 + 1 where tf saturates.
- A floor: the passages holding the rarest terms (a few hundred postings) get the other terms'
  weights by index probes; their depth-th best full score is a floor for the final one.
- The rarest terms whose postings must be read (the *essential* ones) are the fewest that leave
  the other terms' bounds summing below the floor: a passage holding none of them cannot rank.
- One statement then sums the essential postings, raises the floor from the best of them, and
  adds the other terms rarest first, by index probes, to the passages that can still reach the
  floor, dropping after each term those that no longer can (the rarest prunes the most: a
  passage without it loses its whole bound).
- When the most common essential term has many times the rarer ones' postings, it is scanned
  instead of summed: the rarer terms' passages get its weight by a probe, and of its other
  postings only those that alone (with the other terms' bounds) reach the raised floor join them.
- A large proof runs as two halves of the passage ids, the upper one on a helper connection:
  each half's floor is a floor for the whole, so the two top `depth` merge into the exact one.
When the essential postings would pass MAX_ESSENTIAL of all the query terms' postings, the plain
query over every posting answers. Either way the result is the same.
"""

from __future__ import annotations

import math
from collections import Counter

from agent.retrieval.bm25 import tokenize

K1, B, EPSILON = 1.5, 0.75, 0.25
MAX_ESSENTIAL = 0.4  # share of all the query terms' postings that essential terms may hold; more: the plain query


def _weight(of: str) -> str:
    """SQL for what posting `p` adds to its passage's score, for a term whose weight is `of`."""
    return f"{of} * p.tf * (%(k1)s + 1) / (p.tf + %(k1)s * (1 - %(b)s + %(b)s * p.length / %(avg)s))"


_WEIGHT = _weight("w.weight")
_TERMS = "WITH w(term, weight) AS MATERIALIZED (SELECT * FROM unnest(%(terms)s::text[], %(weights)s::float8[]))"
FULL = f"""{_TERMS}
SELECT passage, score FROM (SELECT p.passage, sum({_WEIGHT}) AS score, min(p.seq) AS seq
                            FROM w JOIN disambig_postings p USING (term) GROUP BY p.passage) s
WHERE score <> 0 ORDER BY round(score::numeric, 9) DESC, seq LIMIT %(k)s"""


def _essential(where: str = "") -> str:
    return f"""SELECT p.passage, sum({_WEIGHT}) AS score, min(p.seq) AS seq FROM w JOIN disambig_postings p USING (term)
{where}GROUP BY p.passage"""


_ESSENTIAL = _essential()
BEST_ESSENTIAL = f"{_TERMS}\n{_ESSENTIAL} ORDER BY score DESC, seq LIMIT %(k)s"
ADD = f"""{_TERMS}
SELECT p.passage, sum({_WEIGHT}) FROM w JOIN disambig_postings p USING (term)
WHERE p.passage = ANY(%(passages)s) GROUP BY p.passage"""
WORK_MEM = "64MB"  # a search's hash of passages to scores stays in memory (the default 4MB spills at 1M passages)
PROBE_COST = 4  # scan the most common essential term when the rarer ones hold < 1/4 of its postings
# (each of their passages then costs a probe for it); 4 did best of 3, 4, 6 and 12 at 1M passages
SPLIT_FROM = 5_000  # essential postings from which the proof runs as two halves of the passages, on two
# connections (at 1M passages, hybrid p50 53-55 ms from 20,000, 48-52 from 5,000, 50 from 0)
SEEDS = 10  # times the depth: the rarest terms' best passages scored in full first, for the floor


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


def version_of(db) -> int:
    """The index version the snapshot `db` reads (bumped by every write transaction)."""
    found = db.execute("SELECT value FROM disambig_settings WHERE key = 'version'").fetchone()
    return int(found[0]) if found else 0


def sparse_hits(cursor, stats: dict, query: str, depth: int, beside=None) -> list[tuple[str, None, float]]:
    """Top `depth` (id, None, score) for the query, best first; passages with no query term left out.
    With `beside` (`Connections.beside`), a large proof runs as two halves on two connections."""
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
    _with_work_mem(cursor)
    df = {term: row[0] for term, row in found.items()}
    split = (beside, stats["version"]) if beside else None
    rows = _max_score(cursor, params, weights, bounds, df, depth, split) if len(weights) > 1 else None
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


def _arrays(weights: dict[str, float], prefix: str = "") -> dict:
    """Terms and weights as a statement's parallel arrays (`terms` and `weights`, or `rest_terms`...)."""
    return {f"{prefix}terms": list(weights), f"{prefix}weights": list(weights.values())}


def _max_score(cursor, params: dict, weights: dict[str, float], bound: dict[str, float], df: dict[str, int],
               depth: int, split: tuple | None = None) -> list[tuple] | None:
    """The exact top `depth` from the passages holding the rarest terms, or None when proving it
    would read more than MAX_ESSENTIAL of the postings."""
    rarest_first = sorted(weights, key=lambda term: (df[term], term))
    ceiling_from = [sum(bound[t] for t in rarest_first[cut:]) for cut in range(len(rarest_first) + 1)]
    read_from = [sum(df[t] for t in rarest_first[:cut]) for cut in range(len(rarest_first) + 1)]
    budget = MAX_ESSENTIAL * sum(df.values())
    cut, floor = 1, None
    while cut + 1 < len(rarest_first) and read_from[cut] < SEEDS * depth and read_from[cut + 1] <= budget:
        cut += 1  # enough candidates for a useful floor
    while floor is None and cut < len(rarest_first) and read_from[cut] <= budget:
        essential = {t: weights[t] for t in rarest_first[:cut]}
        seeds = cursor.execute(BEST_ESSENTIAL, {**params, **_arrays(essential), "k": SEEDS * depth}).fetchall()
        full = _completed(cursor, params, {t: weights[t] for t in rarest_first[cut:]}, seeds)
        if len(full) < depth:  # fewer passages hold these terms than asked for: read one more term
            cut += 1
            continue
        floor = full[depth - 1][0]  # the depth-th best score of real passages: the final one is at least this
        if floor > ceiling_from[cut] and len(seeds) < SEEDS * depth:  # every candidate is scored already
            return [(passage, score) for score, _, passage in full[:depth]]
    if floor is None:
        return None
    cut = next((c for c in range(cut, len(rarest_first)) if ceiling_from[c] < floor), None)
    if cut is None or read_from[cut] > budget:
        return None
    rest = rarest_first[cut:]
    last = rarest_first[cut - 1] if cut > 1 and PROBE_COST * read_from[cut - 1] < df[rarest_first[cut - 1]] else None
    summed = rarest_first[:cut - 1] if last else rarest_first[:cut]
    params = {**params, **_arrays({t: weights[t] for t in summed}), **_arrays(
        {t: weights[t] for t in rest}, "rest_"), "floor": floor, "seeds": SEEDS * depth, "k": depth}
    if last:
        params.update({"last": last, "last_weight": weights[last]})
    for step, term in enumerate(rest):
        params.update({f"term{step}": term, f"weight{step}": weights[term], f"ceiling{step}": ceiling_from[cut + step]})
    middle = _middle(cursor) if split and read_from[cut] >= SPLIT_FROM else None
    if middle is None:
        return [(passage, score) for passage, score, _ in cursor.execute(_proof(len(rest), bool(last)), params)]
    return _halves(cursor, split, len(rest), bool(last), {**params, "middle": middle}, depth)


def _middle(cursor) -> str | None:
    """A passage id near the middle of the postings, from PostgreSQL's statistics sample: where
    the proof is cut in two. Only the halves' balance depends on it, not the result."""
    row = cursor.execute("SELECT histogram_bounds::text::text[] FROM pg_stats WHERE schemaname = current_schema() "
                         "AND tablename = 'disambig_postings' AND attname = 'passage'").fetchone()
    return row[0][len(row[0]) // 2] if row and row[0] else None


def _halves(cursor, split: tuple, rest: int, last: bool, params: dict, depth: int) -> list[tuple]:
    """The proof over the passages below the middle id here, and above it on a helper connection
    (another core), merged. Each half's floor is a floor for the whole (its passages are real), so
    each half's top `depth` holds the whole's top among its passages. When the helper read another
    version (a write landed between the two snapshots) or failed, this connection proves it too."""
    beside, version = split
    upper = _proof(rest, last, "p.passage >= %(middle)s")
    later = in_version(beside, version, lambda helper: _with_work_mem(helper).execute(upper, params).fetchall())
    rows = cursor.execute(_proof(rest, last, "p.passage < %(middle)s"), params).fetchall()
    other = later()
    if other is None:
        other = cursor.execute(upper, params).fetchall()
    return [(passage, score) for score, _, passage in sorted(((s, q, p) for p, s, q in rows + other), key=_rank)[:depth]]


def in_version(beside, version: int, work):
    """Start `work(cursor)` on a helper connection (`Connections.beside`); returns a function that
    waits for its result, or None when the helper's snapshot holds another version than `version`
    (a write landed between the two snapshots) or the helper failed: the caller then does the work."""

    def versioned(cursor):
        return version_of(cursor), work(cursor)

    future = beside(versioned)

    def result():
        try:
            theirs, value = future.result()
        except Exception:
            return None
        return value if theirs == version else None

    return result


def _with_work_mem(cursor):
    cursor.execute(f"SET LOCAL work_mem = '{WORK_MEM}'")
    return cursor


def _proof(rest: int, last: bool = False, within: str = "") -> str:
    """The statement that proves the top `k` once the essential terms are known: their postings
    summed once (`partial`); the floor raised by the best seeds of them (`floor`); the passages
    that can still reach it (`step0`); then the `rest` other terms added one per step, rarest
    first, to the passages whose score so far plus the bounds of the terms still to come
    (`ceiling`) reaches the floor. The tie margin (1e-9) keeps a passage that a float's rounding
    would put a hair below the floor.

    With `last`, the most common essential term is not summed with the others: the passages of
    the rarer ones get its weight by an index probe, and its other postings are only scanned,
    a passage holding it and no rarer essential term kept when that posting alone reaches the
    raised floor. Scanning a posting costs a fraction of adding it to the hash of passages.
    `within`, a condition on `p.passage`, keeps the statement to a range of the passages."""
    essential = _essential(f"WHERE {within}\n" if within else "")
    within = f" AND {within}" if within else ""
    reach = "(SELECT f FROM floor) - %(ceiling0)s - 1e-9"
    if last:
        weight = _weight("%(last_weight)s")
        partial = f"""partial AS MATERIALIZED (SELECT e.passage, e.score + COALESCE((SELECT {weight} FROM disambig_postings p
      WHERE p.term = %(last)s AND p.passage = e.passage), 0) AS score, e.seq FROM ({essential}) e)"""
        step0 = f""",
step0 AS MATERIALIZED (SELECT passage, score, seq FROM partial WHERE score >= {reach}
  UNION ALL
  SELECT p.passage, {weight}, p.seq FROM disambig_postings p
  WHERE p.term = %(last)s{within} AND {weight} >= {reach} AND NOT EXISTS (SELECT FROM partial c WHERE c.passage = p.passage))"""
    else:  # the essential terms summed together, cut at the floor known before the statement
        partial = f"partial AS MATERIALIZED ({essential} HAVING sum({_WEIGHT}) >= %(floor)s - %(ceiling0)s - 1e-9)"
        step0 = ",\nstep0 AS (SELECT * FROM partial)"
    steps = [f"""step{i + 1} AS (SELECT c.passage, c.seq, c.score + COALESCE((SELECT {_weight(f"%(weight{i})s")}
    FROM disambig_postings p WHERE p.term = %(term{i})s AND p.passage = c.passage), 0) AS score
  FROM step{i} c WHERE c.score >= (SELECT f FROM floor) - %(ceiling{i})s - 1e-9)""" for i in range(rest)]
    return f"""{_TERMS},
r(term, weight) AS MATERIALIZED (SELECT * FROM unnest(%(rest_terms)s::text[], %(rest_weights)s::float8[])),
{partial},
seeds AS (SELECT s.score + COALESCE((SELECT sum({_weight("r.weight")}) FROM r
                                     JOIN disambig_postings p USING (term) WHERE p.passage = s.passage), 0) AS score
          FROM (SELECT * FROM partial ORDER BY score DESC LIMIT %(seeds)s) s),
floor AS MATERIALIZED (SELECT GREATEST(%(floor)s::float8,
                                       (SELECT score FROM seeds ORDER BY score DESC OFFSET %(k)s - 1 LIMIT 1)) AS f){step0},
{("," + chr(10)).join(steps)}
SELECT passage, score, seq FROM step{rest} WHERE score >= (SELECT f FROM floor) - 1e-9
ORDER BY round(score::numeric, 9) DESC, seq LIMIT %(k)s"""


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
