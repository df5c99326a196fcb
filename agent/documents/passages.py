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
    """(lead-in, block) pairs: a paragraph ending in ':' joins the list, code or table after it,
    and so does a label before a code block (`_lead_in`)."""
    paired: list[tuple[str, Block]] = []
    for block in blocks:
        previous = paired[-1][1] if paired else None
        lead = _lead_in(previous, block) if previous is not None and not paired[-1][0] else ""
        if lead:
            paired[-1] = (lead, block)
        else:
            paired.append(("", block))
    return paired


LABEL_WORDS = 12  # a label says what the example after it does in a few words ("Run tests by marker expressions")
# verbs an instruction opens with ("Run make check.", "Set PAGER to ...")
INSTRUCTION_VERBS = frozenset(
    "add call change check choose click configure copy create define delete disable download edit enable enter "
    "export install invoke launch load mount open pass pipe press put remove rename replace restart run save "
    "select set specify start stop type uninstall unset update upgrade use write".split())


def _lead_in(previous: Block, block: Block) -> str:
    """The lead-in `previous` is to `block`, or "": a paragraph ending in ':' before a list, code
    block or table; before a code block, a label, a line of a few words that opens with a capital
    and ends no sentence (manuals title their examples so: "Run tests by marker expressions", then
    `pytest -m slow`), or a step, a short instruction ("Uninstall a package.", then its command),
    each given the ':' that says it leads in; a list of one such step too (its command nested under it)."""
    text = previous.text.rstrip()
    if block.kind not in LINE_BLOCKS or previous.kind not in ("text", "list"):
        return ""
    if text.endswith(":") and previous.kind == "text":  # a list's item so is an option's row ("-x — as in:")
        return previous.text
    short = "\n" not in text and text[:1].isupper() and len(text.split()) <= LABEL_WORDS
    is_label = short and not text.endswith((".", "!", "?", ";", ",", ")", '"', "'"))
    is_step = short and text.endswith(".") and text.split(" ", 1)[0].lower() in INSTRUCTION_VERBS
    return f"{text.rstrip('.')}:" if block.kind == "code" and (is_label or is_step) else ""


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
