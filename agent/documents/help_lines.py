"""A program's --help listing, as manuals print it: in a saved text file and in a code block.

A README often pastes `tool --help` as code ("  -d, --diff    print the diff for the fixed
source"); read as one code block, the listing was one unit, and the row that answers ("How do I
show a diff?") was never a unit of its own. `help_listing` reads such a block as its options,
one item each, as a man page's options are read (agent/documents/manpage.py).
"""

from __future__ import annotations

import re

# a line of a program's --help output: its option names, a dot leader or two spaces, what it does
# ("  -i, --ignore ....... ignore specific files", "  -t, --test    Test the archive")
HELP_LINE = re.compile(r"^([ \t]{0,8})(-(?:[^\s.]|\.(?!\.))(?:[^.\s]| (?! )|\.(?!\.))*?)(?: ?\.{3,} ?|\s{2,})(\S.*)$")
HELP_NAMES = 40  # characters: longer is a sentence that starts with a dash, not an option's names
# an option's names alone on their line, what it does on the lines under it, deeper
# ("  -l START-END, --lines START-END", then "        range of lines to reformat")
NAMES_ALONE = re.compile(r"^([ \t]{0,8})(-[^\s.][^\s]*(?:,? [^\s]+){0,5})\s*$")
# a positional argument's line in the same layout ("  files     files to format")
ARGUMENT_LINE = re.compile(r"^([ \t]{1,8})([a-z][\w.-]*(?: \.\.\.)?)\s{2,}(\S.*)$")
NAMES_ALONE_WIDTH = 48  # characters: an option's spellings with their arguments ("--line-range line line, --range line line")
# an option's item that sets its description after a hyphen, an en dash or a colon, as READMEs
# list them ("--port=NUMBER - select port to use", "--quiet | -q - suppress logging", "-p, --port –
# port to use", "--port <n>: the port to listen on")
_SPELLING = r"-{1,2}[A-Za-z](?:[^\s|,:]|:(?=\S))*(?:\s+(?:<[^>\s]+>|\[[^\]\s]+\]|[A-Z][A-Z0-9_]*))?"
DASHED_ITEM = re.compile(rf"^({_SPELLING}(?:(?:\s*[|,]\s*|\s+or\s+){_SPELLING})*)(?:\s+[-–]\s+|:\s+)(?=\S)")
HELP_MIN = 3  # option lines: fewer is a command with an option or two, not a listing


def help_listing(code: str) -> tuple[str, list[str]] | None:
    """(the lines before the listing: its usage, its options, one "names — what it does" item each)
    for a code block that is a --help listing; None for other code. Group headings ("optional
    arguments:") are left out: the items say what they are."""
    lines = [line.expandtabs(8).rstrip() for line in code.split("\n")]
    first = next((i for i, line in enumerate(lines) if _option_line(line)), None)
    if first is None or sum(1 for line in lines if _option_line(line)) < HELP_MIN:
        return None
    usage = lines[:first]
    # the group headings over the options ("optional arguments:") and the positional arguments
    # listed before them, which belong to the listing as items
    while usage and (not usage[-1].strip() or usage[-1].rstrip().endswith(":") or ARGUMENT_LINE.match(usage[-1])):
        usage.pop()
    items: list[str] = [f"{m.group(2)} — {m.group(3)}" for line in lines[len(usage):first]
                        if (m := ARGUMENT_LINE.match(line))]
    index, other = first, 0
    while index < len(lines):
        line = lines[index]
        found = _option_line(line) or ARGUMENT_LINE.match(line)
        if not found:
            other += bool(line.strip()) and not line.rstrip().endswith(":")
            index += 1
            continue
        names, said = found.group(2).strip(), (found.group(3) if found.re is not NAMES_ALONE else "")
        index += 1
        while index < len(lines) and lines[index].strip() and not _option_line(lines[index]) \
                and len(lines[index]) - len(lines[index].lstrip()) > len(found.group(1)):
            # a word hyphenated where the listing wraps is one word ("comma-" "separated")
            said = f"{said}{'' if said.endswith('-') else ' '}{lines[index].strip()}".strip()
            index += 1
        if said:
            items.append(f"{names} — {said}")
    if len(items) < HELP_MIN or other > len(items):  # prose or commands between the lines: no listing
        return None
    return "\n".join(usage).strip("\n"), items


def _option_line(line: str):
    """The match of an option's line: names beside what it does, or alone over it."""
    found = HELP_LINE.match(line)
    if found and len(found.group(2)) <= HELP_NAMES:
        return found
    alone = NAMES_ALONE.match(line)
    return alone if alone and len(alone.group(2)) <= NAMES_ALONE_WIDTH else None


def dashed_item(line: str) -> str:
    """An option's item written "names - what it does" (or "names: what it does") as "names — what
    it does", the way every reader writes an option's item; any other line as it is."""
    found = DASHED_ITEM.match(line)
    if not found:
        return line
    said = re.sub(r"^[—–]\s+", "", line[found.end():])  # a reader's own dash after the colon ("--zstd: — zstd ...")
    return f"{found.group(1)} — {said}"


def dashed_items(text: str) -> str:
    """A list's lines, each option's item written "names — what it does" (`dashed_item`), indents kept."""
    return "\n".join(line[:len(line) - len(line.lstrip())] + dashed_item(line.lstrip()) for line in text.split("\n"))
