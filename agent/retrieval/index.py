"""The on-disk index: SQLite (passages and documents, the source of truth), Chroma (vectors),
BM25 (sparse).

Versions: every SQLite transaction that changes passages bumps `settings.version`. The BM25
file carries the version it was built from and the content hash of every passage it holds;
each vector carries the content hash of the passage it embeds, and `settings.dense_version`
says which version the vector store fully matches (-1 while a write is under way). A reader
keeps a hit only when its hash equals the passage of the SQLite snapshot it answers from,
so a stale store never shows a half-written or outdated passage.

Crash safety: a write marks the dense store as changing, writes vectors first, commits
SQLite (old chunks out, new ones in, in one transaction per document) and deletes the
vectors no row needs any more; `repair` (run by the next command) re-aligns Chroma with
SQLite and rebuilds a stale BM25 file. One writer at a time (`write.lock`).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import logging
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Iterable, Iterator

from agent.retrieval.bm25 import BM25Index, tokenize
from agent.retrieval.corpus import content_id, passage_text
from agent.retrieval.embeddings import ChromaEmbeddings, get_embedder
from agent.errors import IndexMissingError, InputError
from agent.retrieval import storage
from agent.retrieval.changes import change_plan, document_of as _doc_id, passage_row as _row
from agent.retrieval.updates import ingest  # noqa: F401  (kept here for existing callers)

BATCH = 256  # passages embedded and committed together (bigger batches pad less)
# HNSW candidate list per query (Chroma's default is 100). The graph each process loads differs a
# little, so an approximate search differs too: on the wiki pool (7,390 passages), 238 AmbigNQ and
# ASQA tune questions missed 23 to 27 of their 4,760 true top-20 neighbours at 100, a different
# number in each process (one question's pool, and with it the gate's retraining, varied between
# runs); at 400, 1 or 2, for 3.1 ms a query instead of 2.8.
EF_SEARCH = 400


def searching_wide(collection):
    """The collection with its search list at least EF_SEARCH: an index made before that setting
    gets it when opened; one we may not change (a read-only server) keeps its own."""
    hnsw = (collection.configuration_json or {}).get("hnsw") or {}
    if hnsw.get("ef_search", 0) < EF_SEARCH:
        try:
            collection.modify(configuration={"hnsw": {"ef_search": EF_SEARCH}})
        except Exception as error:  # noqa: BLE001 - a narrower search is the old behaviour, not a failure
            logging.getLogger(__name__).warning("vector search keeps ef_search %s: %s", hnsw.get("ef_search"), error)
    return collection


def _where(passage: dict) -> dict:
    """The section and page of a passage read by structure, as Chroma metadata (no None values)."""
    stored = {**(passage.get("metadata") or {}), **passage}
    return {key: stored[key] for key in ("section", "page") if stored.get(key) not in (None, "")}


class IndexStore:
    """One index directory. Safe to share between threads; open one per process."""

    backend = "embedded"

    def __init__(self, index_dir: str, chroma_url: str = "", embedder_name: str = "minilm", create: bool = False):
        self.path = Path(index_dir).expanduser()
        if not create and not (self.path / "passages.sqlite").exists():
            raise IndexMissingError(f"no index at {self.path}: run `disambig ingest PATH...` first")
        self.path.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        with self._db(write=True) as db:
            for statement in filter(str.strip, storage.SCHEMA.split(";")):
                db.execute(statement)
            stored = dict(db.execute("SELECT key, value FROM settings").fetchall())
            if stored.get("embedder", embedder_name) != embedder_name:
                raise InputError(
                    f"index {self.path} was built with embeddings {stored['embedder']!r}, not {embedder_name!r}"
                )
            db.execute("INSERT OR IGNORE INTO settings VALUES ('embedder', ?)", (embedder_name,))
            storage.migrate(db)
        self.embedder_name = embedder_name
        self.chroma_url = chroma_url
        self._collection = None
        self._lock = threading.Lock()
        self._dense_changing = False

    def _db(self, write: bool = False) -> storage.Transaction:
        connection = getattr(self._local, "db", None)
        if connection is None:
            connection = sqlite3.connect(self.path / "passages.sqlite", timeout=60, isolation_level=None)
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=FULL")
            self._local.db = connection
        return storage.Transaction(connection, write)

    @property
    def collection(self):
        with self._lock, storage.CHROMA_LOCK:
            if self._collection is None:
                name = "disambig-" + hashlib.sha1(str(self.path.resolve()).encode()).hexdigest()[:12]
                client = storage.chroma_client(self.path, self.chroma_url)
                self._collection = searching_wide(client.get_or_create_collection(
                    name=name if self.chroma_url else "passages",
                    embedding_function=ChromaEmbeddings(self.embedder_name),
                    configuration={"hnsw": {"space": "cosine", "ef_search": EF_SEARCH}},
                ))
        return self._collection

    @staticmethod
    def batch_size() -> int:
        return BATCH

    @property
    def bm25_path(self) -> str:
        return str(self.path / "bm25.npz")

    # ---- reading -------------------------------------------------------------------------
    def count(self) -> int:
        with self._db() as db:
            return db.execute("SELECT COUNT(*) FROM passages").fetchone()[0]

    def documents_count(self) -> int:
        with self._db() as db:
            return db.execute("SELECT COUNT(*) FROM documents").fetchone()[0]

    def generation(self) -> str:
        """Changes whenever the passages change (ids are never reused): the eval settings hash."""
        with self._db() as db:
            count, last = db.execute("SELECT COUNT(*), COALESCE(MAX(seq), 0) FROM passages").fetchone()
        return f"{count}:{last}"

    def settings(self) -> dict[str, str]:
        with self._db() as db:
            return dict(db.execute("SELECT key, value FROM settings").fetchall())

    def version(self) -> int:
        """The passage table's version: bumped by every transaction that changes it."""
        return int(self.settings().get("version", 0))

    def dense_version(self) -> int:
        """The version the vector store fully matches; -1 while (or after a killed) write."""
        return int(self.settings().get("dense_version", -1))

    def existing_ids(self, ids: list[str]) -> set[str]:
        return set(self.get(ids))

    def get(self, ids: list[str]) -> dict[str, dict]:
        """Passages by id (missing ids are absent from the result)."""
        with self._db() as db:
            return storage.rows(db, ids)

    def snapshot(self, ids: list[str]) -> tuple[int, dict[str, dict]]:
        """The table's version and the passages by id, read in one transaction."""
        with self._db() as db:
            version = int((db.execute("SELECT value FROM settings WHERE key = 'version'").fetchone() or [0])[0])
            return version, storage.rows(db, ids)

    def all_passages(self) -> Iterable[tuple[str, str, str]]:
        with self._db() as db:
            yield from db.execute("SELECT id, title, text FROM passages ORDER BY seq")

    def documents(self, ids: list[str]) -> dict[str, tuple[str, str]]:
        """{document id: (fingerprint, origin)} for the ids the index holds."""
        found: dict[str, tuple[str, str]] = {}
        with self._db() as db:
            for chunk in storage.chunks(ids):
                marks = ",".join("?" * len(chunk))
                for doc_id, fingerprint, origin in db.execute(
                        f"SELECT id, fingerprint, origin FROM documents WHERE id IN ({marks})", chunk):
                    found[doc_id] = (fingerprint, origin)
        return found

    def documents_under(self, root: str) -> list[str]:
        """Ids of the documents read from files at or below `root` (an absolute path)."""
        with self._db() as db:
            rows = db.execute("SELECT id FROM documents WHERE origin = ? OR substr(origin, 1, ?) = ?",
                              (root, len(root) + 1, root.rstrip("/") + "/"))
            return [row[0] for row in rows]

    def chunk_rows(self, doc_ids: list[str]) -> dict[str, dict[str, tuple]]:
        """{document id: {passage id: (title, text, source, metadata)}} of the documents."""
        found: dict[str, dict[str, tuple]] = {}
        with self._db() as db:
            for chunk in storage.chunks(doc_ids):
                marks = ",".join("?" * len(chunk))
                for doc_id, passage_id, *row in db.execute(
                        f"SELECT doc_id, id, title, text, source, metadata FROM passages WHERE doc_id IN ({marks})",
                        chunk):
                    found.setdefault(doc_id, {})[passage_id] = tuple(row)
        return found

    # ---- writing -------------------------------------------------------------------------
    @contextlib.contextmanager
    def writing(self, wait: bool = True) -> Iterator[bool]:
        """Hold the index's write lock (yields False when `wait` is off and another holds it).
        On exit the dense store is marked current and a stale BM25 file rebuilt."""
        with open(self.path / "write.lock", "a+") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
            except BlockingIOError:
                yield False
                return
            try:
                yield True
                if self._dense_changing:
                    self._set("dense_version", self.version())
                    self._dense_changing = False
                if not self.sparse_is_current():
                    self.rebuild_sparse()
            finally:
                self._dense_changing = False
                fcntl.flock(handle, fcntl.LOCK_UN)

    def _set(self, key: str, value) -> None:
        with self._db(write=True) as db:
            db.execute("INSERT OR REPLACE INTO settings VALUES (?, ?)", (key, str(value)))

    def _mark_dense_changing(self) -> None:
        if not self._dense_changing:
            self._set("dense_version", -1)  # committed before the first vector is touched
            self._dense_changing = True

    def _embed(self, passages: list[dict]) -> None:
        """Write the vectors of the passages (each carries its passage's content hash)."""
        for start in range(0, len(passages), BATCH):
            part = passages[start:start + BATCH]
            self.collection.upsert(
                ids=[p["id"] for p in part],
                embeddings=get_embedder(self.embedder_name).embed([passage_text(p) for p in part]),
                documents=[p["text"] for p in part],
                metadatas=[{"title": p["title"], "source": p["source"], "document": _doc_id(p),
                            "hash": content_id(p["title"], p["text"]), **_where(p)} for p in part],
            )

    def replace(self, documents: list[tuple[str, str, str, list[dict]]]) -> dict[str, int]:
        """Make each (id, fingerprint, origin, passages) document hold exactly these passages,
        in one SQLite transaction; only passages whose text changed are embedded. Returns
        the ids of the documents `changed` (the rest held these passages already), passages
        `embedded` and `removed`."""
        plan = change_plan(documents, self.chunk_rows([doc_id for doc_id, *_ in documents]))
        if plan.same:
            self.touch([(doc_id, fingerprint, origin) for doc_id, fingerprint, origin, _ in plan.same])
        if not plan.changed:
            return {"changed": [], "embedded": 0, "removed": 0}
        doc_ids, new, to_embed = plan.doc_ids, plan.new, plan.to_embed
        legacy = self._legacy_copies(new, set(doc_ids))
        gone = plan.gone(also=legacy)
        if to_embed or gone:
            self._mark_dense_changing()
        self._embed(to_embed)
        now = time.time()
        with self._db(write=True) as db:
            for chunk in storage.chunks(doc_ids + legacy):
                db.execute(f"DELETE FROM passages WHERE doc_id IN ({','.join('?' * len(chunk))})", chunk)
            for chunk in storage.chunks(legacy):
                db.execute(f"DELETE FROM documents WHERE id IN ({','.join('?' * len(chunk))})", chunk)
            db.executemany("INSERT OR REPLACE INTO passages (id, title, text, source, metadata, doc_id) "
                           "VALUES (?, ?, ?, ?, ?, ?)", [(p["id"], *_row(p), _doc_id(p)) for p in new])
            db.executemany("INSERT OR REPLACE INTO documents VALUES (?, ?, ?, ?)",
                           [(doc_id, fingerprint, origin, now) for doc_id, fingerprint, origin, _ in plan.changed])
            storage.bump(db, now)
        for chunk in storage.chunks(gone):
            self.collection.delete(ids=chunk)
        return {"changed": doc_ids, "embedded": len(to_embed), "removed": len(gone)}

    def _legacy_copies(self, passages: list[dict], doc_ids: set[str]) -> list[str]:
        """Documents an index from before document ids stored under their passage's content
        hash (text files, id-less records) that these passages now hold: they are replaced."""
        hashes = sorted({content_id(p["title"], p["text"]) for p in passages} - doc_ids)
        found: list[str] = []
        with self._db() as db:
            for chunk in storage.chunks(hashes):
                found += [row[0] for row in db.execute(
                    f"SELECT id FROM documents WHERE fingerprint = '' AND origin = '' AND id IN ({','.join('?' * len(chunk))})",
                    chunk)]
        return found

    def touch(self, documents: list[tuple[str, str, str]]) -> None:
        """Record a new fingerprint or origin for documents whose passages stay as they are."""
        with self._db(write=True) as db:
            db.executemany("UPDATE documents SET fingerprint = ?, origin = ? WHERE id = ?",
                           [(fingerprint, origin, doc_id) for doc_id, fingerprint, origin in documents])

    def add(self, passages: list[dict]) -> None:
        """Store passages, each as its own document unless it names one (`document`)."""
        grouped: dict[str, list[dict]] = {}
        for passage in passages:
            grouped.setdefault(_doc_id(passage), []).append(passage)
        self.replace([(doc_id, "added", "", group) for doc_id, group in grouped.items()])

    def delete(self, doc_ids: list[str]) -> int:
        """Remove the documents and all their passages; returns how many passages went."""
        old = sorted(i for rows in self.chunk_rows(doc_ids).values() for i in rows)
        self._mark_dense_changing()
        with self._db(write=True) as db:
            for chunk in storage.chunks(doc_ids):
                marks = ",".join("?" * len(chunk))
                db.execute(f"DELETE FROM passages WHERE doc_id IN ({marks})", chunk)
                db.execute(f"DELETE FROM documents WHERE id IN ({marks})", chunk)
            storage.bump(db, time.time())
        for chunk in storage.chunks(old):
            self.collection.delete(ids=chunk)
        return len(old)

    # ---- consistency ---------------------------------------------------------------------
    def vector_hashes(self) -> dict[str, str | None]:
        """{id: content hash} of every stored vector (None for vectors written before hashes)."""
        found: dict[str, str | None] = {}
        offset = 0
        while True:
            page = self.collection.get(include=["metadatas"], limit=5000, offset=offset)
            for vector_id, meta in zip(page["ids"], page["metadatas"]):
                found[vector_id] = (meta or {}).get("hash")
            if len(page["ids"]) < 5000:
                return found
            offset += 5000

    def reconcile(self) -> int:
        """Align the vectors with SQLite after a killed write: vectors without a passage are
        deleted, passages without a matching vector re-embedded. Returns how many were fixed."""
        self._mark_dense_changing()
        vectors = self.vector_hashes()
        passages = {row[0]: content_id(row[1], row[2]) for row in self.all_passages()}
        orphans = sorted(set(vectors) - set(passages))
        for chunk in storage.chunks(orphans):
            self.collection.delete(ids=chunk)
        stale = sorted(i for i, h in passages.items() if i not in vectors or vectors[i] not in (None, h))
        with self._db() as db:
            owners = {i: d for chunk in storage.chunks(stale) for i, d in db.execute(
                f"SELECT id, doc_id FROM passages WHERE id IN ({','.join('?' * len(chunk))})", chunk)}
        stored = self.get(stale)
        self._embed([{**stored[i], "document": owners.get(i)} for i in stale if i in stored])
        return len(orphans) + len(stale)

    def repair(self) -> int:
        """Under the write lock: reconcile when the dense store is not known to be current."""
        return self.reconcile() if self.dense_version() != self.version() else 0

    def sparse_is_current(self) -> bool:
        if not os.path.exists(self.bm25_path):
            return False
        stored = BM25Index.stored_version(self.bm25_path)
        if stored is None:  # a file from before versions: its stamp names the content it was built from
            stamp = Path(self.bm25_path + ".generation")
            return stamp.exists() and stamp.read_text() == self.generation()
        return stored == self.version()

    def rebuild_sparse(self, save: bool = True) -> BM25Index:
        """Rebuild the BM25 matrix from one SQLite snapshot and swap it in atomically."""
        ids, documents, hashes = [], [], []
        with self._db() as db:
            version = int((db.execute("SELECT value FROM settings WHERE key = 'version'").fetchone() or [0])[0])
            for passage_id, title, text in db.execute("SELECT id, title, text FROM passages ORDER BY seq"):
                ids.append(passage_id)
                documents.append(tokenize(f"{title} {text}"))
                hashes.append(content_id(title, text))
        index = BM25Index.build(ids, documents)
        index.version, index.hashes = version, hashes
        if save:
            index.save(self.bm25_path)
        return index
