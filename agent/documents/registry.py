"""Which reader reads which file suffix. A new format: one module with SUFFIXES and read(path)."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

from agent.documents import docx, html, markdown, pdf, roff, rst

STRUCTURED: dict[str, ModuleType] = {suffix: module for module in (markdown, html, pdf, docx, rst)
                                     for suffix in module.SUFFIXES}


def reader_for(path: Path) -> ModuleType | None:
    """The reader of a structured format, or None (plain text, JSONL and unknown suffixes). A
    manual page's source is known by its name's section number ("gzip.1.gz"), not one suffix."""
    return roff if roff.is_manpage_source(path) else STRUCTURED.get(path.suffix.lower())
