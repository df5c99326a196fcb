"""Word files (.docx, python-docx): paragraphs and tables in body order; Heading/Title styles
make the section path, list styles and numbered paragraphs make lists, code-like styles code."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

from agent.documents.model import SectionBuilder, Structure, Unreadable
from agent.documents.text import looks_like

SUFFIXES = (".docx",)
HEADING = re.compile(r"^(?:heading|überschrift|titre)\s*(\d)$", re.I)


def read(path: Path) -> Structure:
    from docx import Document
    from docx.opc.exceptions import PackageNotFoundError

    if not zipfile.is_zipfile(path):
        raw = path.read_bytes()
        if not raw.strip():
            raise Unreadable("empty file")
        raise Unreadable("not a Word (.docx) file" + looks_like(raw))
    try:
        document = Document(str(path))
    except (PackageNotFoundError, KeyError, ValueError, zipfile.BadZipFile) as error:
        raise Unreadable(f"not a readable Word (.docx) file ({error})") from None
    builder = SectionBuilder()
    pending_list: list[str] = []

    def end_list() -> None:
        if pending_list:
            builder.add("list", "\n".join(pending_list))
            pending_list.clear()

    for item in document.iter_inner_content():
        if not hasattr(item, "style") or not hasattr(item, "text"):  # a table
            end_list()
            builder.add("table", _table(item))
            continue
        style = (item.style.name if item.style is not None else "") or ""
        text = " ".join(item.text.split())
        if not text:
            continue
        level = _heading_level(style)
        if level:
            end_list()
            builder.heading(level, text)
        elif "list" in style.lower() or _numbered(item):
            pending_list.append(text)
        elif "code" in style.lower() or "source" in style.lower():
            end_list()
            builder.add("code", item.text)
        else:
            end_list()
            builder.add("text", text)
    end_list()
    if not builder.sections:
        raise Unreadable("no text in the document")
    return builder.structure(document.core_properties.title or path.stem)


def _heading_level(style: str) -> int:
    if style.lower() == "title":
        return 1
    match = HEADING.match(style.strip())
    return int(match.group(1)) + 1 if match else 0  # below a Title


def _numbered(paragraph) -> bool:
    properties = paragraph._p.pPr
    return properties is not None and properties.numPr is not None


def _table(table) -> str:
    rows = []
    for row in table.rows:
        cells: list[str] = []
        for cell in row.cells:
            text = " ".join(cell.text.split())
            if not cells or cells[-1] != text:  # a merged cell repeats in every column it spans
                cells.append(text)
        if any(cells):
            rows.append(" | ".join(cells))
    return "\n".join(rows)
