"""The index in PostgreSQL: the same contract as `IndexStore` (agent/retrieval/index.py), so
`ingest`, `delete`, `--sync`, `stats` and every method run on it unchanged.

Passages, their vectors (pgvector), BM25 postings and document frequencies live in one database,
and every write is one transaction: a document's old chunks out, its new ones in, their postings
and the term counts, the corpus statistics and the version bump commit together or not at all.
A killed ingest therefore leaves the previous state or the new one, and there is nothing to
repair but the mean idf (rank_bm25's floor for common terms), which the writer recomputes when
it ends and a reader computes itself while it is behind, and the HNSW index, which a first load
into an empty index builds once at its end (searches meanwhile scan exactly). One writer at a
time (an advisory lock).
"""

from __future__ import annotations

import contextlib
import time
from collections import Counter
from typing import Iterable, Iterator

from agent.errors import IndexMissingError, InputError
from agent.retrieval import pg_schema
from agent.retrieval.bm25 import tokenize
from agent.retrieval.changes import change_plan, document_of as _doc_id, passage_row as _row
from agent.retrieval.corpus import content_id
from agent.retrieval.embeddings import get_embedder
from agent.retrieval.pg_bm25 import version_of
from agent.retrieval.pg_connect import Connections, Vector, redact

DIMENSIONS = {"minilm": 384}


