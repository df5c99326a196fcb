"""A manual page as `man` prints it, saved as text (`man gzip > gzip.1.txt`): read by its layout.

Read as prose, a page's options ran together ("-k --keep Keep ... -l --list For each ...") and
every passage stood in no section. The page's layout says it all: a line at the left margin
is a section heading (OPTIONS, or a title such as "Network"), one indented by a few spaces a
sub-heading ("Operation Mode"), and a tagged paragraph (a tag such as "-k, --keep" with its
description indented deeper, under it, beside it or after a blank line; a BSD command's wrapped
synopsis) is one item, "-k, --keep — Keep (don't delete) input files.", as a definition list
reads; the values an item lists under it are said of that item. Bullets ("○", "•") are items
too; other paragraphs are prose, their lines joined. The page's running header and footer
("GZIP(1)  General Commands Manual  GZIP(1)") are left out.
"""

from __future__ import annotations

import re

from agent.documents.model import CARRIED, SectionBuilder, Structure
from agent.documents.text import indent_of

_HEADER = re.compile(r"^\S+\([1-9][a-z]{0,3}\)\s.*\S+\([1-9][a-z]{0,3}\)\s*$")
_SECTION = re.compile(r"^[A-Z][A-Z0-9 ,/&()-]{1,40}$")  # "NAME", "SEE ALSO", "EXIT STATUS"
# a section as pandoc and help2man title theirs ("Positional arguments", "Network"): man sets every
# section heading at the left margin and all else indented, so there a short titled line is one too
_TITLED_SECTION = re.compile(r"^[A-Z][A-Za-z0-9 ,/&()'-]{1,40}$")
SECTION_WORDS = 6
_MDOC_FOOTER = re.compile(r"^(\S+)\s{2,}\S.*\S\s{2,}\1$")  # the system's name either side of the date
_BULLET = re.compile(r"^([○•●◦·*-])\s+")
_OVERSTRIKE = re.compile(r".\x08")
SUBHEADING_INDENT = 4  # at most: "   Operation Mode"
SUBHEADING_WORDS = 8
TAG_GAP = re.compile(r"\S(\s{2,})\S")  # a tag and its description on one line: "KiB    Multiply ..."
TAG_WIDTH = 24  # characters: a longer first line is prose, not a tag ...
OPTION_TAG_WIDTH = 48  # ... unless it names options ("-d --decompress --uncompress")


def looks_like_manpage(text: str) -> bool:
    """Whether a text file is a manual page as `man` prints it: its running header
    ("GZIP(1) ... GZIP(1)") or its NAME section heading, with DESCRIPTION or SYNOPSIS after it."""
    head = [line for line in text[:20000].splitlines() if line.strip()]
    if head and _HEADER.match(_OVERSTRIKE.sub("", head[0]).strip()):
        return True
    plain = [_OVERSTRIKE.sub("", line).rstrip() for line in head]
    return "NAME" in plain[:3] and any(line in ("SYNOPSIS", "DESCRIPTION") for line in plain)


def parse(text: str, fallback_title: str) -> Structure:
    lines = [_OVERSTRIKE.sub("", line).expandtabs(8).rstrip() for line in text.replace("\r\n", "\n").split("\n")]
    running = {line.strip() for line in lines if _HEADER.match(line.strip())}
    last = next((line.strip() for line in reversed(lines) if line.strip()), "")
    if re.search(r"\S+\([1-9][a-z]{0,3}\)$", last) or _MDOC_FOOTER.match(last):
        running.add(last)  # the footer: "GNU gzip  2023-08-15  GZIP(1)", an mdoc page's "BSD  January 1, 2026  BSD"
    builder = SectionBuilder()
    _Page(builder).read([line for line in lines if line.strip() not in running])
    return builder.structure(fallback_title)


