"""PDF files (pypdf): text page by page, every passage keeps its page number; the outline
(bookmarks) gives the section path, split where a bookmarked heading stands on its page.
Lines repeated on most pages (running headers, footers, page numbers) are dropped, broken
lines are joined into paragraphs and words hyphenated across lines are rejoined.

Refused with one line each: an encrypted PDF that needs a password, a damaged file, and a
PDF without a text layer (scanned pages; no OCR is done)."""

from __future__ import annotations

import logging
import re
from collections import Counter
from pathlib import Path

from agent.documents.model import SectionBuilder, Structure, Unreadable
from agent.documents.text import looks_like

SUFFIXES = (".pdf",)
DIGITS = re.compile(r"\d+")
SENTENCE_END = (".", "!", "?", ":", ";")


def read(path: Path) -> Structure:
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    with open(path, "rb") as handle:
        head = handle.read(1024)
    if not head.strip():
        raise Unreadable("empty file")
    if b"%PDF" not in head:
        raise Unreadable("not a PDF file" + looks_like(head))
    logging.getLogger("pypdf").setLevel(logging.ERROR)  # pypdf warns about every small flaw it repairs
    try:
        reader = PdfReader(str(path))
        if reader.is_encrypted and not reader.decrypt(""):
            raise Unreadable("encrypted PDF: it needs a password (save an unprotected copy to ingest it)")
        texts = [page.extract_text() or "" for page in reader.pages]
        outline = _outline(reader)
        title = (reader.metadata.title if reader.metadata else None) or ""
    except Unreadable:
        raise
    except (PdfReadError, ValueError, KeyError, TypeError, AttributeError, OSError, IndexError) as error:
        raise Unreadable(f"damaged PDF, cannot be read ({type(error).__name__}: {error})") from None
    except Exception as error:  # noqa: BLE001 - pypdf raises many types on broken files; one line says which
        if "crypt" in str(error).lower() or "AES" in str(error):
            raise Unreadable(f"encrypted PDF that cannot be opened ({error})") from None
        raise Unreadable(f"damaged PDF, cannot be read ({type(error).__name__}: {error})") from None
    if not any(text.strip() for text in texts):
        raise Unreadable(f"no text layer in its {len(texts)} page(s): a scanned PDF? (no OCR is done)")
    return _structure(texts, outline, title.strip() or path.stem)


def _outline(reader) -> list[tuple[int, list[str]]]:
    """(page index, heading path) of every bookmark, in order."""
    found: list[tuple[int, list[str]]] = []

    def walk(items, path: list[str]) -> None:
        last: list[str] = path
        for item in items:
            if isinstance(item, list):
                walk(item, last)
                continue
            try:
                page = reader.get_destination_page_number(item)
            except Exception:  # noqa: BLE001 - a bookmark to nowhere is skipped, not fatal
                continue
            last = path + [" ".join(str(item.title).split())]
            if page is not None and page >= 0:
                found.append((page, last))

    try:
        walk(reader.outline, [])
    except Exception:  # noqa: BLE001 - a broken outline leaves the document without sections
        return []
    return found


def _structure(texts: list[str], outline: list[tuple[int, list[str]]], title: str) -> Structure:
    pages = [page.splitlines() for page in texts]
    repeated = _repeated_lines(pages)
    builder = SectionBuilder()
    marks = sorted(outline, key=lambda mark: mark[0])
    current: list[str] = []
    for number, lines in enumerate(pages):
        builder.page = number + 1
        starts = [path for page, path in marks if page == number]
        lines = [line for line in lines if _shape(line) not in repeated]
        for path in starts:
            at = _heading_line(lines, path[-1])
            if at is not None:  # else the heading is not in the text: its section starts with the page
                _emit(builder, lines[:at], current)
                lines = lines[at + 1:]
            current = path
        _emit(builder, lines, current)
    return builder.structure(title, pages=len(texts))


def _emit(builder: SectionBuilder, lines: list[str], path: list[str]) -> None:
    builder.levels = [(depth, name) for depth, name in enumerate(path, 1)]
    for paragraph in _paragraphs(lines):
        builder.add("text", paragraph)


def _shape(line: str) -> str:
    return DIGITS.sub("#", " ".join(line.split())).lower()


def _repeated_lines(pages: list[list[str]]) -> set[str]:
    """Lines (digits aside) on more than half the pages of a document of 4 pages or more."""
    if len(pages) < 4:
        return set()
    counts = Counter(shape for lines in pages for shape in {_shape(line) for line in lines if line.strip()})
    return {shape for shape, count in counts.items() if count > len(pages) / 2}


def _heading_line(lines: list[str], heading: str) -> int | None:
    wanted = " ".join(heading.split()).lower()
    for index, line in enumerate(lines):
        text = " ".join(line.split()).lower()
        if text and (text == wanted or (text.endswith(wanted) and len(text) - len(wanted) <= 8)):
            return index
    return None


def _paragraphs(lines: list[str]) -> list[str]:
    """Lines joined into paragraphs: a blank line, or a short line ending a sentence, ends one."""
    width = max((len(line.strip()) for line in lines), default=0)
    paragraphs, current = [], ""
    for line in lines:
        text = " ".join(line.split())
        if not text:
            if current:
                paragraphs.append(current)
            current = ""
            continue
        if current.endswith("-") and text[:1].islower():
            current = current[:-1] + text
        else:
            current = f"{current} {text}" if current else text
        if text.endswith(SENTENCE_END) and len(text) < 0.7 * width:
            paragraphs.append(current)
            current = ""
    if current:
        paragraphs.append(current)
    return paragraphs
