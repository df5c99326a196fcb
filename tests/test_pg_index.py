"""The PostgreSQL index against real servers: an ingest killed with SIGKILL, a streaming read
replica (visibility lag, a killed replica), one server holding threads and the index, and the
one-line errors. The shared lifecycle and concurrency tests run on both backends elsewhere
(tests/test_index_lifecycle.py, tests/test_concurrent_ingest.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import Future

import psycopg
import pytest

from agent.errors import IndexMissingError, InputError
from agent.retrieval.corpus import Document
from agent.retrieval.pg_connect import Connections
from agent.retrieval.pg_index import PgIndexStore
from agent.retrieval.retriever import Retriever
from agent.retrieval.updates import delete_documents, ingest, stats
from tests.index_backends import embedder  # noqa: F401  (fixture)
from tests.test_index import write_corpus


def committed(url: str) -> int:
    try:
        with psycopg.connect(url) as connection:
            return connection.execute("SELECT count(*) FROM disambig_passages").fetchone()[0]
    except psycopg.errors.UndefinedTable:
        return 0


def test_ingest_killed_with_sigkill_leaves_whole_batches_and_a_rerun_completes(tmp_path, index_database_url):
    corpus = tmp_path / "docs.jsonl"
    write_corpus(corpus, 700)
    command = [sys.executable, "-m", "agent.app.cli", "ingest", str(corpus), "--database-url", index_database_url, "--quiet"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=os.environ.copy())
    deadline = time.time() + 300
    while time.time() < deadline and process.poll() is None and committed(index_database_url) < 1:
        time.sleep(0.2)
    time.sleep(0.5)  # into the next batch: its embedding or its transaction
    process.send_signal(signal.SIGKILL)
    process.wait()
    partial = committed(index_database_url)
    assert 0 < partial < 700, "the run finished before it could be killed; enlarge the corpus"
    check = stats(PgIndexStore(index_database_url))["check"]
    # whatever the kill interrupted, the committed state is whole: vectors, postings, term counts
    # and corpus statistics agree (only the stored mean idf may be behind: sparse_current)
    assert {name: value for name, value in check.items() if isinstance(value, int) and not isinstance(value, bool)
            and value} == {}
    rerun = subprocess.run(command, capture_output=True, text=True, env=os.environ.copy())
    assert rerun.returncode == 0, rerun.stderr
    store = PgIndexStore(index_database_url)
    ids = [row[0] for row in store.all_passages()]
    assert len(ids) == len(set(ids)) == 700 and stats(store)["check"]["consistent"]


def doc(doc_id: str, text: str) -> Document:
    return Document(doc_id, doc_id, text, f"test:{doc_id}", "")


def search_ids(retriever, query: str, mode: str = "sparse") -> list[str]:
    return [p["id"] for p in retriever.search(query, mode, 5)]


def test_a_streaming_replica_answers_sees_writes_within_a_bounded_lag_and_falls_back_when_killed(
        pgvector, index_database_url, embedder):
    primary = PgIndexStore(index_database_url, create=True)
    ingest(primary, [doc(f"d{i}", f"passage {i} about engines and rivers") for i in range(20)])
    with pgvector.standby() as standby:
        replica_url = standby.database_url(index_database_url.rsplit("/", 1)[1])
        store = PgIndexStore(index_database_url, [replica_url])
        reader = Retriever(store)
        replica_host, primary_host = replica_url.split("@")[1], index_database_url.split("@")[1]
        deadline = time.time() + 30
        while not search_ids(reader, "engines") and time.time() < deadline:  # the base backup is there at once
            time.sleep(0.1)
        before = store.connections.reads.get(replica_host, 0)
        for mode in ("dense", "sparse", "hybrid"):
            assert len(reader.search("engines rivers", mode, 5)) == 5
        assert store.connections.reads[replica_host] == before + 3  # the replica answered, not the primary
        assert store.connections.reads.get(primary_host, 0) == 0

        written = time.monotonic()
        ingest(primary, [doc("news", "zeppelin airship over the harbour")])
        while "news" not in search_ids(reader, "zeppelin airship") and time.monotonic() - written < 10:
            time.sleep(0.02)
        lag = time.monotonic() - written
        assert "news" in search_ids(reader, "zeppelin airship") and lag < 10  # bounded lag (seconds)
        print(f"replica visibility lag {lag * 1000:.0f} ms")

        failures, answered, stop = [], [], threading.Event()

        def keep_asking():
            while not stop.is_set():
                try:
                    answered.append(search_ids(reader, "zeppelin airship", "hybrid"))
                except Exception as error:  # any failed request fails the test
                    failures.append(repr(error))

        client = threading.Thread(target=keep_asking)
        client.start()
        time.sleep(0.5)
        standby.kill()
        served_before = store.connections.reads.get(primary_host, 0)
        time.sleep(2.0)
        stop.set()
        client.join()
        assert not failures and len(answered) > 5 and all(ids and ids[0] == "news" for ids in answered)
        assert store.connections.reads.get(primary_host, 0) > served_before  # the primary took over


def test_one_server_holds_the_threads_and_the_index(index_database_url, embedder, scripted, capsys, monkeypatch):
    """`chat --database-url URL` with no index directory keeps both in that database."""
    import io

    from agent.app.cli import main
    from tests.test_vanilla import SYNTHESIS

    ingest(PgIndexStore(index_database_url, create=True),
           [doc("hp-1", "HP is Hewlett-Packard, a company making printers."), doc("hp-2", "Rivers flow to the sea."),
            doc("hp-3", "Engines burn fuel.")])
    scripted.rules.append(("", SYNTHESIS))
    monkeypatch.delenv("DISAMBIG_INDEX", raising=False)
    monkeypatch.setattr("sys.stdin", io.StringIO("What is HP?\n/quit\n"))
    code = main(["chat", "--thread", "both", "--model", "scripted", "--method", "vanilla", "--no-clarify",
                 "--database-url", index_database_url])
    out = capsys.readouterr().out
    assert code == 0 and "assistant>" in out
    with psycopg.connect(index_database_url) as connection:
        assert connection.execute("SELECT count(DISTINCT thread_id) FROM checkpoints").fetchone()[0] == 1
        assert connection.execute("SELECT count(*) FROM disambig_passages").fetchone()[0] == 3


def test_missing_index_and_bad_urls_are_one_line_errors(index_database_url, capsys):
    from agent.app.cli import main

    with pytest.raises(IndexMissingError, match="disambig ingest"):
        PgIndexStore(index_database_url)
    assert main(["stats", "--database-url", "mysql://x@y/z"]) == 1
    assert "must start with postgresql://" in capsys.readouterr().err
    from bench.postgres import free_port

    assert main(["search", "x", "--database-url", f"postgresql://bob:pw-s3cret@127.0.0.1:{free_port()}/d"]) == 1
    err = capsys.readouterr().err
    assert "pw-s3cret" not in err and err.strip().startswith("disambig: error: cannot connect to PostgreSQL at 127.0.0.1:")


def helper_lost(connections, work):
    """`Connections.beside` when the helper's connection is lost."""
    future = Future()
    future.set_exception(psycopg.OperationalError("helper connection lost"))
    return future


