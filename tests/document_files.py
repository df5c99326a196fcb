"""Small documents of every format, written by the tests themselves: a PDF by hand (text in
the standard Helvetica font, one content stream per page) with pypdf adding bookmarks or a
password, and a Word file with python-docx."""

from __future__ import annotations

from pathlib import Path


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def pdf_bytes(pages: list[list[str]]) -> bytes:
    """A valid PDF whose page i shows the lines of pages[i] (an empty list: a page without text)."""
    objects = ["<< /Type /Catalog /Pages 2 0 R >>", None, "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    kids = []
    for lines in pages:
        body = "BT /F1 11 Tf 14 TL 72 760 Td " + " ".join(f"({_escape(line)}) ' " for line in lines) + "ET"
        if not lines:
            body = "0 0 1 rg 72 72 200 200 re f"  # a drawing and no text: what a scan's page looks like to a reader
        objects.append(f"<< /Length {len(body)} >>\nstream\n{body}\nendstream")
        objects.append(f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents {len(objects)} 0 R "
                       f"/Resources << /Font << /F1 3 0 R >> >> >>")
        kids.append(f"{len(objects)} 0 R")
    objects[1] = f"<< /Type /Pages /Kids [{' '.join(kids)}] /Count {len(kids)} >>"
    out, offsets = bytearray(b"%PDF-1.4\n"), []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{body}\nendobj\n".encode("latin-1")
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += "".join(f"{offset:010d} 00000 n \n" for offset in offsets).encode()
    out += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def write_pdf(path: Path, pages: list[list[str]], outline: list[tuple[str, int, str | None]] = (),
              password: str = "") -> Path:
    """Write the PDF; `outline` holds (title, page index, parent title or None) bookmarks."""
    from io import BytesIO

    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(BytesIO(pdf_bytes(pages))))
    items: dict[str, object] = {}
    for title, page, parent in outline:
        items[title] = writer.add_outline_item(title, page, parent=items.get(parent) if parent else None)
    if password:
        writer.encrypt(password, algorithm="RC4-128")
    with open(path, "wb") as handle:
        writer.write(handle)
    return path


def write_docx(path: Path) -> Path:
    """A Word file: a title, two headed sections, a list with its lead-in and a table."""
    from docx import Document

    document = Document()
    document.add_heading("Field Manual", level=0)
    document.add_heading("Installation", level=1)
    document.add_paragraph("The pump ships in two crates and needs a level concrete base.")
    document.add_heading("Linux", level=2)
    document.add_paragraph("On Linux the controller needs these packages:")
    for item in ("the serial driver", "the udev rule", "the monitoring daemon"):
        document.add_paragraph(item, style="List Bullet")
    document.add_heading("Maintenance", level=1)
    table = document.add_table(rows=3, cols=2)
    for row, (part, interval) in enumerate((("Part", "Interval"), ("Seal", "6 months"), ("Bearing", "2 years"))):
        table.cell(row, 0).text, table.cell(row, 1).text = part, interval
    document.save(str(path))
    return path


MARKDOWN = """---
layout: page
---
# Pump Guide

The pump moves water from the well to the tank.

## Installation

### Linux

Install the controller with:

```bash
sudo apt install pump-controller
```

Before you start, check these:

- the power switch is off
- the valve is **closed**
  - and locked

| Model | Flow |
| --- | --- |
| P100 | 40 l/min |
| P200 | 80 l/min |

## Sessions

Each session logs its *flow* in [the journal](https://example.org).
"""

HTML = """<!doctype html><html><head><title>Pump Reference</title><style>body{color:red}</style>
<script>var tracking = "never index me";</script></head>
<body><nav><a href="/">Home</a> | <a href="/docs">Docs</a></nav>
<header>Site banner text</header>
<main><h1>Pump Reference</h1>
<p>The reference lists every <b>setting</b> of the pump.</p>
<h2>Configuration<span class="pull-right"><a class="anchor" href="#Configuration" aria-hidden="true">#</a>
<a class="anchor" href="#toc-Configuration" aria-hidden="true">TOC</a></span></h2><h3>Logging</h3>
<p>Logging is configured in <code>pump.toml</code>:</p>
<pre><code class="language-toml">[logging]
level = "info"</code></pre>
<table><tr><th>Setting</th><th>Default</th></tr><tr><td>level</td><td>info</td></tr></table>
<ul><li>Rotate logs daily.</li><li>Keep seven files.</li></ul>
</main><footer>Copyright footer text</footer></body></html>"""


def index_of(files: dict[str, str], root: Path, index: Path) -> str:
    """An index of `files` ({relative path: text}) written under `root`, ingested into `index`:
    manuals laid out in product folders, as many packages ship them."""
    from agent.retrieval.corpus import ReadReport, read_passages
    from agent.retrieval.index import IndexStore, ingest

    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    ingest(IndexStore(str(index), create=True), read_passages([str(root)], ReadReport()))
    return str(index)
