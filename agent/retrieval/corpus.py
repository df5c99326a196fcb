"""Reading documents (JSONL, text, Markdown, reStructuredText, HTML, PDF, Word, directories) and cutting them
into passages.

A document has a stable identity independent of chunking: the given `id` of a JSONL record,
else the file path relative to the ingested root (`notes/a.md`; `data.jsonl:12` for the 12th
line of a JSONL file whose records carry no id). Its passages are `ID` (one chunk) or `ID#n`,
so re-chunking with other settings yields the same document with other passages; a PDF's
passages are `ID#pP.n` (the n-th passage of page P), so an edit on one page leaves the ids of
the other pages' passages as they were. Markdown, reStructuredText, HTML, PDF and Word files, manual pages' roff sources (and
a .txt file that is reStructuredText, as Sphinx serves its sources, or a manual page as `man` prints
it) are read by their
structure (agent/documents/); their passages carry `section`, `page` and `kind` in their
metadata. Files are read lazily, one record at a time, so an ingest shows progress at once.
Bad records and unreadable files are reported with their location and skipped; the good ones
still come through.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Iterator

from agent.documents import manpage, rst
from agent.documents import text as plain_text
from agent.documents.model import Structure, Unreadable
from agent.documents.passages import cut
from agent.documents.windows import chunk_text  # noqa: F401  (its importers read it from here)
from agent.documents.registry import STRUCTURED, reader_for
from agent.errors import InputError
from agent.retrieval.folder_products import FolderProduct

TEXT_SUFFIXES = set(plain_text.SUFFIXES)
# folders a Sphinx build writes beside its pages: the pages' sources again (_sources/*.txt) and the
# code its pages link to (_modules/): read, every page would be there twice, and code pages besides
BUILD_COPIES = frozenset({"_sources", "_modules"})
JSONL_SUFFIXES = {".jsonl", ".ndjson"}
SUPPORTED = TEXT_SUFFIXES | JSONL_SUFFIXES | set(STRUCTURED)
SUPPORTED_NAMES = ".pdf, .html, .docx, .md, .rst, .txt, .jsonl or a manual page (.1 to .9), gzipped or not"


@dataclass
class ReadReport:
    """What reading the inputs skipped, line by line, so the user can fix it."""

    problems: list[str] = field(default_factory=list)
    ignored_files: int = 0
    duplicates: int = 0  # records repeating an id already read in this run (the first one wins)
    renamed: list[str] = field(default_factory=list)  # files read under a longer name (`longer_names`)
    problem_files: set[str] = field(default_factory=set)  # files with a skipped part: --sync keeps their documents
    ignored_types: dict[str, int] = field(default_factory=dict)  # suffix -> files of it a directory held
    links: int = 0  # links in a directory to a file read under its own name there (gunzip.1.gz -> gzip.1.gz)
    files: int = 0  # files read (whole or in part)
    pages: int = 0  # pages of the paged files read
    on_file: Callable[["ReadReport"], None] | None = None  # called after each file: progress

    def skip(self, path: Path, message: str) -> None:
        self.problems.append(message)
        self.problem_files.add(str(path.resolve()))

    def ignore(self, path: Path) -> None:
        self.ignored_files += 1
        suffix = path.suffix.lower() or "(no suffix)"
        self.ignored_types[suffix] = self.ignored_types.get(suffix, 0) + 1

    def file_done(self, pages: int = 0) -> None:
        self.files += 1
        self.pages += pages
        if self.on_file:
            self.on_file(self)


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
    structure: Structure | None = None  # sections and blocks, for the formats read by structure

    def fingerprint(self, chunking: tuple[int, int]) -> str:
        """Changes when the text, structure, title, metadata or chunk settings change."""
        body = self.structure.signature() if self.structure is not None else self.text
        payload = json.dumps([self.title, body, self.metadata, list(chunking)], sort_keys=True, ensure_ascii=False)
        return hashlib.sha1(payload.encode("utf-8")).hexdigest()[:16]


def passage_text(passage: dict) -> str:
    """What is embedded for a passage."""
    return f"{passage['title']}: {passage['text']}" if passage["title"] else passage["text"]


def content_id(title: str, text: str) -> str:
    """A hash of a passage's title and text: what a stored vector is checked against."""
    return hashlib.sha1(f"{title}\n{text}".encode("utf-8")).hexdigest()[:16]


def chunk_document(document: Document, chunk_tokens: int = 200, overlap_tokens: int = 40) -> list[dict]:
    """The document's passages: ids `ID` (a single chunk) or `ID#0`, `ID#1`, ... (`ID#pP.n` on
    the pages of a PDF)."""
    if document.structure is not None:
        return _structured_passages(document, chunk_tokens, overlap_tokens)
    chunks = chunk_text(document.text, chunk_tokens, overlap_tokens)
    return [
        {"id": document.id if len(chunks) == 1 else f"{document.id}#{number}", "title": document.title,
         "text": chunk, "source": document.source, "metadata": document.metadata, "document": document.id}
        for number, chunk in enumerate(chunks)
    ]