class _Page:
    """Walks the page's paragraphs, gathering consecutive items into one list block."""

    def __init__(self, builder: SectionBuilder):
        self.builder = builder
        self.items: list[str] = []
        self.lead_in = -1  # the indent of the prose paragraph just read when it ends with ":", else -1
        self.tag, self.column = "", -1  # the last item's tag and its description's indent
        # a line that may be a tag whose description follows a blank line: (the line, its tag, the
        # least indent of that description)
        self.alone: tuple[str, str, int] | None = None

    def flush(self) -> None:
        if self.items:
            self.builder.add("list", "\n".join(self.items))
            self.items = []
        self.tag, self.column = "", -1

    def item(self, tag: str, said: str, column: int) -> None:
        self.items.append(f"{tag} — {said}")
        self.tag, self.column = tag, column

    def item_or_value(self, tag: str, said: str, column: int, indent: int) -> None:
        """An item, or one of the values an item's description lists under it, indented as that
        description is ("l, symlink — symbolic links" under "-t, --type"): said of its option, which
        stays the item later paragraphs describe."""
        if self.tag and indent >= self.column:
            self.items.append(f"{self.tag} — {CARRIED}{tag}: {said}")
        else:
            self.item(tag, said, column)

    def read(self, lines: list[str]) -> None:
        index = 0
        while index < len(lines):
            line = lines[index]
            if not line.strip():
                index += 1
                continue
            indent = indent_of(line)
            if indent == 0 and _is_section(line.strip()):
                self.settle()
                self.flush()
                self.builder.heading(1, line.strip())
                index += 1
                continue
            if 0 < indent <= SUBHEADING_INDENT and len(line.split()) <= SUBHEADING_WORDS and not line.rstrip().endswith(
                    (".", ":", ",", ";")):
                self.settle()
                self.flush()
                self.builder.heading(2, line.strip())
                index += 1
                continue
            end = index + 1
            while end < len(lines) and lines[end].strip() and not (
                    indent_of(lines[end]) <= SUBHEADING_INDENT and _SECTION.match(lines[end].strip())
                    or indent_of(lines[end]) == 0 and _is_section(lines[end].strip())):
                end += 1
            self.paragraph(lines[index:end])
            index = end
        self.settle()
        self.flush()

    def settle(self) -> None:
        """A tag left alone at a heading or the page's end was no tag: read it as its own paragraph."""
        if self.alone:
            line, self.alone = self.alone[0], None
            self.read_paragraph([line])

    def paragraph(self, lines: list[str]) -> None:
        """A tag on a line of its own with a blank line before its description (as pandoc sets
        `.IP` items: "--follow, -F", blank, then "Follow 30x Location redirects." indented deeper;
        as a bullet: "○   --raw-output / -r:", blank, then its description under the option)
        waits for the next paragraph: an item when that one is indented under the tag, else read
        as it is."""
        alone, self.alone = self.alone, None
        if alone:
            line, tag, column = alone
            if indent_of(lines[0]) >= column and not _BULLET.match(lines[0].strip()):
                self.lead_in = -1
                self.item(tag, _joined(lines), indent_of(lines[0]))
                return
            self.read_paragraph([line])
        if len(lines) == 1 and (waiting := _waiting_tag(lines[0])):
            self.alone, self.lead_in = (lines[0], *waiting), -1
            return
        self.read_paragraph(lines)

    def read_paragraph(self, lines: list[str]) -> None:
        first, rest = lines[0], lines[1:]
        indent = indent_of(first)
        bullet = _BULLET.match(first.strip())
        beside = _tag_beside(first, rest)
        lead_in, self.lead_in = self.lead_in, -1
        if 0 <= lead_in < indent:  # indented under "you can use:": the command it leads into
            self.flush()
            self.builder.add("code", "\n".join(line[indent:] if indent_of(line) >= indent else line.strip()
                                               for line in lines))
        elif bullet:
            self.items.append(_joined([first.strip()[bullet.end():], *rest]))
            self.tag, self.column = "", -1
        elif tags := _tags_over(lines) or _syntax_tags(lines):
            self.item_or_value(" ".join(line.strip() for line in lines[:tags]), _joined(lines[tags:]),
                               indent_of(lines[tags]), indent)
        elif beside:
            tag, said, column = beside
            self.item_or_value(tag, _joined([said, *rest]), column, indent)
        elif self.tag and indent >= self.column and not lines[-1].rstrip().endswith(":"):
            # a further paragraph of the item's description ("Providing --retry multiple times ..."):
            # said of its option, and read so only with the option's name before it
            self.items.append(f"{self.tag} — {CARRIED}{_joined(lines)}")
        else:
            self.flush()
            text = _joined(lines)
            self.builder.add("text", text)
            self.lead_in = indent if text.endswith(":") else -1


def _is_section(line: str) -> bool:
    """Whether a line at the left margin is a section heading: upper case, or a short title."""
    return bool(_SECTION.match(line) or (_TITLED_SECTION.match(line) and len(line.split()) <= SECTION_WORDS))


# a tag that names no option, alone on its line: an argument or a variable ("URL", "REQUEST_ITEM",
# "NO_COLOR=1"), never a word of prose broken off before a command ("Then", "is equivalent to")
_NAME_ALONE = re.compile(r"^(?:[A-Z][A-Z0-9_]*|\S*[_=<\[{]\S*)$")


def _waiting_tag(line: str) -> tuple[str, int] | None:
    """(the tag, the least indent of its description) of an indented line standing alone that may
    be a tag whose description follows a blank line: a bullet holding an option alone ("○
    --raw-output / -r:" -> "--raw-output / -r", its description under the option's first letter),
    or a short line with no sentence that is an option or a name (its description deeper); None
    for other lines."""
    stripped = line.strip()
    bullet = _BULLET.match(stripped)
    said = stripped[bullet.end():].strip().rstrip(":") if bullet else ""
    if said.startswith("-") and len(said) <= OPTION_TAG_WIDTH and not TAG_GAP.search(said):
        return said, indent_of(line) + bullet.end()
    option = stripped.startswith("-")
    alone = (indent_of(line) > 0 and len(stripped) <= (OPTION_TAG_WIDTH if option else TAG_WIDTH)
             and not stripped.endswith((".", ",", ":", ";", "!", "?")) and not TAG_GAP.search(stripped)
             and (option or bool(_NAME_ALONE.match(stripped))))
    return (stripped, indent_of(line) + 1) if alone else None


