"""Queries served while an ingest runs see each passage either not yet or completely, and the
ingest loses nothing: on the embedded index and on PostgreSQL (the `backend` fixture)."""

from __future__ import annotations

import json
import threading

import agent.retrieval.index
from agent.retrieval.corpus import ReadReport, read_documents, read_passages
from agent.retrieval.index import ingest
from tests.conftest import DEMO_CORPUS
from tests.index_backends import backend, held, retriever  # noqa: F401  (backend: the parametrized fixture)

QUERIES = ["What is HP?", "jaguar car maker", "Mercury planet orbit", "Python programming language",
           "renewal policy insurance", "Java island coffee"]


def test_queries_during_an_ingest_see_old_or_new_passages_never_half_written(tmp_path, backend, monkeypatch):
    rows = [json.loads(line) for line in DEMO_CORPUS.read_text().splitlines() if line.strip()]
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    half = len(rows) // 2
    first.write_text("\n".join(json.dumps(r) for r in rows[:half]) + "\n")
    second.write_text("\n".join(json.dumps(r) for r in rows[half:]) + "\n")
    source = {p["id"]: p for p in read_passages([str(first), str(second)], ReadReport())}

    store = backend.new()
    ingest(store, read_passages([str(first)], ReadReport()))
    before = store.count()
    reader = retriever(store)
    monkeypatch.setattr(agent.retrieval.index, "BATCH", 8)  # many small commits: many moments to look at

    writer = threading.Thread(target=lambda: ingest(store, read_passages([str(second)], ReadReport())))
    seen, problems, rounds, during = set(), [], 0, 0
    writer.start()
    while writer.is_alive() or rounds < 3:
        during += writer.is_alive()
        for mode in ("dense", "sparse", "hybrid"):
            for ranking in reader.search_batch(QUERIES, mode, 8):
                for passage in ranking:
                    original = source.get(passage["id"])
                    if original is None or passage["text"] != original["text"] or passage["title"] != original["title"]:
                        problems.append(passage["id"])
                    seen.add(passage["id"])
            committed = store.existing_ids(sorted(seen))
            problems += sorted(seen - committed)  # everything a query returned is in SQLite
        rounds += 1
    writer.join()

    assert during >= 1 and not problems
    assert any(passage_id in {r["id"] for r in rows[half:]} for passage_id in seen)  # new passages did show up
    passage_ids = [row[0] for row in store.all_passages()]
    assert len(passage_ids) == len(set(passage_ids)) == len(source) > before
    assert sorted(held(store)["vectors"]) == sorted(passage_ids) == sorted(held(store)["sparse"])


def test_queries_during_an_update_each_answer_from_one_committed_version(tmp_path, backend, monkeypatch):
    """Every document's text changes (and some documents go) while queries run in a loop:
    each ranking equals passages of exactly the committed table version it reports."""
    from agent.retrieval.updates import ingest as update

    rows = [json.loads(line) for line in DEMO_CORPUS.read_text().splitlines() if line.strip()]
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    store = backend.new()
    update(store, read_documents([str(corpus)], ReadReport()))
    revised = [{**r, "text": r["text"] + " Revised edition."} for r in rows[: len(rows) - 10]]
    corpus.write_text("\n".join(json.dumps(r) for r in revised) + "\n")
    snapshots = {store.version(): {i: (t, x) for i, t, x in store.all_passages()}}

    def recording(write):  # the writer records each version it commits
        def run(documents):
            result = write(documents)
            snapshots[store.version()] = {i: (t, x) for i, t, x in store.all_passages()}
            return result
        return run

    monkeypatch.setattr(store, "replace", recording(store.replace))
    monkeypatch.setattr(store, "delete", recording(store.delete))
    monkeypatch.setattr(agent.retrieval.index, "BATCH", 8)
    reader = retriever(store)
    report = ReadReport()
    writer = threading.Thread(target=lambda: update(store, read_documents([str(corpus)], report), sync=[str(corpus)]))
    seen, rounds, during = [], 0, 0
    writer.start()
    while writer.is_alive() or rounds < 2:
        during += writer.is_alive()
        for mode in ("dense", "sparse", "hybrid"):
            seen += [(mode, *reader.search_with_version(QUERIES, mode, 8))]
        rounds += 1
    writer.join()

    assert during >= 1 and len({version for _, version, _ in seen}) >= 2  # versions did change under the readers
    for mode, version, rankings in seen:
        table = snapshots[version]
        for ranking in rankings:
            assert ranking, (mode, version)
            assert len({p["id"] for p in ranking}) == len(ranking)
            for passage in ranking:
                assert table[passage["id"]] == (passage["title"], passage["text"]), (mode, version, passage["id"])
    final = {i: (t, x) for i, t, x in store.all_passages()}
    assert final == {r["id"]: (r["title"], r["text"]) for r in revised}
    assert sorted(held(store)["vectors"]) == sorted(final) == sorted(held(store)["sparse"])
