"""Answer units: a manual's answer is a lead-in with its code block, an option's row or a list
item, each a candidate reading kept whole and shown as code where it is code; headings, captions
and alt text are never glued into a sentence. Every document is written here; the graph test
runs the real `auto` graph (budget instant, the real encoder and reader) over a tiny index."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from agent.assembly.compose import compose, reading_text
from agent.assembly.features import Candidate
from agent.assembly.selector import choose, how_preference, whole
from agent.assembly.text import passage_sentences
from agent.assembly.units import asks_how, says_how, unit_prose
from agent.app.early_answer import ShownAnswer, one_line, pieces
from agent.retrieval.corpus import ReadReport, read_passages
from tests.document_files import write_pdf

ROOT = Path(__file__).resolve().parents[1]
CODE = "make check\n\n# the slow tests too. They take an hour.\nmake check SLOW=1"
MANUAL = f"""# Widget Manual

## Testing

The test suite covers the parser, the formatter and the command line interface of Widget.

To run the test suite, type:

```sh
{CODE}
```

## Options

| Option | Default | Description |
| --- | --- | --- |
| `--quiet` | off | Print nothing but errors. |
| `--color` | auto | Colour the output when it goes to a terminal |

## Installing

![Architecture diagram of Widget](arch.png) Widget ships as a source archive for every system.

Before installing, check these:

