import json
import os
import signal
import subprocess
import sys
import time

import pytest

from agent.retrieval.corpus import ReadReport, read_passages
from agent.errors import IndexMissingError
from agent.retrieval.index import EF_SEARCH, IndexStore, ingest


def write_corpus(path, count):
    with open(path, "w") as handle:
        for i in range(count):
            topic = ["engines", "printers", "games", "planets"][i % 4]
            handle.write(json.dumps({"id": f"doc-{i}", "title": f"{topic} {i}",
                                     "text": f"Passage {i} about {topic}: fact number {i * 7} and detail {i % 13}."}) + "\n")


def id_sets(index_dir):
    store = IndexStore(index_dir)
    passage_ids = [row[0] for row in store.all_passages()]
    vector_ids = store.collection.get(include=[])["ids"]
    return store, passage_ids, vector_ids


def test_reingesting_the_same_input_adds_nothing(tmp_path):
    corpus = tmp_path / "docs.jsonl"
    write_corpus(corpus, 30)
    store = IndexStore(str(tmp_path / "index"), create=True)
    first = ingest(store, read_passages([str(corpus)], ReadReport()))
    second = ingest(store, read_passages([str(corpus)], ReadReport()))
    assert first["added"] == 30 and first["total"] == 30
    assert second["added"] == 0 and second["already_present"] == 30 and second["total"] == 30
    assert store.sparse_is_current()


def test_reconcile_repairs_what_a_killed_run_left(tmp_path):
    corpus = tmp_path / "docs.jsonl"
    write_corpus(corpus, 10)
    store = IndexStore(str(tmp_path / "index"), create=True)
    ingest(store, read_passages([str(corpus)], ReadReport()))
    # a vector without a passage (killed after the Chroma write) and a passage without a vector,
    # left by a write that was killed before it could mark the vectors current again
    store._set("dense_version", -1)
    store.collection.upsert(ids=["orphan"], embeddings=[[0.1] * 384], documents=["x"], metadatas=[{"title": "x"}])
    store.collection.delete(ids=["doc-3"])
    result = ingest(store, read_passages([str(corpus)], ReadReport()))
    assert result["repaired"] == 2
    _, passage_ids, vector_ids = id_sets(store.path)
    assert sorted(passage_ids) == sorted(vector_ids) and len(passage_ids) == 10


def test_opening_a_missing_index_says_to_ingest(tmp_path):
    with pytest.raises(IndexMissingError, match="disambig ingest"):
        IndexStore(str(tmp_path / "nowhere"))


def test_ingest_killed_with_sigkill_then_rerun_is_complete(tmp_path):
    corpus = tmp_path / "docs.jsonl"
    write_corpus(corpus, 700)
    index_dir = str(tmp_path / "index")
    command = [sys.executable, "-m", "agent.app.cli", "ingest", str(corpus), "--index", index_dir]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=os.environ.copy())
    deadline = time.time() + 120
    # kill once some passages are committed but the run is not finished
    while time.time() < deadline and process.poll() is None:
        sqlite = os.path.join(index_dir, "passages.sqlite")
        if os.path.exists(sqlite) and IndexStore(index_dir).count() >= 1:
            break
        time.sleep(0.2)
    process.send_signal(signal.SIGKILL)
    process.wait()
    partial = IndexStore(index_dir).count()
    assert partial < 700, "the run finished before it could be killed; enlarge the corpus"
    rerun = subprocess.run(command, capture_output=True, text=True, env=os.environ.copy())
    assert rerun.returncode == 0, rerun.stderr
    store, passage_ids, vector_ids = id_sets(index_dir)
    assert len(passage_ids) == 700 == len(set(passage_ids))
    assert sorted(vector_ids) == sorted(passage_ids)
    assert store.sparse_is_current()
    from agent.retrieval.bm25 import BM25Index

    assert sorted(BM25Index.load(store.bm25_path).ids) == sorted(passage_ids)


def test_the_vector_store_searches_a_wide_candidate_list_old_indexes_included(tmp_path):
    """At Chroma's default list (100) the wiki pool's top 20 differed between processes for one
    question: each process rebuilds the graph and a narrow search missed a true neighbour."""
    corpus = tmp_path / "c.jsonl"
    write_corpus(corpus, 12)
    store = IndexStore(str(tmp_path / "idx"), create=True)
    ingest(store, read_passages([str(corpus)], ReadReport()))
    assert store.collection.configuration_json["hnsw"]["ef_search"] >= EF_SEARCH
    store.collection.modify(configuration={"hnsw": {"ef_search": 100}})  # as an index made before
    assert IndexStore(str(tmp_path / "idx")).collection.configuration_json["hnsw"]["ef_search"] == EF_SEARCH
