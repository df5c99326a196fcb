"""HTML pages by their structure (lxml): navigation (by element, role or a generator's class),
scripts, styles, headers, footers, sidebars and forms are dropped; the main content (`<main>`, role=main or `<article>`, else the
body) is walked for headings, paragraphs, lists, code (`<pre>`) and tables. The bytes go to
lxml as they are, so a page's declared encoding is honoured."""

from __future__ import annotations

import re
from pathlib import Path

from agent.documents.model import SectionBuilder, Structure, Unreadable
from agent.documents.text import looks_like, sniff

SUFFIXES = (".html", ".htm", ".xhtml")
DROPPED = ("script", "style", "nav", "footer", "header", "aside", "noscript", "form", "svg", "template",
           "button", "iframe", "object", "head")
DROPPED_ROLES = ("navigation", "banner", "contentinfo", "search", "complementary")
HEADINGS = {f"h{level}": level for level in range(1, 7)}
LISTS = ("ul", "ol", "dl")
# elements whose loose text is a paragraph of its own; anything else is inline and joins its neighbours
BLOCKS = {"p", "div", "section", "article", "main", "body", "blockquote", "li", "dd", "dt", "figure", "figcaption",
          "td", "th", "center", "address", "details", "summary", "caption", "html"} | set(HEADINGS) | set(LISTS) \
    | {"pre", "table"}
SPACE_BEFORE_PUNCTUATION = re.compile(r"\s+([,.;:!?)\]])")
PERMALINK = re.compile(r"(\s*[#¶§]\s*)+$")  # the anchor a generated page puts after each heading
BULLET = re.compile(r"^(?:[-*•◦▪‣·]\s+)")
# navigation that generators write as classes (DocBook's navheader, texinfo's nav-panel, ...)
DROPPED_CLASSES = ("nav", "navheader", "navfooter", "nav-panel", "navigation", "navbar", "sidebar", "breadcrumb",
                   "breadcrumbs", "header", "footer", "headerlink")
DROP_XPATH = "|".join(f"//{name}" for name in DROPPED) + "|" + "|".join(
    f"//*[@role='{role}']" for role in DROPPED_ROLES) + "|" + "|".join(
    f"//*[contains(concat(' ', normalize-space(@class), ' '), ' {name} ')]" for name in DROPPED_CLASSES) \
    + "|//*[@aria-hidden='true']|//comment()|//processing-instruction()"  # aria-hidden: not for readers (icons, anchors)


def _clean(text: str) -> str:
    """Whitespace collapsed, and no space left before punctuation by joining inline elements."""
    return SPACE_BEFORE_PUNCTUATION.sub(r"\1", " ".join(text.split()))


def parse(raw: bytes, fallback_title: str) -> Structure:
    from lxml import etree, html

    try:
        document = html.document_fromstring(raw)
    except (etree.ParserError, ValueError) as error:
        raise Unreadable(f"not a readable HTML page ({error})" + looks_like(raw)) from None
    page_title = PERMALINK.sub("", _clean(document.findtext(".//title") or ""))
    for element in document.xpath(DROP_XPATH):
        if element.getparent() is not None:
            element.drop_tree()
    root = next(iter(document.xpath("//main") or document.xpath("//*[@role='main']") or document.xpath("//article")
                     or document.xpath("//body")), document)
    builder = SectionBuilder()
    _walk(root, builder)
    if not builder.sections:
        raise Unreadable("no text in the page (after dropping navigation, scripts and styles)")
    return builder.structure(page_title or fallback_title)


def _walk(element, builder: SectionBuilder) -> None:
    """Emit the element's children in order; loose inline text gathers into paragraphs."""
    loose: list[str] = [element.text or ""]

    def flush() -> None:
        builder.add("text", _clean("".join(loose)))
        loose.clear()

    for child in element:
        name = child.tag.lower() if isinstance(child.tag, str) else ""
        if name not in BLOCKS:
            loose.append(" " if name == "br" else child.text_content() if name else "")
            loose.append(child.tail or "")
            continue
        flush()
        if name in HEADINGS:
            builder.heading(HEADINGS[name], PERMALINK.sub("", _words(child)))
        elif name == "pre":
            builder.add("code", child.text_content(), _language(child))
        elif name == "table":
            builder.add("table", _table(child))
        elif name in LISTS:
            builder.add("list", "\n".join(_items(child)))
        else:
            _walk(child, builder)
        loose.append(child.tail or "")
    flush()


def _words(element) -> str:
    return _clean(" ".join(element.itertext()))


def _language(element) -> str:
    for node in [element, *element.xpath("./code")]:
        for name in (node.get("class") or "").split():
            if name.startswith(("language-", "lang-")):
                return name.split("-", 1)[1]
    return ""


def _table(element) -> str:
    rows = []
    for row in element.xpath(".//tr"):
        cells = [_words(cell) for cell in row.xpath("./th|./td")]
        if any(cells):  # a layout row's empty edge cells would start the line with a bare '|'
            rows.append(" | ".join(cells).strip(" |"))
    return "\n".join(rows)


def _items(element, depth: int = 0) -> list[str]:
    """One line per item (a definition list: a term and its definition on one line, "term —
    definition", as an options list reads), nested lists indented under their item; a bullet
    that every item spells out in its text is dropped."""
    entries: list[tuple[str, list]] = []
    term = False  # the last entry is a term awaiting its definition
    for child in element.xpath("./li|./dt|./dd"):
        nested = [sub for sub in child if isinstance(sub.tag, str) and sub.tag.lower() in LISTS]
        parts = [child.text or ""]
        for sub in child:
            if sub not in nested:
                parts.append(sub.text_content() if isinstance(sub.tag, str) else "")
            parts.append(sub.tail or "")
        text = _clean("".join(parts))
        if term and child.tag.lower() == "dd" and text and entries[-1][0]:
            entries[-1] = (f"{entries[-1][0]} — {text}", entries[-1][1] + nested)
        else:
            entries.append((text, nested))
        term = child.tag.lower() == "dt"
    texts = [text for text, _ in entries if text]
    bulleted = len(texts) > 1 and all(BULLET.match(text) for text in texts)
    lines: list[str] = []
    for text, nested in entries:
        if text:
            lines.append("  " * depth + (BULLET.sub("", text) if bulleted else text))
        for sub in nested:
            lines.extend(_items(sub, depth + 1))
    return lines


def read(path: Path) -> Structure:
    raw = path.read_bytes()
    sniff(raw)
    return parse(raw, path.stem)
