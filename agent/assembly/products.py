"""Readings by product: where a pool's passages document several products (agent/retrieval/
products.py), each product is a sense of the question, the strongest grouping signal there is.

The selector's features compare a sentence with the pool's best (rank, cosine gap), so over
three manuals the install sentence of the first-ranked one scores high and the others' low,
though each answers for its product. Its training scores each product's passages as a pool of
their own (`within_products`), reading every product's sentences as if the question had named
it. Which products answer, and with which unit, is agent/assembly/product_gate.py's.
"""

from __future__ import annotations

from agent.assembly.features import Candidate, candidates
from agent.retrieval.products import product_key


def product_groups(pool: list[dict]) -> dict[str, list[dict]]:
    """The pool's passages by product key, in pool order ("" for passages of no product)."""
    groups: dict[str, list[dict]] = {}
    for passage in pool:
        groups.setdefault(product_key(passage.get("product") or ""), []).append(passage)
    return groups


def within_products(pool: list[dict], score, missing=0.0) -> list[tuple[Candidate, object]] | None:
    """Every candidate of the pool (in `candidates(pool)` order) with what `score(passages)` (a
    list of (candidate, value), as `score_pool`'s) gives it within its product's passages, or
    `missing`; None when the pool documents fewer than two products. The selector's training
    reads its feature rows this way, each product's as if the question had named it."""
    groups = product_groups(pool)
    if len([key for key in groups if key]) < 2:
        return None
    value: dict[tuple[str, int], object] = {}
    for passages in groups.values():
        for candidate, found in score(passages):
            value[(candidate.passage["id"], candidate.position)] = found
    return [(c, value.get((c.passage["id"], c.position), missing)) for c in candidates(pool)]
