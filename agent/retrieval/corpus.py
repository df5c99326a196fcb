"""Reading documents (JSONL, .txt, .md, directories) and cutting them into passages.

A document has a stable identity independent of chunking: the given `id` of a JSONL record,
else the file path relative to the ingested root (`notes/a.md`; `data.jsonl:12` for the 12th
line of a JSONL file whose records carry no id). Its passages are `ID` (one chunk) or `ID#n`,
so re-chunking with other settings yields the same document with other passages. Files are
read lazily, one record at a time, so an ingest shows progress at once. Bad records and
unreadable files are reported with their location and skipped; the good ones still come
through.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from agent.errors import InputError
from agent.retrieval.tokens import encoding

TEXT_SUFFIXES = {".txt", ".md", ".markdown"}
JSONL_SUFFIXES = {".jsonl", ".ndjson"}


@dataclass
class ReadReport:
    """What reading the inputs skipped, line by line, so the user can fix it."""

    problems: list[str] = field(default_factory=list)
    ignored_files: int = 0
    duplicates: int = 0  # records repeating an id already read in this run (the first one wins)
    problem_files: set[str] = field(default_factory=set)  # files with a skipped part: --sync keeps their documents

    def skip(self, path: Path, message: str) -> None:
        self.problems.append(message)
        self.problem_files.add(str(path.resolve()))


@dataclass
class Document:
    """One record or file: the unit that is added, updated and deleted as a whole."""

    id: str
    title: str
    text: str
    source: str  # where it was read: `path` or `path:line`
    origin: str  # absolute path of the file it came from (what --sync compares)
    metadata: dict = field(default_factory=dict)
    size: int = 0  # bytes of input it took, for the progress bar

    def fingerprint(self, chunking: tuple[int, int]) -> str:
        """Changes when the text, title, metadata or chunk settings change."""
        payload = json.dumps([self.title, self.text, self.metadata, list(chunking)], sort_keys=True, ensure_ascii=False)
        return hashlib.sha1(payload.encode("utf-8")).hexdigest()[:16]


def passage_text(passage: dict) -> str:
    """What is embedded for a passage."""
    return f"{passage['title']}: {passage['text']}" if passage["title"] else passage["text"]


def content_id(title: str, text: str) -> str:
    """A hash of a passage's title and text: what a stored vector is checked against."""
    return hashlib.sha1(f"{title}\n{text}".encode("utf-8")).hexdigest()[:16]


def chunk_text(text: str, chunk_tokens: int = 200, overlap_tokens: int = 40) -> list[str]:
    """Split text into windows of about `chunk_tokens` tokens, consecutive windows sharing
    about `overlap_tokens`; windows end on word boundaries so no word is cut."""
    if chunk_tokens <= 0 or not 0 <= overlap_tokens < chunk_tokens:
        raise InputError("chunk size must be positive and overlap smaller than the chunk size")
    words = text.split()
    if not words:
        return []
    costs = [len(encoding().encode(" " + word, disallowed_special=())) for word in words]
    if sum(costs) <= chunk_tokens:
        return [" ".join(words)]
    chunks, start = [], 0
    while start < len(words):
        end, used = start, 0
        while end < len(words) and (used + costs[end] <= chunk_tokens or end == start):
            used += costs[end]
            end += 1
        chunks.append(" ".join(words[start:end]))
        if end >= len(words):
            break
        back, kept = end, 0
        while back - 1 > start and kept + costs[back - 1] <= overlap_tokens:
            back -= 1
            kept += costs[back]
        start = back
    return chunks


def chunk_document(document: Document, chunk_tokens: int = 200, overlap_tokens: int = 40) -> list[dict]:
    """The document's passages: ids `ID` (a single chunk) or `ID#0`, `ID#1`, ..."""
    chunks = chunk_text(document.text, chunk_tokens, overlap_tokens)
    return [
        {"id": document.id if len(chunks) == 1 else f"{document.id}#{number}", "title": document.title,
         "text": chunk, "source": document.source, "metadata": document.metadata, "document": document.id}
        for number, chunk in enumerate(chunks)
    ]


