"""A manual page's roff source, as Debian installs it (`/usr/share/man/man1/gzip.1.gz`): typeset by
groff as `man` shows it, then read by its layout (agent/documents/manpage.py).

A folder of a system's manuals is a folder of these, so pointing `disambig ingest` at one must not
skip them all as an unknown type. groff is the typesetter `man` itself runs (Debian's
`groff-base`, which `man-db` depends on); reimplementing the man and mdoc macros would be a second,
worse groff. Hyphenation is off so that no flag or word is split across lines. A page that only
points at another (`.so man1/gzip.1`, as `gunzip.1.gz` does) has no text of its own: it is refused
with the page it points to, which the folder usually holds.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from agent.documents import manpage
from agent.documents.model import Structure, Unreadable
from agent.documents.text import decode, gunzipped

NAME = re.compile(r"\.[1-9][a-z]{0,3}(\.gz)?$", re.IGNORECASE)  # gzip.1, gzip.1.gz, Pod::Usage.3pm.gz
TYPESET_SECONDS = 60
_COMMENT = re.compile(r"^(\.|')\s*\\\"")
_POINTER = re.compile(r"^\.so\s+(\S+)")
_MACRO = re.compile(r"^\.(TH|Dd|SH|Sh)\b", re.MULTILINE)  # a man (or mdoc) page's title or section


def is_manpage_source(path: Path) -> bool:
    """Whether the file's name is a manual page's: a section number for its suffix, gzipped or not."""
    return bool(NAME.search(path.name))


def page_name(path: Path) -> str:
    """The page's name without its section and compression ("gzip.1.gz" -> gzip)."""
    return NAME.sub("", path.name) or path.name


def source(path: Path) -> str:
    """The page's roff text, decompressed when gzipped."""
    raw = path.read_bytes()
    return decode(gunzipped(raw) if raw[:2] == b"\x1f\x8b" else raw)


def pointer(text: str) -> str | None:
    """The page a page that only points elsewhere (`.so man1/gzip.1`) points to, else None."""
    lines = [line for line in text.splitlines() if line.strip() and not _COMMENT.match(line)]
    found = _POINTER.match(lines[0]) if len(lines) == 1 else None
    return found.group(1) if found else None


def typeset(text: str, device: str = "utf8") -> bytes:
    """The page typeset by groff: `utf8` as `man` shows it in a terminal (no bold or underline
    overstrikes), `html` as a web page."""
    groff = shutil.which("groff")
    if groff is None:
        raise Unreadable("a manual page's source is typeset by groff, which is not installed "
                         "(Debian: apt-get install groff-base)")
    options = ["-P", "-cbou"] if device == "utf8" else ["-P", "-l", "-P", "-r"]
    body = (".nh\n.hy 0\n" + text).encode("utf-8")
    try:
        with tempfile.TemporaryDirectory() as scratch:  # grohtml leaves its images in the working directory
            # the text goes in as UTF-8 (`source` decoded it), which groff reads as Latin-1 unless told
            done = subprocess.run([groff, "-K", "utf-8", "-mandoc", f"-T{device}", "-rHY=0", *options], input=body,
                                  capture_output=True, timeout=TYPESET_SECONDS, cwd=scratch)
    except subprocess.TimeoutExpired:
        raise Unreadable(f"groff took over {TYPESET_SECONDS} s to typeset it") from None
    if done.returncode != 0 or not done.stdout.strip():
        why = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise Unreadable(f"groff could not typeset it ({why[-1] if why else f'exit status {done.returncode}'})")
    return done.stdout


def read(path: Path) -> Structure:
    text = source(path)
    points_to = pointer(text)
    if points_to:
        raise Unreadable(f"only points to another page ({points_to}): ingest that one")
    if not _MACRO.search(text):
        raise Unreadable("not a manual page's source (it has no .TH, .Dd or .SH line)")
    return manpage.parse(typeset(text).decode("utf-8", "replace"), page_name(path))
