"""Update, delete and sync keep passages, vectors and BM25 in step, on both backends (the embedded
SQLite + Chroma + BM25 file, and PostgreSQL with pgvector and BM25 postings); a write killed
half-way is repaired by the next command (embedded) or never visible (PostgreSQL: one
transaction). Vectors come from a cheap deterministic test embedder (the stores are the real
ones) so the property test can run many write sequences."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from agent.errors import InputError
import agent.retrieval.pg_index as pg_index_module
from agent.retrieval.corpus import Document, ReadReport, chunk_document, read_documents
from agent.retrieval import storage
from agent.retrieval.updates import delete_documents, ingest, stats
from tests.index_backends import backend, embedder, held, retriever  # noqa: F401  (fixtures)


def doc(doc_id: str, text: str, title: str = "") -> Document:
    return Document(doc_id, title or doc_id, text, f"test:{doc_id}", f"/corpus/{doc_id}")


def assert_holds(store, expected: dict[str, str], chunking=(200, 40)) -> None:
    """Passages, vectors and BM25 hold exactly the passages of `expected` {document id: text}."""
    passages = {p["id"]: p["text"] for doc_id, text in expected.items()
                for p in chunk_document(doc(doc_id, text), *chunking)}
    for name, found in held(store).items():
        assert found == passages, name
    assert stats(store)["check"]["consistent"]


LONG = " ".join(f"word{i}" for i in range(120))


def test_a_changed_document_replaces_all_its_chunks_and_unchanged_ones_cost_nothing(backend, embedder):
    store = backend.new()
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


def test_rechunking_replaces_and_never_duplicates(tmp_path, backend, embedder):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "guide.md").write_text("# Guide\n\n" + " ".join(f"word{i}" for i in range(50)))
    store = backend.new()
    ingest(store, read_documents([str(folder)], ReadReport()), chunking=(200, 40))
    assert [i for i, *_ in store.all_passages()] == ["guide.md"]  # the path relative to the root
    result = ingest(store, read_documents([str(folder)], ReadReport()), chunking=(40, 5))
    ids = [i for i, *_ in store.all_passages()]
    assert result["documents_updated"] == 1 and len(ids) >= 3 and all(i.startswith("guide.md#") for i in ids)
    assert sorted(held(store)["vectors"]) == sorted(ids) == sorted(held(store)["sparse"])
    back = ingest(store, read_documents([str(folder)], ReadReport()), chunking=(200, 40))
    assert back["removed"] == len(ids) and [i for i, *_ in store.all_passages()] == ["guide.md"]


def test_delete_removes_from_every_store_and_unknown_ids_are_an_error(backend, embedder):
    store = backend.new()
    ingest(store, [doc("a", LONG), doc("b", "beta"), doc("c", "gamma")], chunking=(40, 5))
    with pytest.raises(InputError, match=r"2 of 3 document ids are not in the index: 'x', 'y'"):
        delete_documents(store, ["a", "x", "y"])
    assert store.documents(["a"])  # nothing was deleted
    result = delete_documents(store, ["a", "x"], missing_ok=True)
    assert result["documents_deleted"] == 1 and result["missing"] == 1 and result["removed"] > 3
    assert_holds(store, {"b": "beta", "c": "gamma"})


def test_sync_deletes_what_the_root_no_longer_has_and_keeps_files_with_errors(tmp_path, backend, embedder):
    root, other = tmp_path / "docs", tmp_path / "other"
    (root / "sub").mkdir(parents=True)
    other.mkdir()
    (root / "a.md").write_text("alpha")
    (root / "sub" / "b.txt").write_text("beta")
    (root / "c.jsonl").write_text(json.dumps({"id": "c1", "text": "gamma"}) + "\n")
    (other / "d.txt").write_text("delta")
    store = backend.new()
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


def test_two_folders_files_of_one_name_are_two_documents_in_one_run_and_across_runs(tmp_path, backend, embedder):
    """`ingest docs/orjson docs/rich` reads two README.md: the second is named with its folder, in
    one run or the next, and never replaces the first; a re-ingest finds it unchanged."""
    folders = {name: tmp_path / "docs" / name for name in ("orjson", "rich", "typer")}
    for name, folder in folders.items():
        folder.mkdir(parents=True)
        (folder / "README.md").write_text(f"# {name}\n\nInstall {name} with pip.")
    store = backend.new()
    report = ReadReport()
    result = ingest(store, read_documents([str(folders["orjson"]), str(folders["rich"])], report))
    assert result["documents_added"] == 2 and report.renamed == ["rich/README.md"] and report.duplicates == 0
    result = ingest(store, read_documents([str(folders["typer"])], ReadReport()))
    assert (result["documents_added"], result["documents_updated"], result["renamed"]) == (1, 0, ["typer/README.md"])
    texts = {p["document"]: p["text"] for p in store.get(sorted(i for i, *_ in store.all_passages())).values()}
    assert sorted(texts) == ["README.md", "rich/README.md", "typer/README.md"]
    assert "orjson" in texts["README.md"] and "typer" in texts["typer/README.md"]
    result = ingest(store, read_documents([str(folders["typer"])], ReadReport()), sync=[str(folders["typer"])])
    assert (result["documents_unchanged"], result["documents_added"], result["documents_deleted"]) == (1, 0, 0)
    assert stats(store)["check"]["consistent"]


def test_a_moved_file_and_a_records_own_id_keep_their_names(tmp_path, backend, embedder):
    """A longer name is for another file that still exists: a file moved to another folder is the
    same document, and a JSONL record's id is its own, whichever file holds it."""
    old, new = tmp_path / "old", tmp_path / "new"
    old.mkdir()
    (old / "guide.md").write_text("# Guide\n\nalpha")
    (old / "a.jsonl").write_text(json.dumps({"id": "r1", "text": "one"}) + "\n")
    store = backend.new()
    ingest(store, read_documents([str(old)], ReadReport()))
    old.rename(new)
    (new / "guide.md").write_text("# Guide\n\nalpha, revised")
    result = ingest(store, read_documents([str(new)], ReadReport()))
    assert (result["documents_updated"], result["renamed"]) == (1, [])
    other = tmp_path / "other"
    other.mkdir()
    (other / "b.jsonl").write_text(json.dumps({"id": "r1", "text": "one, again"}) + "\n")
    report = ReadReport()
    result = ingest(store, read_documents([str(other)], report))
    assert (result["documents_updated"], result["renamed"], report.renamed) == (1, [], [])
    assert sorted(store.documents(["guide.md", "r1"])) == ["guide.md", "r1"]


