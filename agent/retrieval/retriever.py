"""Dense, sparse and hybrid (RRF) search over an index; shared by every method.

Results are plain passage dicts {id, title, text, source, score}, best first.
"""

from __future__ import annotations

import os
import threading
from functools import lru_cache
from typing import Literal

import numpy as np

from agent.retrieval.bm25 import BM25Index
from agent.context import Context
from agent.retrieval.embeddings import get_embedder
from agent.errors import IndexMissingError, InputError
from agent.retrieval.index import IndexStore
from agent.usage import record

Mode = Literal["dense", "sparse", "hybrid"]
MODES = ("dense", "sparse", "hybrid")
RRF_K = 60


def reciprocal_rank_fusion(rankings: list[list[str]], k: int = RRF_K) -> list[tuple[str, float]]:
    """score(d) = sum over rankings of 1 / (k + rank), rank counted from 1; best first."""
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, passage_id in enumerate(ranking, 1):
            scores[passage_id] = scores.get(passage_id, 0.0) + 1.0 / (k + rank)
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))


class Retriever:
    """Search one index. Thread-safe; reloads the BM25 file when an ingest replaced it."""

    def __init__(self, store: IndexStore):
        self.store = store
        self._bm25: BM25Index | None = None
        self._bm25_mtime = 0.0
        self._lock = threading.Lock()

    def _sparse(self) -> BM25Index:
        with self._lock:
            if not os.path.exists(self.store.bm25_path):
                if self.store.count() == 0:
                    raise IndexMissingError(f"index {self.store.path} is empty: run `disambig ingest PATH...`")
                self.store.rebuild_sparse()  # a killed ingest left passages without a BM25 file
            mtime = os.stat(self.store.bm25_path).st_mtime
            if self._bm25 is None or mtime != self._bm25_mtime:
                self._bm25, self._bm25_mtime = BM25Index.load(self.store.bm25_path), mtime
            return self._bm25

    def embed_queries(self, queries: list[str]) -> np.ndarray:
        return get_embedder(self.store.embedder_name).embed(queries)

    def dense_batch(self, queries: list[str], k: int, vectors: np.ndarray | None = None) -> list[list[dict]]:
        if self.store.count() == 0:
            raise IndexMissingError(f"index {self.store.path} is empty: run `disambig ingest PATH...`")
        vectors = self.embed_queries(queries) if vectors is None else vectors
        found = self.store.collection.query(
            query_embeddings=vectors, n_results=k, include=["documents", "metadatas", "distances"]
        )
        # a vector is written before its SQLite row: only committed passages are visible, so a
        # query during an ingest sees each passage either not yet or completely
        committed = self.store.existing_ids(sorted({i for ids in found["ids"] for i in ids}))
        return [
            [
                {"id": i, "title": meta.get("title", ""), "text": doc, "source": meta.get("source", ""),
                 "score": round(1.0 - float(distance), 6)}
                for i, doc, meta, distance in zip(ids, docs, metas, distances) if i in committed
            ]
            for ids, docs, metas, distances in zip(
                found["ids"], found["documents"], found["metadatas"], found["distances"]
            )
        ]

    def sparse_batch(self, queries: list[str], k: int) -> list[list[dict]]:
        index = self._sparse()
        hits = [index.search(query, k) for query in queries]
        stored = self.store.get(sorted({i for ranking in hits for i, _ in ranking}))
        return [[{**stored[i], "score": round(s, 6)} for i, s in ranking if i in stored] for ranking in hits]

    def search_batch(self, queries: list[str], mode: Mode = "hybrid", k: int = 5) -> list[list[dict]]:
        """Top-k passages for each query; one retriever call is recorded per query."""
        queries = [_check_query(q) for q in queries]
        if mode not in MODES:
            raise InputError(f"unknown retrieval mode {mode!r}; choose dense, sparse or hybrid")
        if k < 1:
            raise InputError("k must be at least 1")
        if not queries:
            return []
        record(retriever_calls=len(queries))
        if mode == "dense":
            return self.dense_batch(queries, k)
        if mode == "sparse":
            return self.sparse_batch(queries, k)
        depth = max(2 * k, 20)
        fused = []
        for dense, sparse_hits in zip(self.dense_batch(queries, depth), self.sparse_batch(queries, depth)):
            by_id = {p["id"]: p for p in [*sparse_hits, *dense]}
            ranking = reciprocal_rank_fusion([[p["id"] for p in dense], [p["id"] for p in sparse_hits]])
            fused.append([{**by_id[i], "score": round(s, 6)} for i, s in ranking[:k]])
        return fused

    def search(self, query: str, mode: Mode = "hybrid", k: int = 5) -> list[dict]:
        return self.search_batch([query], mode, k)[0]


def _check_query(query: object) -> str:
    if not isinstance(query, str) or not query.strip():
        raise InputError("search query is empty")
    return query.strip()


_OPENING = threading.Lock()


@lru_cache(maxsize=8)
def _retriever(index_dir: str, chroma_url: str, embedder: str) -> Retriever:
    return Retriever(IndexStore(index_dir, chroma_url, embedder))


_registered: dict[str, Retriever] = {}


def register_retriever(name: str, retriever: Retriever | None) -> None:
    """Serve `retriever` to contexts whose `index_dir` is `name` (None removes it): how an
    evaluation puts a fixed set of passages behind any method without changing its graph."""
    if retriever is None:
        _registered.pop(name, None)
    else:
        _registered[name] = retriever


def get_retriever(context: Context) -> Retriever:
    """The retriever for the context's index, opened once per process (or a registered one)."""
    if (registered := _registered.get(context.index_dir)) is not None:
        return registered
    with _OPENING:  # concurrent first asks share one retriever instead of racing to open the index twice
        return _retriever(os.path.abspath(os.path.expanduser(context.index_dir)), context.chroma_url, context.embedding_model)


def passage_vectors(retriever: Retriever, passages: list[dict]) -> np.ndarray:
    """The indexed vectors of the passages (embedded afresh only when the store lacks one)."""
    ids = [p["id"] for p in passages]
    stored = retriever.store.collection.get(ids=ids, include=["embeddings"])
    by_id = {i: np.asarray(v, dtype=np.float32) for i, v in zip(stored["ids"], stored["embeddings"])}
    missing = [p for p in passages if p["id"] not in by_id]
    if missing:
        texts = [f"{p['title']}: {p['text']}" if p.get("title") else p["text"] for p in missing]
        by_id.update(zip([p["id"] for p in missing], retriever.embed_queries(texts)))
    return np.stack([by_id[i] for i in ids])
