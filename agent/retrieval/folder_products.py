"""Which product the files read under a folder given to the ingest document.

A file's document id is its path below the folder given, so `disambig ingest docs/concurrently`
names its pages `success.md`, `prefixing.md`, ... and `disambig ingest pip/docs/html` names them
`topics/caching.md`, `development/ci.rst`: no folder in the id names the product, and each page
would be a product named by its title ("Prefixing", "Caching") or by a sub-folder of its manual
("development"). The folder given (or the nearest folder above it that is no container of
documents: past `docs/`, `html/`) is their product where one file's code runs, installs or
imports its name; a sub-folder whose own files use its name is a product of its own; a file that
only writes the folder's name as a name in a sentence keeps it for itself. Stored as each
document's `folder` (agent/retrieval/products.py reads it before the id's folders).
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol

from agent.retrieval.products import folder_product, product_folder, written_name


class Document(Protocol):
    """What is read here of agent/retrieval/corpus.py's Document (which imports this module)."""

    id: str
    text: str
    metadata: dict
    structure: Any  # its Structure, or None for a JSONL record


HELD = 1000  # documents of one folder given held back until its product is decided: a manual's pages, not a library


class FolderProduct:
    """The product of the documents read under one folder given (`root`): the folder's name
    where one of them runs, installs or imports it (`root_product`;
    a file that only writes it as a name keeps it for itself, `prose_product`), or a sub-folder's
    that is a product of its own (`own_products`), stored as each
    document's `folder`: its passages are that product's, not each a product named by its own title
    ("Prefixing", "Caching") or by a sub-folder of its manual ("development"). Documents are held
    until the folder is read or HELD are, then decided together; a folder that cannot name a
    product (`docs/`, `/usr/share/doc`) holds none."""

    def __init__(self, root: str):
        self.root = root
        self.held: list[Document] = []
        self.product: tuple[str, dict[str, str]] | None = None if root and root_candidate(root)[0] else ("", {})

    def read(self, document: Document) -> list[Document]:
        """The documents to pass on now: this one where the product is decided, else those held once HELD are."""
        if self.product is not None:
            return [self._tagged(document)]
        self.held.append(document)
        return self.decided() if len(self.held) >= HELD else []

    def decided(self) -> list[Document]:
        """The held documents, the product decided from them (kept for the folder's later ones)."""
        parts = {d.id: _text_and_code(d) for d in self.held if _is_file(d)}
        if self.product is None:
            own = own_products([(d, code) for d, (_, code) in parts.items()])
            # what another product's files run ("test -f" in zstd/'s) says nothing of the folder's own
            name = root_product(self.root, [code for d, (_, code) in parts.items() if not own_product(d, own)])
            self.product = (name, own if name else {})
        held, self.held = self.held, []
        return [self._tagged(d, parts.get(d.id)) for d in held]

    def _tagged(self, document: Document, parts: tuple[str, str] | None = None) -> Document:
        """The document with its product's folder: the folder's own or its sub-folder's, else the
        folder given where this file writes its name as a name and names no product folder itself
        (`parts`: its text and code, where `decided` has joined them already)."""
        name, own = self.product or ("", {})
        if not _is_file(document):
            return document
        folder = (own_product(document.id, own) or name) if name else ""
        if not folder and self.root and not product_folder(document.id):
            folder = prose_product(self.root, (parts or _text_and_code(document))[0])
        return replace(document, metadata={**document.metadata, "folder": folder}) if folder else document


def _is_file(document: Document) -> bool:
    """A document read by structure from a file, not a JSONL record (an entity of its own, with no product)."""
    return document.structure is not None or "section" in document.metadata


def _text_and_code(document: Document) -> tuple[str, str]:
    """A document's prose and its code blocks, each joined (all its text where it has no blocks)."""
    sections = document.structure.sections if document.structure else []
    blocks = [block for section in sections for block in section.blocks]
    text = " ".join(block.text for block in blocks if block.kind != "code") or document.text
    code = "\n".join(block.text for block in blocks if block.kind == "code") or document.text
    return text, code