class Killed(Exception):
    """Stands for SIGKILL: the write stops here and nothing after it runs."""


KILL_POINTS = {  # (backend, where): what is patched to raise there
    ("embedded", "mid-write"): (storage, "bump"),  # vectors written, inside the SQLite transaction: it rolls back
    ("embedded", "after the commit"): (None, "delete"),  # committed, the old vectors still there (Chroma delete)
    ("postgresql", "mid-write"): (pg_index_module, "_bump"),  # inside the one transaction: it rolls back
    ("postgresql", "after the commit"): (pg_index_module.PgIndexStore, "refresh"),  # committed, mean idf not refreshed
}


@pytest.mark.parametrize("where", ["mid-write", "after the commit"])
def test_a_write_killed_half_way_is_repaired_by_the_next_command(backend, embedder, monkeypatch, where):
    store = backend.new()
    ingest(store, [doc("a", LONG), doc("b", "beta text")], chunking=(40, 5))
    old = {i: text for i, _, text in store.all_passages()}
    new = [doc("a", "a different text for a"), doc("b", "beta text changed")]  # b keeps its passage id
    target, name = KILL_POINTS[(backend.name, where)]
    with monkeypatch.context() as patch, pytest.raises(Killed):
        patch.setattr(target or type(store.collection), name, lambda *args, **kwargs: (_ for _ in ()).throw(Killed()))
        ingest(store, new, chunking=(40, 5))
    store = backend.reopen(store)
    committed = {i: text for i, _, text in store.all_passages()}
    if backend.name == "embedded":  # vectors and BM25 are behind SQLite until something repairs them
        assert store.dense_version() == -1 and not stats(store)["check"]["consistent"]
    elif where == "mid-write":  # nothing of the killed transaction is visible: the previous state, whole
        assert committed == old and stats(store)["check"]["consistent"]
    else:  # the new state, whole; only the stored mean idf is behind (readers compute it themselves)
        assert committed != old and not stats(store)["check"]["sparse_current"]
    # a reader answers from the committed passages only (the embedded one repairs the stores first)
    for mode in ("dense", "sparse", "hybrid"):
        for passage in retriever(store).search("a different text for a beta changed word3", mode, 10):
            assert committed[passage["id"]] == passage["text"]
    if backend.name == "embedded":
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
def test_any_sequence_of_updates_deletes_and_rechunks_leaves_the_three_stores_equal(backend, embedder, operations):
    store = backend.new()
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


