"""PDF files (pypdfium2, Google's PDFium): text page by page, every passage keeps its page
number; the outline (bookmarks) gives the section path, split where a bookmarked heading stands
on its page. Lines repeated on most pages (running headers, footers, page numbers) are dropped,
broken lines are joined into paragraphs and words hyphenated across lines are rejoined.

Refused with one line each: an encrypted PDF that needs a password, a damaged file, and a
PDF without a text layer (scanned pages; no OCR is done)."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from agent.documents.help_lines import DASHED_ITEM
from agent.documents.model import CARRIED, SectionBuilder, Structure, Unreadable
from agent.documents.text import looks_like

SUFFIXES = (".pdf",)
DIGITS = re.compile(r"\d+")
SENTENCE_END = (".", "!", "?", ":", ";")
BULLET = re.compile(r"^[•◦▪‣·●○■□–]\s*")
# "-c", "--stdout", "-b#" and "-#" (a number), "--fast[=#]", "--[no-]force", "--" (the end of the options)
OPTION = r"(?:--?(?:\[[\w-]+\])?\w[\w-]*(?:#|\[=?[^\]\s]*\])?|-#|--(?=\s))"
OPTION_TERM = re.compile(rf"^{OPTION}(?:[ =,]|$)")  # "-c, --stdout", "--format=format"
# an option and its description on one line ("--rm Delete source files ..."): the options, then the description
OPTION_BESIDE = re.compile(rf"^((?:{OPTION}(?:=\S+)?,?\s+)+)(?=\S)")
ONLY_OPTIONS = re.compile(rf"^(?:{OPTION}(?:=\S+)?,?\s*)+$")  # a line of options and nothing else
OPTION_ITEM = re.compile(rf"^{OPTION}[^—]* — ")  # an item `_option_item` made


def read(path: Path) -> Structure:
    import pypdfium2 as pdfium

    with open(path, "rb") as handle:
        head = handle.read(1024)
    if not head.strip():
        raise Unreadable("empty file")
    if b"%PDF" not in head:
        raise Unreadable("not a PDF file" + looks_like(head))
    try:
        document = pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError as error:
        if "password" in str(error).lower():
            raise Unreadable("encrypted PDF: it needs a password (save an unprotected copy to ingest it)") from None
        raise Unreadable(f"damaged PDF, cannot be read ({error})") from None
    try:
        texts = [_page_text(document[index]) for index in range(len(document))]
        outline = [(mark.get_dest().get_index(), mark.level, " ".join(mark.get_title().split()))
                   for mark in document.get_toc() if mark.get_dest() is not None]
        title = (document.get_metadata_dict().get("Title") or "").strip()
    except pdfium.PdfiumError as error:
        raise Unreadable(f"damaged PDF, cannot be read ({error})") from None
    finally:
        document.close()
    if not texts:
        raise Unreadable("damaged PDF, cannot be read (no pages)")
    if not any(text.strip() for text in texts):
        raise Unreadable(f"no text layer in its {len(texts)} page(s): a scanned PDF? (no OCR is done)")
    return _structure(texts, _paths(outline), title or path.stem)


def _page_text(page) -> str:
    textpage = page.get_textpage()
    try:
        return textpage.get_text_bounded().replace("\r\n", "\n").replace("\r", "\n")
    finally:
        textpage.close()
        page.close()


def _paths(outline: list[tuple[int | None, int, str]]) -> list[tuple[int, list[str]]]:
    """(page index, heading path) of every bookmark that points at a page, in order."""
    found, path = [], []
    for page, level, title in outline:
        path = path[:level] + [title]
        if page is not None and page >= 0 and title:
            found.append((page, list(path)))
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
    for kind, text in _blocks(lines):
        builder.add(kind, text)


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


def _blocks(lines: list[str]) -> list[tuple[str, str]]:
    """("text", paragraph) and ("code", lines) blocks: lines joined into paragraphs, where a
    blank line, a short line ending a sentence, or a short line that a capitalized one follows
    (a heading, a caption, an image's alt text) ends one, and a line opening with a bullet glyph
    starts one; a manual's option list gives one item per option, however the page sets it
    (`_option_item`), and the paragraphs that go on describing an option say its name
    (`_described_on`). After a paragraph ending in ':', the lines that read as code (`_code_line`)
    are its code block, kept line by line: a PDF does not record what is code."""
    width = max((len(line.strip()) for line in lines), default=0)
    blocks: list[tuple[str, str]] = []
    current, code = "", []

    def end_paragraph() -> None:
        nonlocal current
        if current:
            blocks.append(("text", current))
        current = ""

    lines = _rejoined_dashes(lines)
    for index, line in enumerate(lines):
        text = " ".join(line.split())
        if code and text and (not _code_line(text) or DASHED_ITEM.match(text)):
            blocks.append(("code", "\n".join(code)))
            code = []
        led = bool(blocks) and blocks[-1][0] == "text" and blocks[-1][1].endswith(":")
        if code or (not current and led and _code_line(text) and not DASHED_ITEM.match(text)):
            code.append(line.rstrip())
            continue
        if BULLET.match(text):  # a list item: a paragraph of its own, without the glyph
            end_paragraph()
            text = BULLET.sub("", text)
        if not text:
            end_paragraph()
            continue
        following = " ".join(lines[index + 1].split()) if index + 1 < len(lines) else ""
        before = blocks[-1][1] if blocks and blocks[-1][0] == "text" else ""
        item = _option_item(text, following, width, current, before)
        if item is not None:  # a manual's option and its description: one item
            if not current.endswith("—"):  # options stacked over one description stay together
                end_paragraph()
            current = item
            continue
        if _heading_after_item(text, following, width, current):
            end_paragraph()
        if current.endswith("-") and text[:1].islower():
            current = current[:-1] + text
        else:
            current = f"{current} {text}" if current else text
        short = len(text) < 0.7 * width
        if (short and (text.endswith(SENTENCE_END) or _stands_alone(text, following, width))
                or text.endswith(":") and _code_line(following)):
            end_paragraph()
    end_paragraph()
    if code:
        blocks.append(("code", "\n".join(code).rstrip("\n")))
    return _described_on(blocks)


def _described_on(blocks: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The blocks with each paragraph that goes on describing an option after its item ("-f,
    --force — This option has several effects:", then "If the target file already exists, delete
    it ...") carried as an item of that option ("-f, --force — … If the target ..."), as a man
    page's further paragraph under its tag is read (agent/documents/manpage.py): a PDF keeps no
    indent, and alone the paragraph does not say which option it describes. A line ending no
    sentence (a heading over the next options) ends the option's description; a lead-in (":")
    and its code stay as they are."""
    out: list[tuple[str, str]] = []
    tag = ""
    for kind, text in blocks:
        if kind == "text" and OPTION_ITEM.match(text):
            tag = "" if text.endswith("—") else text.split(" — ", 1)[0]
        elif kind == "text" and tag and text.endswith((".", "!", "?")):
            text = f"{tag} — {CARRIED}{text}"
        elif kind == "text" and not text.endswith(":"):
            tag = ""
        out.append((kind, text))
    return out


def _option_item(text: str, following: str, width: int, current: str, before: str) -> str | None:
    """The item a line that opens with an option starts, or None: an option on a line of its own
    ("-k --keep —", its description to follow), or the next of an option list with its description
    beside it ("--rm — Delete source files ..."), after the options above it that await one. `current`
    is the paragraph the line would continue, `before` the one before that."""
    stacked = current[:-1].rstrip() + " " if current.endswith("—") else ""
    if not stacked and (dashed := DASHED_ITEM.match(text)):  # "--port=NUMBER - select port to use"
        return f"{dashed.group(1)} — {text[dashed.end():]}"
    if OPTION_TERM.match(text) and _stands_alone(text, following, width) and (
            ONLY_OPTIONS.match(text) or not OPTION_TERM.match(following)):  # over an option: options only
        return f"{stacked}{text} —"
    beside = OPTION_BESIDE.match(text)
    if beside is None:
        return None
    if not stacked:
        if text[beside.end()].isupper():  # a new item where no unfinished sentence runs on
            if current and not OPTION_ITEM.match(current) and not current.endswith(SENTENCE_END):
                return None
        elif not (OPTION_ITEM.match(current or before) and (current or before).endswith(SENTENCE_END)):
            return None  # a lower-case description only after an option item that ended its sentence
    return f"{stacked}{beside.group(1).strip().rstrip(',')} — {text[beside.end():]}"


def _heading_after_item(text: str, following: str, width: int, current: str) -> bool:
    """Whether a line after an option's described item is a heading over the next options
    ("Benchmark mode"), not the description's last words: capitalized, ending no sentence, and
    standing alone (`_stands_alone`)."""
    return (bool(OPTION_ITEM.match(current)) and not current.endswith("—") and text[:1].isupper()
            and not text.endswith(SENTENCE_END) and _stands_alone(text, following, width))


def _rejoined_dashes(lines: list[str]) -> list[str]:
    """The lines with an option's dash that the PDF set on a line of its own ("-", then "b#")
    joined to the option again."""
    joined: list[str] = []
    for line in lines:
        if joined and joined[-1].strip() == "-" and re.match(r"\w\S*$", line.strip()):
            joined[-1] = "-" + line.strip()
        else:
            joined.append(line)
    return joined


def _stands_alone(text: str, following: str, width: int) -> bool:
    """Whether a short line ending no sentence is a line of its own (a heading, a caption, alt
    text): a paragraph's lines run the page's width but its last, and the next line opens with
    a capital, a digit or an option (a heading over an option list). A wrapped sentence rarely
    breaks under half the width."""
    return len(text) < 0.5 * width and (following[:1].isupper() or following[:1].isdigit()
                                        or bool(OPTION_TERM.match(following)))


# a line of code opens in lower case or with a symbol ($ ./ -- # { <): a command or a statement;
# or it holds code punctuation and does not open as prose does (a capitalized word, then a word)
CODE_START = re.compile(r"^(?:[a-z_$#>./~{}<\[(@-]|\d+\s*[|:])")
CODE_MARKS = re.compile(r"[=;{}]|::|->|\(\)")
PROSE_START = re.compile(r"^[A-Z][a-z]*,?\s+[a-z]")


def _code_line(text: str) -> bool:
    if not text or (text[:1].isupper() and text.endswith(".")):
        return False
    return bool(CODE_START.match(text)) or (bool(CODE_MARKS.search(text)) and not PROSE_START.match(text))
