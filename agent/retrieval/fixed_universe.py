"""A "fixed universe" retriever: search only a given list of passages, held in memory.

Benchmarks such as CondAmbigQA hand every question its own 20 passages and replace
retrieval by them. Registering a `FixedPassagesRetriever` under a name and running a method
with `index_dir` set to that name puts those passages behind every graph's
`get_retriever(context)`, so no graph changes. Dense search is exact cosine over the
packaged embeddings; sparse search is the same BM25 as an on-disk index.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import uuid
from typing import Iterator

import numpy as np

from agent.retrieval.bm25 import BM25Index, tokenize
from agent.retrieval.embeddings import get_embedder
from agent.errors import InputError
from agent.retrieval.retriever import Retriever, register_retriever

PREFIX = "fixed://"


class _MemoryCollection:
    """The two collection calls the retrieval layer makes, over vectors in memory."""

    def __init__(self, passages: list[dict], vectors: np.ndarray):
        self._passages = passages
        self._vectors = vectors
        self._row = {p["id"]: row for row, p in enumerate(passages)}

    def query(self, query_embeddings, n_results: int, include=None) -> dict:
        scores = np.asarray(query_embeddings, dtype=np.float32) @ self._vectors.T
        found: dict[str, list] = {"ids": [], "documents": [], "metadatas": [], "distances": []}
        for row_scores in scores:
            order = sorted(range(len(self._passages)), key=lambda i: (-row_scores[i], self._passages[i]["id"]))
            top = order[:n_results]
            found["ids"].append([self._passages[i]["id"] for i in top])
            found["documents"].append([self._passages[i]["text"] for i in top])
            found["metadatas"].append([{"title": self._passages[i]["title"], "source": self._passages[i]["source"]}
                                       for i in top])
            found["distances"].append([1.0 - float(row_scores[i]) for i in top])
        return found

    def get(self, ids: list[str], include=None) -> dict:
        known = [i for i in ids if i in self._row]
        return {"ids": known, "embeddings": [self._vectors[self._row[i]] for i in known], "metadatas": [{}] * len(known)}


class FixedPassageStore:
    """Stands where an `IndexStore` stands, for a handful of passages."""

    def __init__(self, name: str, passages: list[dict], embedder_name: str = "minilm"):
        self.path = name
        self.embedder_name = embedder_name
        self.chroma_url = ""
        self.passages = {p["id"]: p for p in passages}
        texts = [f"{p['title']}: {p['text']}" if p["title"] else p["text"] for p in passages]
        self.collection = _MemoryCollection(passages, get_embedder(embedder_name).embed(texts))
        self.bm25 = BM25Index.build([p["id"] for p in passages], [tokenize(f"{p['title']} {p['text']}") for p in passages])

    def count(self) -> int:
        return len(self.passages)

    def get(self, ids: list[str]) -> dict[str, dict]:
        return {i: dict(self.passages[i]) for i in ids if i in self.passages}

    def existing_ids(self, ids: list[str]) -> set[str]:
        return {i for i in ids if i in self.passages}

    def snapshot(self, ids: list[str]) -> tuple[int, dict[str, dict]]:
        return 0, self.get(ids)


class FixedPassagesRetriever(Retriever):
    """A `Retriever` whose whole corpus is the given passages."""

    def __init__(self, name: str, passages: list[dict], embedder_name: str = "minilm"):
        super().__init__(FixedPassageStore(name, _clean(passages), embedder_name))

    def _sparse(self, version: int | None = None) -> BM25Index:
        return self.store.bm25

    def _maintain(self) -> tuple[bool, int]:
        return True, 0  # held in memory: never behind


def _clean(passages: list[dict]) -> list[dict]:
    if not passages:
        raise InputError("a fixed universe needs at least one passage")
    cleaned, seen = [], set()
    for number, passage in enumerate(passages, 1):
        passage_id = str(passage.get("id") or number)
        if passage_id in seen:
            raise InputError(f"fixed passages repeat the id {passage_id!r}")
        seen.add(passage_id)
        cleaned.append({"id": passage_id, "title": str(passage.get("title") or ""),
                        "text": str(passage.get("text") or ""), "source": str(passage.get("source") or "fixed")})
    return cleaned


def universe_name(passages: list[dict]) -> str:
    """A stable name for a passage list (the same passages always get the same name)."""
    digest = hashlib.sha256(json.dumps(passages, sort_keys=True, ensure_ascii=False).encode()).hexdigest()
    return PREFIX + digest[:20]


@contextlib.contextmanager
def fixed_universe(passages: list[dict], embedder_name: str = "minilm") -> Iterator[str]:
    """Serve `passages` as the corpus while the block runs; yields the `index_dir` to use
    (unique per block, so concurrent blocks over the same passages never unregister each other)."""
    name = f"{universe_name(passages)}-{uuid.uuid4().hex[:8]}"
    register_retriever(name, FixedPassagesRetriever(name, passages, embedder_name))
    try:
        yield name
    finally:
        register_retriever(name, None)