- Install a C compiler with your package manager
- Make sure GNU make is on the PATH
"""


def passages_of(tmp_path, name: str, text: str | bytes) -> list[dict]:
    """The passages a document is cut into, as the index hands them back (`kind` beside them)."""
    path = tmp_path / name
    path.write_bytes(text) if isinstance(text, bytes) else path.write_text(text)
    found = list(read_passages([str(path)], ReadReport()))
    return [{**p, "kind": p["metadata"].get("kind", "")} for p in found]  # a .txt file's passages have none


def units_of(passages: list[dict]) -> list[str]:
    return [unit for passage in passages for unit in passage_sentences(passage)]


def html_units(tmp_path, body: str) -> list[str]:
    """The units of a one-page HTML manual titled Tool whose main part is `body`."""
    page = f"<html><body><main><h1>Tool</h1>{body}</main></body></html>".encode()
    return units_of(passages_of(tmp_path, "tool.html", page))


def test_a_lead_in_and_its_code_block_are_one_unit_kept_whole_and_shown_as_code(tmp_path):
    passages = passages_of(tmp_path, "widget.md", MANUAL)
    code = next(p for p in passages if p["kind"] == "code")
    assert passage_sentences(code) == [f"To run the test suite, type:\n```\n{CODE}\n```"]  # never cut at its periods
    unit = passage_sentences(code)[0]
    assert whole(unit)  # a unit ending in its fence is no fragment
    assert unit_prose(unit).startswith("To run the test suite, type: make check ; # the slow tests too.")
    shown = reading_text(unit, code, [code], lead=False)
    assert shown == f"To run the test suite, type [1]:\n```\n{CODE}\n```"
    answer = compose([shown], ["The suite covers the parser [1]."])
    assert answer == f"{shown}\n\nThe suite covers the parser [1]."  # the fence stands on lines of its own
    assert one_line(unit) == ("To run the test suite, type: `make check` `# the slow tests too. They take an hour.` "
                              "`make check SLOW=1`")


def test_each_table_row_is_a_unit_read_against_its_header(tmp_path):
    table = next(p for p in passages_of(tmp_path, "widget.md", MANUAL) if p["kind"] == "table")
    assert passage_sentences(table) == [
        "`--quiet` — Print nothing but errors; Default: off.",  # what it does first, not led by "Description:"
        "`--color` — Colour the output when it goes to a terminal; Default: auto.",
    ]
    two_columns = {"id": "t", "title": "T", "kind": "table",
                   "text": "Option | Description\n--width N | Wrap the output at N columns\nPlain words | Not code here"}
    assert passage_sentences(two_columns) == ["`--width N` — Wrap the output at N columns.",
                                              "Plain words — Not code here."]


def test_an_options_lead_in_joins_what_the_manual_page_sets_after_it():
    """A man page's option that leads into its example ("as in:") or a list of fields is one unit
    with it: the lead-in alone says "as in." and the example alone says nothing of what it is for."""
    from agent.assembly.units import list_items

    lines = ["-w --wild — Match across folders.", "-x files --exclude files — Exclude the named files, as in:",
             "-x files --exclude files — … quill pack notes -x \\*.tmp",
             "-x files --exclude files — … which packs notes without the temporary files."]
    assert [unit for _, unit in list_items(lines)] == [
        "`-w --wild` — Match across folders.",
        "`-x files --exclude files` — Exclude the named files, as in: quill pack notes -x \\*.tmp.",
        "`-x files --exclude files` — … which packs notes without the temporary files."]


def test_a_benchmarks_rows_of_measurements_are_no_answer_but_an_exit_status_table_is():
    """A README's table of sizes and times ("babel-minify | 210,421 | 72,238 | 14.17") is data a
    reader looks up, not a way to do something; a row that says what its key means still answers."""
    sizes = {"id": "s", "title": "T", "kind": "table",
             "text": "d3.js | size | gzip size | time (s)\noriginal | 451,131 | 108,733 | -\nquill@1.2 | 210,421 | 72,238 | 14.17"}
    codes = {"id": "c", "title": "T", "kind": "table", "text": "Code | Meaning\n0 | Every note was saved\n2 | 5 s"}
    assert passage_sentences(sizes) == []
    assert passage_sentences(codes) == ["0 — Every note was saved.", "2 — 5 s."]


def test_each_list_item_is_a_unit_and_a_definition_list_reads_as_options(tmp_path):
    units = units_of(passages_of(tmp_path, "widget.md", MANUAL))
    assert "Install a C compiler with your package manager." in units
    assert "Make sure GNU make is on the PATH." in units
    assert not any("check these" in unit for unit in units)  # a lead-in alone is no unit
    page = ("<h2>Options</h2><p>The options are:</p><dl><dt>--quiet</dt><dd>Print nothing but the errors.</dd>"
            "<dt>--color</dt><dd>Colour the output.</dd></dl>")
    assert html_units(tmp_path, page) == ["`--quiet` — Print nothing but the errors.",
                                                                 "`--color` — Colour the output."]


def test_a_steps_code_is_a_code_unit_led_in_by_its_step_and_footnote_marks_are_left_out(tmp_path):
    """A README's numbered steps each hold their command: the step's text leads into its code as
    a paragraph's would, the code keeps its lines, and GitHub's footnote marks read as no words."""
    readme = ("# Quillpad\n\n## Installation\n\n1. Install the package:\n   ```bash\n   pip install quillpad\n   ```\n"
              "2. Create the configuration file:\n\n   ```bash\n   quillpad init --config ~/.quillpad.toml\n\n"
              "   quillpad check\n   ```\n\n3. Start the server with `quillpad serve`.[^1]\n\n"
              "[^1]: It listens on port 8080.\n")
    units = units_of(passages_of(tmp_path, "README.md", readme))
    assert units == ["Install the package:\n```\npip install quillpad\n```",
                     "Create the configuration file:\n```\nquillpad init --config ~/.quillpad.toml\n\nquillpad check\n```",
                     "Start the server with quillpad serve.", "It listens on port 8080."]


def test_a_step_leads_into_its_command_across_the_tabs_a_manual_sets_it_in(tmp_path):
    """Sphinx manuals number their examples ("#. Uninstall a package.") and set each command in
    tabs per system: the step leads into the first tab's command, the next tab's title says what
    its command is for, and a short instruction before a code block leads into it as a label does."""
    page = (".. _`quill uninstall`:\n\nquill uninstall\n===============\n\nExamples\n========\n\n"
            "#. Uninstall a package.\n\n   .. tab:: Unix/macOS\n\n      .. code-block:: console\n\n"
            "         $ python -m quill uninstall notes\n\n   .. tab:: Windows\n\n      .. code-block:: console\n\n"
            "         C:\\> py -m quill uninstall notes\n\nRun the checks.\n\n.. code-block:: console\n\n"
            "   $ quill check --all\n")
    assert units_of(passages_of(tmp_path, "uninstall.rst", page)) == [
        "Uninstall a package:\n```\n$ python -m quill uninstall notes\n```",
        "Run the checks:\n```\n$ quill check --all\n```"]
    myst = ("# Caching\n\n## Default paths\n\nThe cache is kept here:\n\n````{tab} Linux\n```\n~/.cache/quill\n```\n"
            "````\n\n````{tab} Windows\n```\n%LocalAppData%\\quill\n```\n````\n")
    [*_, linux, windows] = [p["text"] for p in passages_of(tmp_path, "caching.md", myst)]
    assert linux.startswith("The cache is kept here:\n~/.cache/quill") and windows.startswith("Windows:\n%LocalAppData%")


def test_a_sentence_may_open_with_the_products_command_in_lower_case(tmp_path):
    """Manuals open sentences with the command as it is typed ("quill cache purge clears ..."):
    that lower case is no chunk's cut-off start; another lower-case opening still is."""
    page = ("# quill\n\n## Removing the cache\n\n`quill cache purge` clears every file of the cache.\n\n"
            "## Listing\n\nwhich lists every cached file of the current project.\n")
    assert units_of(passages_of(tmp_path, "cache.md", page)) == ["quill cache purge clears every file of the cache."]


