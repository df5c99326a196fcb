"""Markdown by its structure (markdown-it-py, CommonMark with tables): headings become the
section path, fenced and indented code and tables become blocks of their own, lists keep their
items, and inline markup (emphasis, links, inline code marks, HTML, MyST roles) is reduced to its
text; a MyST admonition fence (```{note}) is read as the prose it holds."""

from __future__ import annotations

import re
from pathlib import Path

from agent.documents.model import SectionBuilder, Structure
from agent.documents.rst_inline import role_text
from agent.documents.text import decode

SUFFIXES = (".md", ".markdown", ".mdown")
FRONT_MATTER = re.compile(r"\A---\s*\n.*?\n(---|\.\.\.)\s*\n", re.S)
TAGS = re.compile(r"<[^>]+>")
# a MyST admonition written as a fence (```{note}): its content is prose; {code-block} stays code
MYST_DIRECTIVE = re.compile(r"^\{(?!code|literalinclude|sourcecode)[a-z-]+\}")
MYST_TARGET = re.compile(r"^\([^()]+\)=$")  # (label)=, a cross-reference target line
MYST_OPTION = re.compile(r"^:[\w-]+:.*$", re.M)
MYST_ROLE = re.compile(r"\{[a-z][\w:-]*\}$")
# a footnote's mark ("0.4 ms[^2]") and a note's label ("[^2]: Chardet does not ..."), as GitHub
# writes them: CommonMark leaves both as text, which would be read into the sentence
FOOTNOTE = re.compile(r"\[\^[^\]\s]+\](?::\s*)?")


def _parser():
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table")


def inline_text(token) -> str:
    """The words of an inline token, without markup and footnote marks. An image's alt text is not
    among them: it names a picture, and glued into the sentence around it would read as part of it
    (`alt_text` gives it apart)."""
    parts: list[str] = []
    for child in token.children or []:
        role = MYST_ROLE.search(parts[-1]) if child.type == "code_inline" and parts else None
        if role:  # a MyST role: {file}`setup.py` reads as setup.py, {ref}`the guide <guide>` as "the guide"
            parts[-1] = parts[-1][:role.start()]
        if child.type == "text":
            parts.append(FOOTNOTE.sub("", child.content))
        elif child.type == "code_inline":
            parts.append(role_text(role.group().strip("{}"), child.content) if role else child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
        elif child.type == "html_inline" and not child.content.startswith("<"):
            parts.append(child.content)
    return " ".join("".join(parts).split())


def alt_text(token) -> str:
    """The alt text of the images in an inline token, as one line."""
    return " ".join(" ".join(child.content.split()) for child in token.children or []
                    if child.type == "image" and child.content)


def parse(text: str, fallback_title: str) -> Structure:
    builder = SectionBuilder()
    _emit(_parser().parse(FRONT_MATTER.sub("", text, count=1)), builder)
    return builder.structure(fallback_title)


def _is_tab(token) -> bool:
    """Whether a token is a MyST tab (```{tab} Linux, ```{tab-item} Windows)."""
    return token.type == "fence" and (token.info or "").split(" ")[0] in ("{tab}", "{tab-item}")


def _emit(tokens, builder: SectionBuilder) -> None:
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if token.type == "heading_open":
            builder.heading(int(token.tag[1]), inline_text(tokens[index + 1]))
            index += 3
        elif token.type == "fence" and (directive := MYST_DIRECTIVE.match(token.info or "")):
            if _is_tab(token):  # ```{tab} Linux: its title says what its code is for
                builder.tab(token.info[directive.end():], first=index == 0 or not _is_tab(tokens[index - 1]))
            _emit(_parser().parse(MYST_OPTION.sub("", token.content)), builder)  # {note}, {warning}: prose
            index += 1
        elif token.type in ("fence", "code_block"):
            builder.add("code", token.content, (token.info or "").split(" ")[0].strip("{}"))
            index += 1
        elif token.type in ("bullet_list_open", "ordered_list_open"):
            end = _closing(tokens, index)
            for kind, text, language in _list_blocks(tokens[index:end + 1]):
                builder.add(kind, text, language)
            index = end + 1
        elif token.type == "table_open":
            end = _closing(tokens, index)
            builder.add("table", _table(tokens[index:end + 1]))
            index = end + 1
        elif token.type == "paragraph_open":
            text = inline_text(tokens[index + 1])
            builder.add("text", alt_text(tokens[index + 1]))  # a block of its own, never in a sentence
            builder.add("text", "" if MYST_TARGET.match(text) else text)
            index += 3
        elif token.type == "html_block":
            builder.add("text", " ".join(TAGS.sub(" ", token.content).split()))
            index += 1
        else:  # blockquote and hr open/close: their paragraphs come through on their own
            index += 1


def _closing(tokens, start: int) -> int:
    """Index of the token closing the one at `start` (same nesting level)."""
    level = tokens[start].level
    close = tokens[start].type.replace("_open", "_close")
    for index in range(start + 1, len(tokens)):
        if tokens[index].type == close and tokens[index].level == level:
            return index
    return len(tokens) - 1


def _list_blocks(tokens) -> list[tuple[str, str, str]]:
    """(kind, text, language) blocks of a list: its items one line each, nested items indented
    under theirs; the code an item holds is a code block of its own, after the item's text as a
    paragraph, so a step's lead-in ("Install the package:") leads into its command as a
    paragraph's does, and the code keeps its lines rather than being read as items."""
    blocks: list[tuple[str, str, str]] = []
    lines: list[str] = []
    depth = 0
    for token in tokens:
        if token.type in ("bullet_list_open", "ordered_list_open"):
            depth += 1
        elif token.type in ("bullet_list_close", "ordered_list_close"):
            depth -= 1
        elif token.type == "inline":
            text = inline_text(token)
            if text:
                lines.append("  " * (depth - 1) + text)
        elif token.type in ("fence", "code_block"):
            lead = lines.pop().strip() if lines else ""  # the item's own text, just before its code
            if lines:
                blocks.append(("list", "\n".join(lines), ""))
                lines = []
            if lead:
                blocks.append(("text", lead, ""))
            blocks.append(("code", token.content, (token.info or "").split(" ")[0].strip("{}")))
    if lines:
        blocks.append(("list", "\n".join(lines), ""))
    return blocks


def _table(tokens) -> str:
    """Rows as lines, cells separated by ' | ', the header first."""
    rows, row = [], []
    for token in tokens:
        if token.type == "tr_open":
            row = []
        elif token.type == "inline":
            row.append(inline_text(token))
        elif token.type == "tr_close":
            rows.append(" | ".join(row))
    return "\n".join(rows)


def read(path: Path) -> Structure:
    return parse(decode(path.read_bytes()), path.stem)
