"""Which option an answer unit is about: how a unit shows an option (`option`: "`-k, --keep` —
Keep ..."), the option names it opens with (`option_names`, `names_asked`), and how an option's
name goes with the sentences that describe it without saying it, a later sentence of its
description (`carried_head`, `said_alone`) or a sentence of a section the option titles
(`option_heading`, `under_heading`). agent/assembly/units.py cuts passages into units with them."""

from __future__ import annotations

import re

from agent.documents.citation import field_of
from agent.documents.model import CARRIED
from agent.steps.grounding import stem

# a cell naming a flag, a setting or an identifier: shown as code
_CODE_CELL = re.compile(r"^(?:-{1,2}(?:\[[\w-]+\])?[\w-]+#?|-#|[\w.-]*[_./=$@<>\[\]{}][\w.-]*|[a-z][\w-]*|[A-Z][A-Z0-9_]+)(?:[, =]+\S+)*$")
OPTION_ROW = re.compile(r"^`[^`]+` — ")  # an option's row or item, as `option` writes it
OPTION_NAME = r"-{1,2}[A-Za-z][\w-]*"  # "-k", "--keep"
_OPTION_LINE = re.compile(rf"^{OPTION_NAME}[,:]?\s")  # one as a man page's text has it: "-k --keep Keep ..."


# a later sentence of an option's description is quoted with the option it is said of ("`--train FILEs`
# — … The legacy builder is --train-legacy."), and scored as it stands in the manual (`said_alone`), so
# the description's first sentence still speaks for the option
_CARRIED_HEAD = re.compile(rf"^`[^`]+` — {CARRIED}")


def said_alone(unit: str) -> str:
    """The unit without an option's name carried before a later sentence of its description."""
    return _CARRIED_HEAD.sub("", unit, count=1)


def option(item: str) -> str:
    """An item naming an option and what it does ("--quiet — Print nothing", a definition list's
    term and definition) with the option shown as code, as a table row shows it."""
    key, dash, said = item.partition(" — ")
    return f"`{key}` — {said}" if dash and _CODE_CELL.match(key) and "`" not in key else item


# a term that is an option, a name or a command's syntax ("-k, --insecure", "COVERAGE_FILE",
# "log-target [TARGET]", "merge <dir>"), not words ("filter by pattern")
_NAMES_SYNTAX = re.compile(r"^\S+$|(?<![\w-])-{1,2}[A-Za-z]|[\[<{=$]|\b[A-Z][A-Z_]+\b")


def carried_head(head: str) -> str:
    """What the later sentences of an item opening with `head` are quoted after ("`-k, --insecure` — "):
    its term shown as code when that term names an option, a name or a syntax, else ""."""
    key = OPTION_ROW.match(head)
    return key.group(0) if key and _NAMES_SYNTAX.search(head[1:head.index("`", 1)]) else ""


# a heading that is an option or an environment variable ("--inspect[=[host:]port]", "-p, --print
# "script"", "NODE_OPTIONS=options"), as documentation that gives each option a section of its own
# titles it; a plain upper-case heading ("OPTIONS", "PAGER") is a man page's section, not a name
_OPTION_HEADING = re.compile(r"^(?:-{1,2}[A-Za-z]|[A-Z][A-Z0-9]*_[A-Z0-9_]*(?:=\S*)?$|[A-Z][A-Z0-9_]+=\S*$)")
OPTION_HEADING_CHARS = 60


def option_heading(passage: dict) -> str:
    """The option or variable the passage's own section is titled by, or ""."""
    heading = str(field_of(passage, "section")).split(" > ")[-1].strip()
    fits = len(heading) <= OPTION_HEADING_CHARS and "`" not in heading
    return heading if fits and _OPTION_HEADING.match(heading) else ""


def under_heading(units: list[tuple[str, str]], heading: str) -> list[tuple[str, str]]:
    """A section titled by an option is that option's description, as a definition list's item
    is: its first sentence in the passage is the option's row ("`--inspect` — Activate inspector
    on host:port."), each later one quoted with the option (`CARRIED`), so no sentence of it
    answers without saying which option it describes. Other units as they are."""
    if not heading:
        return units
    out, head, described = [], f"`{heading}` — ", False
    for kind, unit in units:
        if kind == "sentence":
            unit, kind, described = f"{head}{CARRIED if described else ''}{unit}", "item", True
        out.append((kind, unit))
    return out


# an option's name at the head of its row or item ("-k --keep Keep ...", "`-v, --verbose` — ...")
_FLAG = re.compile(r"(?<![\w-])-{1,2}([A-Za-z][\w-]*)")
OPTION_HEAD = 60  # characters of a unit without " — " that may hold its option names


def option_head(unit: str) -> str:
    """The part of a unit that may hold its option names: before " — ", else its first
    OPTION_HEAD characters, without code marks."""
    unit = said_alone(unit)
    return (unit.split(" — ")[0] if " — " in unit else unit[:OPTION_HEAD]).replace("`", "")


def option_names(unit: str) -> set[str]:
    """The option names a unit opens with, dashes kept, lower case ("-k", "--keep")."""
    return {found.group(0).lower() for found in _FLAG.finditer(option_head(unit))}


def option_words(unit: str) -> set[str]:
    """The words of the option names a unit opens with ("--no-name" -> {"name"}), stemmed; words
    of two letters or fewer say nothing ("-k")."""
    return {stem(word.lower()) for name in _FLAG.findall(option_head(unit))
            for word in re.split(r"[-_]", name) if len(word) > 2}


def names_asked(unit: str, asked: set[str]) -> bool:
    """Whether an option the unit documents is named by a word of the question (`asked`: its
    content words, stemmed): "--keep" for "How do I keep the original file?". Over the manuals'
    tune products, a product's unit preferred so is the labelled one more often than the reader's
    first alone (35 against 31 of 50 product pools: docs/results/manuals.md)."""
    return bool(option_words(unit) & asked)


def is_option_unit(unit: str) -> bool:
    """Whether the unit is an option's row or item ("`-k, --keep` — Keep ...", "-k --keep Keep ...")."""
    return bool(OPTION_ROW.match(unit) or _OPTION_LINE.match(unit))
