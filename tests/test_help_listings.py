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
