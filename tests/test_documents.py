"""The document readers: Markdown, HTML, Word and PDF cut by their structure (sections by heading
path, code blocks and tables whole, lists with their lead-in, PDF pages), no reading starting
with markup, and bad files refused with one clear line while the rest is read."""

from __future__ import annotations

import re

import pytest

from agent.documents.citation import citation
from agent.retrieval.corpus import ReadReport, read_passages
from tests.document_files import HTML, MARKDOWN, write_docx, write_pdf

MARKUP_START = re.compile(r"^\s*(#|[-*+]\s|>|```|\||<[a-z!/])", re.I)


def passages_of(path, chunking=(200, 40)) -> list[dict]:
    report = ReadReport()
    found = list(read_passages([str(path)], report, *chunking))
    assert report.problems == []
    return found


def by_kind(passages: list[dict], kind: str) -> list[dict]:
    return [p for p in passages if p["metadata"]["kind"] == kind]


def test_markdown_is_cut_by_sections_with_code_lists_and_tables_whole(tmp_path):
    path = tmp_path / "guide.md"
    path.write_text(MARKDOWN)
    passages = passages_of(path)
    assert {p["title"] for p in passages} == {"Pump Guide", "Pump Guide: Installation > Linux", "Pump Guide: Sessions"}
    assert passages[0]["text"] == "The pump moves water from the well to the tank."  # no front matter, no '# '
    code = by_kind(passages, "code")
    assert [p["text"] for p in code] == ["Install the controller with:\nsudo apt install pump-controller"]
    assert code[0]["metadata"]["section"] == "Installation > Linux"
    assert by_kind(passages, "list")[0]["text"] == ("Before you start, check these:\nthe power switch is off\n"
                                                    "the valve is closed\n  and locked")  # lead-in, nested item
    assert by_kind(passages, "table")[0]["text"] == "Model | Flow\nP100 | 40 l/min\nP200 | 80 l/min"
    assert passages[-1]["text"] == "Each session logs its flow in the journal."  # emphasis and link syntax gone
    assert not any(MARKUP_START.match(p["text"]) for p in passages)
    assert [p["id"] for p in passages] == [f"guide.md#{n}" for n in range(len(passages))]


def test_a_label_before_a_code_block_leads_into_it_and_a_sentence_does_not(tmp_path):
    path = tmp_path / "usage.md"
    path.write_text("# Usage\n\nRun tests by marker expressions\n\n```\npytest -m slow\n```\n\n"
                    "This runs the tests marked slow.\n\n```\npytest -m fast\n```\n")
    code = by_kind(passages_of(path), "code")
    # the label is the example's lead-in, with the ':' that says so; a sentence that ends is no label
    assert [p["text"] for p in code] == ["Run tests by marker expressions:\npytest -m slow", "pytest -m fast"]


def test_myst_markup_reads_as_the_words_it_shows(tmp_path):
    """Sphinx manuals in MyST Markdown: a role shows its title, not its target; a note fence is
    its prose; a short instruction leads into its code as a label does."""
    path = tmp_path / "config.md"
    path.write_text("# Configuration\n\nPass {ref}`--config-settings <install_--config-settings>` or edit "
                    "{file}`setup.cfg`, as {pep}`517` says.\n\n```{note}\nThe file is read once.\n```\n\n"
                    "Run the checks.\n\n```\nquill check --all\n```\n")
    passages = passages_of(path)
    assert passages[0]["text"] == "Pass --config-settings or edit setup.cfg, as PEP 517 says.\n\nThe file is read once."
    assert by_kind(passages, "code")[0]["text"] == "Run the checks:\nquill check --all"


def test_a_sphinx_builds_copies_of_its_sources_and_code_are_not_read_again(tmp_path):
    """A Sphinx HTML build holds each page's source again (_sources/usage.rst.txt) and the code it
    links to (_modules/): only the pages are the manual."""
    (tmp_path / "_sources").mkdir(), (tmp_path / "_modules").mkdir()
    (tmp_path / "usage.html").write_text("<html><body><main><h1>Usage</h1><p>Run quill sync to sync.</p></main></body></html>")
    (tmp_path / "_sources" / "usage.rst.txt").write_text("Usage\n=====\n\nRun quill sync to sync.\n")
    (tmp_path / "_modules" / "quill.html").write_text("<html><body><pre>def sync(): pass</pre></body></html>")
    assert {p["id"].split("#")[0] for p in passages_of(tmp_path)} == {"usage.html"}


def test_token_windows_stay_inside_their_section(tmp_path):
    first, second = " ".join(f"alpha{i}." for i in range(90)), " ".join(f"beta{i}." for i in range(90))
    path = tmp_path / "long.md"
    path.write_text(f"# Long\n\n## First\n\n{first}\n\n## Second\n\n{second}\n")
    passages = passages_of(path, chunking=(40, 5))
    assert len(passages) > 6
    for passage in passages:  # every window holds the words of one section only
        words = {w[:4] for w in passage["text"].split()}
        assert words == ({"alph"} if passage["metadata"]["section"] == "First" else {"beta"})