class PgIndexStore:
    """One index database (and its read replicas). Safe to share between threads."""

    backend = "postgresql"

    def __init__(self, url: str, read_urls: list[str] | None = None, embedder_name: str = "minilm",
                 create: bool = False):
        self.connections = Connections(url, read_urls)
        self.path = redact(url)  # what messages and `stats` show
        self.chroma_url = ""
        self.embedder_name = embedder_name
        connection = self.connections.primary()
        if not pg_schema.exists(connection):
            if not create:
                raise IndexMissingError(f"no index at {self.path}: run `disambig ingest PATH... --database-url URL` first")
            dimension = DIMENSIONS.get(embedder_name) or get_embedder(embedder_name).dimension
            pg_schema.create(connection, dimension, embedder_name)
            self.connections.reset()  # the vector type exists now: reconnect to send it in binary
        elif not pg_schema.current(connection):  # made by an earlier version: add what it lacks, once
            self._upgrade(connection, embedder_name)
        stored = self.settings()
        if stored.get("embedder", embedder_name) != embedder_name:
            raise InputError(f"index {self.path} was built with embeddings {stored['embedder']!r}, not {embedder_name!r}")
        from agent.retrieval.pg_search import PgVectors

        self.collection = PgVectors(self)

    def _upgrade(self, connection, embedder_name: str) -> None:
        """Add what an index made by an earlier version lacks (the terms' bounds), or say who can."""
        import psycopg

        dimension = (int(self.settings().get("dimension", 0)) or DIMENSIONS.get(embedder_name)
                     or get_embedder(embedder_name).dimension)
        try:
            pg_schema.create(connection, dimension, embedder_name)
        except (psycopg.errors.InsufficientPrivilege, psycopg.errors.ReadOnlySqlTransaction) as error:
            raise InputError(f"index {self.path} was made by an earlier disambig and needs new columns, which this "
                             f"user may not add ({str(error).splitlines()[0]}): run any disambig command on it once "
                             "as a user who may alter its tables, e.g. `disambig stats --database-url URL`") from None

    @staticmethod
    def batch_size() -> int:
        from agent.retrieval import index

        return index.BATCH

    def _query(self, sql: str, params=(), primary: bool = True) -> list[tuple]:
        if primary:
            with self.connections.primary().transaction() as tx:
                return tx.connection.execute(sql, params).fetchall()
        return self.connections.read(lambda cursor: cursor.execute(sql, params).fetchall())

    # ---- reading -------------------------------------------------------------------------
    def count(self) -> int:
        return self._query("SELECT count(*) FROM disambig_passages")[0][0]

    def documents_count(self) -> int:
        return self._query("SELECT count(*) FROM disambig_documents")[0][0]

    def generation(self) -> str:
        count, last = self._query("SELECT count(*), COALESCE(max(seq), 0) FROM disambig_passages")[0]
        return f"{count}:{last}"

    def settings(self) -> dict[str, str]:
        return dict(self._query("SELECT key, value FROM disambig_settings"))

    def version(self) -> int:
        return int(self.settings().get("version", 0))

    def dense_version(self) -> int:
        return self.version()  # vectors commit with their passages: never behind

    def existing_ids(self, ids: list[str]) -> set[str]:
        return set(self.get(ids))

    def get(self, ids: list[str]) -> dict[str, dict]:
        return self.snapshot(ids)[1]

    def snapshot(self, ids: list[str]) -> tuple[int, dict[str, dict]]:
        with self.connections.primary().transaction() as tx:
            return read_rows(tx.connection, ids)

    def all_passages(self) -> Iterable[tuple[str, str, str]]:
        yield from self._query("SELECT id, title, text FROM disambig_passages ORDER BY seq")

    def documents(self, ids: list[str]) -> dict[str, tuple[str, str]]:
        rows = self._query("SELECT id, fingerprint, origin FROM disambig_documents WHERE id = ANY(%s)", (list(ids),))
        return {doc_id: (fingerprint, origin) for doc_id, fingerprint, origin in rows}

    def documents_under(self, root: str) -> list[str]:
        rows = self._query("SELECT id FROM disambig_documents WHERE origin = %s OR left(origin, %s) = %s",
                           (root, len(root) + 1, root.rstrip("/") + "/"))
        return [row[0] for row in rows]

    def chunk_rows(self, doc_ids: list[str]) -> dict[str, dict[str, tuple]]:
        found: dict[str, dict[str, tuple]] = {}
        for doc_id, passage_id, *row in self._query(
                "SELECT doc_id, id, title, text, source, metadata FROM disambig_passages WHERE doc_id = ANY(%s)",
                (list(doc_ids),)):
            found.setdefault(doc_id, {})[passage_id] = tuple(row)
        return found

    # ---- writing -------------------------------------------------------------------------
    @contextlib.contextmanager
    def writing(self, wait: bool = True) -> Iterator[bool]:
        """Hold the index's write lock (a session advisory lock: a killed writer's goes with its
        connection). On exit the mean idf is brought up to the last version."""
        connection = self.connections.primary()
        if wait:
            connection.execute("SELECT pg_advisory_lock(%s)", (pg_schema.LOCK_KEY,))
        elif not connection.execute("SELECT pg_try_advisory_lock(%s)", (pg_schema.LOCK_KEY,)).fetchone()[0]:
            yield False
            return
        try:
            if self.count() == 0:  # a first load: build the HNSW graph once at the end (pgvector's advice)
                connection.execute("DROP INDEX IF EXISTS disambig_passages_embedding")
            yield True
            self.refresh()
        finally:
            connection.execute("SELECT pg_advisory_unlock(%s)", (pg_schema.LOCK_KEY,))

    def repair(self) -> int:
        """What a killed write can leave behind is only a stale mean idf: refresh it. Returns 0:
        no passage ever needs fixing (every write is one transaction)."""
        self._refresh_idf()
        return 0

    def refresh(self) -> None:
        """At the end of a write: store the mean idf of the version it left."""
        self._refresh_idf()

    def _refresh_idf(self) -> None:
        connection = self.connections.primary()
        if not connection.execute("SELECT to_regclass('disambig_passages_embedding') IS NOT NULL OR NOT EXISTS "
                                  "(SELECT 1 FROM disambig_passages)").fetchone()[0]:
            connection.execute(pg_schema.HNSW_INDEX)  # after a first load (or one that was killed)
            # VACUUM marks the loaded pages all-visible, so searches read postings from the index
            # alone (index-only scans); autovacuum keeps up with later writes
            connection.execute("VACUUM (ANALYZE) disambig_passages, disambig_postings, disambig_terms")
        with self.connections.primary().transaction() as tx:
            settings = dict(tx.connection.execute("SELECT key, value FROM disambig_settings").fetchall())
            if settings.get("idf_mean_version") != settings.get("version", "0"):
                from agent.retrieval.pg_bm25 import mean_idf

                _set(tx.connection, idf_mean=repr(mean_idf(tx.connection, int(settings.get("passages", 0)))),
                     idf_mean_version=settings.get("version", "0"))

    def replace(self, documents: list[tuple[str, str, str, list[dict]]]) -> dict[str, int]:
        """Make each (id, fingerprint, origin, passages) document hold exactly these passages, in
        one transaction; only passages whose text changed are embedded (see IndexStore.replace)."""
        plan = change_plan(documents, self.chunk_rows([doc_id for doc_id, *_ in documents]))
        if plan.same:
            self.touch([(doc_id, fingerprint, origin) for doc_id, fingerprint, origin, _ in plan.same])
        if not plan.changed:
            return {"changed": [], "embedded": 0, "removed": 0}
        doc_ids, new, to_embed, gone = plan.doc_ids, plan.new, plan.to_embed, plan.gone()
        vectors = get_embedder(self.embedder_name).embed([passage_text(p) for p in to_embed]) if to_embed else []
        fresh = {p["id"] for p in to_embed}
        now = time.time()
        with self.connections.primary().transaction() as tx:
            db = tx.connection
            _drop_postings(db, sorted(set(gone) | fresh))
            db.execute("DELETE FROM disambig_passages WHERE id = ANY(%s)", (gone,))
            seqs = [row[0] for row in db.execute(f"SELECT nextval('{pg_schema.SEQUENCE}') FROM generate_series(1, %s)",
                                                 (len(new),))]
            cursor = db.cursor()
            kept = [(s, p) for s, p in zip(seqs, new) if p["id"] not in fresh]
            if kept:  # their new place in passage order, in the passages and their postings
                cursor.executemany("UPDATE disambig_passages SET seq = %s, doc_id = %s, title = %s, source = %s, "
                                   "metadata = %s WHERE id = %s",
                                   [(s, _doc_id(p), p["title"], p["source"], _row(p)[3], p["id"]) for s, p in kept])
                db.execute("UPDATE disambig_postings o SET seq = p.seq FROM disambig_passages p "
                           "WHERE p.id = o.passage AND o.passage = ANY(%s)", ([p["id"] for _, p in kept],))
            written = [(s, p) for s, p in zip(seqs, new) if p["id"] in fresh]
            tokens = {p["id"]: Counter(tokenize(f"{p['title']} {p['text']}")) for _, p in written}
            cursor.executemany(
                "INSERT INTO disambig_passages (id, seq, doc_id, title, text, source, metadata, hash, length, embedding) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %b) ON CONFLICT (id) DO UPDATE SET seq = excluded.seq, "
                "doc_id = excluded.doc_id, title = excluded.title, text = excluded.text, source = excluded.source, "
                "metadata = excluded.metadata, hash = excluded.hash, length = excluded.length, embedding = excluded.embedding",
                [(p["id"], s, _doc_id(p), *_row(p), content_id(p["title"], p["text"]), sum(tokens[p["id"]].values()),
                  Vector(vectors[row])) for row, (s, p) in enumerate(written)])
            _add_postings(db, tokens, {p["id"]: s for s, p in written})
            cursor.executemany("INSERT INTO disambig_documents VALUES (%s, %s, %s, %s) ON CONFLICT (id) DO UPDATE SET "
                               "fingerprint = excluded.fingerprint, origin = excluded.origin, updated = excluded.updated",
                               [(doc_id, fingerprint, origin, now) for doc_id, fingerprint, origin, _ in plan.changed])
            _bump(db, now)
        return {"changed": doc_ids, "embedded": len(to_embed), "removed": len(gone)}

    def touch(self, documents: list[tuple[str, str, str]]) -> None:
        with self.connections.primary().transaction() as tx:
            tx.connection.cursor().executemany(
                "UPDATE disambig_documents SET fingerprint = %s, origin = %s WHERE id = %s",
                [(fingerprint, origin, doc_id) for doc_id, fingerprint, origin in documents])

    def add(self, passages: list[dict]) -> None:
        grouped: dict[str, list[dict]] = {}
        for passage in passages:
            grouped.setdefault(_doc_id(passage), []).append(passage)
        self.replace([(doc_id, "added", "", group) for doc_id, group in grouped.items()])

    def delete(self, doc_ids: list[str]) -> int:
        """Remove the documents and all their passages in one transaction; returns how many passages went."""
        with self.connections.primary().transaction() as tx:
            db = tx.connection
            old = [row[0] for row in db.execute("SELECT id FROM disambig_passages WHERE doc_id = ANY(%s)", (list(doc_ids),))]
            _drop_postings(db, old)
            db.execute("DELETE FROM disambig_passages WHERE id = ANY(%s)", (old,))
            db.execute("DELETE FROM disambig_documents WHERE id = ANY(%s)", (list(doc_ids),))
            _bump(db, time.time())
        return len(old)

    def hits(self, queries: list[str], vectors, mode: str, depth: int):
        """Dense and sparse hits and their passages from one snapshot (the retriever's `_hits`)."""
        from agent.retrieval.pg_search import hits

        return hits(self, queries, vectors, mode, depth)

    def stats(self) -> dict:
        from agent.retrieval.pg_search import check

        return check(self)


