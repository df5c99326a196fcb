"""Queries served while an ingest runs see each passage either not yet or completely, and the
ingest loses nothing."""

from __future__ import annotations

import json
import threading

import agent.retrieval.index
from agent.retrieval.bm25 import BM25Index
from agent.retrieval.corpus import ReadReport, read_passages
from agent.retrieval.index import IndexStore, ingest
from agent.retrieval.retriever import Retriever
from tests.conftest import DEMO_CORPUS

QUERIES = ["What is HP?", "jaguar car maker", "Mercury planet orbit", "Python programming language",
           "renewal policy insurance", "Java island coffee"]


def test_queries_during_an_ingest_see_old_or_new_passages_never_half_written(tmp_path, monkeypatch):
    rows = [json.loads(line) for line in DEMO_CORPUS.read_text().splitlines() if line.strip()]
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    half = len(rows) // 2
    first.write_text("\n".join(json.dumps(r) for r in rows[:half]) + "\n")
    second.write_text("\n".join(json.dumps(r) for r in rows[half:]) + "\n")
    source = {p["id"]: p for p in read_passages([str(first), str(second)], ReadReport())}

    store = IndexStore(str(tmp_path / "index"), create=True)
    ingest(store, read_passages([str(first)], ReadReport()))
    before = store.count()
    retriever = Retriever(store)
    monkeypatch.setattr(agent.retrieval.index, "BATCH", 8)  # many small commits: many moments to look at

    writer = threading.Thread(target=lambda: ingest(store, read_passages([str(second)], ReadReport())))
    seen, problems, rounds, during = set(), [], 0, 0
    writer.start()
    while writer.is_alive() or rounds < 3:
        during += writer.is_alive()
        for mode in ("dense", "sparse", "hybrid"):
            for ranking in retriever.search_batch(QUERIES, mode, 8):
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
    assert sorted(store.collection.get(include=[])["ids"]) == sorted(passage_ids)
    assert sorted(BM25Index.load(store.bm25_path).ids) == sorted(passage_ids)