def test_html_drops_navigation_scripts_and_styles_and_keeps_structure(tmp_path):
    path = tmp_path / "ref.html"
    path.write_text(HTML)
    passages = passages_of(path)
    text = "\n".join(p["title"] + " " + p["text"] for p in passages)
    for dropped in ("never index me", "Home", "banner", "footer", "color:red"):
        assert dropped not in text
    assert passages[0]["title"] == "Pump Reference" and passages[0]["text"].startswith("The reference lists every setting")
    code = by_kind(passages, "code")[0]
    assert code["metadata"]["section"] == "Configuration > Logging"
    assert code["text"] == 'Logging is configured in pump.toml:\n[logging]\nlevel = "info"'
    assert by_kind(passages, "table")[0]["text"] == "Setting | Default\nlevel | info"
    assert by_kind(passages, "list")[0]["text"] == "Rotate logs daily.\nKeep seven files."


def test_word_files_keep_headings_lists_and_tables(tmp_path):
    passages = passages_of(write_docx(tmp_path / "manual.docx"))
    assert [(p["metadata"]["section"], p["metadata"]["kind"]) for p in passages] == [
        ("Installation", "text"), ("Installation > Linux", "list"), ("Maintenance", "table")]
    assert passages[0]["title"] == "Field Manual: Installation"
    assert passages[1]["text"] == ("On Linux the controller needs these packages:\nthe serial driver\n"
                                   "the udev rule\nthe monitoring daemon")
    assert passages[2]["text"] == "Part | Interval\nSeal | 6 months\nBearing | 2 years"


def test_pdf_pages_outline_sections_and_running_headers(tmp_path):
    pages = [["ACME Pump Manual", "Welcome to the pump.", "Page 1"],
             ["ACME Pump Manual", "Installation", "Linux", "Install it with the package manager.", "Page 2"],
             ["ACME Pump Manual", "Linux needs the serial driver too.", "Page 3"],
             ["ACME Pump Manual", "Maintenance", "Replace the seal every six months.", "Page 4"]]
    path = write_pdf(tmp_path / "manual.pdf", pages,
                     [("Installation", 1, None), ("Linux", 1, "Installation"), ("Maintenance", 3, None)])
    passages = passages_of(path)
    assert [(p["id"], p["metadata"]["page"], p["metadata"]["section"], p["text"]) for p in passages] == [
        ("manual.pdf#p1.0", 1, "", "Welcome to the pump."),
        ("manual.pdf#p2.0", 2, "Installation > Linux", "Install it with the package manager."),
        ("manual.pdf#p3.0", 3, "Installation > Linux", "Linux needs the serial driver too."),
        ("manual.pdf#p4.0", 4, "Maintenance", "Replace the seal every six months."),
    ]  # the running header and the page numbers are gone


def test_citations_name_document_page_and_section():
    assert citation({"document": "manual.pdf", "page": 12, "section": "Installation > Linux", "title": "M"}) == \
        "manual.pdf, p. 12, Installation > Linux"
    assert citation({"document": "guide.md", "section": "", "title": "Guide"}) == "guide.md"
    assert citation({"id": "p1", "title": "Horsepower"}) == "Horsepower"  # a passage from JSONL or an older index


@pytest.fixture
def folder_with_bad_files(tmp_path):
    (tmp_path / "good.md").write_text("# Good\n\nThis one is read.")
    write_pdf(tmp_path / "locked.pdf", [["Secret text"]], password="pw")
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4\n1 0 obj garbage")
    write_pdf(tmp_path / "scan.pdf", [[], []])
    (tmp_path / "empty.md").write_bytes(b"")
    (tmp_path / "blank.html").write_text("  \n")
    (tmp_path / "binary.txt").write_bytes((tmp_path / "scan.pdf").read_bytes())
    (tmp_path / "page.pdf").write_text("<!doctype html><html><body><p>hi</p></body></html>")
    (tmp_path / "letter.docx").write_text("not a word file")
    (tmp_path / "menu.html").write_text("<html><body><nav><a href='/'>Home</a></nav></body></html>")
    (tmp_path / "photo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00")
    return tmp_path


EXPECTED = {
    "binary.txt": "binary file, not text (it looks like a PDF: name it .pdf)",
    "blank.html": "empty file (only whitespace)",
    "broken.pdf": "damaged PDF, cannot be read (",
    "empty.md": "empty file",
    "letter.docx": "not a Word (.docx) file",
    "locked.pdf": "encrypted PDF: it needs a password (save an unprotected copy to ingest it)",
    "menu.html": "no text in the page (after dropping navigation, scripts and styles)",
    "page.pdf": "not a PDF file (it looks like HTML: name it .html)",
    "scan.pdf": "no text layer in its 2 page(s): a scanned PDF? (no OCR is done)",
}


def test_each_bad_file_is_one_clear_line_and_the_rest_is_read(folder_with_bad_files):
    report = ReadReport()
    passages = list(read_passages([str(folder_with_bad_files)], report))
    assert [p["id"] for p in passages] == ["good.md"]
    assert len(report.problems) == len(EXPECTED) and all("\n" not in line for line in report.problems)
    for name, message in EXPECTED.items():
        line = next(line for line in report.problems if line.startswith(f"{folder_with_bad_files / name}: "))
        assert line.split(": ", 1)[1].startswith(message), line
    assert report.ignored_types == {".png": 1}  # a type no reader takes: counted, not a problem
    assert report.files == 10 and len(report.problem_files) == len(EXPECTED)
