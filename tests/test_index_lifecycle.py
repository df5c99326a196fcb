"""Update, delete and sync keep SQLite, Chroma and BM25 in step; a write killed half-way is
repaired by the next command. Vectors come from a cheap deterministic test embedder (the
stores are the real ones) so the property test can run many write sequences."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import agent.retrieval.index as index_module
from agent.errors import InputError
from agent.retrieval.bm25 import BM25Index
from agent.retrieval.corpus import Document, ReadReport, chunk_document, read_documents
from agent.retrieval import storage
from agent.retrieval.index import IndexStore
from agent.retrieval.retriever import Retriever
from agent.retrieval.updates import delete_documents, ingest, stats


class HashingEmbedder:
    """Unit vectors from word hashes: similar texts get similar vectors; counts its calls."""

    def __init__(self):
        self.embedded: list[str] = []

    def embed(self, texts):
        self.embedded += list(texts)
        vectors = np.zeros((len(texts), 384), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                vectors[row, int(hashlib.md5(word.encode()).hexdigest(), 16) % 384] += 1.0
        return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-9)


@pytest.fixture
def embedder(monkeypatch):
    fake = HashingEmbedder()
    monkeypatch.setattr(index_module, "get_embedder", lambda name: fake)
    monkeypatch.setattr("agent.retrieval.retriever.get_embedder", lambda name: fake)
    return fake


def doc(doc_id: str, text: str, title: str = "") -> Document:
    return Document(doc_id, title or doc_id, text, f"test:{doc_id}", f"/corpus/{doc_id}")


def stores(store: IndexStore) -> dict[str, dict[str, str]]:
    """{store: {passage id: text}} for SQLite, Chroma and BM25 (BM25 by id only)."""
    sqlite = {i: text for i, _, text in store.all_passages()}
    got = store.collection.get(include=["documents"])
    sparse = BM25Index.load(store.bm25_path)
    return {"sqlite": sqlite, "chroma": dict(zip(got["ids"], got["documents"])),
            "bm25": {i: sqlite.get(i, "?") for i in sparse.ids}}


def assert_holds(store: IndexStore, expected: dict[str, str], chunking=(200, 40)) -> None:
    """The three stores hold exactly the passages of `expected` {document id: text}."""
    passages = {p["id"]: p["text"] for doc_id, text in expected.items()
                for p in chunk_document(doc(doc_id, text), *chunking)}
    for name, held in stores(store).items():
        assert held == passages, name
    assert stats(store)["check"]["consistent"]


LONG = " ".join(f"word{i}" for i in range(120))


def test_a_changed_document_replaces_all_its_chunks_and_unchanged_ones_cost_nothing(tmp_path, embedder):
    store = IndexStore(str(tmp_path / "index"), create=True)
    first = ingest(store, [doc("long", LONG), doc("short", "alpha beta")], chunking=(40, 5))
    assert first["documents_added"] == 2 and first["embedded"] == first["total"] > 3
    embedder.embedded.clear()
    second = ingest(store, [doc("long", "now a short text"), doc("short", "alpha beta")], chunking=(40, 5))
    assert (second["documents_updated"], second["documents_unchanged"], second["documents_added"]) == (1, 1, 0)
    assert embedder.embedded == ["long: now a short text"]  # only the changed passage was embedded
    assert_holds(store, {"long": "now a short text", "short": "alpha beta"}, (40, 5))
    embedder.embedded.clear()
    third = ingest(store, [doc("long", "now a short text"), doc("short", "alpha beta")], chunking=(40, 5))
    assert third["documents_unchanged"] == 2 and third["embedded"] == 0 and embedder.embedded == []
    assert store.version() == second["version"] == third["version"]  # nothing written, nothing bumped


def test_rechunking_replaces_and_never_duplicates(tmp_path, embedder):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "guide.md").write_text("# Guide\n\n" + " ".join(f"word{i}" for i in range(50)))
    store = IndexStore(str(tmp_path / "index"), create=True)
    ingest(store, read_documents([str(folder)], ReadReport()), chunking=(200, 40))
    assert [i for i, *_ in store.all_passages()] == ["guide.md"]  # the path relative to the root
    result = ingest(store, read_documents([str(folder)], ReadReport()), chunking=(40, 5))
    ids = [i for i, *_ in store.all_passages()]
    assert result["documents_updated"] == 1 and len(ids) >= 3 and all(i.startswith("guide.md#") for i in ids)
    assert sorted(stores(store)["chroma"]) == sorted(ids) == sorted(stores(store)["bm25"])
    back = ingest(store, read_documents([str(folder)], ReadReport()), chunking=(200, 40))
    assert back["removed"] == len(ids) and [i for i, *_ in store.all_passages()] == ["guide.md"]


def test_delete_removes_from_every_store_and_unknown_ids_are_an_error(tmp_path, embedder):
    store = IndexStore(str(tmp_path / "index"), create=True)
    ingest(store, [doc("a", LONG), doc("b", "beta"), doc("c", "gamma")], chunking=(40, 5))
    with pytest.raises(InputError, match=r"2 of 3 document ids are not in the index: 'x', 'y'"):
        delete_documents(store, ["a", "x", "y"])
    assert store.documents(["a"])  # nothing was deleted
    result = delete_documents(store, ["a", "x"], missing_ok=True)
    assert result["documents_deleted"] == 1 and result["missing"] == 1 and result["removed"] > 3
    assert_holds(store, {"b": "beta", "c": "gamma"})


def test_sync_deletes_what_the_root_no_longer_has_and_keeps_files_with_errors(tmp_path, embedder):
    root, other = tmp_path / "docs", tmp_path / "other"
    (root / "sub").mkdir(parents=True)
    other.mkdir()
    (root / "a.md").write_text("alpha")
    (root / "sub" / "b.txt").write_text("beta")
    (root / "c.jsonl").write_text(json.dumps({"id": "c1", "text": "gamma"}) + "\n")
    (other / "d.txt").write_text("delta")
    store = IndexStore(str(tmp_path / "index"), create=True)
    ingest(store, read_documents([str(root), str(other)], ReadReport()))
    (root / "sub" / "b.txt").unlink()
    (root / "c.jsonl").write_text(json.dumps({"id": "c1", "text": "gamma"}) + "\n{broken\n")
    report = ReadReport()
    result = ingest(store, read_documents([str(root)], report), sync=[str(root)], keep=report.problem_files)
    assert result["documents_deleted"] == 1 and len(report.problems) == 1
    assert sorted(store.documents(["a.md", "sub/b.txt", "c1", "d.txt"])) == ["a.md", "c1", "d.txt"]
    (root / "c.jsonl").write_text("")
    result = ingest(store, read_documents([str(root)], ReadReport()), sync=[str(root)])
    assert result["documents_deleted"] == 1  # c1 is gone from a file read without problems
    assert sorted(i for i, *_ in store.all_passages()) == ["a.md", "d.txt"]
    assert stats(store)["check"]["consistent"]


class Killed(Exception):
    """Stands for SIGKILL: the write stops here and nothing after it runs."""


@pytest.mark.parametrize("where", ["after the vectors", "after the SQLite commit"])
def test_a_write_killed_half_way_is_repaired_by_the_next_command(tmp_path, embedder, monkeypatch, where):
    store = IndexStore(str(tmp_path / "index"), create=True)
    ingest(store, [doc("a", LONG), doc("b", "beta text")], chunking=(40, 5))
    new = [doc("a", "a different text for a"), doc("b", "beta text changed")]  # b keeps its passage id
    with monkeypatch.context() as patch, pytest.raises(Killed):
        if where == "after the vectors":  # inside the SQLite transaction: it rolls back
            patch.setattr(storage, "bump", lambda db, now: (_ for _ in ()).throw(Killed()))
        else:  # committed, but the old vectors are still there
            patch.setattr(type(store.collection), "delete", lambda self, ids: (_ for _ in ()).throw(Killed()))
        ingest(store, new, chunking=(40, 5))
    store = IndexStore(str(store.path))
    assert store.dense_version() == -1 and not stats(store)["check"]["consistent"]
    # a reader answers from SQLite's committed passages only, and repairs the stores first
    committed = {i: text for i, _, text in store.all_passages()}
    for mode in ("dense", "sparse", "hybrid"):
        for passage in Retriever(store).search("a different text for a beta changed word3", mode, 10):
            assert committed[passage["id"]] == passage["text"]
    assert stats(store)["check"]["consistent"]
    result = ingest(store, new, chunking=(40, 5))
    assert result["documents_unchanged"] + result["documents_updated"] == 2
    assert_holds(store, {"a": "a different text for a", "b": "beta text changed"}, (40, 5))


WORDS = st.sampled_from(["alpha", "beta", "gamma", "delta", "engine", "printer", "planet", "river"])
TEXTS = st.lists(WORDS, min_size=1, max_size=60).map(" ".join)
OPERATIONS = st.lists(st.one_of(
    st.tuples(st.just("put"), st.sampled_from("abcd"), TEXTS),
    st.tuples(st.just("delete"), st.sampled_from("abcd"), st.none()),
    st.tuples(st.just("rechunk"), st.sampled_from([(20, 4), (40, 8), (200, 40)]), st.none()),
), min_size=1, max_size=8)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(operations=OPERATIONS)
def test_any_sequence_of_updates_deletes_and_rechunks_leaves_the_three_stores_equal(tmp_path_factory, embedder,
                                                                                     operations):
    store = IndexStore(str(tmp_path_factory.mktemp("prop") / "index"), create=True)
    model: dict[str, str] = {}
    chunking = (200, 40)
    for kind, key, text in operations:
        if kind == "put":
            model[key] = text
        elif kind == "delete":
            if key in model:
                delete_documents(store, [key])
                model.pop(key)
            continue
        else:
            chunking = key
        ingest(store, [doc(k, v) for k, v in model.items()], chunking=chunking)
        assert_holds(store, model, chunking)


def run_cli(capsys, *argv):
    from agent.app.cli import main

    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_update_sync_delete_and_stats(tmp_path, embedder, capsys):
    docs, index = tmp_path / "docs", str(tmp_path / "index")
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nalpha text")
    (docs / "b.txt").write_text("beta text")
    code, out, err = run_cli(capsys, "ingest", str(docs), "--index", index, "--quiet")
    assert code == 0 and "documents: 2 added, 0 updated, 0 unchanged, 0 skipped" in out
    (docs / "a.md").write_text("# A\n\nalpha text, revised")
    (docs / "b.txt").unlink()
    code, out, err = run_cli(capsys, "ingest", "--sync", str(docs), "--index", index, "--json", "--quiet")
    summary = json.loads(out)
    assert (summary["documents_updated"], summary["documents_deleted"], summary["embedded"]) == (1, 1, 1)
    assert {"added", "already_present", "repaired", "total", "skipped", "ignored_files", "index"} <= set(summary)
    code, out, err = run_cli(capsys, "delete", "a.md", "nope", "gone", "--index", index)
    assert code == 1 and err.strip() == ("disambig: error: 2 of 3 document ids are not in the index: "
                                         "'nope', 'gone'")
    code, out, err = run_cli(capsys, "stats", "--index", index, "--json")
    figures = json.loads(out)
    assert code == 0 and (figures["documents"], figures["chunks"], figures["encoder"]) == (1, 1, "minilm")
    assert figures["check"]["consistent"] and figures["last_update"] and figures["size_bytes"] > 0
    code, out, err = run_cli(capsys, "delete", "a.md", "--index", index)
    assert code == 0 and out.startswith("deleted 1 documents (1 passages)")
    code, out, err = run_cli(capsys, "stats", "--index", index)
    assert code == 0 and "documents    0" in out and "SQLite = Chroma = BM25" in out