def test_hybrid_reads_its_dense_half_beside_on_a_second_connection_and_never_mixes_two_versions(
        index_database_url, embedder, monkeypatch):

    store = PgIndexStore(index_database_url, create=True)
    ingest(store, [doc(f"d{i}", f"passage {i} about engines and rivers") for i in range(20)])
    reader = Retriever(store)
    vectors = reader.embed_queries(["zeppelin airship"])
    serial = store.hits(["zeppelin airship"], vectors, "dense", 5)[1]
    helpers, original = [], Connections.beside

    def spied(self, work):
        return original(self, lambda cursor: helpers.append(cursor.connection.info.backend_pid) or work(cursor))

    monkeypatch.setattr(Connections, "beside", spied)
    version, dense, sparse, _ = store.hits(["zeppelin airship"], vectors, "hybrid", 5)
    reader_pid = store.connections._connection(index_database_url, read_only=True).info.backend_pid
    assert dense == serial and helpers and helpers[0] != reader_pid  # the same hits, read by another backend

    def write_between(self, work):  # a write commits after the reader's snapshot, before the helper's
        ingest(PgIndexStore(index_database_url), [doc("news", "zeppelin airship over the harbour")])
        return original(self, work)

    monkeypatch.setattr(Connections, "beside", write_between)
    version_after, dense, _, rows = store.hits(["zeppelin airship"], vectors, "hybrid", 5)
    assert version_after == version and dense == serial and "news" not in rows  # all of the reader's version
    monkeypatch.setattr(Connections, "beside", original)
    assert store.hits(["zeppelin airship"], vectors, "hybrid", 5)[1][0][0][0] == "news"  # the write, once committed

    monkeypatch.setattr(Connections, "beside", helper_lost)
    assert [p["id"] for p in reader.search("zeppelin airship", "hybrid", 5)][0] == "news"  # the reader did it


