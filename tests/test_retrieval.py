import json

import numpy as np
import pytest

from agent.context import Context
from agent.retrieval.corpus import ReadReport, read_passages
from agent.errors import IndexMissingError, InputError
from agent.retrieval.index import IndexStore, ingest
from agent.retrieval.retriever import Retriever, get_retriever, reciprocal_rank_fusion

PASSAGES = [
    ("hp-company", "Hewlett-Packard", "Hewlett-Packard was founded in 1939 by Bill Hewlett and David Packard in Palo Alto."),
    ("hp-unit", "Horsepower", "One mechanical horsepower is about 745.7 watts, a unit of power for engines."),
    ("hp-games", "Hit points", "In role-playing video games, hit points measure how much damage a character survives."),
    ("cat", "Jaguar (animal)", "The jaguar is a large cat native to the Americas and the rainforest."),
    ("car", "Jaguar Cars", "Jaguar is a British maker of luxury cars founded as the Swallow Sidecar Company."),
]


@pytest.fixture(scope="module")
def retriever(tmp_path_factory):
    path = tmp_path_factory.mktemp("retrieval")
    corpus = path / "docs.jsonl"
    corpus.write_text("\n".join(json.dumps({"id": i, "title": t, "text": x}) for i, t, x in PASSAGES))
    store = IndexStore(str(path / "index"), create=True)
    ingest(store, read_passages([str(corpus)], ReadReport()))
    return Retriever(store)


def test_rrf_matches_the_formula():
    fused = dict(reciprocal_rank_fusion([["a", "b", "c"], ["b", "a"]]))
    assert fused["a"] == pytest.approx(1 / 61 + 1 / 62)
    assert fused["b"] == pytest.approx(1 / 62 + 1 / 61)
    assert fused["c"] == pytest.approx(1 / 63)
    assert list(dict(reciprocal_rank_fusion([["x"], ["y", "x"]]))) == ["x", "y"]


@pytest.mark.parametrize("mode", ["dense", "sparse", "hybrid"])
def test_each_mode_finds_the_relevant_passage(retriever, mode):
    hits = retriever.search("how many watts is one horsepower", mode, k=3)
    assert hits[0]["id"] == "hp-unit"
    assert set(hits[0]) >= {"id", "title", "text", "score"}
    assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)


def test_dense_scores_are_cosine_similarities(retriever):
    hit = retriever.search("jaguar big cat of the rainforest", "dense", k=1)[0]
    vectors = retriever.embed_queries(["jaguar big cat of the rainforest", f"{PASSAGES[3][1]}: {PASSAGES[3][2]}"])
    assert hit["id"] == "cat"
    assert hit["score"] == pytest.approx(float(np.dot(vectors[0], vectors[1])), abs=1e-4)


def test_hybrid_score_is_the_rrf_of_dense_and_sparse(retriever):
    query = "jaguar cars company"
    dense = [p["id"] for p in retriever.search(query, "dense", k=20)]
    sparse = [p["id"] for p in retriever.search(query, "sparse", k=20)]
    expected = reciprocal_rank_fusion([dense, sparse])[:3]
    hybrid = retriever.search(query, "hybrid", k=3)
    assert [(p["id"], p["score"]) for p in hybrid] == [(i, pytest.approx(s, abs=1e-6)) for i, s in expected]


def test_batch_search_equals_single_searches(retriever):
    queries = ["hit points in games", "Hewlett-Packard founders", "luxury cars"]
    batch = retriever.search_batch(queries, "hybrid", k=2)
    assert [[p["id"] for p in hits] for hits in batch] == [
        [p["id"] for p in retriever.search(q, "hybrid", k=2)] for q in queries
    ]


def test_bad_queries_and_settings(retriever):
    with pytest.raises(InputError, match="empty"):
        retriever.search("   ", "dense")
    with pytest.raises(InputError, match="unknown retrieval mode"):
        retriever.search("hp", "fuzzy")
    with pytest.raises(InputError):
        retriever.search("hp", "dense", k=0)


def test_missing_and_empty_indexes_say_to_ingest(tmp_path):
    with pytest.raises(IndexMissingError, match="ingest"):
        get_retriever(Context(index_dir=str(tmp_path / "absent")))
    IndexStore(str(tmp_path / "empty"), create=True)
    with pytest.raises(IndexMissingError, match="empty"):
        get_retriever(Context(index_dir=str(tmp_path / "empty"))).search("anything", "hybrid")


def test_a_wider_search_ranks_its_head_as_the_narrower_one(demo_index):
    from agent.retrieval.index import IndexStore

    wide = Retriever(IndexStore(demo_index))
    question = "What is a Jaguar?"
    narrow = [p["id"] for p in wide.search(question, "hybrid", k=10)]
    wider = [p["id"] for p in wide.search(question, "hybrid", k=15, depth=20)]
    assert len(wider) == 15 and wider[:10] == narrow  # the same fusion depth: the same head


def test_passage_vectors_are_read_from_the_store_once_per_version(retriever, monkeypatch):
    from agent.retrieval.retriever import passage_vectors

    found = retriever.search("What is HP?", "hybrid", 3)
    first = passage_vectors(retriever, found)
    assert first.shape == (3, 384)
    reads = []
    original = retriever.store.collection.get
    monkeypatch.setattr(retriever.store.collection, "get", lambda **kw: reads.append(kw["ids"]) or original(**kw))
    assert np.array_equal(passage_vectors(retriever, found), first) and reads == []  # remembered
    edited = [{**found[0], "text": found[0]["text"] + " Edited."}] + found[1:]
    again = passage_vectors(retriever, edited)
    assert reads == [[found[0]["id"]]] and np.array_equal(again[1:], first[1:])  # a new version is read afresh
    assert not np.allclose(again[0], first[0])  # the store's vector is of the old text: embedded anew


def test_bm25_ties_at_the_cut_go_to_the_earlier_passage():
    """Copies of a passage score the same; wherever k cuts them, the earlier ones are kept (as the
    PostgreSQL index does), not whichever a partial sort happened to pick."""
    import random

    from agent.retrieval.bm25 import BM25Index

    draw = random.Random(0)
    distinct = [[draw.choice("abcdefghij") for _ in range(draw.randint(2, 6))] for _ in range(30)]
    docs = [draw.choice(distinct) for _ in range(300)]  # ten copies of each, scattered
    index = BM25Index.build([f"p{i}" for i in range(len(docs))], docs)
    for query in ("a b", "c", "d e f"):
        everything = index.search(query, len(docs))  # a full sort: equal scores in passage order
        for k in (1, 3, 5, 10):  # numpy's argpartition alone kept a later copy for "a b" at k = 3
            assert index.search(query, k) == everything[:k], (query, k)
