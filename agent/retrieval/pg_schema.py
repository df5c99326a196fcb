"""The PostgreSQL index's tables (docs/how-to/postgresql-index.md describes them).

- `disambig_passages`: one row per passage with its document, content hash, token count (BM25's
  document length) and its vector in a pgvector column with an HNSW index (cosine).
- `disambig_postings` (term, passage, tf): BM25's inverted index, with the passage's length and
  order copied in (a passage's postings are rewritten whenever its text changes), so a query
  term's postings are one index-only range scan; `disambig_terms` (term, df, max_tf, min_ratio)
  its document frequencies and, for MaxScore's bound on what the term can add to a passage, the
  largest tf and the smallest length / tf among its postings (raised and lowered on every insert,
  left as they are on a delete: a bound that only loosens). Sparse scores are computed in SQL from
  these (pg_bm25.py).
- `disambig_documents`: fingerprints and origins, what `ingest` compares and `--sync` deletes by.
- `disambig_settings`: version (bumped by every write transaction), passage count and total
  length (BM25's N and average length), the mean idf (rank_bm25's floor for common terms) and the
  version it was computed at, the embedder and its dimension.
"""

from __future__ import annotations

SEQUENCE = "disambig_passage_seq"
HNSW_INDEX = ("CREATE INDEX IF NOT EXISTS disambig_passages_embedding ON disambig_passages "
              "USING hnsw (embedding vector_cosine_ops)")


def ddl(dimension: int) -> list[str]:
    return [
        "CREATE EXTENSION IF NOT EXISTS vector",
        "CREATE TABLE IF NOT EXISTS disambig_settings (key text PRIMARY KEY, value text NOT NULL)",
        "CREATE TABLE IF NOT EXISTS disambig_documents (id text PRIMARY KEY, fingerprint text NOT NULL, "
        "origin text NOT NULL, updated double precision NOT NULL)",
        f"CREATE SEQUENCE IF NOT EXISTS {SEQUENCE}",
        "CREATE TABLE IF NOT EXISTS disambig_passages (id text PRIMARY KEY, seq bigint NOT NULL, "
        "doc_id text NOT NULL, title text NOT NULL, text text NOT NULL, source text NOT NULL, "
        f"metadata text NOT NULL, hash text NOT NULL, length integer NOT NULL, embedding vector({dimension}) NOT NULL)",
        "CREATE INDEX IF NOT EXISTS disambig_passages_doc ON disambig_passages (doc_id)",
        HNSW_INDEX,
        "CREATE TABLE IF NOT EXISTS disambig_postings (term text NOT NULL, passage text NOT NULL "
        "REFERENCES disambig_passages (id) ON DELETE CASCADE, tf integer NOT NULL, length integer NOT NULL, "
        "seq bigint NOT NULL, PRIMARY KEY (term, passage) INCLUDE (tf, length, seq))",
        "CREATE INDEX IF NOT EXISTS disambig_postings_passage ON disambig_postings (passage)",
        "CREATE TABLE IF NOT EXISTS disambig_terms (term text PRIMARY KEY, df integer NOT NULL, max_tf integer, "
        "min_ratio double precision)",
        # an index made before the bounds existed gets them once, from its postings
        "ALTER TABLE disambig_terms ADD COLUMN IF NOT EXISTS max_tf integer, "
        "ADD COLUMN IF NOT EXISTS min_ratio double precision",
        "UPDATE disambig_terms t SET max_tf = b.max_tf, min_ratio = b.min_ratio FROM (SELECT term, max(tf) AS max_tf, "
        "min(length::float8 / tf) AS min_ratio FROM disambig_postings WHERE term IN (SELECT term FROM disambig_terms "
        "WHERE max_tf IS NULL) GROUP BY term) b WHERE t.term = b.term",
    ]


TABLES = ("disambig_passages", "disambig_postings", "disambig_terms", "disambig_documents", "disambig_settings")
LOCK_KEY = 0x6469_7361_6d62  # pg_advisory_lock key of the index's single writer ("disamb")


def create(connection, dimension: int, embedder_name: str) -> dict[str, str]:
    """Create what is missing (under the writer's lock, so two first ingests do not race) and
    return the settings; an index built with another embedder is refused by the caller."""
    with connection.transaction():
        connection.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
        for statement in ddl(dimension):
            connection.execute(statement)
        connection.execute("INSERT INTO disambig_settings VALUES ('embedder', %s), ('dimension', %s) "
                           "ON CONFLICT (key) DO NOTHING", (embedder_name, str(dimension)))
        return dict(connection.execute("SELECT key, value FROM disambig_settings").fetchall())


def exists(connection) -> bool:
    return connection.execute("SELECT to_regclass('disambig_passages') IS NOT NULL").fetchone()[0]


def current(connection) -> bool:
    """Whether the tables have every column this version reads (else `create` adds what is missing)."""
    return connection.execute("SELECT EXISTS (SELECT 1 FROM information_schema.columns WHERE table_schema = "
                              "current_schema() AND table_name = 'disambig_terms' AND column_name = 'min_ratio')"
                              ).fetchone()[0]