def test_sparse_scores_equal_the_embedded_bm25_whether_max_score_proves_the_ranking_or_not(index_database_url, embedder,
                                                                                       monkeypatch):
    import random
    from collections import Counter

    import agent.retrieval.pg_bm25 as pg_bm25
    from agent.retrieval.bm25 import BM25Index, tokenize

    draw = random.Random(7)
    words = [f"w{i}" for i in range(400)]
    zipf = [1 / (rank + 1) for rank in range(len(words))]
    documents = [doc(f"d{i}", " ".join(draw.choices(words, zipf, k=draw.randint(5, 60)))) for i in range(400)]
    store = PgIndexStore(index_database_url, create=True)
    ingest(store, documents)
    rows = list(store.all_passages())  # in passage order: the embedded matrix's row order
    reference = BM25Index.build([i for i, *_ in rows], [tokenize(f"{title} {text}") for _, title, text in rows])
    queries = [" ".join(draw.choices(words, zipf, k=draw.randint(1, 7))) for _ in range(60)]
    reader = Retriever(store)
    outcomes = []
    original = pg_bm25._max_score
    monkeypatch.setattr(pg_bm25, "_max_score", lambda *a: outcomes.append(original(*a)) or outcomes[-1])
    proofs, proof = [], pg_bm25._proof
    monkeypatch.setattr(pg_bm25, "_proof", lambda rest, last, within="": proofs.append((rest, last, within))
                        or proof(rest, last, within))
    helpers = Connections.beside

    # as shipped; then proving all it can, to the top 10 and deeper (a low floor lets more passages in),
    # every proof in two halves of the passages (the upper on a helper connection, then with the helper failing)
    for budget, seeds, k, split_from, beside in ((pg_bm25.MAX_ESSENTIAL, pg_bm25.SEEDS, 10, pg_bm25.SPLIT_FROM, helpers),
                                                 (1.0, 1, 10, 0, helpers), (1.0, 1, 60, 0, helpers),
                                                 (1.0, 1, 60, 0, helper_lost)):
        monkeypatch.setattr(pg_bm25, "MAX_ESSENTIAL", budget)
        monkeypatch.setattr(pg_bm25, "SEEDS", seeds)
        monkeypatch.setattr(pg_bm25, "SPLIT_FROM", split_from)
        monkeypatch.setattr(Connections, "beside", beside)
        for query in queries:
            got = [(p["id"], p["score"]) for p in reader.search(query, "sparse", k)]
            assert_same_ranking(got, reference.search(query, len(rows)), query)
    proved, fell_back = sum(o is not None for o in outcomes), sum(o is None for o in outcomes)
    assert proved >= 10 and fell_back >= 1  # both ways of answering were taken, with the same rankings
    assert len(proofs) >= 10 and max(rest for rest, _, _ in proofs) >= 2  # the one-statement proof ran, adding terms in steps
    assert {last for _, last, _ in proofs} == {True, False}  # with the most common essential term summed, and only scanned
    halves = Counter(within for _, _, within in proofs)
    assert halves["p.passage < %(middle)s"] >= 10 and halves[""] >= 10  # in halves, and whole
    assert halves["p.passage >= %(middle)s"] == halves["p.passage < %(middle)s"]


def assert_same_ranking(got: list[tuple], everything: list[tuple], query: str) -> None:
    """The top len(got) of the embedded BM25 (`everything`: every match ranked): the same scores,
    each passage once, and the same passages at each score. Scores equal but for the order of a
    float sum (the embedded matrix orders them by that rounding, PostgreSQL rounds to 9 decimals
    and orders by passage) count as tied, within 1e-5; at the cut any of the tied ones may be kept."""
    want = [(i, round(s, 6)) for i, s in everything[:len(got)]]
    assert len(got) == len(want) and len({i for i, _ in got}) == len(got), query
    assert all(abs(a - b) <= 2e-6 for (_, a), (_, b) in zip(got, want)), query
    got_groups, want_groups = tie_groups(got), tie_groups(want)
    assert [set(g) for g in got_groups[:-1]] == [set(g) for g in want_groups[:-1]], query
    if got:
        cut = got[-1][1]
        assert set(got_groups[-1]) <= {i for i, s in everything if abs(s - cut) <= 1e-5}, query


