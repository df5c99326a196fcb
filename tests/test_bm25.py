import random

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from agent.retrieval.bm25 import BM25Index, tokenize


def random_corpus(seed: int, documents: int = 400, vocabulary: int = 80):
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(vocabulary)]
    # a skewed vocabulary, so some terms are in most documents (negative idf -> epsilon floor)
    return [[rng.choice(words[: rng.randint(1, vocabulary)]) for _ in range(rng.randint(0, 40))] for _ in range(documents)]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_scores_equal_rank_bm25(seed):
    corpus = random_corpus(seed)
    oracle = BM25Okapi(corpus)
    index = BM25Index.build([str(i) for i in range(len(corpus))], corpus)
    rng = random.Random(seed + 100)
    for _ in range(25):
        query = [f"w{rng.randint(0, 90)}" for _ in range(rng.randint(1, 6))]  # includes unknown terms and repeats
        assert np.allclose(index.scores(query), oracle.get_scores(query), rtol=1e-10, atol=1e-12)


def test_negative_idf_terms_use_the_epsilon_floor():
    corpus = [["common", "a"], ["common", "b"], ["common", "c"], ["d"]]
    oracle = BM25Okapi(corpus)
    index = BM25Index.build(["1", "2", "3", "4"], corpus)
    assert np.allclose(index.scores(["common"]), oracle.get_scores(["common"]))
    assert index.scores(["common"])[0] > 0


def test_search_ranks_and_excludes_documents_without_query_terms():
    corpus = [tokenize("the horsepower unit"), tokenize("hit points in games"), tokenize("horsepower horsepower engine")]
    index = BM25Index.build(["unit", "games", "engine"], corpus)
    hits = index.search("horsepower", k=5)
    assert [doc_id for doc_id, _ in hits] == ["engine", "unit"]
    assert hits[0][1] > hits[1][1]
    assert index.search("nothing matches", k=5) == []


def test_save_and_load_round_trip(tmp_path):
    corpus = random_corpus(5, documents=50)
    index = BM25Index.build([f"d{i}" for i in range(50)], corpus)
    path = str(tmp_path / "bm25.npz")
    index.save(path)
    loaded = BM25Index.load(path)
    assert loaded.ids == index.ids
    assert np.array_equal(loaded.scores(["w1", "w2"]), index.scores(["w1", "w2"]))
    assert not list(tmp_path.glob("*.tmp"))


def test_tokenize_lowercases_and_splits_on_non_word_characters():
    assert tokenize("Hewlett-Packard's HP, 1939!") == ["hewlett", "packard", "s", "hp", "1939"]


def test_saved_arrays_are_read_one_thread_at_a_time(tmp_path):
    """numpy parses array headers with Python's AST builder, which CPython 3.11 does not keep
    apart per thread: two searches reading the index at once can fail with a SystemError."""
    import threading
    import time

    from agent.retrieval.arrays import open_npz

    path = tmp_path / "saved.npz"
    np.savez(path, version=np.int64(7))
    inside, release, reads = threading.Event(), threading.Event(), []

    def hold():
        with open_npz(path) as data:
            inside.set()
            release.wait(10)
            reads.append(("first", int(data["version"])))

    def follow():
        inside.wait(10)
        with open_npz(path) as data:
            reads.append(("second", int(data["version"])))

    threads = [threading.Thread(target=hold), threading.Thread(target=follow)]
    for thread in threads:
        thread.start()
    inside.wait(10)
    time.sleep(0.3)
    assert reads == []  # the second reader waits while the first holds the file
    release.set()
    for thread in threads:
        thread.join(10)
    assert reads == [("first", 7), ("second", 7)]
