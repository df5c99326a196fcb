"""Reading documents (JSONL, .txt, .md, directories) and cutting them into passages.

A passage is a plain dict: id, title, text, source, metadata. Ids are stable: the given id
(with `#n` per chunk when a record is split), else a hash of title and text, so ingesting the
same input twice yields the same ids. Bad records and unreadable files are reported with
their location and skipped; the good ones still come through.
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


def content_id(title: str, text: str) -> str:
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


def _passages(base_id: str | None, title: str, text: str, source: str, metadata: dict, chunking: tuple[int, int]):
    chunks = chunk_text(text, *chunking)
    for number, chunk in enumerate(chunks):
        if base_id is None:
            passage_id = content_id(title, chunk)
        else:
            passage_id = base_id if len(chunks) == 1 else f"{base_id}#{number}"
        yield {"id": passage_id, "title": title, "text": chunk, "source": source, "metadata": metadata}


def _read_jsonl(path: Path, chunking, report: ReadReport) -> Iterator[dict]:
    with open(path, "rb") as handle:
        for line_number, raw in enumerate(handle, 1):
            where = f"{path}:{line_number}"
            if not raw.strip():
                continue
            try:
                record = json.loads(raw.decode("utf-8"))
            except UnicodeDecodeError:
                report.problems.append(f"{where}: not valid UTF-8")
                continue
            except json.JSONDecodeError as error:
                report.problems.append(f"{where}: invalid JSON ({error.msg})")
                continue
            if not isinstance(record, dict):
                report.problems.append(f"{where}: expected a JSON object")
                continue
            text, title, given_id = record.get("text"), record.get("title", ""), record.get("id")
            if not isinstance(text, str) or not text.strip():
                report.problems.append(f"{where}: missing or empty 'text'")
                continue
            if not isinstance(title, str) or (given_id is not None and not isinstance(given_id, (str, int))):
                report.problems.append(f"{where}: 'title' must be text and 'id' text or a number")
                continue
            metadata = {k: v for k, v in record.items() if k not in ("id", "title", "text")}
            base_id = None if given_id is None or str(given_id).strip() == "" else str(given_id)
            yield from _passages(base_id, title, text, where, metadata, chunking)


def _read_text_file(path: Path, chunking, report: ReadReport) -> Iterator[dict]:
    raw = path.read_bytes()
    if b"\x00" in raw[:8192]:
        report.problems.append(f"{path}: binary file, not text")
        return
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        report.problems.append(f"{path}: not valid UTF-8 (byte {error.start})")
        return
    title = path.stem
    for line in text.splitlines():
        if line.startswith("# "):
            title = line[2:].strip()
            break
    yield from _passages(None, title, text, str(path), {}, chunking)


def _files(paths: list[str], report: ReadReport) -> Iterator[Path]:
    for given in paths:
        path = Path(given)
        if not path.exists():
            raise InputError(f"no such file or directory: {given}")
        if path.is_dir():
            for child in sorted(path.rglob("*")):
                if any(part.startswith(".") for part in child.relative_to(path).parts) or not child.is_file():
                    continue
                if child.suffix.lower() in TEXT_SUFFIXES | JSONL_SUFFIXES:
                    yield child
                else:
                    report.ignored_files += 1
        elif path.suffix.lower() in TEXT_SUFFIXES | JSONL_SUFFIXES:
            yield path
        else:
            raise InputError(f"{given}: unsupported file type (use .jsonl, .txt or .md)")


def read_passages(paths: list[str], report: ReadReport, chunk_tokens: int = 200, overlap_tokens: int = 40):
    """Every passage in the inputs, in order, without duplicate ids."""
    chunk_text("probe", chunk_tokens, overlap_tokens)  # validate the settings up front
    seen: set[str] = set()
    for path in _files(paths, report):
        reader = _read_jsonl if path.suffix.lower() in JSONL_SUFFIXES else _read_text_file
        try:
            for passage in reader(path, (chunk_tokens, overlap_tokens), report):
                if passage["id"] not in seen:
                    seen.add(passage["id"])
                    yield passage
        except OSError as error:
            report.problems.append(f"{path}: cannot read ({error.strerror or error})")
