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
from agent.retrieval.corpus import content_id
from agent.retrieval.index import IndexStore
from agent.retrieval.vector_cache import PgVectorCache, VectorCache
from agent.usage import record

Mode = Literal["dense", "sparse", "hybrid"]
MODES = ("dense", "sparse", "hybrid")
RRF_K = 60
IN_MEMORY_BM25 = 50_000  # passages: above this, a reader during a write filters the saved matrix's hits instead


def reciprocal_rank_fusion(rankings: list[list[str]], k: int = RRF_K) -> list[tuple[str, float]]:
    """score(d) = sum over rankings of 1 / (k + rank), rank counted from 1; best first."""
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, passage_id in enumerate(ranking, 1):
            scores[passage_id] = scores.get(passage_id, 0.0) + 1.0 / (k + rank)
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))


def vector_cache(store: IndexStore) -> VectorCache | PgVectorCache | None:
    """Where the units' vectors are kept for the next process: beside an embedded index, in a
    PostgreSQL index's database; None for a store that keeps neither (tests' stand-ins)."""
    backend = getattr(store, "backend", None)
    if backend == "embedded":
        return VectorCache(store.path, store.embedder_name)
    if backend == "postgresql":
        return PgVectorCache(store, store.embedder_name)
    return None


class Retriever:
    """Search one index. Thread-safe. Each call answers from one SQLite snapshot: a hit from
    the vector store or the BM25 matrix is kept only when the content hash it was indexed
    with equals that snapshot's passage, so every result is complete and of one version even
    while a write (or a killed one) leaves a store behind. A PostgreSQL index (pg_index.py)
    answers each call from one transaction snapshot instead, on a read replica if it has one."""

    def __init__(self, store: IndexStore):
        self.store = store
        self._bm25: BM25Index | None = None
        self._bm25_file: tuple[int, int] | None = None
        self._checked: tuple | None = None
        self._lock = threading.Lock()
        self.vector_memo: dict[tuple[str, str], np.ndarray] = {}  # (id, content hash) -> stored vector: see passage_vectors
        self.sentence_memo: dict[str, np.ndarray] = {}  # text -> vector: see sentence_vectors
        self.vector_cache = vector_cache(store)

    def _maintain(self) -> tuple[bool, int]:
        """Bring a store that is behind the passage table up to date before answering, unless
        a write is under way (it does so itself); returns whether the vectors are current and
        the table's version."""
        settings = self.store.settings()
        version = int(settings.get("version", 0))
        dense_current = int(settings.get("dense_version", -1)) == version
        checked = (_file_identity(self.store.bm25_path), version)
        if dense_current and (checked == self._checked or self.store.sparse_is_current()):
            self._checked = checked  # the saved BM25 file was current at this version: no need to reopen it
            return True, version
        with self.store.writing(wait=False) as free:
            if free:
                self.store.repair()
                dense_current = True
        return dense_current, version

    def _sparse(self, version: int | None = None) -> BM25Index:
        """The newest BM25 matrix: the saved one, or while a write holds the lock and the saved
        one is behind `version`, one built in memory (small indexes; large ones filter hits)."""
        with self._lock:
            path = self.store.bm25_path
            file = _file_identity(path)
            if file is not None and file != self._bm25_file:
                self._bm25, self._bm25_file = BM25Index.load(path), file
            behind = self._bm25 is not None and version is not None and (self._bm25.version or 0) < version
            if self._bm25 is None or (behind and self._bm25.version is not None and self.store.count() <= IN_MEMORY_BM25):
                if self.store.count() == 0:
                    raise IndexMissingError(f"index {self.store.path} is empty: run `disambig ingest PATH...`")
                self._bm25 = self.store.rebuild_sparse(save=False)  # the running write saves its own
            return self._bm25

    def embed_queries(self, queries: list[str]) -> np.ndarray:
        return get_embedder(self.store.embedder_name).embed(queries)

    def _dense_hits(self, queries: list[str], depth: int) -> list[list[tuple[str, str | None, float]]]:
        """(id, content hash the vector was made from, cosine) per query, best first."""
        if self.store.count() == 0:
            raise IndexMissingError(f"index {self.store.path} is empty: run `disambig ingest PATH...`")
        found = self.store.collection.query(
            query_embeddings=self.embed_queries(queries), n_results=depth, include=["metadatas", "distances"]
        )
        return [
            [(i, (meta or {}).get("hash"), round(1.0 - float(distance), 6)) for i, meta, distance in zip(ids, metas, dists)]
            for ids, metas, dists in zip(found["ids"], found["metadatas"], found["distances"])
        ]

    def _sparse_hits(self, queries: list[str], depth: int, version: int) -> list[list[tuple[str, str | None, float]]]:
        index = self._sparse(version)
        rows = index.row_of() if index.hashes else {}
        return [
            [(i, index.hashes[rows[i]] if index.hashes else None, round(s, 6)) for i, s in index.search(query, depth)]
            for query in queries
        ]

    def _hits(self, queries: list[str], mode: Mode, depth: int):
        """(version, dense hits, sparse hits, {id: passage} of that version's rows): hits are
        (id, content hash indexed, score) lists per query, None for a retriever not asked."""
        if getattr(self.store, "backend", "embedded") == "postgresql":  # one transactional snapshot: nothing to check
            return self.store.hits(queries, self.embed_queries(queries) if mode != "sparse" else None, mode, depth)
        dense_current, version = self._maintain()
        dense = self._dense_hits(queries, depth if dense_current else 2 * depth + 10) if mode != "sparse" else None
        sparse = self._sparse_hits(queries, depth, version) if mode != "dense" else None
        wanted = {i for hits in (dense or []) + (sparse or []) for i, _, _ in hits}
        version, rows = self.store.snapshot(sorted(wanted))
        return version, dense, sparse, rows

    def search_with_version(self, queries: list[str], mode: Mode = "hybrid", k: int = 5,
                            depth: int | None = None) -> tuple[int, list[list[dict]]]:
        """Top-k passages for each query and the passage-table version they all come from.
        Hybrid fuses `depth` candidates from each retriever (default max(2k, 20)): a caller
        wanting more passages ranked as a smaller k ranks them passes that k's depth."""
        queries = [_check_query(q) for q in queries]
        if mode not in MODES:
            raise InputError(f"unknown retrieval mode {mode!r}; choose dense, sparse or hybrid")
        if k < 1:
            raise InputError("k must be at least 1")
        if not queries:
            return 0, []
        record(retriever_calls=len(queries))
        depth = k if mode != "hybrid" else max(depth or 2 * k, k, 20)
        version, dense, sparse, rows = self._hits(queries, mode, depth)

        def valid(hits: list[tuple[str, str | None, float]]) -> list[tuple[str, float]]:
            return [(i, s) for i, h, s in hits
                    if i in rows and (h is None or h == content_id(rows[i]["title"], rows[i]["text"]))][:depth]

        if mode != "hybrid":
            return version, [[{**rows[i], "score": s} for i, s in valid(hits)[:k]] for hits in (dense or sparse)]
        fused = []
        for dense_hits, sparse_hits in zip(dense, sparse):
            ranking = reciprocal_rank_fusion([[i for i, _ in valid(dense_hits)], [i for i, _ in valid(sparse_hits)]])
            fused.append([{**rows[i], "score": round(s, 6)} for i, s in ranking[:k]])
        return version, fused

    def search_batch(self, queries: list[str], mode: Mode = "hybrid", k: int = 5,
                     depth: int | None = None) -> list[list[dict]]:
        """Top-k passages for each query; one retriever call is recorded per query."""
        return self.search_with_version(queries, mode, k, depth)[1]

    def search(self, query: str, mode: Mode = "hybrid", k: int = 5, depth: int | None = None) -> list[dict]:
        return self.search_batch([query], mode, k, depth)[0]


