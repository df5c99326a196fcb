"""The on-disk index: SQLite (passages, the source of truth), Chroma (vectors), BM25 (sparse).

Crash safety: each batch is written to Chroma first and committed to SQLite second, so a
passage in SQLite always has its vector; a killed run is repaired by the next one
(`reconcile`), and the BM25 file is replaced atomically once SQLite has changed. Re-ingesting
the same input finds every id present and adds nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
from pathlib import Path
from typing import Callable, Iterable

from agent.retrieval.bm25 import BM25Index, tokenize
from agent.retrieval.embeddings import ChromaEmbeddings, get_embedder
from agent.errors import IndexMissingError, InputError

BATCH = 256  # passages embedded and committed together (bigger batches pad less)
_SCHEMA = """
CREATE TABLE IF NOT EXISTS passages (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT UNIQUE NOT NULL, title TEXT NOT NULL, text TEXT NOT NULL,
    source TEXT NOT NULL, metadata TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


_CHROMA_LOCK = threading.Lock()  # chromadb's shared client registry is not safe to populate from two threads


def _chroma_client(path: Path, url: str):
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    import chromadb
    from chromadb.config import Settings

    settings = Settings(anonymized_telemetry=False)
    if url:
        from urllib.parse import urlparse

        parsed = urlparse(url)
        return chromadb.HttpClient(
            host=parsed.hostname or "localhost", port=parsed.port or 8000, ssl=parsed.scheme == "https",
            settings=settings,
        )
    return chromadb.PersistentClient(path=str(path / "chroma"), settings=settings)


class IndexStore:
    """One index directory. Safe to share between threads; open one per process."""

    def __init__(self, index_dir: str, chroma_url: str = "", embedder_name: str = "minilm", create: bool = False):
        self.path = Path(index_dir).expanduser()
        if not create and not (self.path / "passages.sqlite").exists():
            raise IndexMissingError(f"no index at {self.path}: run `disambig ingest PATH...` first")
        self.path.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        with self._db() as db:
            for statement in filter(str.strip, _SCHEMA.split(";")):
                db.execute(statement)
            stored = dict(db.execute("SELECT key, value FROM settings").fetchall())
            if stored.get("embedder", embedder_name) != embedder_name:
                raise InputError(
                    f"index {self.path} was built with embeddings {stored['embedder']!r}, not {embedder_name!r}"
                )
            db.execute("INSERT OR IGNORE INTO settings VALUES ('embedder', ?)", (embedder_name,))
        self.embedder_name = embedder_name
        self.chroma_url = chroma_url
        self._collection = None
        self._lock = threading.Lock()

    def _db(self) -> sqlite3.Connection:
        connection = getattr(self._local, "db", None)
        if connection is None:
            connection = sqlite3.connect(self.path / "passages.sqlite", timeout=60, isolation_level=None)
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=FULL")
            self._local.db = connection
        return _Transaction(connection)

    @property
    def collection(self):
        with self._lock, _CHROMA_LOCK:
            if self._collection is None:
                name = "disambig-" + hashlib.sha1(str(self.path.resolve()).encode()).hexdigest()[:12]
                client = _chroma_client(self.path, self.chroma_url)
                self._collection = client.get_or_create_collection(
                    name=name if self.chroma_url else "passages",
                    embedding_function=ChromaEmbeddings(self.embedder_name),
                    configuration={"hnsw": {"space": "cosine"}},
                )
        return self._collection

    @property
    def bm25_path(self) -> str:
        return str(self.path / "bm25.npz")

    def count(self) -> int:
        with self._db() as db:
            return db.execute("SELECT COUNT(*) FROM passages").fetchone()[0]

    def generation(self) -> str:
        """Changes whenever passages are added: stamps the BM25 file it was built from."""
        with self._db() as db:
            count, last = db.execute("SELECT COUNT(*), COALESCE(MAX(seq), 0) FROM passages").fetchone()
        return f"{count}:{last}"

    def existing_ids(self, ids: list[str]) -> set[str]:
        found: set[str] = set()
        with self._db() as db:
            for start in range(0, len(ids), 500):
                chunk = ids[start:start + 500]
                marks = ",".join("?" * len(chunk))
                found.update(row[0] for row in db.execute(f"SELECT id FROM passages WHERE id IN ({marks})", chunk))
        return found

    def get(self, ids: list[str]) -> dict[str, dict]:
        """Passages by id (missing ids are absent from the result)."""
        result: dict[str, dict] = {}
        with self._db() as db:
            for start in range(0, len(ids), 500):
                chunk = ids[start:start + 500]
                marks = ",".join("?" * len(chunk))
                rows = db.execute(f"SELECT id, title, text, source FROM passages WHERE id IN ({marks})", chunk)
                for passage_id, title, text, source in rows:
                    result[passage_id] = {"id": passage_id, "title": title, "text": text, "source": source}
        return result

    def all_passages(self) -> Iterable[tuple[str, str, str]]:
        with self._db() as db:
            yield from db.execute("SELECT id, title, text FROM passages ORDER BY seq")

    def add(self, passages: list[dict]) -> None:
        """Embed and store one batch: Chroma first, then one SQLite transaction."""
        texts = [f"{p['title']}: {p['text']}" if p["title"] else p["text"] for p in passages]
        vectors = get_embedder(self.embedder_name).embed(texts)
        self.collection.upsert(
            ids=[p["id"] for p in passages],
            embeddings=vectors,
            documents=[p["text"] for p in passages],
            metadatas=[{"title": p["title"], "source": p["source"]} for p in passages],
        )
        rows = [(p["id"], p["title"], p["text"], p["source"], json.dumps(p.get("metadata") or {})) for p in passages]
        with self._db() as db:
            db.executemany(
                "INSERT OR IGNORE INTO passages (id, title, text, source, metadata) VALUES (?, ?, ?, ?, ?)", rows
            )

    def reconcile(self) -> int:
        """Repair what a killed run left behind: vectors without a passage are deleted, and
        passages without a vector re-embedded. Returns how many entries were fixed."""
        vector_ids = set(self.collection.get(include=[])["ids"])
        passage_ids = {row[0] for row in self.all_passages()}
        orphans = sorted(vector_ids - passage_ids)
        for start in range(0, len(orphans), 500):
            self.collection.delete(ids=orphans[start:start + 500])
        missing = sorted(passage_ids - vector_ids)
        stored = self.get(missing)
        for start in range(0, len(missing), BATCH):
            self.add([{**stored[i], "metadata": {}} for i in missing[start:start + BATCH]])
        return len(orphans) + len(missing)

    def sparse_is_current(self) -> bool:
        stamp = Path(self.bm25_path + ".generation")
        return Path(self.bm25_path).exists() and stamp.exists() and stamp.read_text() == self.generation()

    def rebuild_sparse(self) -> BM25Index:
        """Rebuild the BM25 matrix from SQLite and swap it in atomically."""
        generation = self.generation()
        ids, documents = [], []
        for passage_id, title, text in self.all_passages():
            ids.append(passage_id)
            documents.append(tokenize(f"{title} {text}"))
        index = BM25Index.build(ids, documents)
        index.save(self.bm25_path)
        stamp = Path(self.bm25_path + ".generation")
        tmp_stamp = stamp.with_suffix(f".{os.getpid()}.tmp")
        tmp_stamp.write_text(generation)
        os.replace(tmp_stamp, stamp)
        return index


class _Transaction:
    """`with store._db() as db:` runs the block in one SQLite transaction."""

    def __init__(self, connection: sqlite3.Connection):
        self.connection = connection

    def __enter__(self) -> sqlite3.Connection:
        self.connection.execute("BEGIN")
        return self.connection

    def __exit__(self, kind, value, traceback) -> None:
        self.connection.execute("ROLLBACK" if kind else "COMMIT")


def ingest(
    store: IndexStore, passages: Iterable[dict], progress: Callable[[int], None] | None = None
) -> dict[str, int]:
    """Add the passages the index does not have yet; returns counts of added and present."""
    repaired = store.reconcile()
    added = present = 0
    batch: list[dict] = []

    def flush() -> None:
        nonlocal added, present
        known = store.existing_ids([p["id"] for p in batch])
        new = [p for p in batch if p["id"] not in known]
        if new:
            store.add(new)
        added += len(new)
        present += len(batch) - len(new)
        if progress:
            progress(len(batch))
        batch.clear()

    for passage in passages:
        batch.append(passage)
        if len(batch) >= BATCH:
            flush()
    if batch:
        flush()
    if added or repaired or not store.sparse_is_current():
        store.rebuild_sparse()
    return {"added": added, "already_present": present, "repaired": repaired, "total": store.count()}