def test_cli_update_sync_delete_and_stats(tmp_path, backend, embedder, capsys):
    docs, index = tmp_path / "docs", backend.location(backend.new())
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\nalpha text")
    (docs / "b.txt").write_text("beta text")
    code, out, err = run_cli(capsys, "ingest", str(docs), *index, "--quiet")
    assert code == 0 and "documents: 2 added, 0 updated, 0 unchanged, 0 skipped" in out
    (docs / "a.md").write_text("# A\n\nalpha text, revised")
    (docs / "b.txt").unlink()
    code, out, err = run_cli(capsys, "ingest", "--sync", str(docs), *index, "--json", "--quiet")
    summary = json.loads(out)
    assert (summary["documents_updated"], summary["documents_deleted"], summary["embedded"]) == (1, 1, 1)
    assert {"added", "already_present", "repaired", "total", "skipped", "ignored_files", "index"} <= set(summary)
    code, out, err = run_cli(capsys, "delete", "a.md", "nope", "gone", *index)
    assert code == 1 and err.strip() == ("disambig: error: 2 of 3 document ids are not in the index: "
                                         "'nope', 'gone'")
    code, out, err = run_cli(capsys, "stats", *index, "--json")
    figures = json.loads(out)
    assert code == 0 and (figures["documents"], figures["chunks"], figures["encoder"]) == (1, 1, "minilm")
    assert figures["check"]["consistent"] and figures["last_update"] and figures["size_bytes"] > 0
    code, out, err = run_cli(capsys, "delete", "a.md", *index)
    assert code == 0 and out.startswith("deleted 1 documents (1 passages)")
    code, out, err = run_cli(capsys, "stats", *index)
    label = {"embedded": "SQLite = Chroma = BM25", "postgresql": "passages = pgvector = postings"}[backend.name]
    assert code == 0 and "documents    0" in out and label in out


def test_cli_searches_the_postgresql_index_and_refuses_two_indexes_at_once(tmp_path, backend, embedder, capsys):
    docs, index = tmp_path / "docs", backend.location(backend.new())
    docs.mkdir()
    (docs / "a.md").write_text("# Jaguar\n\nThe jaguar is a big cat of the Americas.")
    (docs / "b.md").write_text("# Engines\n\nA jet engine burns fuel.")
    (docs / "c.md").write_text("# Rivers\n\nA river runs to the sea.")
    assert run_cli(capsys, "ingest", str(docs), *index, "--quiet")[0] == 0
    code, out, err = run_cli(capsys, "search", "big cat jaguar", *index, "--mode", "sparse", "--json")
    assert code == 0 and [p["id"] for p in json.loads(out)] == ["a.md"]
    code, out, err = run_cli(capsys, "search", "x", "--index", str(tmp_path / "i"), "--database-url", "postgresql://h/d")
    assert code == 1 and "give one of them" in err


def test_cli_says_which_documents_it_named_with_their_folder(tmp_path, backend, embedder, capsys):
    index = backend.location(backend.new())
    for name in ("nyc", "c8"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "README.md").write_text(f"# {name}\n\nRun {name} --all to report every file.")
    code, out, err = run_cli(capsys, "ingest", str(tmp_path / "nyc"), str(tmp_path / "c8"), *index, "--quiet")
    assert code == 0 and "documents: 2 added" in out
    assert "named 1 documents with their folder, their path being another file's document: c8/README.md" in err
    code, out, err = run_cli(capsys, "ingest", str(tmp_path / "c8"), *index, "--json", "--quiet")
    summary = json.loads(out)
    assert (summary["renamed"], summary["documents_unchanged"], summary["documents_total"]) == (["c8/README.md"], 1, 2)