def _file_identity(path: str) -> tuple[int, int] | None:
    """Changes whenever the file is replaced (a new inode) or rewritten."""
    try:
        stat = os.stat(path)
    except FileNotFoundError:
        return None
    return stat.st_mtime_ns, stat.st_ino


def _check_query(query: object) -> str:
    if not isinstance(query, str) or not query.strip():
        raise InputError("search query is empty")
    return query.strip()


_OPENING = threading.Lock()


@lru_cache(maxsize=8)
def _retriever(index_dir: str, chroma_url: str, embedder: str, index_url: str = "", read_url: str = "") -> Retriever:
    if index_url:
        from agent.retrieval.pg_index import PgIndexStore

        return Retriever(PgIndexStore(index_url, split_urls(read_url), embedder))
    return Retriever(IndexStore(index_dir, chroma_url, embedder))


def split_urls(value: str | list[str] | None) -> list[str]:
    """Read replica URLs from a comma list or repeated flags."""
    values = [value] if isinstance(value, str) else list(value or [])
    return [url.strip() for each in values for url in each.split(",") if url.strip()]


def open_store(context: Context, create: bool = False):
    """The index the context names: PostgreSQL when `index_url` is set, else the directory."""
    if context.index_url:
        from agent.retrieval.pg_index import PgIndexStore

        return PgIndexStore(context.index_url, split_urls(context.read_url), context.embedding_model, create=create)
    return IndexStore(context.index_dir, context.chroma_url, context.embedding_model, create=create)


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
        if context.index_url:
            return _retriever("", "", context.embedding_model, context.index_url, context.read_url)
        return _retriever(os.path.abspath(os.path.expanduser(context.index_dir)), context.chroma_url, context.embedding_model)


