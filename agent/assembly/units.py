"""Answer units: what a passage is split into when its sentences compete to be a reading.

Prose gives its whole sentences. A passage read by structure (agent/documents/: its `kind` is
text, list, code or table) gives the units a manual answers with, each kept whole:

- a code block with the sentence leading into it ("To run the tests, type:"), carried as a
  fenced block so every place that shows the answer shows it as code;
- one row of a table, read against its header ("`--quiet` — Print nothing.");
- one list item (its nested items with it).

A line of a structured passage that ends no sentence (a heading, a caption, an image's alt
text) is no unit: it names a thing and answers nothing. Prose in passages with no `kind`
(JSONL, plain text) is split as before. Which option a unit is about, and how an option's name
goes with the sentences that describe it, is agent/assembly/unit_options.py's.
"""

from __future__ import annotations

import re

from agent.assembly.unit_options import (OPTION_NAME, OPTION_ROW, carried_head, is_option_unit, option,
                                         option_heading, said_alone, under_heading)
from agent.documents.citation import field_of, location
from agent.documents.model import CARRIED, KINDS
from agent.documents.passages import INSTRUCTION_VERBS
from agent.retrieval.products import document_title, product_key, product_of
from agent.steps.interpretations import sentences

FENCE = "```"
MIN_ANSWER_SENTENCE = 20  # characters: shorter ones are mostly headings (see agent/assembly/text.py)
ENDS = ('.', '!', '?', '"', "'", ")")  # a line ending otherwise ends no sentence
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
_CODE_BLOCK = re.compile(r"\n```[^\n]*\n.*\n```$", re.S)
# a lead-in reads as prose ending in ":": it opens with a capital (or the name of the product it is
# about: "nodemon wraps your application, so ...:") and holds no code: no brackets, braces or
# statement marks, no call "f(x)" (a man page's "find(1)" is prose) and no assignment " = ".
# A parenthesis after a space is prose ("the first (N) failures:"), so is an option's "=" ("--reuse-venv=never")
_PROSE_LEAD = re.compile(r"^\S[^{}\[\];<>]*:$")
_CODE_IN_LEAD = re.compile(r"\w\((?!\d\w?\))| = |->")
_TO_DO = re.compile(r"^To\s+\w+[^,]{0,80},\s+\w+")  # "To run the tests, type ..."
# questions asking how to do something, not how a thing works ("How do I run ...?", "How to ...",
# "What command ...?", "Which option ...?")
HOW_TO = re.compile(r"^\s*(?:how\s+(?:do|can|could|should|would|may|must|shall)\s+(?:i|we|you|one|users?)\b|"
                    r"how\s+to\b|(?:what|which)\s+(?:\w+\s+)?(?:command|option|flag|setting|switch|parameter|"
                    r"syntax|variable)s?\b)", re.IGNORECASE)


def passage_kind(passage: dict) -> str:
    """The passage's kind when a reader cut it by structure (text, list, code, table), else ""
    (a JSONL record's own "kind" field is no reader's)."""
    kind = field_of(passage, "kind")
    return kind if kind in KINDS else ""


# a section that records what changed in each version ("Changelog > 1.3.5 > Fixed", "Version
# history"): its sentences say what a release did, not how to do it, and would answer in its words
RELEASE_NOTES = re.compile(r"(?i)^(?:version history|release history|history|change ?log|changes|release notes|"
                           r"what['’]s new|news|recent changes)$")


# a folder of a manual that holds its release notes, one page a release (pytest's announce/release-7.2.0.html)
RELEASE_FOLDER = re.compile(r"(?i)announce(?:ments?)?|releases?|release[-_ ]notes|change ?log|changes|news|whats_?new")