def test_a_section_titled_by_an_option_describes_that_option_in_every_sentence(tmp_path):
    """Documentation that gives each option a heading of its own (as Node.js's does): the section's
    sentences say nothing of which option they describe, so each is quoted with it, the first as
    the option's row; a heading of words, or a man page's upper-case section, is no option."""
    readme = ("# Quillpad\n\n## Options\n\n### `--watch DIR`\n\nRestart when a file in DIR changes. "
              "Several directories may be given.\n\n### `QUILLPAD_HOME`\n\nThe folder that holds the notes.\n\n"
              "## Exit status\n\nZero when every note was saved.\n")
    assert units_of(passages_of(tmp_path, "README.md", readme)) == [
        "`--watch DIR` — Restart when a file in DIR changes.",
        "`--watch DIR` — … Several directories may be given.",
        "`QUILLPAD_HOME` — The folder that holds the notes.",
        "Zero when every note was saved."]
    page = {"id": "p", "title": "T", "kind": "text", "section": "OPTIONS", "text": "Print the version and exit."}
    assert passage_sentences(page) == ["Print the version and exit."]
    option_row = passage_sentences({**page, "section": "Options > --version"})[0]
    assert option_row == "`--version` — Print the version and exit." and says_how({}, option_row)


def test_an_option_alone_in_its_passage_carries_its_name_into_its_later_sentences():
    """A long option list is cut one item a passage; an item alone on its line is still the
    option's description, every sentence of it quoted with the option."""
    alone = {"id": "v#49", "title": "Valgrind", "kind": "list", "section": "Basic Options",
             "text": "--vgdb-error=<number> [default: 999999999] — Use this option when the gdbserver is enabled. "
                     "Tools that report errors will wait for number errors before freezing the program."}
    assert passage_sentences(alone) == [
        "`--vgdb-error=<number> [default: 999999999]` — Use this option when the gdbserver is enabled.",
        "`--vgdb-error=<number> [default: 999999999]` — … Tools that report errors will wait for number "
        "errors before freezing the program."]
    prose = {**alone, "kind": "text", "text": "Valgrind runs the program on a synthetic CPU. It reports memory errors "
                                              "before they crash the program."}
    assert passage_sentences(prose) == ["Valgrind runs the program on a synthetic CPU.",
                                        "It reports memory errors before they crash the program."]


