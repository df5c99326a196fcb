"""HTML pages by their structure (BeautifulSoup on lxml): navigation, scripts, styles,
headers, footers, sidebars and forms are dropped; the main content (`<main>`, `<article>` or
role=main, else the body) is walked for headings, paragraphs, lists, code (`<pre>`) and tables."""

from __future__ import annotations

import re
from pathlib import Path

from agent.documents.model import SectionBuilder, Structure, Unreadable
from agent.documents.text import decode

SUFFIXES = (".html", ".htm", ".xhtml")
DROPPED = ("script", "style", "nav", "footer", "header", "aside", "noscript", "form", "svg", "template",
           "button", "iframe", "object", "head")
DROPPED_ROLES = ("navigation", "banner", "contentinfo", "search", "complementary")
SPACE_BEFORE_PUNCTUATION = re.compile(r"\s+([,.;:!?)\]])")
HEADINGS = {f"h{level}": level for level in range(1, 7)}
LISTS = ("ul", "ol", "dl")
# elements whose loose text is a paragraph of its own; anything else is inline and joins its neighbours
BLOCKS = {"p", "div", "section", "article", "main", "body", "blockquote", "li", "dd", "dt", "figure", "figcaption",
          "td", "th", "center", "address", "details", "summary", "caption"} | set(HEADINGS) | set(LISTS) | {"pre", "table"}


def _clean(text: str) -> str:
    """Whitespace collapsed, and no space left before punctuation by joining inline elements."""
    return SPACE_BEFORE_PUNCTUATION.sub(r"\1", " ".join(text.split()))


def parse(text: str, fallback_title: str) -> Structure:
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(text, "lxml")
    page_title = " ".join(soup.title.get_text(" ").split()) if soup.title else ""
    for element in soup.find_all(DROPPED):
        element.decompose()
    for element in soup.find_all(attrs={"role": DROPPED_ROLES}):
        element.decompose()
    root = soup.find("main") or soup.find(attrs={"role": "main"}) or soup.find("article") or soup.body or soup
    builder = SectionBuilder()
    _walk(root, builder)
    if not builder.sections:
        raise Unreadable("no text in the page (after dropping navigation, scripts and styles)")
    return builder.structure(page_title or fallback_title)


def _walk(element, builder: SectionBuilder) -> None:
    """Emit the element's children in order; loose inline text gathers into paragraphs."""
    from bs4 import NavigableString, Tag
    from bs4.element import Comment

    loose: list[str] = []

    def flush() -> None:
        builder.add("text", _clean("".join(loose)))
        loose.clear()

    for child in element.children:
        if isinstance(child, Comment):
            continue
        if isinstance(child, NavigableString):
            loose.append(str(child))
            continue
        if not isinstance(child, Tag):
            continue
        name = child.name
        if name not in BLOCKS:
            if name == "br":
                loose.append(" ")
            else:
                loose.append(child.get_text())
            continue
        flush()
        if name in HEADINGS:
            builder.heading(HEADINGS[name], _words(child))
        elif name == "pre":
            builder.add("code", child.get_text(), _language(child))
        elif name == "table":
            builder.add("table", _table(child))
        elif name in LISTS:
            builder.add("list", "\n".join(_items(child)))
        else:
            _walk(child, builder)
    flush()


def _words(element) -> str:
    return _clean(element.get_text(" "))


def _language(element) -> str:
    for node in [element, element.find("code")]:
        for name in (node.get("class") or []) if node is not None else []:
            if name.startswith(("language-", "lang-")):
                return name.split("-", 1)[1]
    return ""


def _table(element) -> str:
    rows = []
    for row in element.find_all("tr"):
        cells = [_words(cell) for cell in row.find_all(["th", "td"])]
        if any(cells):
            rows.append(" | ".join(cells))
    return "\n".join(rows)


def _items(element, depth: int = 0) -> list[str]:
    """One line per item (a definition list: per term and per definition), nested lists indented."""
    lines: list[str] = []
    for child in element.find_all(["li", "dt", "dd"], recursive=False):
        nested = child.find_all(LISTS, recursive=False)
        for sub in nested:
            sub.extract()
        text = _words(child)
        if text:
            lines.append("  " * depth + text)
        for sub in nested:
            lines.extend(_items(sub, depth + 1))
    return lines


def read(path: Path) -> Structure:
    return parse(decode(path.read_bytes()), path.stem)