def root_product(root: str, codes: list[str]) -> str:
    """The product the folder given to the ingest documents, from the code of all the files read
    under it: its candidate (`root_candidate`, or the product's name inside a package's,
    `package_names`) where a file's code runs, installs or imports it (`code_uses`: "$ concurrently
    -k ...", "import urllib3"); "" otherwise: a folder named for the work (`notes/`, a test's
    scratch folder, a home folder) is no product. One file's code speaks for its folder's others:
    a manual's page on caching or its contributors' guide is still its product's."""
    folder, _ = root_candidate(root)
    names = dict.fromkeys([folder, *package_names(folder)]) if folder else {}
    return next((name for name in names if any(code_uses(name, code) for code in codes)), "")


def prose_product(root: str, text: str) -> str:
    """The folder given as the product of one file whose sentences write its name as a name
    (`written_name`: "Use it with Concurrently ...") though no code uses it: that file's alone,
    since a word a folder is named for ("Downloads", "Notes") is written so in many a manual."""
    folder, depth = root_candidate(root)
    return folder if folder and depth == 0 and written_name(folder, text) else ""


# a distribution's package named for a language's library or for its documentation, around the
# product's own name: /usr/share/doc/python3-pip/html, python-coverage-doc, cmake-doc
PACKAGE_PREFIX = re.compile(r"^(?:python3?|py3?|node|ruby|golang|perl|php|lua|r-cran|rust)-(?=\w)", re.IGNORECASE)
PACKAGE_SUFFIX = re.compile(r"(?<=\w)-(?:docs?|html|manual|utils|tools)$", re.IGNORECASE)


def package_names(folder: str) -> list[str]:
    """The product's name a distribution's package folder may hold (python3-pip -> pip,
    python-coverage-doc -> coverage, xz-utils -> xz): tried after the folder's own name."""
    bare = PACKAGE_SUFFIX.sub("", PACKAGE_PREFIX.sub("", folder))
    return [bare] if bare != folder else []


def root_candidate(root: str) -> tuple[str, int]:
    """(the nearest folder at or above the folder given that holds no other documents' folders
    (past `docs/`, `html/`: `pip-26.3/docs/html` -> pip), how far above it is); ("", 0) when every
    folder is such a container."""
    for depth, folder in enumerate(map(folder_product, reversed(Path(root).parts[1:]))):
        if folder:
            return folder, depth
    return "", 0


def own_products(documents: list[tuple[str, str]]) -> dict[str, str]:
    """The product folders inside a folder given to the ingest that are products of their own, not
    parts of the given folder's product's manual (`documents`: each file's document id and code):
    {folder path: product} where a file under it uses its name in code (`plugins/owlpost/` whose
    README installs owlpost), where `development/` or `topics/` never does."""
    own = {}
    for document, code in documents:
        folders = document.split("/")[:-1]
        for depth, folder in enumerate(folders):
            if (name := folder_product(folder)) and code_uses(name, code):
                own["/".join(folders[:depth + 1])] = name
    return own


def own_product(document: str, own: dict[str, str]) -> str:
    """The product of the innermost folder of `own` (`own_products`) that holds the document, or ""."""
    folders = document.split("/")[:-1]
    return next((own[path] for depth in range(len(folders), 0, -1) if (path := "/".join(folders[:depth])) in own), "")


def code_uses(name: str, code: str) -> bool:
    """Whether a code block uses `name` as its product: runs it as a command, first on a line (after
    a shell prompt, a runner such as npx, or the quote of a package.json script) with an argument
    after it; installs it with a package manager ("pip install httpx[http2]", "npm i -g serve");
    or imports it as a library ("import urllib3", "from aiohttp import web", "require('nyc')")."""
    parts = [re.escape(p) for p in re.split(r"[-_\s.]+", name) if p]
    if not parts:
        return False
    spelled = r"[-_.]?".join(parts)
    command = rf"""(?:^\s*(?:[$>%#]\s*)?|["'`]\s*)(?:(?:npx|sudo|uvx|pipx\s+run|python3?\s+-m)\s+)?{spelled}(?=[ \t]+\S)"""
    installed = rf"""\b(?:pip3?|pipx|uv\s+pip|uv|poetry|npm|pnpm|yarn|bun|gem|cargo|brew|apt|apt-get|dnf|yum|conda|go)\s+""" \
                rf"""(?:install|add|i|get)\s+(?:-\S+\s+)*["']?{spelled}(?![\w-])"""
    imported = rf"""(?:^\s*(?:>>>\s*)?(?:import|from)\s+{spelled}(?![\w-])|\brequire\(\s*["']{spelled}["']|\bfrom\s+["']{spelled}["'])"""
    return re.search(rf"(?im){command}|{installed}|{imported}", code) is not None