def test_an_item_alone_whose_term_is_a_lower_case_name_is_no_opening_fragment():
    """A setting or a command is written in lower case ("cache_dir", "split-pane [-h]"); an item
    alone in its passage is its description, though a chunk's lower-case opening is a fragment."""
    setting = {"id": "m#12", "title": "Config", "kind": "list", "section": "Import discovery",
               "text": "cache_dir — Specifies the location where the checker stores its cache. "
                       "User home directory and environment variables will be expanded."}
    assert passage_sentences(setting) == [
        "`cache_dir` — Specifies the location where the checker stores its cache.",
        "`cache_dir` — … User home directory and environment variables will be expanded."]
    command = {**setting, "text": "split-pane [-bdhv] [-t target-pane] (alias: splitp) — Create a new pane by "
                                  "splitting target-pane. The -b option puts it left of or above the target."}
    assert passage_sentences(command)[0].startswith("`split-pane [-bdhv] [-t target-pane] (alias: splitp)` — Create")
    fragment = {**setting, "text": "and so on — the rest of the chunk is cut here. A sentence that stands follows it."}
    assert passage_sentences(fragment) == ["A sentence that stands follows it."]


def test_a_saved_help_listing_shows_each_option_as_code(tmp_path):
    listing = ("Usage: watchit [options] [script]\n\nOptions:\n\n  --cwd <dir> .............. change into <dir> before"
               " running the script\n  -q, --quiet .............. minimise messages to start/stop only\n\n"
               "Watchit restarts the script when a file changes. It never edits your files.\n")
    units = units_of(passages_of(tmp_path, "options.txt", listing))
    assert "`--cwd <dir>` — change into <dir> before running the script." in units
    assert "`-q, --quiet` — minimise messages to start/stop only." in units
    assert "Watchit restarts the script when a file changes." in units  # prose stays prose


def test_a_label_leads_into_no_code_unit_and_a_long_item_gives_its_sentences():
    label = {"id": "c", "title": "T", "kind": "code", "text": "Pipe example:\n*.gz = pipe: gunzip"}
    assert passage_sentences(label) == []  # "Example:" labels a listing; it says nothing the code does
    options = {"id": "l", "title": "T", "kind": "list",
               "text": "The options are:\n--progress — Enable short progress output. It reduces the noise of a run.\n"
                       "Verbose mode — Everything is printed. Nothing is left out of the log.\n"
                       "log-level [LEVEL] — Without an argument, print the current level. With LEVEL, set the level to LEVEL."}
    # each sentence of an option's description says its option; a term that is no option is not repeated
    assert passage_sentences(options) == ["`--progress` — Enable short progress output.",
                                          "`--progress` — … It reduces the noise of a run.",
                                          "Verbose mode — Everything is printed.", "Nothing is left out of the log.",
                                          "`log-level [LEVEL]` — Without an argument, print the current level.",
                                          "`log-level [LEVEL]` — … With LEVEL, set the level to LEVEL."]


def test_a_pdf_manuals_option_and_its_description_are_one_item(tmp_path):
    pdf = write_pdf(tmp_path / "tool.pdf", [[
        "The tool compresses each file named on its command line and replaces it with the compressed one.",
        "-c, --stdout",
        "Write the compressed data to standard output instead of a file.",
        "--single-stream",
        "Decompress only the first stream and ignore the rest of the input file.",
    ]]).read_bytes()
    assert units_of(passages_of(tmp_path, "copy.pdf", pdf))[1:] == [
        "`-c, --stdout` — Write the compressed data to standard output instead of a file.",
        "`--single-stream` — Decompress only the first stream and ignore the rest of the input file."]


def test_a_pdf_options_further_paragraphs_say_its_name_until_a_heading(tmp_path):
    """A PDF keeps no indent: the paragraphs under an option's item are read as its description,
    each quoted with the option, and a heading over the next options ends it."""
    pdf = write_pdf(tmp_path / "tool.pdf", [[
        "The tool compresses each file named on its command line and replaces it with the compressed one.",
        "-f, --force",
        "This option has several effects:",
        "",
        "If the target file already exists, delete it before compressing.",
        "",
        "Other options",
        "",
        "The exit status is zero when every file was compressed.",
    ]]).read_bytes()
    assert units_of(passages_of(tmp_path, "copy.pdf", pdf))[1:] == [
        "`-f, --force` — This option has several effects.",
        "`-f, --force` — … If the target file already exists, delete it before compressing.",
        "The exit status is zero when every file was compressed."]