def release_notes(passage: dict) -> bool:
    """Whether a passage read from a file is release notes: its document or a section over it is
    titled so, or its document stands in a folder of them. A record's title says nothing of it
    ("Changes" is also a song): only a passage read from a file has a section ("" where its file
    has none), beside its text as the index hands it back or under its metadata as a reader cut it;
    every passage a reader cut has a `document`."""
    if "section" not in passage and "section" not in (passage.get("metadata") or {}):
        return False
    titles = [document_title(passage), *field_of(passage, "section").split(" > ")]
    folders = str(location(passage).get("document") or "").split("/")[:-1]
    return any(RELEASE_NOTES.match(title.strip()) for title in titles) or any(map(RELEASE_FOLDER.fullmatch, folders))


def passage_units(passage: dict) -> list[tuple[str, str]]:
    """(kind, text) of each unit of the passage, in order: kind is "sentence", "code", "row" or
    "item"; none for a passage of release notes (a changelog's document or section)."""
    if release_notes(passage):
        return []
    text = re.sub(r'^\s*"[^"]{1,200}"\s+', "", passage["text"])
    kind = passage_kind(passage)
    product = passage.get("product") or product_of(passage) or ""
    if not kind:  # a saved --help listing's line ("--cwd <dir> — change into <dir> ...") shows its option as code
        return [("sentence", option(s) if s.startswith("-") else s) for s in prose_sentences(text, product)]
    if kind == "code":
        return code_units(text, product)
    if kind == "table":
        return table_units(text)
    units: list[tuple[str, str]] = []
    blocks = _BLANK_LINE.split(text.strip())
    for block in blocks:
        lines = block.split("\n")
        if len(lines) > 1:  # a list, with or without its lead-in
            units += list_items(lines)
        else:  # of several blocks, a piece ending no sentence is a heading, a caption or alt text, or an option's item
            carried = ""  # an option's item alone on its line (a long list cut one item a passage): its later sentences
            for piece in prose_sentences(block, product):
                unit, kind = option(piece), "sentence"
                if OPTION_ROW.match(unit):
                    unit, carried = completed(unit), carried_head(unit)
                elif carried:
                    unit, kind = f"{carried}{CARRIED}{unit}", "item"
                if len(blocks) == 1 or unit.endswith(ENDS):
                    units.append((kind, unit))
    return under_heading(units, option_heading(passage))


# a list bullet a text rendering keeps at a line's start ("○ -k, --keep: keep source files"):
# typesetting, not words, so no reading opens with it
_BULLET = re.compile(r"^[•◦○●▪▫■□‣∙·]\s+")
# one inside a sentence: a text rendering that joins lines ends an item without a full stop there
# ("-v, --verbose: verbose mode ○ -q, --quiet: suppress warnings"); each item is a unit of its own
_MID_BULLET = re.compile(r"\s+[•◦○●▪▫■□‣]\s+")


def prose_sentences(text: str, product: str = "") -> list[str]:
    """Whole sentences, cut at a bullet glyph and less it: not a chunk's opening fragment (lower-case
    start, unless it opens with the product's command: "pip cache purge will clear the cache.")
    nor a short piece. An option's names with a one-word label ("-t --test Test.") join the
    sentence that says what the option does."""
    found = with_option_names([_BULLET.sub("", piece) for s in sentences(text) for piece in items_of(s)])
    return [s for s in found if len(s) >= MIN_ANSWER_SENTENCE
            and (not s[:1].islower() or opens_with(s, product) or is_named_item(s))]


def is_named_item(piece: str) -> bool:
    """Whether a piece is an item whose term is a command's or option's name or syntax ("split-window
    [-bdhv] [-t target-pane] — Create a new pane ..."): lower case as commands are, and no fragment."""
    return bool(carried_head(option(piece)))


def opens_with(sentence: str, product: str) -> bool:
    """Whether the sentence opens with the product's name as its command is typed ("pip cache ...",
    "gzip reduces ..."), which a sentence may open with in lower case."""
    first = sentence.split(" ", 1)[0]
    return bool(product) and first == first.lower() and product_key(first) == product_key(product)


