"""Searching the PostgreSQL index: dense (pgvector HNSW) and sparse (BM25 in SQL, pg_bm25.py)
hits and their passages from one snapshot transaction, so the ids, texts and scores are of one
version; the vectors in Chroma's shape; and the consistency check behind `stats`.
"""

from __future__ import annotations

from datetime import datetime, timezone

from agent.documents.citation import located
from agent.errors import IndexMissingError
from agent.retrieval.corpus import content_id
from agent.retrieval.pg_bm25 import in_version, sparse_hits, statistics
from agent.retrieval.pg_connect import Vector, parse_vector

EF_SEARCH = 100  # HNSW candidate list per query (pgvector's default is 40); raised to the depth asked for


def dense_hits(cursor, vector, depth: int) -> list[tuple[str, None, float]]:
    cursor.execute(f"SET LOCAL hnsw.ef_search = {max(EF_SEARCH, int(depth))}")
    rows = cursor.execute("SELECT id, embedding <=> %(q)b FROM disambig_passages ORDER BY embedding <=> %(q)b LIMIT %(k)s",
                          {"q": Vector(vector), "k": depth}).fetchall()
    return [(passage_id, None, round(1.0 - float(distance), 6)) for passage_id, distance in rows]


def hits(store, queries: list[str], vectors, mode: str, depth: int):
    """What `Retriever._hits` needs, read in one snapshot transaction (on a read replica when
    the store has any, the primary falling back): (version, dense hits, sparse hits, rows)."""

    def dense_side(cursor) -> list:
        return [dense_hits(cursor, v, depth) for v in vectors]

    def work(cursor):
        stats = statistics(cursor)
        if stats["passages"] == 0:
            raise IndexMissingError(f"index {store.path} is empty: run `disambig ingest PATH...`")
        beside = store.connections.beside
        dense = None
        if mode == "hybrid":  # the dense half on a second connection (another core) while this one does BM25
            dense_later = in_version(beside, stats["version"], dense_side)
        elif mode == "dense":
            dense = dense_side(cursor)
        sparse = [sparse_hits(cursor, stats, q, depth, beside) for q in queries] if mode != "dense" else None
        if mode == "hybrid":
            dense = dense_later()
            if dense is None:
                dense = dense_side(cursor)
        wanted = sorted({i for found in (dense or []) + (sparse or []) for i, _, _ in found})
        rows = cursor.execute("SELECT id, title, text, source, metadata, doc_id FROM disambig_passages "
                              "WHERE id = ANY(%s)", (wanted,)).fetchall()
        return stats["version"], dense, sparse, passages_by_id(rows)

    return store.connections.read(work)


class PgVectors:
    """The vector side of the index in the shape the retrieval layer reads from Chroma
    (`get(ids=..., include=[...])`), answered from the passages table."""

    def __init__(self, store):
        self.store = store

    def get(self, ids: list[str] | None = None, include=("metadatas", "documents"), limit: int | None = None,
            offset: int = 0) -> dict:
        include = set(include or ())
        where, params = ("WHERE id = ANY(%s)", [list(ids)]) if ids is not None else ("", [])
        sql = f"SELECT id, text, hash, embedding::text FROM disambig_passages {where} ORDER BY seq"
        if limit is not None:
            sql += f" LIMIT {int(limit)} OFFSET {int(offset)}"
        rows = self.store.connections.read(lambda cursor: cursor.execute(sql, params).fetchall())
        found: dict = {"ids": [r[0] for r in rows]}
        if "documents" in include:
            found["documents"] = [r[1] for r in rows]
        if "metadatas" in include:
            found["metadatas"] = [{"hash": r[2]} for r in rows]
        if "embeddings" in include:
            found["embeddings"] = [parse_vector(r[3]) for r in rows]
        return found


