"""Cutting a document's structure into passages: never across two sections (or pages), code
blocks and tables whole and marked by their kind, a list together with the sentence that
leads into it, and token windows only inside a paragraph too long for one passage.

A paragraph ending in ':' just before a list, code block or table is that block's lead-in and
travels with it. A list, code block or table longer than LONG_BLOCK passages' worth of tokens
is split at line (row, item) boundaries, each part carrying the lead-in (a table part its
header row), so every part still reads as a whole."""

from __future__ import annotations

from dataclasses import dataclass

from agent.documents.model import Block, Section, Structure
from agent.documents.windows import chunk_text
from agent.retrieval.tokens import count_tokens

LONG_BLOCK = 4  # a code block or table up to 4 passages' worth of tokens stays one passage
LINE_BLOCKS = ("list", "code", "table")


@dataclass
class Piece:
    """One passage's text and where it stands."""

    text: str
    section: str
    page: int | None
    kind: str  # text, list, code or table


def cut(structure: Structure, chunk_tokens: int, overlap_tokens: int) -> list[Piece]:
    pieces: list[Piece] = []
    for section in structure.sections:
        pieces.extend(_cut_section(section, chunk_tokens, overlap_tokens))
    return pieces


def _with_lead_ins(blocks: list[Block]) -> list[tuple[str, Block]]:
    """(lead-in, block) pairs: a paragraph ending in ':' joins the list, code or table after it."""
    paired: list[tuple[str, Block]] = []
    for block in blocks:
        previous = paired[-1][1] if paired else None
        if (block.kind in LINE_BLOCKS and previous is not None and previous.kind == "text"
                and not paired[-1][0] and previous.text.rstrip().endswith(":")):
            paired[-1] = (previous.text, block)
        else:
            paired.append(("", block))
    return paired


def _cut_section(section: Section, chunk_tokens: int, overlap_tokens: int) -> list[Piece]:
    pieces: list[Piece] = []
    parts: list[str] = []
    kinds: set[str] = set()
    used = 0

    def emit(text: str, kind: str) -> None:
        pieces.append(Piece(text, section.name, section.page, kind))

    def flush() -> None:
        nonlocal used
        if parts:
            emit("\n\n".join(parts), "list" if "list" in kinds else "text")
        parts.clear()
        kinds.clear()
        used = 0

    for lead, block in _with_lead_ins(section.blocks):
        text = f"{lead}\n{block.text}" if lead else block.text
        cost = count_tokens(text)
        if block.kind in ("code", "table"):
            flush()
            if cost <= LONG_BLOCK * chunk_tokens:
                emit(text, block.kind)
            else:
                for part in _split_lines(block, lead, chunk_tokens):
                    emit(part, block.kind)
        elif cost > chunk_tokens:
            flush()
            if block.kind == "list":
                for part in _split_lines(block, lead, chunk_tokens):
                    emit(part, "list")
            else:
                for window in chunk_text(text, chunk_tokens, overlap_tokens):
                    emit(window, "text")
        else:
            if used + cost > chunk_tokens:
                flush()
            parts.append(text)
            kinds.add(block.kind)
            used += cost
    flush()
    return pieces


def _split_lines(block: Block, lead: str, chunk_tokens: int) -> list[str]:
    """A long list, code block or table in parts of about `chunk_tokens`, cut between lines
    (a list between top-level items); each part repeats the lead-in, a table's its header."""
    lines = block.text.split("\n")
    head = [lead] if lead else []
    if block.kind == "table" and len(lines) > 1:
        head.append(lines[0])
        lines = lines[1:]
    units: list[list[str]] = []
    for line in lines:
        if block.kind == "list" and units and line.startswith(" "):
            units[-1].append(line)  # a nested item stays with its parent
        else:
            units.append([line])
    base = count_tokens("\n".join(head)) if head else 0
    parts, current, used = [], [], base
    for unit in units:
        cost = count_tokens("\n".join(unit)) + 1
        if current and used + cost > chunk_tokens:
            parts.append("\n".join(head + current))
            current, used = [], base
        current.extend(unit)
        used += cost
    if current:
        parts.append("\n".join(head + current))
    return parts