# the names a man page's option line opens with, each with its argument ("-S .suf --suffix .suf", "-T THREADS")
_OPTION_NAMES = re.compile(rf"^(?:{OPTION_NAME}(?:[=\s][A-Z<\[][\w<>\[\]=-]*)?[,:]?\s+)+")


def items_of(sentence: str) -> list[str]:
    """The sentence cut at each bullet glyph inside it; a piece a bullet ends is a whole item, so it
    ends as a sentence does."""
    pieces = _MID_BULLET.split(sentence)
    return [completed(piece) for piece in pieces[:-1]] + pieces[-1:]


def with_option_names(found: list[str]) -> list[str]:
    """A man page's text collapses "-t --test" and its indented "Test. Check the compressed file
    integrity." into sentences of their own: the names with a label shorter than a sentence are
    no answer alone, and the sentence after them no longer says which option it describes. Such
    a piece is joined to the next sentence unless that one opens another option, as one sentence
    ("-t --test Test: Check the compressed file integrity."), so its citation is the option's."""
    out: list[str] = []
    for sentence in found:
        previous = out[-1] if out else ""
        names = _OPTION_NAMES.match(previous)
        if (names and len(previous) - names.end() < MIN_ANSWER_SENTENCE
                and not _OPTION_NAMES.match(sentence) and not sentence[:1].islower()):
            label = previous[names.end():].strip().rstrip(".")
            out[-1] = f"{previous[:names.end()].strip()} {label}: {sentence}" if label else f"{previous} {sentence}"
        else:
            out.append(sentence)
    return out


LEAD_WORDS = 3  # "Install it with:"; a shorter lead-in is a label ("Example:", "Pipe example:")


def code_units(text: str, product: str = "") -> list[tuple[str, str]]:
    """The code block with its lead-in as one unit (`lead_in`); a block no sentence leads into is
    none (nothing says what it does), nor one under a label."""
    lead, _, code = text.partition("\n")
    lead = lead.strip()
    if not code.strip() or not is_lead_in(lead, product):
        return []
    return [("code", f"{lead_in(lead, product)}\n{FENCE}\n{commands_of(code.strip(chr(10)))}\n{FENCE}")]


# a lead-in opening so, or referring back in its first words, says what its block does only with
# what came before it ("For example:", "This lets you do something like:", "So if you had the above
# setup ..., you could do:")
_LEADS_ON = re.compile(r"^(?:so|then|thus|hence|here|now|also|again|similarly|likewise|e\.g\.|i\.e\.|example|"
                       r"for (?:example|instance)|in (?:this|that|such) case)\b", re.IGNORECASE)
_REFERS_BACK = frozenset("this that these those such above it its them they".split())
REFERS_WITHIN = 5  # first words of a lead-in where a word referring back makes it lean on the sentence before


def lead_in(paragraph: str, product: str = "") -> str:
    """The sentences of a paragraph ending in ":" that lead into its block: the last, which says
    what the block does ("Use -r or --reuse-existing-virtualenvs ...:"), alone when it reads alone;
    else the paragraph's first, which names the subject ("The nyc merge command is for producing
    one raw coverage output file ..."), then the last. The sentences between are the manual's
    discussion ("This is usually fine for most projects ...", "However, there are some
    situations ..."): each is stated as a sentence of the answer, and seldom answers."""
    found = sentences(paragraph)
    if len(found) < 2 or not is_lead_in(found[-1], product):
        return paragraph
    last = found[-1]
    words = [w.strip(",;:()").lower() for w in last.split()[:REFERS_WITHIN]]
    if _LEADS_ON.match(last) or _REFERS_BACK & set(words):
        return f"{found[0]} {last}" if len(found) > 2 else paragraph
    return last


def is_lead_in(lead: str, product: str = "") -> bool:
    """Whether a line reads as prose leading into a block: it ends in ":", says it in LEAD_WORDS
    words or more, holds no code, and opens with a capital or with the product's name (a lower-case
    start is otherwise a piece of a sentence cut off before it)."""
    first = lead.split(" ", 1)[0].rstrip(",").lower()
    opens = lead[:1].isupper() or bool(product) and first == product.lower()
    return (opens and bool(_PROSE_LEAD.match(lead)) and not _CODE_IN_LEAD.search(lead)
            and len(lead.split()) >= LEAD_WORDS)


