"""Sentence vectors kept beside an index, so a new process does not embed them again.

Which unit of a product's manuals answers is read from every unit of its documents
(agent/assembly/manual_units.py), and each is embedded to be short-listed by meaning. Within one
process the vectors are remembered (`Retriever.sentence_memo`), but `disambig ask` starts a new
process each time: on the manuals benchmark a cold instant question spent about 10 of its 13 s
embedding the units of the documents it touched. So those vectors are also written to
`sentence-vectors.sqlite` in the index directory, keyed by the encoder and the text (a text's
vector never changes), and read back by the next process. A cache that cannot be opened or
written (a read-only index, a full disk) is left alone: the vectors are embedded as before.

A PostgreSQL index has no directory of its own, and its users (`disambig serve` workers, `disambig
ask --database-url`) start processes as often: there the vectors are kept in the index's own
database, in `disambig_sentence_vectors` (`PgVectorCache`), under the same keys.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from pathlib import Path

import numpy as np

from agent.retrieval.storage import chunks

FILE_NAME = "sentence-vectors.sqlite"


def cache_key(embedder: str, text: str) -> str:
    """A text's key: its vector depends on the encoder and the text alone."""
    return hashlib.sha1(f"{embedder}\0{text}".encode()).hexdigest()


class VectorCache:
    """The vectors of texts embedded by one encoder, on disk in one index directory."""

    def __init__(self, directory: Path, embedder: str):
        self.file = Path(directory) / FILE_NAME
        self.embedder = embedder
        self._local = threading.local()
        self.usable = True

    def key(self, text: str) -> str:
        return cache_key(self.embedder, text)

    def _db(self) -> sqlite3.Connection:
        connection = getattr(self._local, "db", None)
        if connection is None:
            connection = sqlite3.connect(self.file, timeout=10, isolation_level=None)
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, vector BLOB NOT NULL)")
            self._local.db = connection
        return connection

    def get(self, texts: list[str]) -> dict[str, np.ndarray]:
        """{text: its vector} for the texts the cache holds."""
        if not self.usable or not texts:
            return {}
        by_key = {self.key(text): text for text in texts}
        found: dict[str, np.ndarray] = {}
        try:
            db = self._db()
            for part in chunks(list(by_key)):
                rows = db.execute(f"SELECT key, vector FROM vectors WHERE key IN ({','.join('?' * len(part))})", part)
                found.update({by_key[key]: np.frombuffer(blob, dtype=np.float32) for key, blob in rows})
        except sqlite3.Error:
            self.usable = False
            return {}
        return found

    def put(self, vectors: dict[str, np.ndarray]) -> None:
        """Keep the vectors (a failure leaves the cache as it was and stops using it)."""
        if not self.usable or not vectors:
            return
        rows = [(self.key(text), np.asarray(vector, dtype=np.float32).tobytes()) for text, vector in vectors.items()]
        try:
            self._db().executemany("INSERT OR IGNORE INTO vectors VALUES (?, ?)", rows)
        except sqlite3.Error:
            self.usable = False


PG_TABLE = "disambig_sentence_vectors"


class PgVectorCache:
    """`VectorCache` in a PostgreSQL index's database: the table is made by the first write (an
    index made before it existed gets it then); a table that cannot be read or made (a read-only
    user, a server gone) leaves the cache unused, and the vectors are embedded as before."""

    def __init__(self, store, embedder: str):
        self.store = store
        self.embedder = embedder
        self.usable = True
        self._made = False

    def get(self, texts: list[str]) -> dict[str, np.ndarray]:
        """{text: its vector} for the texts the cache holds."""
        import psycopg

        if not self.usable or not texts:
            return {}
        by_key = {cache_key(self.embedder, text): text for text in texts}
        try:
            with self.store.connections.primary().transaction() as tx:
                rows = tx.connection.execute(f"SELECT key, vector FROM {PG_TABLE} WHERE key = ANY(%s)",
                                             (list(by_key),)).fetchall()
        except psycopg.errors.UndefinedTable:
            return {}  # nothing kept yet: the first write makes the table
        except psycopg.Error:
            self.usable = False
            return {}
        return {by_key[key]: np.frombuffer(bytes(blob), dtype=np.float32) for key, blob in rows}

    def put(self, vectors: dict[str, np.ndarray]) -> None:
        """Keep the vectors (a failure leaves the table as it was and stops using it)."""
        import psycopg

        if not self.usable or not vectors:
            return
        rows = [(cache_key(self.embedder, text), np.asarray(vector, dtype=np.float32).tobytes())
                for text, vector in vectors.items()]
        try:
            with self.store.connections.primary().transaction() as tx:
                cursor = tx.connection.cursor()
                if not self._made:
                    cursor.execute(f"CREATE TABLE IF NOT EXISTS {PG_TABLE} (key text PRIMARY KEY, vector bytea NOT NULL)")
                cursor.executemany(f"INSERT INTO {PG_TABLE} VALUES (%s, %s) ON CONFLICT (key) DO NOTHING", rows)
            self._made = True
        except psycopg.Error:
            self.usable = False