def read_rows(db, ids: list[str]) -> tuple[int, dict[str, dict]]:
    """The version and the passages by id, read on `db` inside the caller's transaction."""
    version = version_of(db)
    rows = db.execute("SELECT id, title, text, source, metadata, doc_id FROM disambig_passages WHERE id = ANY(%s)",
                      (list(ids),))
    from agent.retrieval.pg_search import passages_by_id

    return version, passages_by_id(rows)



def passage_text(passage: dict) -> str:
    """What is embedded for a passage (the same text as the embedded index embeds)."""
    return f"{passage['title']}: {passage['text']}" if passage["title"] else passage["text"]


def _drop_postings(db, passage_ids: list[str]) -> None:
    """Take the passages' postings out and their terms' document frequencies down (before they go:
    the rows are found through the postings), and the corpus statistics with them."""
    if not passage_ids:
        return
    db.execute("UPDATE disambig_terms t SET df = t.df - c.n FROM (SELECT term, count(*) AS n FROM disambig_postings "
               "WHERE passage = ANY(%s) GROUP BY term) c WHERE t.term = c.term", (passage_ids,))
    db.execute("DELETE FROM disambig_terms WHERE df <= 0 AND term IN (SELECT term FROM disambig_postings "
               "WHERE passage = ANY(%s))", (passage_ids,))
    db.execute("DELETE FROM disambig_postings WHERE passage = ANY(%s)", (passage_ids,))
    count, length = db.execute("SELECT count(*), COALESCE(sum(length), 0) FROM disambig_passages WHERE id = ANY(%s)",
                               (passage_ids,)).fetchone()
    _shift(db, -count, -length)


