"""Documents read by structure through the index and out again, on both backends: document,
section and page come back with every retrieved passage and show in the CLI's sources, the JSON
answer and the agent tool; a changed PDF re-embeds only its changed passages; `--sync`, `delete`
and `stats` hold; bad files get one line each and ingest exits 3. Vectors come from the cheap
test embedder (tests/index_backends.py); the stores are the real ones."""

from __future__ import annotations

import json

from agent.app.api import to_result
from agent.app.cli import _print_answer, main
from agent.app.ingest_command import SKIPPED_EXIT
from agent.app.early_answer import ShownAnswer
from agent.app.tools import compact_result
from agent.retrieval.corpus import ReadReport, read_documents
from agent.retrieval.retriever import Retriever
from agent.retrieval.updates import delete_documents, ingest, stats
from tests.document_files import MARKDOWN, write_docx, write_pdf
from tests.index_backends import backend, embedder  # noqa: F401  (fixtures)

PAGES = [["Field Manual", "The pump moves water."],
         ["Installation", "Linux", "Install the controller with the package manager."],
         ["Maintenance", "Replace the seal every six months."]]
OUTLINE = [("Installation", 1, None), ("Linux", 1, "Installation"), ("Maintenance", 2, None)]


def folder(tmp_path, pages=PAGES):
    root = tmp_path / "docs"
    root.mkdir(exist_ok=True)
    write_pdf(root / "manual.pdf", pages, OUTLINE)
    (root / "guide.md").write_text(MARKDOWN)
    (root / "faq.jsonl").write_text(json.dumps({"id": "faq1", "title": "FAQ", "text": "The pump is blue."}) + "\n")
    return root


def read(root) -> list:
    return list(read_documents([str(root)], ReadReport()))


def test_locations_come_back_from_the_index(tmp_path, backend, embedder):
    store = backend.new()
    ingest(store, read(folder(tmp_path)))
    found = Retriever(store).search("replace the seal", "sparse", 10)
    seal = next(p for p in found if p["id"] == "manual.pdf#p3.0")
    assert (seal["document"], seal["page"], seal["section"]) == ("manual.pdf", 3, "Maintenance")
    code = next(p for p in Retriever(store).search("sudo apt install pump-controller", "sparse", 10)
                if p["id"].startswith("guide.md"))
    assert (code["document"], code["section"], code.get("page")) == ("guide.md", "Installation > Linux", None)
    faq = next(p for p in Retriever(store).search("pump blue", "sparse", 10) if p["id"] == "faq1")
    assert not {"document", "section", "page"} & set(faq)  # a JSONL record keeps the fields it had


def test_a_changed_pdf_reembeds_only_its_changed_page(tmp_path, backend, embedder):
    store = backend.new()
    root = folder(tmp_path)
    first = ingest(store, read(root))
    assert first["documents_added"] == 3
    embedder.embedded.clear()
    changed = [PAGES[0], ["Installation", "Linux", "Install the controller with apt."], PAGES[2]]
    write_pdf(root / "manual.pdf", changed, OUTLINE)
    second = ingest(store, read(root))
    assert (second["documents_updated"], second["documents_unchanged"]) == (1, 2)
    assert embedder.embedded == ["manual: Installation > Linux: Install the controller with apt."]
    assert stats(store)["check"]["consistent"]
    embedder.embedded.clear()
    assert ingest(store, read(root))["documents_unchanged"] == 3 and embedder.embedded == []


def test_sync_and_delete_treat_documents_like_records(tmp_path, backend, embedder):
    store = backend.new()
    root = folder(tmp_path)
    write_docx(root / "manual.docx")
    ingest(store, read(root))
    (root / "guide.md").unlink()
    result = ingest(store, read(root), sync=[str(root)])
    assert result["documents_deleted"] == 1
    assert sorted(store.documents(["guide.md", "manual.pdf", "manual.docx", "faq1"])) == ["faq1", "manual.docx",
                                                                                         "manual.pdf"]
    removed = delete_documents(store, ["manual.pdf"])
    assert removed["documents_deleted"] == 1 and removed["removed"] == 3
    assert stats(store)["check"]["consistent"]


def run(capsys, *argv):
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_cli_ingest_reports_bad_files_exits_3_and_search_shows_where(tmp_path, capsys, embedder):
    root = folder(tmp_path)
    write_docx(root / "manual.docx")
    write_pdf(root / "locked.pdf", [["Secret"]], password="pw")
    (root / "empty.md").write_text("")
    index = str(tmp_path / "index")
    code, out, err = run(capsys, "ingest", str(root), "--index", index, "--json")
    summary = json.loads(out)
    assert code == SKIPPED_EXIT == 3
    assert (summary["files"], summary["pages"], summary["skipped"], summary["documents_added"]) == (6, 3, 2, 4)
    assert f"skipped {root / 'locked.pdf'}: encrypted PDF: it needs a password" in err
    assert f"skipped {root / 'empty.md'}: empty file" in err
    assert "read 6 files in" in err and "(3 pages," in err and "passages embedded" in err
    code, out, _ = run(capsys, "search", "replace the seal every six months", "--index", index, "--json",
                       "--mode", "sparse", "--k", "1")
    assert code == 0 and json.loads(out)[0] | {"score": 0} == {
        "id": "manual.pdf#p3.0", "title": "manual: Maintenance", "text": "Replace the seal every six months.",
        "score": 0, "document": "manual.pdf", "section": "Maintenance", "page": 3}
    code, out, _ = run(capsys, "search", "replace the seal every six months", "--index", index, "--mode", "sparse",
                       "--k", "1")
    assert "manual.pdf#p3.0  manual.pdf, p. 3, Maintenance" in out
    (root / "locked.pdf").unlink()
    (root / "empty.md").unlink()
    code, _, _ = run(capsys, "ingest", str(root), "--index", index, "--quiet")
    assert code == 0


def test_answer_sources_json_and_tool_carry_the_location(capsys):
    state = {"answer": "Replace the seal every six months [1].", "interpretations": [], "route": ["retrieve"],
             "decision": {}, "usage": {},
             "passages": [{"id": "manual.pdf#p3.0", "title": "manual: Maintenance", "text": "Replace the seal.",
                           "score": 1.0, "source": "x", "document": "manual.pdf", "section": "Maintenance", "page": 3},
                          {"id": "faq1", "title": "FAQ", "text": "The pump is blue.", "score": 0.5, "source": "y"}]}
    result = to_result(state, "vanilla")
    assert result["passages"][0] | {"text": ""} == {"id": "manual.pdf#p3.0", "title": "manual: Maintenance", "text": "",
                                                    "score": 1.0, "document": "manual.pdf", "section": "Maintenance",
                                                    "page": 3}
    assert set(result["passages"][1]) == {"id", "title", "text", "score"}  # the old fields, unchanged
    _print_answer(result, ShownAnswer())
    assert "  [1] manual.pdf, p. 3, Maintenance (manual.pdf#p3.0)" in capsys.readouterr().out
    source = compact_result(result)["sources"][0]
    assert source == {"n": 1, "id": "manual.pdf#p3.0", "title": "manual: Maintenance",
                      "citation": "manual.pdf, p. 3, Maintenance", "document": "manual.pdf",
                      "section": "Maintenance", "page": 3}