def tie_groups(ranked: list[tuple]) -> list[list[str]]:
    groups: list[list[str]] = []
    for position, (passage, score) in enumerate(ranked):
        if position and abs(ranked[position - 1][1] - score) <= 1e-5:
            groups[-1].append(passage)
        else:
            groups.append([passage])
    return groups


def term_bounds(url: str) -> dict[str, tuple]:
    with psycopg.connect(url) as connection:
        return {term: (max_tf, min_ratio) for term, max_tf, min_ratio in
                connection.execute("SELECT term, max_tf, min_ratio FROM disambig_terms")}


def bounds_from_postings(url: str) -> dict[str, tuple]:
    with psycopg.connect(url) as connection:
        return {term: (max_tf, min_ratio) for term, max_tf, min_ratio in connection.execute(
            "SELECT term, max(tf), min(length::float8 / tf) FROM disambig_postings GROUP BY term")}


def test_term_bounds_follow_inserts_only_loosen_on_deletes_and_an_older_index_gets_them(index_database_url, embedder,
                                                                                         monkeypatch):
    """MaxScore's per-term bounds (largest tf, smallest length / tf) are exact after inserts, stay
    valid (never below a posting) after deletes, keep MaxScore's ranking equal to the embedded
    BM25, are added to an index made before they existed, and `stats` flags one that a posting passes."""
    import agent.retrieval.pg_bm25 as pg_bm25
    from agent.retrieval.bm25 import BM25Index, tokenize

    dense = doc("dense", "alpha alpha alpha alpha beta gamma")  # alpha's largest tf and smallest length / tf
    others = [doc(f"d{i}", " ".join(["alpha", "beta"] * (i % 3 + 1) + [f"filler{j}" for j in range(i % 7 + 3)]))
              for i in range(30)]
    store = PgIndexStore(index_database_url, create=True)
    ingest(store, [dense, *others])
    assert term_bounds(index_database_url) == bounds_from_postings(index_database_url)
    assert term_bounds(index_database_url)["alpha"] == (4, 7 / 4)  # "dense alpha alpha alpha alpha beta gamma"

    delete_documents(store, ["dense"])  # alpha's bound now belongs to a passage that is gone: looser, still a bound
    stored, actual = term_bounds(index_database_url), bounds_from_postings(index_database_url)
    assert stored["alpha"] == (4, 7 / 4) and actual["alpha"][0] < 4
    assert all(stored[t][0] >= m and stored[t][1] <= r for t, (m, r) in actual.items())
    assert stats(store)["check"]["consistent"]
    rows = list(store.all_passages())
    reference = BM25Index.build([i for i, *_ in rows], [tokenize(f"{title} {text}") for _, title, text in rows])
    proved, original = [], pg_bm25._max_score
    monkeypatch.setattr(pg_bm25, "_max_score", lambda *a: proved.append(original(*a)) or proved[-1])
    monkeypatch.setattr(pg_bm25, "MAX_ESSENTIAL", 1.0)
    for query in ("filler5 alpha beta", "filler8 filler2 alpha", "gamma alpha beta filler9"):
        got = [p["id"] for p in Retriever(store).search(query, "sparse", 3)]
        assert got == [i for i, _ in reference.search(query, len(rows))[:3]], query
    assert any(p is not None for p in proved)

    with psycopg.connect(index_database_url) as connection:  # an index from before the bounds
        connection.execute("ALTER TABLE disambig_terms DROP COLUMN max_tf, DROP COLUMN min_ratio")
        connection.execute("DO $$ BEGIN CREATE ROLE bounds_reader LOGIN; "  # may read the index, not alter it
                           "EXCEPTION WHEN duplicate_object THEN NULL; END $$")
        connection.execute("GRANT SELECT ON ALL TABLES IN SCHEMA public TO bounds_reader")
    reader_url = index_database_url.replace("postgres@", "bounds_reader@", 1)
    with pytest.raises(InputError, match="earlier disambig.*disambig stats --database-url"):
        PgIndexStore(reader_url)
    store = PgIndexStore(index_database_url)
    assert term_bounds(index_database_url) == bounds_from_postings(index_database_url)
    with psycopg.connect(index_database_url) as connection:
        connection.execute("UPDATE disambig_terms SET max_tf = 1 WHERE term = 'alpha'")
    check = stats(store)["check"]
    assert check["term_bounds_wrong"] == 1 and not check["consistent"]