def _tags_over(lines: list[str]) -> int:
    """How many lines of the paragraph are a tag over its description ("-k --keep", then "Keep ..."
    indented deeper), 0 when it is no such item: a short first line, every line after the tag
    deeper, no sentence ending the tag. An option's spellings may stand on lines of their own
    ("-c", "--continue", as pod2man sets them)."""
    first = lines[0]
    named = first.strip().startswith("-") or _NAME_ALONE.match(first.split()[0])  # "PERCENT_CPU_DELAY (CPUD%)"
    width = OPTION_TAG_WIDTH if named else TAG_WIDTH
    tags = 1
    if first.strip().startswith("-"):
        while tags < len(lines) - 1 and indent_of(lines[tags]) == indent_of(first) \
                and lines[tags].strip().startswith("-") and len(lines[tags].strip()) <= width:
            tags += 1
    rest = lines[tags:]
    fits = (len(first.strip()) <= width and bool(rest)  # the tag lines after the first were measured above
            and all(indent_of(line) > indent_of(first) for line in rest) and not lines[tags - 1].rstrip().endswith((".", ",")))
    return tags if fits else 0


_BRACKETED = re.compile(r"\[[^\[\]]*\]")
_ALIAS = re.compile(r"^\(alias: [^()]*\)$")
SYNTAX_WORDS = 3  # besides its brackets, a command's synopsis names little: "rename-session [-t target-session] new-name"


def _syntax_words(text: str) -> list[str] | None:
    """The words of a synopsis line outside its brackets (nested ones too, an unclosed one to the
    line's end, as a tag wrapped mid-bracket leaves it), None when it holds no bracket."""
    if "[" not in text and "]" not in text:
        return None
    while _BRACKETED.search(text):
        text = _BRACKETED.sub(" ", text)
    return re.sub(r"\[.*$|^[^\[]*\]", " ", text).split()


def _syntax_tags(lines: list[str]) -> int:
    """How many lines of the paragraph are a command's synopsis over its description, as BSD mdoc
    pages tag each command ("split-window [-bdfhIvPZ] [-c start-directory] [-e" wrapped onto
    further lines, then "(alias: splitw)", then "Create a new pane ..." indented deeper); 0 when
    it is no such item."""
    words = _syntax_words(lines[0].strip())
    if not words or len(words) > SYNTAX_WORDS or not re.match(r"^[A-Za-z][\w.-]*$", words[0]):
        return 0
    tags, tag = 1, lines[0].strip()
    while tags < len(lines):
        line = lines[tags].strip()
        more = _syntax_words(line)
        open_bracket = tag.count("[") > tag.count("]")
        if not (open_bracket or _ALIAS.match(line) or (more is not None and len(more) <= SYNTAX_WORDS - 1)):
            break
        tag, tags = f"{tag} {line}", tags + 1
    rest = lines[tags:]
    return tags if rest and all(indent_of(line) > indent_of(lines[0]) for line in rest) else 0


def _tag_beside(first: str, rest: list[str]) -> tuple[str, str, int] | None:
    """(tag, what it does, the description's column) of a paragraph whose tag stands beside its
    description ("KiB    Multiply ..."), its wrapped lines under the description's column; alone on
    its line, the tag is an option or one word. None for other paragraphs."""
    stripped = first.strip()
    gap = TAG_GAP.search(stripped)
    if gap and gap.start() < TAG_WIDTH:
        tag, column = stripped[:gap.start() + 1], indent_of(first) + gap.end() - 1
        fits = all(indent_of(line) == column for line in rest) if rest else stripped.startswith("-") or " " not in tag
        return (tag, stripped[gap.end() - 1:], column) if fits else None
    # a tag as wide as .TP's indent less one, one space before its description ("AGRP The ..."): its
    # wrapped lines start under the description's first word
    word = stripped.split(" ", 1)[0]
    column = indent_of(first) + len(word) + 1
    fits = rest and " " in stripped and (word.startswith("-") or _NAME_ALONE.match(word))
    return (word, stripped[len(word) + 1:], column) if fits and all(indent_of(line) == column for line in rest) else None


def _joined(lines: list[str]) -> str:
    """The lines as one paragraph: words one space apart, a word hyphenated at a line's end whole."""
    text = ""
    for line in (line.strip() for line in lines):
        if text.endswith(("-", "\u2010")) and text[-2:-1].isalpha() and line[:1].islower():
            text = text[:-1] + line  # "speci‐" and "fied": man's hyphenation, U+2010 in UTF-8
        else:
            text = f"{text} {line}".strip()
    return " ".join(text.split())