def _add_postings(db, tokens: dict[str, Counter], seqs: dict[str, int]) -> None:
    if not tokens:
        return
    with db.cursor().copy("COPY disambig_postings (term, passage, tf, length, seq) FROM STDIN") as copy:
        for passage_id, counts in tokens.items():
            length = sum(counts.values())
            for term, tf in counts.items():
                copy.write_row((term, passage_id, tf, length, seqs[passage_id]))
    db.execute("INSERT INTO disambig_terms (term, df, max_tf, min_ratio) SELECT term, count(*), max(tf), "
               "min(length::float8 / tf) FROM disambig_postings WHERE passage = ANY(%s) GROUP BY term "
               "ON CONFLICT (term) DO UPDATE SET df = disambig_terms.df + excluded.df, "
               "max_tf = GREATEST(disambig_terms.max_tf, excluded.max_tf), "
               "min_ratio = LEAST(disambig_terms.min_ratio, excluded.min_ratio)", (list(tokens),))
    _shift(db, len(tokens), sum(sum(c.values()) for c in tokens.values()))


def _shift(db, passages: int, length: int) -> None:
    db.execute("INSERT INTO disambig_settings VALUES ('passages', %s), ('total_length', %s) ON CONFLICT (key) DO UPDATE "
               "SET value = (disambig_settings.value::bigint + excluded.value::bigint)::text",
               (str(passages), str(length)))


def _bump(db, now: float) -> None:
    db.execute("INSERT INTO disambig_settings VALUES ('version', '1') ON CONFLICT (key) DO UPDATE "
               "SET value = (disambig_settings.value::bigint + 1)::text")
    _set(db, updated=str(now))


def _set(db, **values: str) -> None:
    db.cursor().executemany("INSERT INTO disambig_settings VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                            list(values.items()))
