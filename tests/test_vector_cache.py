"""agent/retrieval/vector_cache.py: the answer units' vectors kept beside an index (or in a
PostgreSQL index's database), so a new process (each `disambig ask`, a server worker) reads them
instead of embedding every unit of a product's manuals."""

from __future__ import annotations

import numpy as np

from agent.assembly.manual_units import embed_document_units, shortlist
from agent.assembly.units import unit_prose
from agent.context import Context
from agent.retrieval.index import IndexStore
from agent.retrieval.pool import document_pool
from agent.retrieval.retriever import Retriever, get_retriever, sentence_vectors
from agent.retrieval.vector_cache import PG_TABLE, PgVectorCache, VectorCache
from tests.document_files import index_of

MANUAL = ("# Squashly Reference\n\nSquashly is a small compressor for the command line.\n\n## Options\n\n"
          "- `-k`, `--keep`: Keep the input files after compressing them.\n"
          "- `-v`, `--verbose`: Print the name and ratio of each file.\n"
          "- `-1` to `-9`: Set the compression level, from fastest to smallest.\n")


class Counting:
    """A retriever's encoder that counts the texts it embeds."""

    def __init__(self, retriever: Retriever):
        self.embedded: list[str] = []
        self.inner = retriever.embed_queries

    def __call__(self, texts):
        self.embedded += list(texts)
        return self.inner(texts)


def test_vectors_round_trip_and_an_unusable_cache_is_left_alone(tmp_path):
    cache = VectorCache(tmp_path, "minilm")
    vector = np.arange(4, dtype=np.float32)
    cache.put({"Keep the input files.": vector})
    assert np.array_equal(VectorCache(tmp_path, "minilm").get(["Keep the input files.", "other"])["Keep the input files."], vector)
    assert VectorCache(tmp_path, "another-encoder").get(["Keep the input files."]) == {}  # one encoder's vectors
    missing = VectorCache(tmp_path / "no" / "such" / "dir", "minilm")
    assert missing.get(["Keep the input files."]) == {} and not missing.usable
    missing.put({"x": vector})  # nothing raised


def test_a_new_process_reads_the_units_vectors_an_ingest_embedded(tmp_path):
    index = index_of({"squashly/README.md": MANUAL}, tmp_path / "docs", tmp_path / "index")
    context = Context(index_dir=index)
    assert embed_document_units(context, ["squashly/README.md"]) >= 3
    fresh = Retriever(IndexStore(index))  # as the next `disambig ask` opens the index
    counting = fresh.embed_queries = Counting(fresh)
    question = "How do I keep the input files?"
    pool = document_pool(get_retriever(context), question, "hybrid", 10, 20, context.document_quota)
    units, _ = shortlist(question, pool, context)
    assert units
    vectors = sentence_vectors(fresh, [unit_prose(u.sentence) for u in units], keep=True)
    assert vectors.shape[0] == len(units) and counting.embedded == []  # read, not embedded
    sentence_vectors(fresh, [question])  # a question is embedded and not kept
    assert counting.embedded == [question] and fresh.vector_cache.get([question]) == {}


def test_a_postgresql_index_keeps_the_units_vectors_in_its_database(tmp_path, index_database_url):
    import psycopg

    from agent.retrieval.corpus import ReadReport, read_passages
    from agent.retrieval.pg_index import PgIndexStore
    from agent.retrieval.updates import ingest

    (tmp_path / "docs" / "squashly").mkdir(parents=True)
    (tmp_path / "docs" / "squashly" / "README.md").write_text(MANUAL)
    store = PgIndexStore(index_database_url, create=True)
    ingest(store, read_passages([str(tmp_path / "docs")], ReadReport()))
    first = Retriever(store)
    assert isinstance(first.vector_cache, PgVectorCache)
    assert first.vector_cache.get(["Keep the input files."]) == {}  # no table yet: nothing, and still usable
    units = ["Keep the input files after compressing them.", "Print the name and ratio of each file."]
    kept = sentence_vectors(first, units, keep=True)
    fresh = Retriever(PgIndexStore(index_database_url))  # as the next process opens the index
    counting = fresh.embed_queries = Counting(fresh)
    assert np.allclose(sentence_vectors(fresh, units, keep=True), kept) and counting.embedded == []  # read, not embedded
    with psycopg.connect(index_database_url) as connection:
        assert connection.execute(f"SELECT count(*) FROM {PG_TABLE}").fetchone()[0] == 2
        connection.execute("DO $$ BEGIN CREATE ROLE vectors_reader LOGIN; "  # may read the index, not write it
                           "EXCEPTION WHEN duplicate_object THEN NULL; END $$")
        connection.execute("GRANT SELECT ON ALL TABLES IN SCHEMA public TO vectors_reader")
    reading = Retriever(PgIndexStore(index_database_url.replace("postgres@", "vectors_reader@", 1)))
    counting = reading.embed_queries = Counting(reading)
    sentence_vectors(reading, [*units, "A unit no process embedded."], keep=True)
    # the kept vectors are read; the new one is embedded, and the cache it may not write to is left alone
    assert counting.embedded == ["A unit no process embedded."] and not reading.vector_cache.usable