def test_a_pdf_option_list_keeps_one_item_per_option_whatever_its_layout(tmp_path):
    """Man pages printed to PDF set an option's description beside it, stack options over one
    description, split a dash from its option, and write placeholders ("-b#", "--fast[=#]")."""
    pdf = write_pdf(tmp_path / "tool.pdf", [[
        "The tool compresses each file named on its command line and replaces it with the compressed one.",
        "-k --keep",
        "Keep the source files (the default).",
        "--rm Delete the source files once they are compressed.",
        "-r operate recursively on directories.",
        "--fast[=#]",
        "Switch to the fastest compression levels.",
        "--lzma1[=options]",
        "--lzma2[=options]",
        "Add an LZMA filter to the chain.",
        "Benchmark mode",
        "-",
        "b#",
        "Benchmark the files at compression level #",
        "-i# Minimum time of each benchmark in seconds",
    ]]).read_bytes()
    assert units_of(passages_of(tmp_path, "copy.pdf", pdf))[1:] == [
        "`-k --keep` — Keep the source files (the default).",
        "`--rm` — Delete the source files once they are compressed.",
        "`-r` — operate recursively on directories.",
        "`--fast[=#]` — Switch to the fastest compression levels.",
        "`--lzma1[=options] --lzma2[=options]` — Add an LZMA filter to the chain.",
        "`-b#` — Benchmark the files at compression level #.",
        "`-i#` — Minimum time of each benchmark in seconds."]


def test_alt_text_headings_and_captions_are_never_glued_into_a_sentence(tmp_path):
    markdown = units_of(passages_of(tmp_path, "widget.md", MANUAL))
    assert "Widget ships as a source archive for every system." in markdown
    assert not any("Architecture diagram" in unit for unit in markdown)
    width = "The controller reads its configuration when it starts and keeps every value in memory until"
    pdf = write_pdf(tmp_path / "manual.pdf", [[
        width, "the operator restarts it.",
        "Architecture diagram of the controller",
        "Installing the controller",
        "To install the controller and its command line tools on a Debian system, run this command:",
        "sudo apt install controller-tools",
        "Then check that the version it prints matches the release notes of the package you installed.",
    ]]).read_bytes()
    found = passages_of(tmp_path, "copy.pdf", pdf)
    texts = "\n\n".join(p["text"] for p in found)
    assert "Architecture diagram of the controller\n\nInstalling the controller\n\nTo install" in texts
    units = units_of(found)
    assert units == [
        f"{width} the operator restarts it.",
        "To install the controller and its command line tools on a Debian system, run this command:\n"
        "```\nsudo apt install controller-tools\n```",
        "Then check that the version it prints matches the release notes of the package you installed.",
    ]
    page = ("<p>The tool reads one file at a time.</p><figure><img src='a.png' alt='Data flow'><figcaption>Figure 2 "
            "The data flow</figcaption></figure><h2>Use</h2><p>It writes the result next to the input.</p>")
    assert html_units(tmp_path, page) == ["The tool reads one file at a time.",
                                                                 "It writes the result next to the input."]


def test_a_how_question_prefers_among_passing_candidates_the_unit_that_says_how():
    describing = {"id": "a", "title": "Widget Manual: Testing", "kind": "text",
                  "text": "The test suite covers the parser and the formatter of Widget."}
    code = {"id": "b", "title": "Widget Manual: Testing", "kind": "code", "text": "To run the test suite, type:\nmake check"}
    scored = [(Candidate(describing, 0, passage_sentences(describing)[0], 0), 0.9),
              (Candidate(code, 0, passage_sentences(code)[0], 1), 0.7)]
    question = "How do I run the test suite?"
    assert asks_how(question) and not asks_how("How does the test suite work?")
    one_sense = dict(sense_of=lambda passage: passage["title"].split(":")[0])
    assert [c.passage["id"] for c, _ in choose(scored, 0.5, 4, **one_sense)] == ["a"]  # by probability alone
    assert [c.passage["id"] for c, _ in choose(scored, 0.5, 4, prefer=how_preference(question), **one_sense)] == ["b"]
    assert [c.passage["id"] for c, _ in choose(scored, 0.8, 4, prefer=how_preference(question), **one_sense)] == ["a"]
    assert how_preference("What does the test suite cover?") is None  # no preference for other questions