def check(store) -> dict:
    """`stats` of a PostgreSQL index: sizes and whether passages, vectors, postings, document
    frequencies, the terms' score bounds and the corpus statistics agree, all read in one snapshot
    of the primary (one pass over the postings per term serves the frequencies and the bounds)."""

    def work(cursor) -> dict:
        settings = dict(cursor.execute("SELECT key, value FROM disambig_settings").fetchall())
        passages = {i: (content_id(t, x), h) for i, t, x, h in
                    cursor.execute("SELECT id, title, text, hash FROM disambig_passages")}
        figures = cursor.execute(
            "SELECT (SELECT count(*) FROM disambig_documents), (SELECT count(*) FROM disambig_passages WHERE embedding "
            "IS NOT NULL), (SELECT count(*) FROM disambig_passages p WHERE length <> COALESCE((SELECT sum(tf) FROM "
            "disambig_postings WHERE passage = p.id), 0)), (SELECT count(DISTINCT passage) FROM disambig_postings o "
            "WHERE NOT EXISTS (SELECT 1 FROM disambig_passages WHERE id = o.passage)), terms.df_off, terms.bounds_off, "
            "(SELECT COALESCE(sum(length), 0) FROM disambig_passages), "
            "(SELECT count(*) FROM disambig_postings o JOIN disambig_passages p ON p.id = o.passage "
            "WHERE o.length <> p.length OR o.seq <> p.seq), "
            "(SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c WHERE c.relname LIKE 'disambig\\_%%' "
            "AND c.relkind IN ('r', 'S')) FROM (SELECT count(*) FILTER (WHERE t.df IS DISTINCT FROM c.n) AS df_off, "
            "count(*) FILTER (WHERE t.df IS NOT NULL AND c.n IS NOT NULL AND (t.max_tf IS NULL OR t.max_tf < c.m "
            "OR t.min_ratio > c.r)) AS bounds_off "
            "FROM disambig_terms t FULL JOIN (SELECT term, count(*) AS n, max(tf) AS m, min(length::float8 / tf) AS r "
            "FROM disambig_postings GROUP BY term) c USING (term)) terms").fetchone()
        return {"settings": settings, "passages": passages, "figures": figures}

    got = store.connections.read(work, primary=True)
    settings, passages, (documents, vectors, postings_off, orphaned, df_off, bounds_off, length, copies_off, size) = (
        got["settings"], got["passages"], got["figures"])
    version = int(settings.get("version", 0))
    check = {
        "vectors_missing": len(passages) - vectors,
        "vectors_orphaned": 0,  # a vector is a column of its passage's row
        "vectors_outdated": sum(1 for computed, stored in passages.values() if computed != stored),
        "sparse_missing": postings_off,
        "sparse_orphaned": orphaned,
        "sparse_outdated": copies_off,  # postings whose copied length or order differs from their passage's
        "document_frequencies_wrong": df_off,
        "term_bounds_wrong": bounds_off,  # a term's stored max tf or min length / tf that a posting passes
        "corpus_statistics_wrong": int((int(settings.get("passages", 0)), int(settings.get("total_length", 0)))
                                       != (len(passages), int(length))),
        "sparse_current": settings.get("idf_mean_version", "") == str(version),
        "dense_current": True,
    }
    check["consistent"] = not any(v for k, v in check.items() if not k.endswith("current")) and check["sparse_current"]
    updated = float(settings.get("updated", 0) or 0)
    return {
        "index": store.path, "backend": "postgresql", "documents": documents, "chunks": len(passages),
        "vectors": vectors, "sparse_passages": len(passages) - postings_off, "size_bytes": int(size or 0),
        "encoder": store.embedder_name, "chroma": "pgvector", "version": version,
        "sparse_version": int(settings["idf_mean_version"]) if settings.get("idf_mean_version") else None,
        "read_replicas": len(store.connections.read_urls),
        "last_update": datetime.fromtimestamp(updated, timezone.utc).isoformat(timespec="seconds") if updated else None,
        "check": check,
    }

def passages_by_id(rows) -> dict[str, dict]:
    """{id: passage} from (id, title, text, source, metadata, doc_id) rows, with where each
    passage read by structure stands (document, section, page)."""
    return {i: located({"id": i, "title": t, "text": x, "source": s}, m, d) for i, t, x, s, m, d in rows}
