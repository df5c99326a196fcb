"""The structure every reader returns: what the passage cutter needs and nothing of a format."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from agent.documents.help_lines import dashed_items, help_listing

KINDS = ("text", "list", "code", "table")
# between an item's term and a later part of its description, for the sentences left out between
# ("-k, --insecure — … This option makes curl skip the verification step."): a reader writes it
# before a further paragraph of an option, and answer units before each later sentence of one
CARRIED = "… "


class Unreadable(Exception):
    """A file a reader cannot use; the message is the one line the user sees after the path."""


@dataclass
class Block:
    """One unit that is never cut in the middle unless it alone exceeds a passage: a paragraph
    (`text`), a list with its lead-in (`list`), a code block (`code`) or a table (`table`)."""

    kind: str
    text: str
    language: str = ""  # a code block's language, when the document names it


@dataclass
class Section:
    """The blocks under one heading path (on one page, for paged formats)."""

    path: list[str]
    blocks: list[Block] = field(default_factory=list)
    page: int | None = None

    @property
    def name(self) -> str:
        return " > ".join(self.path)


@dataclass
class Structure:
    """A whole document as its reader saw it."""

    title: str
    sections: list[Section]
    pages: int = 0  # pages read (paged formats); 0 for the others

    def signature(self) -> list:
        """Plain data that changes whenever anything a passage is cut from changes."""
        return [self.title, [asdict(section) for section in self.sections]]


class SectionBuilder:
    """Collects blocks under the current heading path while a reader walks a document.

    Readers call `heading(level, text)` and `add(kind, text)`; a heading at level n replaces the
    path from depth n on. Empty sections (headings directly followed by headings) are dropped."""

    def __init__(self, page: int | None = None):
        self.sections: list[Section] = []
        self.levels: list[tuple[int, str]] = []
        self.page = page
        self.title = ""
        self.seen: list[int] = []  # every heading's level, to tell a document title from a first chapter
        self.listed: set[str] = set()  # the items of the --help listings read so far

    def heading(self, level: int, text: str) -> None:
        text = " ".join(text.split())
        if not text:
            return
        if not self.title:
            self.title = text
        self.seen.append(level)
        self.levels = [(lvl, name) for lvl, name in self.levels if lvl < level] + [(level, text)]

    def add(self, kind: str, text: str, language: str = "") -> None:
        if kind == "code" and (listing := help_listing(text)):  # a pasted `tool --help`: its usage, its options
            usage, items = listing
            self.add("code", usage, language)
            self.add("list", "\n".join(item for item in items if item not in self.listed))  # -h, --debug: once
            self.listed.update(items)
            return
        if not text.strip():
            return
        if kind == "list":  # "--port=NUMBER - select port": an option's item, as every reader writes one
            text = dashed_items(text)
        path = [name for _, name in self.levels]
        current = self.sections[-1] if self.sections else None
        if current is None or current.path != path or current.page != self.page:
            current = Section(path, [], self.page)
            self.sections.append(current)
        current.blocks.append(Block(kind, text.strip("\n") if kind == "code" else text.strip(), language))

    def tab(self, title: str, first: bool) -> None:
        """A tab's title (`.. tab:: Windows`, MyST's ```{tab} Linux): it says what the tab's code is
        for ("Windows:"), except in the `first` tab of a set after a paragraph or a list item, which
        leads into that code itself ("Uninstall a package.", then the Unix tab's command)."""
        current = self.sections[-1] if self.sections else None
        here = current is not None and current.path == [name for _, name in self.levels] and current.page == self.page
        title = " ".join(title.split()).rstrip(".:")
        if title and not (first and here and current.blocks and current.blocks[-1].kind in ("text", "list")):
            self.add("text", f"{title}:")

    def structure(self, fallback_title: str, pages: int = 0) -> Structure:
        """The document. A lone top heading that opens it is its title and is left out of every
        section path; otherwise the title is `fallback_title` (metadata, else the file name)."""
        tops = {section.path[0] for section in self.sections if section.path}
        first = self.title
        if first and tops <= {first} and self.seen[0] == min(self.seen) and self.seen.count(self.seen[0]) == 1:
            for section in self.sections:
                section.path = section.path[1:]
            return Structure(first, self.sections, pages)
        title = fallback_title or first
        for section in self.sections:  # a page whose title is repeated as its first heading
            if section.path[:1] == [title]:
                section.path = section.path[1:]
        return Structure(title, self.sections, pages)
