"""Plain text (.txt, and anything read as characters): decoding with clear refusals. A .txt
file keeps the fast path of prose windows (see agent/retrieval/corpus.py); the other text
formats decode through `decode` and then parse."""

from __future__ import annotations

import gzip
import re
import zlib

from agent.documents.help_lines import HELP_LINE, HELP_NAMES
from agent.documents.model import Unreadable

SUFFIXES = (".txt", ".text")
SNIFF = 8192
BINARY_MAGIC = (b"%PDF", b"PK\x03\x04", b"\xd0\xcf\x11\xe0", b"\x89PNG", b"\xff\xd8\xff", b"GIF8", b"\x1f\x8b")


def sniff(raw: bytes) -> None:
    """Unreadable when the file is empty or binary."""
    if not raw.strip():
        raise Unreadable("empty file" if not raw else "empty file (only whitespace)")
    if b"\x00" in raw[:SNIFF] or raw.lstrip()[:8].startswith(BINARY_MAGIC):
        raise Unreadable("binary file, not text" + looks_like(raw))


def gunzipped(raw: bytes) -> bytes:
    """A gzipped file's contents (a manual page's source, Debian's `README.md.gz`), or Unreadable
    naming why they cannot be had."""
    try:
        return gzip.decompress(raw)
    except (OSError, EOFError, zlib.error) as error:  # OSError: gzip.BadGzipFile
        raise Unreadable(f"not a readable gzip file ({error})") from None


def decode(raw: bytes) -> str:
    """The file's text, or Unreadable naming why it is not text."""
    sniff(raw)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise Unreadable(f"not valid UTF-8 (byte {error.start}): save it as UTF-8") from None
    return text


def looks_like(raw: bytes) -> str:
    """' (it looks like a PDF)' and the like, for a file whose name says another format."""
    head = raw[:SNIFF].lstrip()
    if head.startswith(b"%PDF"):
        return " (it looks like a PDF: name it .pdf)"
    if head.startswith(b"PK\x03\x04"):
        return " (it looks like a ZIP archive or Word file: a Word file must be named .docx)"
    lowered = head[:512].lower()
    if lowered.startswith((b"<!doctype html", b"<html")) or b"<html" in lowered:
        return " (it looks like HTML: name it .html)"
    if head.startswith(b"\xd0\xcf\x11\xe0"):
        return " (it looks like an old binary Office file: save it as .docx)"
    return ""


# a line of one punctuation mark repeated: a setext or reStructuredText heading's underline (or
# overline), or a rule between parts
_RULE = re.compile(r"^[ \t]*([=\-~^*#+`'\".:_])\1{2,}[ \t]*$")
_ENDS_SENTENCE = ".!?:"


PARAGRAPH_HEADING_WORDS = 12  # a paragraph's last line this short, ending with no mark, ends a sentence


def headings_set_apart(text: str) -> str:
    """The text with its underlined headings as sentences of their own: the rule under (or over) a
    heading goes, and the heading line gets a full stop unless it ends with a mark. A plain text
    file is read as prose, one space between its words, and "Stopping if any session fails" with
    its row of dashes ran into the paragraph after it as one sentence. So does a short line that
    ends a paragraph without a mark (a heading, a usage line): it ran into the next paragraph."""
    kept: list[str] = []
    for line in text.splitlines():
        if _RULE.match(line):
            _end_sentence(kept)
            continue
        if not line.strip() and kept and len(kept[-1].split()) <= PARAGRAPH_HEADING_WORDS:
            _end_sentence(kept)  # "Usage: packit [options] files", then a blank line, then "Output"
        kept.append(line)
    return "\n".join(kept)


def _end_sentence(lines: list[str]) -> None:
    """The last line given a full stop, unless it is blank or ends with a mark."""
    if lines and lines[-1].strip() and lines[-1].rstrip()[-1] not in _ENDS_SENTENCE:
        lines[-1] = lines[-1].rstrip() + "."


HELP_HEADING_WORDS = 6  # a group's heading over a listing ("Configuration", "Output options")


def indent_of(line: str) -> int:
    """How many spaces a line opens with: what the text formats read their structure by."""
    return len(line) - len(line.lstrip())


def help_lines_set_apart(text: str) -> str:
    """The text with each line of a --help listing made a sentence of its own: "-i, --ignore —
    ignore specific files or directories." (its description's wrapped lines joined to it), and
    the group heading over such lines ("Configuration") ended with a full stop. Read as prose, a
    listing ran together into sentences that cut one option's description in the middle of the
    next one's names."""
    lines = text.splitlines()
    out: list[str] = []
    index = 0
    while index < len(lines):
        found = HELP_LINE.match(lines[index])
        if not found or len(found.group(2)) > HELP_NAMES:
            out.append(lines[index])
            index += 1
            continue
        indent, names, said = found.groups()
        index += 1
        while index < len(lines) and lines[index].strip() and not HELP_LINE.match(lines[index]) \
                and indent_of(lines[index]) > len(indent):
            said += " " + lines[index].strip()
            index += 1
        heading = next((i for i in range(len(out) - 1, -1, -1) if out[i].strip()), None)
        if heading is not None and len(out[heading].split()) <= HELP_HEADING_WORDS:
            last = out[heading].rstrip()
            if last[-1] == ":" and not HELP_LINE.match(out[heading]):  # "Options:" would lead into the first option
                out[heading] = last[:-1] + "."
            elif last[-1] not in _ENDS_SENTENCE + ")":
                out[heading] = last + "."
        said = said.strip()
        out.append(f"{indent}{names.strip()} — {said}{'' if said.endswith(('.', '!', '?')) else '.'}")
    return "\n".join(out)