def test_the_terminal_compares_a_code_reading_as_one_piece():
    reading = "To run the test suite, type [1]:\n```\nmake check. Then again.\n```"
    answer = f"{reading}\n\nThe suite covers the parser [2]."
    assert pieces(answer) == [reading, "The suite covers the parser [2]."]
    shown = ShownAnswer()
    assert shown.add_readings({"readings": [{"sense": "Widget", "text": reading, "citations": ["b"]}]}) == [reading]
    assert shown.changes(answer) == (["The suite covers the parser [2]."], [])


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_chat_page_shows_a_readings_code_as_code():
    """chat.js's `withCitations` run in node over a minimal DOM: the code is a <pre><code>."""
    stub = """
const vm = require("vm"), fs = require("fs");
function node(tag) { return { tag, children: [], className: "", listeners: {}, style: {}, dataset: {},
  classList: { add() {}, remove() {} }, set textContent(t) { this.children = t ? [String(t)] : []; },
  get textContent() { return this.children.map((c) => typeof c === "string" ? c : c.textContent).join(""); },
  append(...items) { this.children.push(...items); }, appendChild(c) { this.children.push(c); return c; },
  replaceChildren(...items) { this.children = items; }, addEventListener() {}, querySelector() { return null; },
  setAttribute() {}, focus() {}, remove() {} }; }
const document = { getElementById: (id) => node(id), createElement: node, addEventListener() {},
  querySelector: () => null, querySelectorAll: () => [] };
const context = { document, window: {}, location: { hash: "" }, localStorage: { getItem() {}, setItem() {} },
  fetch: () => Promise.reject(new Error("offline")), console, TextDecoder, setTimeout, history: { replaceState() {} } };
vm.createContext(context);
vm.runInContext(fs.readFileSync(process.argv[1], "utf8") + "\\nthis.withCitations = withCitations;"
  + "this.answerSentences = answerSentences;", context);
const target = node("div");
context.withCitations(target, process.argv[2], [{ id: "b", title: "Widget Manual" }]);
const shape = (c) => typeof c === "string" ? c : { tag: c.tag, children: c.children.map(shape) };
console.log(JSON.stringify({ shown: target.children.map(shape), sentences: context.answerSentences(process.argv[3]) }));
"""
    reading = "To run the test suite, type [1]:\n```\nmake check. Then again.\n```"
    answer = f"{reading}\n\nIt is slow. It is thorough [1]."
    out = subprocess.run(["node", "-e", stub, str(ROOT / "agent/app/web/static/chat.js"), reading, answer],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["shown"] == ["To run the test suite, type ", {"tag": "button", "children": ["[1]"]}, ":",
                               {"tag": "pre", "children": [{"tag": "code", "children": ["make check. Then again."]}]}, ""]
    assert result["sentences"] == [reading, "It is slow.", " It is thorough [1]."]


HOW_MANUAL = """# Widget Manual

## Testing

The test suite covers the parser, the formatter and the command line interface of Widget.
Tests run against every supported version of the runtime.

To run the test suite, type:

```sh
make check
```

## Installing

Widget is distributed as a source archive and as packages for most systems.
"""

OTHER = """# Gadget Guide

## Overview

Gadget is a small tool that converts data files between formats. It reads CSV and writes JSON.
"""


def test_auto_answers_a_how_question_with_the_lead_in_and_its_code_block(tmp_path, capsys):
    """The real `auto` graph, budget instant, over a tiny index of two manuals: the answer is
    the lead-in with its code block, not the sentence that describes the test suite; the
    terminal, the JSON result and the agent tool carry the code as a fenced block."""
    from agent.app import api
    from agent.app.cli import _print_answer
    from agent.app.tools import compact_result
    from agent.retrieval.index import IndexStore, ingest

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "widget.md").write_text(HOW_MANUAL)
    (docs / "gadget.md").write_text(OTHER)
    index = tmp_path / "index"
    ingest(IndexStore(str(index), create=True), read_passages([str(docs)], ReadReport()))
    result = api.ask("How do I run the test suite?", "auto", {"index_dir": str(index), "budget": "instant"})
    assert result["answer"].endswith("o run the test suite, type [1]:\n```\nmake check\n```")  # "For Widget, to ..."
    assert "covers the parser" not in result["answer"]
    assert result["interpretations"][0]["answer"] == "To run the test suite, type:\n```\nmake check\n```"
    assert "```\nmake check\n```" in json.loads(json.dumps(result))["answer"]
    assert "```\nmake check\n```" in compact_result(result)["answer"]
    _print_answer(result, ShownAnswer())
    printed = capsys.readouterr().out
    assert "type [1]:\n```\nmake check\n```\n" in printed
    assert "type: `make check`  [widget.md#1]" in printed  # the interpretation on one line


