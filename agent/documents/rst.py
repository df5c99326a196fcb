"""reStructuredText by its structure: the format of most Python projects' manuals (Sphinx sources,
served as `.rst` or as `_sources/*.rst.txt`).

Read as prose, its markup stays in the answer ("``--stop-on-first-error`` ... ::"), a literal
block runs into the sentence leading into it, and `.. option:: --strict` loses the option's
name from the description under it. So headings (underlined, or over- and underlined) make the
section path, a paragraph ending in "::" leads into the literal block after it, the code
directives are code, `.. option::` and its kin give one list item ("--strict — Enable all
optional error checking flags."), admonitions and tabs are read as the prose they hold, bullet,
enumerated, definition and field lists keep their items, simple, grid, list and CSV tables
their rows (agent/documents/rst_tables.py), and inline markup (roles, literals, links, emphasis)
is reduced to its text (agent/documents/rst_inline.py). Directives that hold no prose
(toctree, images, includes, autodoc) are left out. Hand-written rather than docutils: Sphinx's
own directives and roles, which docutils refuses, are most of what a manual uses.
"""

from __future__ import annotations

import re
from pathlib import Path

from agent.documents.model import SectionBuilder, Structure
from agent.documents.rst_inline import inline
from agent.documents.rst_tables import csv_table_rows, grid_rows, list_table_rows, table_file
from agent.documents.text import decode, indent_of

SUFFIXES = (".rst", ".rest")

_RULE = re.compile(r"^([=\-~^*#+`'\".:_!$%&,;/<>?@\\|])\1{2,}\s*$")
_DIRECTIVE = re.compile(r"^\.\.\s+([\w:-]+)::(?:\s+(.*))?$")
_BULLET = re.compile(r"^([-*+•])\s+")
_ENUMERATED = re.compile(r"^(?:\d+|#|[a-zA-Z])[.)]\s+|^\((?:\d+|#|[a-zA-Z])\)\s+")
_FIELD = re.compile(r"^:([^:`][^:]*):(?:\s+(.*))?$")
_SIMPLE_TABLE_RULE = re.compile(r"^=+(?:\s+=+)+\s*$")
_GRID_RULE = re.compile(r"^\+[-=]{2,}\+(?:[-=]*\+)*\s*$")  # "+------+------+", "+======+"
_OPTION_LIST = re.compile(r"^(-{1,2}[A-Za-z][\w-]*(?:[= ]<?[\w.-]+>?)?(?:, -{1,2}[A-Za-z][\w-]*(?:[= ]<?[\w.-]+>?)?)*)"
                          r"(?:\s{2,}(.*))?$")

TABS = ("tab", "group-tab", "tab-item")  # sphinx-tabs and sphinx-design: a title, then what it holds
CODE_DIRECTIVES = {"code-block", "code", "sourcecode", "code-tab", "prompt", "doctest", "parsed-literal"}
# what a manual documents under a name: its description is one item, "name — what it does"
DESCRIBED = {"option", "cmdoption", "envvar", "confval", "describe", "object", "data", "attribute", "function",
             "method", "class", "exception", "decorator", "program-option", "setting", "flag"}
# directives that hold no prose a reader asks about
SKIPPED = {"toctree", "image", "figure", "include", "literalinclude", "raw", "contents", "index", "highlight",
           "program", "currentmodule", "module", "automodule", "autoclass", "autofunction", "automethod",
           "autodata", "autoattribute", "autoexception", "autosummary", "meta", "only", "ifconfig", "sectionauthor",
           "moduleauthor", "codeauthor", "default-role", "default-domain", "role", "tabularcolumns", "graphviz",
           "uml", "plot", "math", "spelling", "rst-class", "class"}

# signs that a text file is reStructuredText (a Sphinx source served as .txt)
_RST_SIGNS = re.compile(r"^\.\.\s+(?:[\w:-]+::|_[^:]+:)|:[a-z][\w:-]*:`[^`]+`|``[^`\s][^`]*``|::\s*$", re.M)
RST_SIGNS = 3  # a plain text file rarely has any of these; a Sphinx source has dozens


def looks_like_rst(text: str) -> bool:
    """Whether a text file is reStructuredText: several of its directives, roles, inline literals
    or literal-block markers ("::" ending a paragraph)."""
    return len(_RST_SIGNS.findall(text, 0, 200_000)) >= RST_SIGNS


def read(path: Path) -> Structure:
    return parse(decode(path.read_bytes()), document_name(path), path.parent)