_PROMPT = re.compile(r"^\s*\$ \S")  # a shell session's command line ("$ pytest -vv")


def commands_of(code: str) -> str:
    """A shell session's command lines, without the output between them: the answer is the command
    that does it, and a page of a test run's output said after it is no part of that. Code that
    is no session (no line opens with "$ ") is kept whole."""
    lines = code.split("\n")
    commands = [line for line in lines if _PROMPT.match(line)]
    return "\n".join(commands) if commands else code


# a column that says what the row's key does: stated as it is, not led by its header
DESCRIBES = re.compile(r"(?i)(description|meaning|explanation|purpose|effect|summary|details?)")


def table_units(text: str) -> list[tuple[str, str]]:
    """One unit per body row, read against the header: "`key` — description." for two
    columns, "`key` — Header: value; Header: value." for more, led by the column that describes
    the key, without its header ("`-p` — Port to use; Default: 8080.")."""
    lines = [line for line in text.split("\n") if line.strip()]
    if lines and lines[0].rstrip().endswith(":") and " | " not in lines[0]:
        lines = lines[1:]  # the table's lead-in
    if len(lines) < 2:
        return []
    header = [cell.strip() for cell in lines[0].split("|")]
    units = []
    for line in lines[1:]:
        cells = [cell.strip() for cell in line.split("|")]
        key, rest = cells[0], cells[1:]
        if not key or not any(rest) or measured(rest):
            continue
        if len(rest) == 1:
            said = rest[0]
        else:
            named = [(name, cell) for name, cell in zip(header[1:], rest) if cell]
            named.sort(key=lambda pair: not DESCRIBES.fullmatch(pair[0]))  # what it does, then its value
            said = "; ".join(cell.rstrip(".") if not name or DESCRIBES.fullmatch(name) else f"{name}: {cell}"
                             for name, cell in named)
        units.append(("row", completed(option(f"{key} — {said}"))))
    return units


# 210,421; 14.17 s; 3.2x; 95%; a dash or n/a where nothing was measured
_MEASURE = re.compile(r"[~<>≈]?[-+]?[\d.,]+\s*(?:%|[kKMGT]i?B|[mµn]?s|x|×)?|[-–—]|n/?a", re.IGNORECASE)


def measured(cells: list[str]) -> bool:
    """Whether a row's cells after its key are all measurements (a benchmark's sizes and times):
    data a reader looks up, not a sentence that says how to do something."""
    filled = [cell for cell in cells if cell]
    return len(filled) >= 2 and all(_MEASURE.fullmatch(cell) for cell in filled)


def list_items(lines: list[str]) -> list[tuple[str, str]]:
    """Each top-level item with its nested items after it ("; ") as one unit; an item of several
    sentences (a definition list's long definition) gives each sentence, its first with the
    item's term, and every one with it where the term is an option, a name or a command's syntax
    (`carried_head`): "This option makes curl skip the verification step." answers only with the
    option it is said of. A lead-in line ending in ':' is no item."""
    if lines[0].rstrip().endswith(":") and not lines[0].startswith(" "):
        lines = lines[1:]
    items: list[list[str]] = []
    for line in lines:
        if items and line.startswith(" "):
            items[-1].append(line.strip())
        elif line.strip():
            items.append([line.strip()])
    units: list[tuple[str, str]] = []
    for parts in with_examples(items):
        parts = [labelled(parts[0]), *parts[1:]]
        said = sentences(parts[0])
        if len(parts) == 1 and len(said) > 1:
            head = option(said[0])
            carried = carried_head(head)
            units += [("item", head)] + [("item", f"{carried}{CARRIED}{s}") if carried else ("sentence", s)
                                         for s in said[1:] if len(s) >= MIN_ANSWER_SENTENCE]
        elif len(" ".join(parts)) >= MIN_ANSWER_SENTENCE:
            units.append(("item", completed(option("; ".join(parts)))))
    return units


