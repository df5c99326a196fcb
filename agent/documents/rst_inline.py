"""reStructuredText inline markup reduced to its words (agent/documents/rst.py reads the blocks):
roles, literals, links, emphasis and substitutions, as a reader of the rendered page sees them."""

from __future__ import annotations

import re

_LITERAL = re.compile(r"``(.+?)``")
_ROLE = re.compile(r":([a-zA-Z][\w:.+-]*):`([^`]+)`")
_LINK = re.compile(r"`([^`<]*?)\s*<[^`>]+>`_{1,2}")
_REFERENCE = re.compile(r"`([^`]+)`_{1,2}")
_INTERPRETED = re.compile(r"`([^`]+)`")
_STRONG = re.compile(r"\*\*(\S(?:.*?\S)?)\*\*")
_EMPHASIS = re.compile(r"(?<![\w*])\*(\S(?:[^*]*?\S)?)\*(?![\w*])")
_NAMED_REFERENCE = re.compile(r"(?<![\w`])([A-Za-z][\w-]*[A-Za-z0-9])__?(?=[\s.,;:!?)]|$)")
_SUBSTITUTION_REF = re.compile(r"\|([\w -]+)\|_?")


def inline(text: str) -> str:
    """The words of a line of reStructuredText without its markup: ``--keep`` and :option:`--keep`
    read as --keep, :ref:`the guide <guide>` as "the guide", `docs <https://...>`_ as "docs",
    **bold** and *emphasis* as their words. Literals are kept as they are written."""
    parts = _LITERAL.split(text)
    out = []
    for number, part in enumerate(parts):
        if number % 2:  # inside ``...``: code, untouched
            out.append(part)
            continue
        part = _ROLE.sub(lambda m: role_text(m.group(1), m.group(2)), part)
        part = _LINK.sub(lambda m: m.group(1), part)
        part = _REFERENCE.sub(lambda m: m.group(1), part)
        part = _INTERPRETED.sub(lambda m: m.group(1), part)
        part = _STRONG.sub(lambda m: m.group(1), part)
        part = _EMPHASIS.sub(lambda m: m.group(1), part)
        part = _NAMED_REFERENCE.sub(lambda m: m.group(1), part)
        part = _SUBSTITUTION_REF.sub(lambda m: m.group(1), part)
        part = re.sub(r"\\(.)", r"\1", part)
        out.append(part)
    return " ".join("".join(out).split())


def role_text(role: str, content: str) -> str:
    """What a role shows: "the guide" of "the guide <guide>", "c" of "~a.b.c", "x" of "!x",
    "PEP 8" of :pep:`8`."""
    if role.lower() in ("pep", "rfc") and content.isdigit():
        return f"{role.upper()} {content}"
    shown = re.match(r"^(.*?)\s*<[^<>]+>$", content, re.S)
    if shown and shown.group(1):
        return shown.group(1)
    content = content.lstrip("!")
    return content.rsplit(".", 1)[-1] if content.startswith("~") else content