def document_name(path: Path) -> str:
    """The title a document with no heading of its own gets: its file's name up to the first dot
    ("usage.rst.txt" -> usage)."""
    return path.name.split(".")[0]


def parse(text: str, fallback_title: str, folder: Path | None = None) -> Structure:
    """The document's structure; `folder`, the one it was read from, is where a csv-table's
    :file: is looked for (`table_file`)."""
    builder = SectionBuilder()
    lines = [line.rstrip() for line in text.expandtabs(8).replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    fields, lines = _docinfo(lines)
    _Reader(builder, folder).body(lines)
    return builder.structure(inline(fields.get("title", "")) or fallback_title)


def _docinfo(lines: list[str]) -> tuple[dict[str, str], list[str]]:
    """(the fields a document opens with, ":title: ..." and the like: about the document, not in
    it; the lines after them)."""
    fields: dict[str, str] = {}
    index = 0
    while index < len(lines) and not lines[index].strip():
        index += 1
    while index < len(lines) and (field := _FIELD.match(lines[index])):
        fields[field.group(1).strip().lower()] = (field.group(2) or "").strip()
        index += 1
    return (fields, lines[index:]) if fields else ({}, lines)


class _Reader:
    """Walks a document's lines, handing headings and blocks to the builder; heading levels come
    from the order their adornment styles first appear, as in reStructuredText itself."""

    def __init__(self, builder: SectionBuilder, folder: Path | None = None):
        self.builder = builder
        self.folder = folder
        self.styles: list[tuple[str, bool]] = []

    def body(self, lines: list[str]) -> None:
        index, after_tab = 0, False
        while index < len(lines):
            line = lines[index]
            if not line.strip():
                index += 1
                continue
            if line[0] == " ":  # a block quote: its content, read as the rest is
                block, index = _indented(lines, index)
                self.body(block)
                continue
            directive = _DIRECTIVE.match(line)
            tab = bool(directive) and _name(directive) in TABS
            index = self._heading(lines, index) or self._block(lines, index, first_tab=not after_tab)
            after_tab = tab

    def _heading(self, lines: list[str], index: int) -> int:
        """The index after a heading that starts at `index`, or 0 when none does."""
        line, after = lines[index], lines[index + 1] if index + 1 < len(lines) else ""
        over = _RULE.match(line)
        if over and index + 2 < len(lines) and lines[index + 1].strip() and _RULE.match(lines[index + 2]) \
                and lines[index + 2].strip()[0] == line.strip()[0]:
            self._open(line.strip()[0], True, lines[index + 1])
            return index + 3
        if not over and _RULE.match(after) and len(after.strip()) >= len(line.strip()) - 1 \
                and not _SIMPLE_TABLE_RULE.match(after):
            self._open(after.strip()[0], False, line)
            return index + 2
        return 0

    def _open(self, mark: str, overlined: bool, title: str) -> None:
        style = (mark, overlined)
        if style not in self.styles:
            self.styles.append(style)
        self.builder.heading(self.styles.index(style) + 1, inline(title.strip()))

    def _block(self, lines: list[str], index: int, first_tab: bool = True) -> int:
        line = lines[index]
        directive = _DIRECTIVE.match(line)
        if directive:
            block, end = _indented(lines, index + 1)
            self._directive(_name(directive), (directive.group(2) or "").strip(), block, first_tab)
            return end
        if line.startswith(".."):  # a comment or a link target: nothing to read
            _, end = _indented(lines, index + 1)
            return end
        if _SIMPLE_TABLE_RULE.match(line):
            return self._simple_table(lines, index)
        if _GRID_RULE.match(line):
            return self._grid_table(lines, index)
        if _RULE.match(line):  # a transition between parts
            return index + 1
        if _BULLET.match(line) or _ENUMERATED.match(line) or _FIELD.match(line) or _OPTION_LIST.match(line):
            return self._list(lines, index)
        paragraph, end = _paragraph(lines, index)
        if end < len(lines) and lines[end].startswith(" ") and lines[end].strip() and len(paragraph) == 1 \
                and not paragraph[0].endswith("::"):
            return self._list(lines, index)  # a definition list: a term, its definition indented under it
        self._prose(paragraph)
        if paragraph[-1].endswith("::"):
            return self._literal(lines, end)
        return end

    def _prose(self, paragraph: list[str]) -> None:
        """A paragraph as one text block, its markup reduced to its words."""
        text = lead_in(inline(" ".join(part.strip() for part in paragraph)))
        if text and text != ":":
            self.builder.add("text", text)

    def _literal(self, lines: list[str], index: int) -> int:
        while index < len(lines) and not lines[index].strip():
            index += 1
        block, end = _indented(lines, index)
        if block:
            self.builder.add("code", "\n".join(block))
        return end

    def _directive(self, name: str, argument: str, block: list[str], first_tab: bool = True) -> None:
        content = _without_options(block)
        if name in CODE_DIRECTIVES:
            if content:
                self.builder.add("code", "\n".join(content).strip("\n"), argument.split(" ")[0])
        elif name in DESCRIBED:
            self._described(argument, content)
        elif name in ("list-table", "csv-table"):
            options = _options(block)
            if name == "csv-table" and options.get("file"):
                content = table_file(self.folder, options["file"])
            rows = list_table_rows(content) if name == "list-table" else csv_table_rows(content, options.get("header", ""))
            has_header = name == "csv-table" and "header" in options or options.get("header-rows", "0") != "0"
            self._table(rows, has_header)
        elif name in SKIPPED:
            return
        else:  # note, warning, tip, versionadded, tabs, tab, admonition, topic...: the prose they hold
            if name in TABS:  # the first of a set after the prose that leads into it, or the next
                self.builder.tab(inline(argument), first_tab)
            elif argument and name in ("admonition", "topic", "sidebar", "rubric"):
                self.builder.add("text", inline(argument) + ("" if argument.endswith((".", ":")) else "."))
            self.body(content)

    def _described(self, argument: str, content: list[str]) -> None:
        """`.. option:: -k, --keep` with its description: the first paragraph joins the name as one
        item; the rest of the description (examples, notes) is read as the body it is."""
        name = " ".join(argument.split())
        start = next((i for i, line in enumerate(content) if line.strip()), len(content))
        first, end = _paragraph(content, start) if start < len(content) else ([], start)
        said = lead_in(inline(" ".join(part.strip() for part in first)))
        literal_follows = bool(first) and first[-1].endswith("::")
        if name:
            self.builder.add("list", f"{inline(name)} — {said}" if said else inline(name))
        elif said:
            self.builder.add("text", said)
        self.body(content[self._literal(content, end) if literal_follows else end:])

    def _list(self, lines: list[str], index: int) -> int:
        """Consecutive items (bullets, numbers, fields, options, definitions) as one list block,
        each item one line, its nested items indented under it."""
        items: list[str] = []
        while index < len(lines) and lines[index].strip() and not lines[index].startswith(" "):
            line = lines[index]
            if _DIRECTIVE.match(line) or line.startswith(".."):
                break
            head, continuation, index = _item(lines, index)
            items.append(head)
            items.extend(continuation)
            while index < len(lines) and not lines[index].strip() and _next_is_item(lines, index):
                index += 1
        if items:
            self.builder.add("list", "\n".join(items))
        return index

    def _table(self, rows: list[list[str]], has_header: bool = True) -> None:
        """A table block: one line per row, cells joined by " | ", the header first (an empty one
        when the table has none, so its first row is read as a row)."""
        if rows:
            header = [] if has_header else [" | ".join([""] * max(len(row) for row in rows))]
            self.builder.add("table", "\n".join(header + [" | ".join(inline(cell) for cell in row) for row in rows]))

    def _simple_table(self, lines: list[str], index: int) -> int:
        """A simple table ("=====  =====" rules): its rows as cells joined by " | ", the header first."""
        rule = lines[index]
        spans = [(m.start(), m.end()) for m in re.finditer(r"=+", rule)]
        rows: list[list[str]] = []
        rules = 1
        index += 1
        while index < len(lines):
            line = lines[index]
            if _SIMPLE_TABLE_RULE.match(line):
                rules += 1
                index += 1
                if rules == 3 or index >= len(lines) or not lines[index].strip():
                    break
                continue
            if not line.strip():
                index += 1
                continue
            cells = [line[start:(spans[n + 1][0] if n + 1 < len(spans) else None)].strip()
                     for n, (start, _) in enumerate(spans)]
            if rows and not cells[0] and not line[:spans[0][1]].strip():  # a cell's text going on
                rows[-1] = [f"{a} {b}".strip() for a, b in zip(rows[-1], cells)]
            else:
                rows.append(cells)
            index += 1
        self._table(rows)
        return index

    def _grid_table(self, lines: list[str], index: int) -> int:
        """A grid table ("+----+----+" rules, "| cell | cell |" lines): its rows as `grid_rows`
        reads them, the header first."""
        indent = len(lines[index]) - len(lines[index].lstrip())
        end = index
        while end < len(lines) and lines[end].strip()[:1] in ("+", "|"):
            end += 1
        self._table(grid_rows([line[indent:].rstrip() for line in lines[index:end]]))
        return end


def _item(lines: list[str], index: int) -> tuple[str, list[str], int]:
    """(an item's line, its nested items' lines, the index after it)."""
    line = lines[index]
    marker = _BULLET.match(line) or _ENUMERATED.match(line)
    field = _FIELD.match(line)
    option_list = _OPTION_LIST.match(line)
    if marker:
        first = line[marker.end():]
    elif field:
        first = f"{field.group(1)} — {field.group(2) or ''}"
    elif option_list and option_list.group(2):
        first = f"{option_list.group(1)} — {option_list.group(2)}"
    else:  # a definition's term (or an option whose description is indented under it)
        first = f"{line.strip()} —"
    block, end = _indented(lines, index + 1, allow_blank_start=False)
    words, nested = [first.strip()], []
    position = 0
    while position < len(block):
        if not block[position].strip():
            position += 1
            continue
        if _BULLET.match(block[position]) or _ENUMERATED.match(block[position]):
            head, more, position = _item(block, position)
            nested += ["  " + head] + ["  " + m for m in more]
        elif _DIRECTIVE.match(block[position]):  # a directive inside an item: left out with its content
            _, position = _indented(block, position + 1)
        elif block[position].startswith(" "):  # an indented block inside an item: left out
            _, position = _indented(block, position)
        else:
            paragraph, position = _paragraph(block, position)
            words += [part.strip() for part in paragraph]
    return lead_in(inline(" ".join(words))).rstrip(" —"), nested, end


def _name(directive: re.Match) -> str:
    """A directive's name without its domain (`.. py:function::` -> function)."""
    return directive.group(1).lower().split(":")[-1]


def lead_in(text: str) -> str:
    """A paragraph that leads into a literal block as it reads: "Run it::" and "Run it: ::" read
    "Run it:"."""
    return re.sub(r":?\s*::$", ":", text)


def _next_is_item(lines: list[str], index: int) -> bool:
    """Whether the next non-blank line goes on with the list (another marked item)."""
    while index < len(lines) and not lines[index].strip():
        index += 1
    return index < len(lines) and not lines[index].startswith(" ") and bool(
        _BULLET.match(lines[index]) or _ENUMERATED.match(lines[index]) or _FIELD.match(lines[index]))


def _paragraph(lines: list[str], index: int) -> tuple[list[str], int]:
    """The lines of the paragraph starting at `index` (up to a blank line or a change of indent)."""
    indent = indent_of(lines[index])
    end = index + 1
    while end < len(lines) and lines[end].strip() and indent_of(lines[end]) == indent \
            and not _RULE.match(lines[end]):
        end += 1
    return lines[index:end], end


def _indented(lines: list[str], index: int, allow_blank_start: bool = True) -> tuple[list[str], int]:
    """(the indented lines from `index` on, dedented, blank lines inside kept; the index after
    them): a directive's, a literal block's or a block quote's content."""
    end = index
    while end < len(lines) and (not lines[end].strip() or lines[end].startswith(" ")):
        if not lines[end].strip() and end == index and not allow_blank_start:
            break
        end += 1
    while end > index and not lines[end - 1].strip():
        end -= 1
    return _dedented(lines[index:end]), end


def _dedented(block: list[str]) -> list[str]:
    """The lines less the indent they all share."""
    indents = [indent_of(line) for line in block if line.strip()]
    cut = min(indents) if indents else 0
    return [line[cut:] for line in block]


def _options(block: list[str]) -> dict[str, str]:
    """A directive's option fields (":header-rows: 1") by name."""
    found: dict[str, str] = {}
    for line in block:
        if line.strip() and not (field := _FIELD.match(line.strip())):
            break
        if line.strip():
            found[field.group(1).strip().lower()] = (field.group(2) or "").strip()
    return found


def _without_options(block: list[str]) -> list[str]:
    """A directive's content without its option fields (":caption: ...", ":linenos:")."""
    index = 0
    while index < len(block) and (not block[index].strip() or _FIELD.match(block[index].strip())):
        index += 1
    return _dedented(block[index:])