def with_examples(items: list[list[str]]) -> list[list[str]]:
    """The items, an option's line that leads into what follows it ("-x files --exclude files —
    Exclude the files, as in:", "-l --list — list the following fields:") joined by the carried line
    after it ("-x files --exclude files — … zip -r foo foo -x \\*.o"), as a manual page sets them:
    the lead-in alone says "as in." and what follows alone says nothing of what it is for."""
    joined: list[list[str]] = []
    for parts in items:
        previous = joined[-1][0] if joined and len(joined[-1]) == 1 and len(parts) == 1 else ""
        head = previous.split(" — ", 1)[0]
        if previous.endswith(":") and head and parts[0].startswith(f"{head} — {CARRIED}"):
            joined[-1] = [f"{previous} {parts[0][len(head) + 3 + len(CARRIED):]}"]
        else:
            joined.append(parts)
    return joined


_LABEL = re.compile(r"^(.{1,80}? — )([A-Z]\w*)\.\s+(?=[A-Z])")  # "-t --test — Test. Check ..."


def labelled(item: str) -> str:
    """An item whose description opens with a one-word label, the label joined to the sentence
    after it, as a man page's option reads ("-t --test — Test. Check the integrity." -> "-t --test
    — Test: Check the integrity."): the label alone is no answer, and the sentence alone does not
    say its option."""
    return _LABEL.sub(r"\1\2: ", item, count=1)


def completed(text: str) -> str:
    """A unit that is whole by its structure ends as a sentence does, so it reads as one."""
    text = text.strip().rstrip(" ;,:")
    return text if text.endswith(ENDS) else f"{text}."


def is_code_unit(unit: str) -> bool:
    """Whether the unit is a lead-in with its fenced code block (whole by construction)."""
    return bool(_CODE_BLOCK.search(unit))


def split_code(unit: str) -> tuple[str, str]:
    """(the unit's prose, its fenced code block or "")."""
    found = _CODE_BLOCK.search(unit)
    return (unit[:found.start()], unit[found.start() + 1:]) if found else (unit, "")


SCORED_CODE = 200  # characters of code the selector and reader read after the lead-in: what it runs, not a listing


def unit_prose(unit: str) -> str:
    """The unit as the selector and the reader read it: a code unit as one sentence, its lead-in
    then the start of its code ("To run the tests, type: make check."); backticks dropped. The
    models were trained on prose sentences, so they read what the unit says in that form."""
    prose, block = split_code(said_alone(unit))
    if block:
        code = " ; ".join(line.strip() for line in block.split("\n")[1:-1] if line.strip())
        prose = completed(f"{prose.strip()} {code[:SCORED_CODE].strip()}")
    return prose.replace("`", "")


def asks_how(question: str) -> bool:
    """Whether the question asks how to do something (not how a thing works)."""
    return bool(HOW_TO.match(question))


def says_how(passage: dict, unit: str) -> bool:
    """Whether the unit tells how: a code block with its lead-in, an option's row, or an
    instruction (it opens with an instruction verb, or "To do X, do Y")."""
    unit = said_alone(unit)
    if is_code_unit(unit) or passage_kind(passage) == "table" or is_option_unit(unit):
        return True
    first = (re.findall(r"[A-Za-z]+", unit) or [""])[0].lower()
    return first in INSTRUCTION_VERBS or bool(_TO_DO.match(unit))


def join_units(parts: list[str]) -> str:
    """The answer's parts joined: sentences by a space, a part holding a code block set apart
    by blank lines, so its fence stands on lines of its own."""
    out = ""
    for part in parts:
        block = "\n" in part or out.endswith(FENCE)
        out = part if not out else f"{out}\n\n{part}" if block else f"{out} {part}"
    return out
