"""A program's --help output pasted into a manual as code: read as its options, one item each,
so "How do I show a diff?" finds the row "`-d, --diff` — print the diff for the fixed source"
rather than a whole listing or nothing."""

from __future__ import annotations

from agent.assembly.text import passage_sentences
from agent.documents.help_lines import help_listing
from agent.retrieval.corpus import ReadReport, read_passages
from agent.steps.interpretations import sentences

LISTING = """usage: tidyfmt [-h] [-d | -i] [-l START-END] [files ...]

Formatter for Python code.

positional arguments:
  files                 reads from stdin when no files are specified.

optional arguments:
  -h, --help            show this help message and exit
  -d, --diff            print the diff for the fixed source
  -i, --in-place        make changes to files in place
  -l START-END, --lines START-END
                        range of lines to reformat, one-
                        based
  --exclude globs       exclude file names that match these comma-
                        separated globs
"""


def test_a_help_listing_is_read_as_its_usage_and_one_item_an_option():
    usage, items = help_listing(LISTING)
    assert usage == "usage: tidyfmt [-h] [-d | -i] [-l START-END] [files ...]\n\nFormatter for Python code."
    assert items == [
        "files — reads from stdin when no files are specified.",
        "-h, --help — show this help message and exit",
        "-d, --diff — print the diff for the fixed source",
        "-i, --in-place — make changes to files in place",
        "-l START-END, --lines START-END — range of lines to reformat, one-based",  # names alone, said under them
        "--exclude globs — exclude file names that match these comma-separated globs",
    ]


def test_other_code_is_no_listing():
    assert help_listing("$ tidyfmt -d src/\n$ tidyfmt -i src/\n$ tidyfmt --exclude build src/\n") is None
    assert help_listing("-old line one\n-old line two\n-old line three\n+new line\n") is None  # a diff
    assert help_listing("  -d, --diff   print the diff\n  -i   in place\n") is None  # two options: a command's note
    prose = "  -d, --diff   print the diff\n" * 3 + "\n".join(["Then run the tests and read the report."] * 5)
    assert help_listing(prose) is None


def test_a_pasted_listing_gives_a_unit_per_option_and_a_repeated_option_once(tmp_path):
    document = (f"# tidyfmt\n\n## Usage\n\n```console\n{LISTING}```\n\n## Checking\n\n"
                "```\nusage: tidyfmt check [-h] [-q]\n\n  -h, --help    show this help message and exit\n"
                "  -q, --quiet   print nothing\n  -v, --verbose  print more\n```\n")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "README.md").write_text(document)
    passages = list(read_passages([str(tmp_path / "docs")], ReadReport()))
    said = [s for p in passages for s in passage_sentences(p)]
    assert "`-d, --diff` — print the diff for the fixed source." in said
    assert sum(s.startswith("`-h, --help`") for s in said) == 1  # every subcommand's listing repeats it
    assert "`-q, --quiet` — print nothing." in said
    usage = [p for p in passages if p["metadata"]["kind"] == "code"]
    assert [p["text"].split("\n")[0] for p in usage] == ["usage: tidyfmt [-h] [-d | -i] [-l START-END] [files ...]",
                                                         "usage: tidyfmt check [-h] [-q]"]


def test_a_sentence_never_opens_with_a_dash():
    assert sentences("--contexts=A,B,... — Only display lines covered. Accepts regexes.") == [
        "--contexts=A,B,... — Only display lines covered.", "Accepts regexes."]


def test_an_option_item_set_after_a_hyphen_is_an_option_row(tmp_path):
    """READMEs list options as "--port=NUMBER - select port to use": a row of its option in a
    Markdown list, and in the PDF printed from it, where the list's bullets are not text and a
    line opening with "--" after "Command line parameters:" was read as code."""
    from agent.documents.help_lines import dashed_item
    from tests.document_files import write_pdf

    assert dashed_item("--quiet | -q - suppress logging") == "--quiet | -q — suppress logging"
    assert dashed_item("-p, --port – port to use") == "-p, --port — port to use"
    assert dashed_item("Use -p - to read stdin") == "Use -p - to read stdin" and dashed_item("- item") == "- item"
    assert dashed_item("--port <n>: the port to listen on") == "--port <n> — the port to listen on"  # or a colon
    # a colon-set option whose reader already set its dash: one dash ("--zstd[=options]:" above its text)
    assert dashed_item("--zstd[=options]: — zstd provides 22 levels.") == "--zstd[=options] — zstd provides 22 levels."
    assert dashed_item("--mount=ROUTE:PATH - serve the path") == "--mount=ROUTE:PATH — serve the path"
    assert dashed_item("-T#, --threads=#: Compress using # working threads.") == "-T#, --threads=# — Compress using # working threads."
    lines = ["--port=NUMBER - select port to use, default: 8080", "--quiet | -q - suppress logging",
             "--no-browser - suppress automatic web browser launching"]
    (tmp_path / "md").mkdir()
    (tmp_path / "md" / "README.md").write_text("# devserve\n\nCommand line parameters:\n\n" + "".join(f"* `{line.split(' - ')[0]}` - {line.split(' - ')[1]}\n" for line in lines))
    write_pdf(tmp_path / "devserve.pdf", [["Usage", "Command line parameters:", *lines, "Then open the page in a browser."]])
    for path in (tmp_path / "md", tmp_path / "devserve.pdf"):
        said = [s for p in read_passages([str(path)], ReadReport()) for s in passage_sentences(p)]
        assert "`--quiet | -q` — suppress logging." in said, (path, said)
        assert "`--port=NUMBER` — select port to use, default: 8080." in said
        assert not any("```" in s for s in said)  # no code block of options