def _read_jsonl(path: Path, relative: str, report: ReadReport) -> Iterator[Document]:
    origin = str(path.resolve())
    with open(path, "rb") as handle:
        for line_number, raw in enumerate(handle, 1):
            where = f"{path}:{line_number}"
            if not raw.strip():
                continue
            try:
                record = json.loads(raw.decode("utf-8"))
            except UnicodeDecodeError:
                report.skip(path, f"{where}: not valid UTF-8")
                continue
            except json.JSONDecodeError as error:
                report.skip(path, f"{where}: invalid JSON ({error.msg})")
                continue
            if not isinstance(record, dict):
                report.skip(path, f"{where}: expected a JSON object")
                continue
            text, title, given_id = record.get("text"), record.get("title", ""), record.get("id")
            if not isinstance(text, str) or not text.strip():
                report.skip(path, f"{where}: missing or empty 'text'")
                continue
            if not isinstance(title, str) or (given_id is not None and not isinstance(given_id, (str, int))):
                report.skip(path, f"{where}: 'title' must be text and 'id' text or a number")
                continue
            metadata = {k: v for k, v in record.items() if k not in ("id", "title", "text")}
            document_id = f"{relative}:{line_number}" if given_id is None or str(given_id).strip() == "" else str(given_id)
            yield Document(document_id, title, text, where, origin, metadata, len(raw))


def _read_text_file(path: Path, relative: str, report: ReadReport) -> Iterator[Document]:
    raw = path.read_bytes()
    if b"\x00" in raw[:8192]:
        report.skip(path, f"{path}: binary file, not text")
        return
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        report.skip(path, f"{path}: not valid UTF-8 (byte {error.start})")
        return
    if not text.strip():
        return
    title = path.stem
    for line in text.splitlines():
        if line.startswith("# "):
            title = line[2:].strip()
            break
    yield Document(relative, title, text, str(path), str(path.resolve()), {}, len(raw))


def input_files(paths: list[str], report: ReadReport) -> Iterator[tuple[Path, str]]:
    """(file, its path relative to the root it was given under) for every readable input."""
    for given in paths:
        path = Path(given)
        if not path.exists():
            raise InputError(f"no such file or directory: {given}")
        if path.is_dir():
            for child in sorted(path.rglob("*")):
                if any(part.startswith(".") for part in child.relative_to(path).parts) or not child.is_file():
                    continue
                if child.suffix.lower() in TEXT_SUFFIXES | JSONL_SUFFIXES:
                    yield child, child.relative_to(path).as_posix()
                else:
                    report.ignored_files += 1
        elif path.suffix.lower() in TEXT_SUFFIXES | JSONL_SUFFIXES:
            yield path, path.name
        else:
            raise InputError(f"{given}: unsupported file type (use .jsonl, .txt or .md)")


def input_bytes(paths: list[str]) -> int:
    """Total size of the inputs (the progress bar's length); unsupported paths count 0."""
    total = 0
    for path, _ in input_files(paths, ReadReport()):
        try:
            total += path.stat().st_size
        except OSError:
            pass
    return total


def read_documents(paths: list[str], report: ReadReport) -> Iterator[Document]:
    """Every document in the inputs, in order, streamed; a repeated id keeps the first."""
    seen: set[str] = set()
    for path, relative in input_files(paths, report):
        reader = _read_jsonl if path.suffix.lower() in JSONL_SUFFIXES else _read_text_file
        try:
            for document in reader(path, relative, report):
                if document.id in seen:
                    report.duplicates += 1
                    continue
                seen.add(document.id)
                yield document
        except OSError as error:
            report.skip(path, f"{path}: cannot read ({error.strerror or error})")


def read_passages(paths: list[str], report: ReadReport, chunk_tokens: int = 200, overlap_tokens: int = 40):
    """Every passage in the inputs, in order, without duplicate ids."""
    chunk_text("probe", chunk_tokens, overlap_tokens)  # validate the settings up front
    seen: set[str] = set()
    for document in read_documents(paths, report):
        for passage in chunk_document(document, chunk_tokens, overlap_tokens):
            if passage["id"] not in seen:
                seen.add(passage["id"])
                yield passage
