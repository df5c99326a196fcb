"""reStructuredText tables' rows (agent/documents/rst.py finds the tables): a grid table's by its
columns, a list-table's items, a csv-table's records, written in the document or kept in its
:file:. Each row is a list of cell texts; rst.py writes them as one table block."""

from __future__ import annotations

import csv
import re
from pathlib import Path

from agent.documents.model import Unreadable
from agent.documents.text import decode


def grid_rows(table: list[str]) -> list[list[str]]:
    """The rows of a grid table's lines (its top rule first), each a list of cell texts: a cell's
    lines joined, a cell spanning columns read once, and one spanning rows (closed by a rule under
    some columns only) given to the row it starts in, as it reads. The columns are where the top
    rule has its "+"."""
    bounds = [i for i, char in enumerate(table[0]) if char == "+"]
    columns = list(zip(bounds, bounds[1:]))
    rows: list[dict[int, str]] = []
    row_of = [0] * len(columns)  # the row the next cell opening in each column belongs to
    open_cells: dict[int, tuple[int, int, list[str]]] = {}  # first column -> (last column, row, lines)

    def close(first: int) -> None:
        last, row, text = open_cells.pop(first)
        while len(rows) <= row:
            rows.append({})
        rows[row][first] = " ".join(part for part in text if part)
        for column in range(first, last + 1):
            row_of[column] = row + 1

    for line in table[1:]:
        line = line.ljust(bounds[-1] + 1)
        column = 0
        while column < len(columns):
            start, end = columns[column]
            if re.fullmatch(r"[-=]+", line[start + 1:end]) and line[start] in "+-=":  # a rule under this column
                for first in [first for first, (last, _, _) in open_cells.items() if first <= column <= last]:
                    close(first)
                column += 1
                continue
            last = column  # a cell runs on until a "|" (or "+") stands on a column's right edge
            while last + 1 < len(columns) and line[columns[last][1]] not in "|+":
                last += 1
            text = line[start + 1:columns[last][1]].strip()
            if column not in open_cells:
                open_cells[column] = (last, max(row_of[column:last + 1]), [])
            open_cells[column][2].append(text)
            column = last + 1
    for first in list(open_cells):
        close(first)
    return [[row[column] for column in sorted(row)] for row in rows if any(row.values())]


def list_table_rows(content: list[str]) -> list[list[str]]:
    """A list-table's rows: "* - cell" opens a row, "  - cell" the next cell, deeper lines go on."""
    rows: list[list[str]] = []
    for line in content:
        if not line.strip():
            continue
        if line.startswith("* "):
            rows.append([])
            line = "  " + line[2:]
        if rows and re.match(r"^  -( |$)", line):
            rows[-1].append(line[3:].strip())
        elif rows and rows[-1]:
            rows[-1][-1] = f"{rows[-1][-1]} {line.strip()}".strip()
    return [row for row in rows if any(row)]


TABLE_FILE_BYTES = 1_000_000


def table_file(folder: Path | None, name: str) -> list[str]:
    """The lines of a csv-table's :file:, looked for under the document's own folder only (a
    document read from an untrusted folder must not pull other files on the machine into the
    index), at most TABLE_FILE_BYTES; no lines where it is elsewhere, missing or unreadable."""
    if folder is None:
        return []
    root = folder.resolve()
    path = (root / name).resolve()
    try:
        if not path.is_relative_to(root) or not path.is_file() or path.stat().st_size > TABLE_FILE_BYTES:
            return []
        return decode(path.read_bytes()).splitlines()
    except (OSError, ValueError, Unreadable):
        return []


def csv_table_rows(content: list[str], header: str) -> list[list[str]]:
    """A csv-table's rows (written in the document, or its :file:'s), its :header: first."""
    lines = ([header] if header else []) + [line.strip() for line in content if line.strip()]
    return [[cell.strip() for cell in row] for row in csv.reader(lines, skipinitialspace=True) if row]