def test_a_bullet_glyph_a_text_rendering_keeps_opens_no_unit():
    from agent.assembly.units import prose_sentences

    units = prose_sentences("○ -k, --keep: keep source file(s) after successful compression. "
                            "• The level goes from 1 to 19 by default.")
    assert units == ["-k, --keep: keep source file(s) after successful compression.",
                     "The level goes from 1 to 19 by default."]


def test_a_bullet_glyph_inside_a_sentence_ends_an_item():
    from agent.assembly.units import prose_sentences

    units = prose_sentences("○ -v, --verbose: verbose mode, display more information ○ -q, --quiet: suppress "
                            "warnings, interactivity, and notifications.")
    assert units == ["-v, --verbose: verbose mode, display more information.",
                     "-q, --quiet: suppress warnings, interactivity, and notifications."]


def test_an_option_named_with_a_one_word_label_joins_the_sentence_that_says_what_it_does():
    from agent.assembly.units import prose_sentences

    text = ("-d --decompress --uncompress Decompress. -t --test Test. Check the compressed file integrity then "
            "quit. -v --verbose Verbose. Display the name and percentage reduction for each file compressed.")
    assert prose_sentences(text) == [
        "-d --decompress --uncompress Decompress.",  # the next sentence opens another option: not joined
        "-t --test Test: Check the compressed file integrity then quit.",
        "-v --verbose Verbose: Display the name and percentage reduction for each file compressed."]
    assert prose_sentences("The tool reads files. It writes them back.") == ["The tool reads files.",
                                                                            "It writes them back."]


def test_a_shell_session_gives_its_commands_not_their_output():
    from agent.assembly.units import code_units

    session = ("Now if we increase verbosity even more:\n$ pytest --no-header -vv\n"
               "=========== test session starts ===========\ncollecting ... collected 4 items\n"
               "test_verbosity_example.py::test_ok PASSED [ 25%]\n$ pytest -q\n4 passed in 0.12s")
    assert code_units(session) == [("code", "Now if we increase verbosity even more:\n```\n"
                                            "$ pytest --no-header -vv\n$ pytest -q\n```")]
    plain = "Install it with:\npip install black\nblack ."
    assert code_units(plain) == [("code", "Install it with:\n```\npip install black\nblack .\n```")]


@pytest.mark.parametrize("lead, product", [
    ("To stop the testing process after the first (N) failures:", ""),  # a parenthesis after a space is prose
    ("You can also reuse the virtualenv unless --reuse-venv=never:", ""),  # so is an option's value
    ("On GNU and *BSD, find(1) and xargs(1) can be used to parallelize compression of many files:", ""),
    ("nodemon wraps your application, so you can pass all the arguments to your app:", "nodemon"),
    ("The merge command writes one file. So if you needed a single file, you could do:", ""),
])
def test_a_prose_lead_in_leads_its_code_block(lead, product):
    from agent.assembly.units import code_units

    assert code_units(f"{lead}\ntool --flag file", product) == [("code", f"{lead}\n```\ntool --flag file\n```")]


