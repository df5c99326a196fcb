"""A question's candidate pool over documents read from files: every candidate document's best
passages, not only the global top k.

Over many manuals, the global top k of "How do I install it?" can be one manual's passages (or
a few manuals' FAQ entries), while every manual answers it in its own install section further
down. The pool walks a deeper ranking and lets each document add at most `document_quota`
passages before any document adds more, so the best documents each bring their best passages.
A question that names a product (or a conversation whose latest naming turn does) gets that
product's passages only. A pool of records without document structure (the demo corpus, JSONL)
is the plain ranking, as before.
"""

from __future__ import annotations

from collections import Counter

from agent.documents.citation import location
from agent.retrieval.products import (also_words, name_like, named_products, names_product, product_identity, product_key,
                                      product_names, product_of)

DEEP_FACTOR = 4  # x the pool: how deep the per-document pool looks for other documents' passages
DEEP_MIN = 50


def document_pool(retriever, question: str, mode: str, size: int, depth: int | None, quota: int,
                  conversation: list[str] = ()) -> list[dict]:
    """`size` passages for the question, ranked as `retriever.search(question, mode, size, depth)`
    ranks them; where they come from files (and `quota` > 0), each document's best `quota` first
    (`per_document`) over a deeper ranking, tagged with their `product`, and only the named
    product's when the question or the `conversation` (user turns, newest first) names one."""
    ranked = retriever.search(question, mode, size, depth=depth)
    if not any(location(p).get("document") for p in ranked):
        return ranked
    if quota <= 0:
        return with_products(ranked)  # tagged even so: several products are still several senses
    deep_size = max(DEEP_FACTOR * size, DEEP_MIN)
    deep = with_products(retriever.search(question, mode, deep_size, depth=deep_size))
    products = sorted({p["product"] for p in deep if p.get("product")})
    said = [p for p in products if any(names_product(text, p) for text in [question, *conversation])]
    named = named_products([question, *conversation], products, also_words(said, deep))
    if named:
        deep = [p for p in deep if product_key(p.get("product") or "") in named]
    pool = per_document(deep, size, quota)
    if len(product_names(pool)) < 2:  # one product's passages: its documents are its senses, as before
        pool = [{key: value for key, value in p.items() if key != "product"} for p in pool]
    return pool


def with_products(passages: list[dict]) -> list[dict]:
    """The passages, each read from a file tagged with the product it documents (`product`),
    one product named one way: the spelling most surely a name (`name_like`), the commonest of those."""
    identities = [product_identity(p) for p in passages]
    names: dict[str, Counter] = {}
    for passage, identity in zip(passages, identities):
        if identity and (name := product_of(passage)):
            names.setdefault(identity, Counter())[name] += 1
    spelled = {identity: max(counts, key=lambda name: (name_like(name), counts[name]))
               for identity, counts in names.items()}
    return [{**p, "product": spelled[identity]} if identity in spelled else p for p, identity in zip(passages, identities)]


def per_document(ranked: list[dict], size: int, quota: int) -> list[dict]:
    """The first `size` of `ranked` with no document holding more than `quota` until every
    document's best `quota` are in; then the rest in rank order (one long manual still fills it)."""
    first, rest, held = [], [], {}
    for passage in ranked:
        document = location(passage).get("document") or passage["id"]
        if held.get(document, 0) < quota:
            first.append(passage)
            held[document] = held.get(document, 0) + 1
        else:
            rest.append(passage)
    return (first + rest)[:size]


def user_turns(messages: list, question: str) -> list[str]:
    """The conversation's user turns before the question, newest first (what a product named
    earlier in a thread is read from)."""
    turns = [str(getattr(m, "content", "")) for m in messages or [] if getattr(m, "type", "") == "human"]
    turns = [t for t in turns if t.strip()]
    if turns and turns[-1].strip() == question.strip():
        turns = turns[:-1]
    return turns[::-1]