def _structured_passages(document: Document, chunk_tokens: int, overlap_tokens: int) -> list[dict]:
    """Passages cut by section; the title names the section ("Guide: Installation > Linux"),
    the metadata where the passage stands and what it is."""
    pieces = cut(document.structure, chunk_tokens, overlap_tokens)
    on_page: dict[int | None, int] = {}
    passages = []
    for number, piece in enumerate(pieces):
        if len(pieces) == 1:
            passage_id = document.id
        elif piece.page is not None:
            on_page[piece.page] = on_page.get(piece.page, -1) + 1
            passage_id = f"{document.id}#p{piece.page}.{on_page[piece.page]}"
        else:
            passage_id = f"{document.id}#{number}"
        location = {"section": piece.section, "page": piece.page, "kind": piece.kind,  # section may be ""
                    "part": piece.part or None}
        passages.append({
            "id": passage_id, "title": f"{document.title}: {piece.section}" if piece.section else document.title,
            "text": piece.text, "source": document.source, "document": document.id,
            "metadata": {**document.metadata, **{k: v for k, v in location.items() if v is not None}},
        })
    return passages


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
    try:
        text = plain_text.decode(raw)
    except Unreadable as problem:
        report.skip(path, f"{path}: {problem}")
        return
    if rst.looks_like_rst(text):  # a Sphinx source served as .txt ("usage.rst.txt"): read by its structure
        yield from _structured(path, relative, report, lambda: rst.parse(text, rst.document_name(path), path.parent), len(raw))
        return
    if manpage.looks_like_manpage(text):  # `man gzip > gzip.1.txt`: read by its layout
        yield from _structured(path, relative, report, lambda: manpage.parse(text, path.stem), len(raw))
        return
    title = path.stem
    for line in text.splitlines():
        if line.startswith("# "):
            title = line[2:].strip()
            break
    # a file's passages stand in a document like those read by structure (one with no sections), so
    # citations name the file and answers can tell one product's manual from another's
    yield Document(relative, title, plain_text.help_lines_set_apart(plain_text.headings_set_apart(text)), str(path), str(path.resolve()), {"section": ""}, len(raw))


def _read_structured(path: Path, relative: str, report: ReadReport) -> Iterator[Document]:
    """One Markdown, reStructuredText, HTML, PDF or Word file as one document."""
    yield from _structured(path, relative, report, lambda: reader_for(path).read(path), path.stat().st_size)


def _structured(path: Path, relative: str, report: ReadReport, read: Callable[[], Structure],
                size: int) -> Iterator[Document]:
    """The document `read` gives; a file its reader refuses (or that breaks the reader's
    library) is one line in the report."""
    try:
        structure = read()
    except Unreadable as problem:
        report.skip(path, f"{path}: {problem}")
        return
    except OSError:
        raise
    except Exception as error:  # noqa: BLE001 - a third-party parser's failure on one file must not end the run
        report.skip(path, f"{path}: cannot be read ({type(error).__name__}: {error})")
        return
    if not any(section.blocks for section in structure.sections):
        report.skip(path, f"{path}: no text found in it")
        return
    report.pages += structure.pages
    yield Document(relative, structure.title, "", str(path), str(path.resolve()), {}, size, structure)


def supported(path: Path) -> bool:
    """Whether a reader takes the file: by its suffix, or as a manual page's source by its name, or
    gzipped (Debian's `README.md.gz`)."""
    return path.suffix.lower() in SUPPORTED or reader_for(path) is not None or gzipped(path)


def gzipped(path: Path) -> bool:
    """Whether the file is a gzipped document of a format a reader takes ("README.md.gz", as Debian
    installs a package's longer docs); a manual page's source is read as one whatever its suffix."""
    inner = Path(path.stem)
    return path.suffix.lower() == ".gz" and reader_for(path) is None and inner.suffix.lower() in SUPPORTED


def _read_gzipped(path: Path, relative: str, report: ReadReport) -> Iterator[Document]:
    """The documents of the file inside, read by its own format from a copy, named and located
    as the gzipped file (its id keeps the ".gz": the file it was read from)."""
    try:
        raw = plain_text.gunzipped(path.read_bytes())
    except Unreadable as problem:
        report.skip(path, f"{path}: {problem}")
        return
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / path.stem
        copy.write_bytes(raw)
        problems = len(report.problems)
        for document in _reader(copy)(copy, relative, report):
            yield replace(document, source=document.source.replace(str(copy), str(path)),
                          origin=str(path.resolve()), size=path.stat().st_size)
        report.problems[problems:] = [problem.replace(str(copy), str(path)) for problem in report.problems[problems:]]
        if str(copy.resolve()) in report.problem_files:
            report.problem_files.discard(str(copy.resolve()))
            report.problem_files.add(str(path.resolve()))


