"""Cutting a document's structure into passages: never across two sections (or pages), code
blocks and tables whole and marked by their kind, a list together with the sentence that
leads into it, and token windows only inside a paragraph too long for one passage.

A paragraph ending in ':' just before a list, code block or table is that block's lead-in and
travels with it. A code block or table is one passage whatever its length (prompts show a
passage's start, BM25 matches all of it); a list too long for one passage is split between
top-level items, each part carrying the lead-in, so every part still reads as a whole."""

from __future__ import annotations

from dataclasses import dataclass

from agent.documents.model import Block, Section, Structure
from agent.documents.windows import chunk_text
from agent.retrieval.tokens import count_tokens

LINE_BLOCKS = ("list", "code", "table")


@dataclass
class Piece:
    """One passage's text and where it stands."""

    text: str
    section: str
    page: int | None
    kind: str  # text, list, code or table
    part: str = ""  # "2/3" for the second of three parts of a block too long to keep whole


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

    def emit(text: str, kind: str, part: str = "") -> None:
        pieces.append(Piece(text, section.name, section.page, kind, part))

    def emit_parts(parts_of_block: list[str], kind: str) -> None:
        for number, text in enumerate(parts_of_block, 1):
            emit(text, kind, f"{number}/{len(parts_of_block)}" if len(parts_of_block) > 1 else "")

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
            emit(text, block.kind)
        elif cost > chunk_tokens:
            flush()
            if block.kind == "list":
                emit_parts(_split_lines(block, lead, chunk_tokens), "list")
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
    """A long list in parts of about `chunk_tokens`, cut between top-level items (a nested item
    stays with its parent); each part repeats the lead-in."""
    head = [lead] if lead else []
    units: list[list[str]] = []
    for line in block.text.split("\n"):
        if units and line.startswith(" "):
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
