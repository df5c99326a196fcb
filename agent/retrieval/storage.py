"""SQLite and Chroma plumbing of the index: the schema and its migration from indexes made
before documents had ids, transactions, the version bump, and the Chroma client."""

from __future__ import annotations

import os
import re
import sqlite3
import threading
from pathlib import Path
from typing import Iterator

from agent.documents.citation import located

SCHEMA = """
CREATE TABLE IF NOT EXISTS passages (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT UNIQUE NOT NULL, title TEXT NOT NULL, text TEXT NOT NULL,
    source TEXT NOT NULL, metadata TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents (
    id TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, origin TEXT NOT NULL, updated REAL NOT NULL)
"""
_CHUNK_SUFFIX = re.compile(r"#\d+$")


CHROMA_LOCK = threading.Lock()  # chromadb's shared client registry is not safe to populate from two threads


def chroma_client(path: Path, url: str):
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


def chunks(items: list, size: int = 500) -> Iterator[list]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


def rows(db: sqlite3.Connection, ids: list[str]) -> dict[str, dict]:
    """Passages by id, with where each stands when it was read by structure (document, section, page)."""
    result: dict[str, dict] = {}
    for chunk in chunks(ids):
        marks = ",".join("?" * len(chunk))
        for passage_id, title, text, source, metadata, doc_id in db.execute(
                f"SELECT id, title, text, source, metadata, doc_id FROM passages WHERE id IN ({marks})", chunk):
            result[passage_id] = located({"id": passage_id, "title": title, "text": text, "source": source},
                                         metadata, doc_id)
    return result


def bump(db: sqlite3.Connection, now: float) -> None:
    db.execute("INSERT OR REPLACE INTO settings VALUES ('version', "
               "COALESCE((SELECT CAST(value AS INTEGER) FROM settings WHERE key = 'version'), 0) + 1)")
    db.execute("INSERT OR REPLACE INTO settings VALUES ('updated', ?)", (str(now),))


def migrate(db: sqlite3.Connection) -> None:
    """Indexes from before documents existed: each passage joins the document its id names
    (`id#n` -> `id`), and the next write re-checks every vector once."""
    columns = {row[1] for row in db.execute("PRAGMA table_info(passages)")}
    if "doc_id" in columns:
        return
    db.execute("ALTER TABLE passages ADD COLUMN doc_id TEXT")
    rows = db.execute("SELECT id FROM passages").fetchall()
    db.executemany("UPDATE passages SET doc_id = ? WHERE id = ?", [(_CHUNK_SUFFIX.sub("", i), i) for i, in rows])
    db.execute("INSERT OR IGNORE INTO documents SELECT DISTINCT doc_id, '', '', 0 FROM passages")
    db.execute("INSERT OR REPLACE INTO settings VALUES ('dense_version', '-1')")
    db.execute("CREATE INDEX IF NOT EXISTS passages_doc ON passages(doc_id)")


class Transaction:
    """`with store._db() as db:` runs the block in one SQLite transaction.

    Writers begin IMMEDIATE: a deferred transaction that reads and then writes cannot wait for
    another process's writer (SQLite answers "database is locked" at once), an immediate one
    waits out the connection's busy timeout."""

    def __init__(self, connection: sqlite3.Connection, write: bool = False):
        self.connection = connection
        self.write = write

    def __enter__(self) -> sqlite3.Connection:
        self.connection.execute("BEGIN IMMEDIATE" if self.write else "BEGIN")
        return self.connection

    def __exit__(self, kind, value, traceback) -> None:
        self.connection.execute("ROLLBACK" if kind else "COMMIT")