@pytest.mark.parametrize("lead, product", [
    ("def process(items: list[str]) -> None:", ""),  # code: a call, brackets, an arrow
    ("msvc_deps_prefix = Note: including file:", ""),  # an assignment
    ("scans the source files, and writes foobar.dd with content such as:", ""),  # a sentence cut off before it
    ("nodemon wraps your application, so you can pass all the arguments to your app:", "c8"),  # not its product
    ("Memory usage:", ""),  # a label too short to say what the block does
])
def test_a_line_that_is_no_prose_lead_in_makes_no_unit(lead, product):
    from agent.assembly.units import code_units

    assert code_units(f"{lead}\ntool --flag file", product) == []


@pytest.mark.parametrize("paragraph, lead", [
    # the last sentence says what the block does: the discussion before it is no part of the answer
    ("By default, Tool deletes its cache every run. This is usually fine for most projects. However, some "
     "projects want to keep it between runs. Use -r or --reuse-cache to keep it:", "Use -r or --reuse-cache to keep it:"),
    # it refers back: the paragraph's first sentence names what it speaks of
    ("A line of the form %include file reads file into the configuration. The inclusion is recursive. "
     "Filenames are relative to the including file. This lets you do something like:",
     "A line of the form %include file reads file into the configuration. This lets you do something like:"),
    ("The merge command writes one coverage file from many runs. It reads every file of the folder. "
     "So if you needed a single file for a tool, you could do:",
     "The merge command writes one coverage file from many runs. So if you needed a single file for a tool, you could do:"),
    ("The merge command writes one file. For example:", "The merge command writes one file. For example:"),
])
def test_a_lead_in_paragraph_leads_with_the_sentence_that_says_what_the_block_does(paragraph, lead):
    from agent.assembly.units import code_units

    assert code_units(f"{paragraph}\ntool --flag file") == [("code", f"{lead}\n```\ntool --flag file\n```")]


def test_each_sentence_of_a_lead_in_is_cited():
    unit = "The merge command writes one file. For example:\n```\ntool merge out\n```"
    passage = {"id": "tool.md#3", "text": unit, "title": "Tool"}
    assert reading_text(unit, passage, [passage], lead=False) == (
        "The merge command writes one file [1]. For example [1]:\n```\ntool merge out\n```")


def test_an_option_row_naming_its_product_further_on_is_still_introduced_by_it():
    unit = "`-v, --verbose` — Be verbose: xz will display a progress indicator."
    passage = {"id": "xz/xz.1.pdf#p4.0", "text": unit, "title": "XZ", "product": "XZ"}
    assert reading_text(unit, passage, [passage], lead=True) == (
        "For XZ, `-v, --verbose` — Be verbose: xz will display a progress indicator [1].")
    prose = "Passing -v / --verbose will cause XZ to emit more messages."  # prose naming it says whose it is
    assert reading_text(prose, {**passage, "text": prose}, [passage], lead=True) == f"{prose[:-1]} [1]."


def test_release_notes_give_no_answer_units():
    """A README's changelog says what a version changed ("Fixed --port being ignored."), not how to
    do it: none of its sentences is an answer, while the same words under Usage are."""
    from agent.assembly.units import passage_units

    said = "Use `--port` to choose the port; it was ignored before 1.3.5."
    for section in ("Changelog > 1.3.5 (2021-02-08) > Fixed", "Version history", "Release Notes", "What's new"):
        assert passage_units({"id": "r#1", "document": "r", "text": said, "section": section, "kind": "text"}) == []
    changelog = {"id": "c#1", "document": "CHANGES.md", "title": "Changelog: 1.3.5", "section": "1.3.5", "kind": "text"}
    assert passage_units({**changelog, "text": said}) == []  # a changelog of its own
    announced = {"id": "a#1", "document": "announce/release-1.3.5.html", "title": "quill-1.3.5: Fixed", "section": "Fixed"}
    assert passage_units({**announced, "text": said, "kind": "text"}) == []  # a folder of release notes
    assert passage_units({"id": "r#2", "document": "r", "text": said, "section": "Usage > Changing the port", "kind": "text"})
    song = {"id": "Changes", "title": "Changes", "text": "Changes is a 1971 song by David Bowie."}
    assert passage_units(song)  # a record, as the index hands it back ...
    assert passage_units({**song, "document": "songs.jsonl:1", "metadata": {"year": 1971}})  # ... and as read