VECTOR_MEMO = 20_000  # passage vectors a retriever remembers (30 MB at 384-d) before it starts afresh


def sentence_vectors(retriever: Retriever, texts: list[str], keep: bool = False) -> np.ndarray:
    """The encoder's vectors of `texts`, remembered per retriever: the selector embeds a pool's
    sentences once, and then again for each sentence of the model's prose it judges beside them.
    With `keep`, also kept on disk beside the index for the next process (the texts of its
    documents, not questions: agent/retrieval/vector_cache.py)."""
    memo = getattr(retriever, "sentence_memo", None)
    if memo is None:  # a stand-in retriever (tests' stubs)
        return retriever.embed_queries(texts)
    known = {t: vector for t in dict.fromkeys(texts) if (vector := memo.get(t)) is not None}
    missing = [t for t in dict.fromkeys(texts) if t not in known]
    if missing:  # read from `known`: another question may clear the memo meanwhile
        cache = getattr(retriever, "vector_cache", None) if keep else None
        stored = cache.get(missing) if cache is not None else {}
        embedded = [t for t in missing if t not in stored]
        fresh = dict(zip(embedded, retriever.embed_queries(embedded))) if embedded else {}
        if cache is not None:
            cache.put(fresh)
        known.update(stored)
        known.update(fresh)
        if len(memo) + len(missing) > VECTOR_MEMO:
            memo.clear()
        memo.update({t: known[t] for t in missing})
    return np.stack([known[t] for t in texts])


def passage_vectors(retriever: Retriever, passages: list[dict]) -> np.ndarray:
    """The indexed vectors of the passages (embedded afresh only when the store lacks one).

    Remembered per retriever by passage id and content hash (a new version of a passage has
    another hash): auto's gate, selector and gap notes read the same pool's vectors in turn."""
    ids = [p["id"] for p in passages]
    hashes = {p["id"]: content_id(p["title"], p["text"]) for p in passages}
    memo = getattr(retriever, "vector_memo", {})  # a stand-in retriever (tests' stubs) may have none
    by_id = {i: vector for i in ids if (vector := memo.get((i, hashes[i]))) is not None}
    wanted = [i for i in dict.fromkeys(ids) if i not in by_id]
    if wanted:
        stored = retriever.store.collection.get(ids=wanted, include=["embeddings", "metadatas"])
        by_id.update({i: np.asarray(v, dtype=np.float32) for i, v, meta in
                      zip(stored["ids"], stored["embeddings"], stored.get("metadatas") or [None] * len(wanted))
                      if (meta or {}).get("hash") in (None, hashes[i])})  # another version's vector is not this one's
    missing = [p for p in passages if p["id"] not in by_id]
    if missing:
        texts = [f"{p['title']}: {p['text']}" if p.get("title") else p["text"] for p in missing]
        by_id.update(zip([p["id"] for p in missing], retriever.embed_queries(texts)))
    if len(memo) > VECTOR_MEMO:
        memo.clear()
    memo.update({(i, hashes[i]): by_id[i] for i in ids})
    return np.stack([by_id[i] for i in ids])