def test_copies_of_a_passage_tie_and_the_earlier_one_ranks_first_either_way(index_database_url, embedder, monkeypatch):
    """Copies score the same but for the order the database sums their terms in; the wiki pool's
    copies once ranked the later one first when MaxScore answered and the earlier when the full
    query did."""
    import agent.retrieval.pg_bm25 as pg_bm25

    filler = [doc(f"f{i}", f"charlie day plays in the show number {i} with friends") for i in range(40)]
    copies = [doc(name, "charlie kelly is played by charlie day on it's always sunny in philadelphia")
              for name in ("copy-a", "copy-b")]
    store = PgIndexStore(index_database_url, create=True)
    ingest(store, [*filler, copies[0], *[doc(f"g{i}", f"another page {i}") for i in range(5)], copies[1]])
    reader = Retriever(store)
    query = "who plays charlie on it's always sunny"
    monkeypatch.setattr(pg_bm25, "SEEDS", 1)
    proved, original = [], pg_bm25._max_score
    monkeypatch.setattr(pg_bm25, "_max_score", lambda *a: proved.append(original(*a)) or proved[-1])
    found = [[p["id"] for p in reader.search(query, "sparse", 1)]]
    assert proved[-1] is not None  # MaxScore answered
    monkeypatch.setattr(pg_bm25, "_max_score", lambda *a: None)  # the full query
    found.append([p["id"] for p in reader.search(query, "sparse", 1)])
    assert [ids[0].split("#")[0] for ids in found] == ["copy-a", "copy-a"]


def test_which_index_the_flags_name(monkeypatch):
    """--database-url names the index on index commands; on chat/serve it holds the threads and the
    index unless a directory is named; an explicit --index beats DISAMBIG_INDEX_URL."""
    from argparse import Namespace

    from agent.app.index_flags import export_for_server, index_overrides
    from agent.context import Context, make_context
    from agent.errors import InputError

    url = "postgresql://u@db/x"
    monkeypatch.delenv("DISAMBIG_INDEX_READ_URL", raising=False)  # recorded first: restored last (unset)
    monkeypatch.delenv("DISAMBIG_INDEX", raising=False)
    monkeypatch.setenv("DISAMBIG_INDEX_URL", "postgresql://u@env/y")
    plain = Namespace(index=None, chroma_url=None, database_url=None, read_url=None)
    assert make_context(Context, index_overrides(plain)).index_url == "postgresql://u@env/y"
    named = Namespace(index="/tmp/i", chroma_url=None, database_url=None, read_url=["postgresql://u@r1/x,postgresql://u@r2/x"])
    context = make_context(Context, index_overrides(named))
    assert (context.index_url, context.index_dir, context.read_url) == ("", "/tmp/i", "postgresql://u@r1/x,postgresql://u@r2/x")
    with pytest.raises(InputError, match="give one of them"):
        index_overrides(Namespace(index="/tmp/i", chroma_url=None, database_url=url, read_url=None))
    chat = Namespace(index=None, chroma_url=None, database_url=url, read_url=None)
    assert index_overrides(chat, shared=True)["index_url"] == url  # one server for threads and index
    chat.index = "/tmp/i"
    assert index_overrides(chat, shared=True)["index_url"] == ""  # threads there, the index in the directory
    monkeypatch.setenv("DISAMBIG_INDEX", "/srv/index")
    monkeypatch.delenv("DISAMBIG_INDEX_URL")
    serve = Namespace(database_url=url, read_url=None)
    export_for_server(serve)
    assert "DISAMBIG_INDEX_URL" not in __import__("os").environ  # a deployment with an index directory keeps it
    monkeypatch.delenv("DISAMBIG_INDEX")
    export_for_server(Namespace(database_url=url, read_url=["postgresql://u@r1/x"]))
    assert __import__("os").environ["DISAMBIG_INDEX_URL"] == url
    assert __import__("os").environ["DISAMBIG_INDEX_READ_URL"] == "postgresql://u@r1/x"