def _reader(path: Path) -> Callable[[Path, str, ReadReport], Iterator[Document]]:
    """The function that reads a file of this name."""
    if gzipped(path):
        return _read_gzipped
    if reader_for(path):
        return _read_structured
    return _read_jsonl if path.suffix.lower() in JSONL_SUFFIXES else _read_text_file


def input_files(paths: list[str], report: ReadReport) -> Iterator[tuple[Path, str]]:
    """(file, its path relative to the root it was given under) for every readable input."""
    for given in paths:
        path = Path(given)
        if not path.exists():
            raise InputError(f"no such file or directory: {given}")
        if path.is_dir():
            root = path.resolve()
            for child in sorted(path.rglob("*")):
                parts = child.relative_to(path).parts
                if any(part.startswith(".") or part in BUILD_COPIES for part in parts[:-1]) \
                        or parts[-1].startswith(".") or not child.is_file():
                    continue
                if child.is_symlink() and _read_as_itself(child.resolve(), root):
                    report.links += 1
                    continue
                if supported(child):
                    yield child, child.relative_to(path).as_posix()
                else:
                    report.ignore(child)
        elif supported(path):
            yield path, path.name
        else:  # named on the command line: the user meant it, so it is a skip, not a silent ignore
            report.skip(path, f"{given}: unsupported file type {path.suffix or '(no suffix)'} (use {SUPPORTED_NAMES})")


def longer_names(document_id: str, origin: str) -> Iterator[str]:
    """Names for a file's document with more of its folders, nearest first ("rich/README.md", then
    "docs/rich/README.md", ...), for a document named by its path relative to the folder it was
    read under, where that name is already another file's: `disambig ingest docs/orjson docs/rich`
    reads two README.md. Nothing for an id a record gives itself (JSONL)."""
    parts, named = Path(origin).parts, tuple(document_id.split("/"))
    if len(parts) <= len(named) or parts[-len(named):] != named:
        return
    for depth in range(len(named) + 1, len(parts)):
        yield "/".join(parts[-depth:])


def _read_as_itself(target: Path, root: Path) -> bool:
    """Whether a linked file is read under its own name in the folder being read: a manual page's
    other names (gunzip.1.gz -> gzip.1.gz) would be the same document twice, under a name that is
    not its product's."""
    return (target.is_relative_to(root) and not any(part.startswith(".") for part in target.relative_to(root).parts)
            and supported(target))


def input_count(paths: list[str]) -> int:
    """How many files the inputs hold that a reader takes (the progress bar's length)."""
    return sum(1 for _ in input_files(paths, ReadReport()))


def read_documents(paths: list[str], report: ReadReport) -> Iterator[Document]:
    """Every document in the inputs, in order, streamed; those of a folder given that may name a
    product are held until all of them (or HELD) are read, since any of them may say it
    (`FolderProduct`). A repeated id keeps the first, except that a file whose path names another
    file's document (two folders' README.md) is read under a longer name (`longer_names`): it is
    another document, not a repeat."""
    seen: dict[str, str] = {}  # id -> the file it was read from
    folder = FolderProduct("")
    for path, relative in input_files(paths, report):
        here = os.path.abspath(Path(*path.parts[: -len(relative.split("/"))]))  # the folder given
        if here != folder.root:
            yield from folder.decided()
            folder = FolderProduct(here)
        pages_before = report.pages
        try:
            for document in _reader(path)(path, relative, report):
                if document.id in seen and seen[document.id] != document.origin:
                    name = next((n for n in longer_names(document.id, document.origin) if n not in seen), None)
                    if name:
                        document = replace(document, id=name)
                        report.renamed.append(name)
                if document.id in seen:
                    report.duplicates += 1
                    continue
                seen[document.id] = document.origin
                yield from folder.read(document)
        except OSError as error:
            report.skip(path, f"{path}: cannot read ({error.strerror or error})")
        pages, report.pages = report.pages - pages_before, pages_before
        report.file_done(pages)
    yield from folder.decided()


def read_passages(paths: list[str], report: ReadReport, chunk_tokens: int = 200, overlap_tokens: int = 40):
    """Every passage in the inputs, in order, without duplicate ids."""
    chunk_text("probe", chunk_tokens, overlap_tokens)  # validate the settings up front
    seen: set[str] = set()
    for document in read_documents(paths, report):
        for passage in chunk_document(document, chunk_tokens, overlap_tokens):
            if passage["id"] not in seen:
                seen.add(passage["id"])
                yield passage
