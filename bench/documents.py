"""The document readers over real documents nobody here wrote: speed, passages per document, and
the share of passages that start or end inside markup, a code block or a table (target 0).

    .venv/bin/python bench/documents.py corpus --work DIR    # lay out the corpus (links + PDFs rendered)
    .venv/bin/python bench/documents.py read --work DIR      # read and cut every file, per format
    .venv/bin/python bench/documents.py ingest --work DIR    # the whole ingest (embedding) into DIR/index
    .venv/bin/python bench/documents.py plain --work DIR     # plain-text ingest speed, passages/s
    .venv/bin/python bench/documents.py plain --work DIR --no-embed   # its reading and cutting alone

The corpus is built from this machine, never committed: Markdown that installed Python packages
ship (site-packages) and Debian's /usr/share/doc, its HTML and .txt files (at most PER_PACKAGE files
of a kind per package, by name), the PDFs Debian ships there, and PDFs that headless Chromium
renders from some of those HTML manuals (RENDERED). `plain` ingests the first PLAIN_BYTES of .txt files
in /usr/share/doc (the `plain` folder) into a fresh index and prints passages/s; `--code DIR` runs another checkout's
`agent` package instead (`git archive REV agent | tar -x -C DIR`) to compare two versions.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

DOC = Path("/usr/share/doc")
PER_PACKAGE = 12
PLAIN_BYTES = 600_000  # plain text for the speed check: about 900 passages
# (Debian HTML manual, PDF name): long manuals with headings, rendered with an outline
RENDERED = [("ninja-build/manual.html", "ninja-manual.pdf"), ("valgrind/html/mc-manual.html", "valgrind-memcheck.pdf"),
            ("valgrind/html/manual-core.html", "valgrind-core.pdf"), ("fontconfig/fontconfig-user.html", "fontconfig-user.pdf"),
            ("python3/python-policy.html", "python-policy.pdf"), ("zlib1g-dev/examples/zlib_how.html", "zlib-how.pdf")]
KINDS = {"markdown": (".md",), "html": (".html", ".htm"), "text": (".txt",), "pdf": (".pdf",)}

# a reading must not start with markup: heading marks, bullets, fences, table rules, tags, quotes, emphasis
HTML_TAG = (r"</?(?:a|abbr|b|blockquote|body|br|code|div|dl|dt|dd|em|h[1-6]|head|hr|html|i|img|li|link|meta|nav|ol|p|"
            r"pre|script|section|span|strong|style|table|tbody|td|th|thead|tr|ul)\b|<!--|<!doctype")
STARTS_IN_MARKUP = re.compile(r"^\s*(#{1,6}\s|[-*+•◦▪]\s|>\s|```|~~~|\|\s|\*\*|__|={3,}|-{3,}|\[[^\]]*\]\(|"
                              + HTML_TAG + ")", re.I)
ENDS_IN_MARKUP = re.compile(r"(```|~~~|\|)\s*$|(" + HTML_TAG + r")[^>\n]{0,60}$", re.I)
TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)+\|?\s*$", re.M)
FENCE = re.compile(r"^\s*(```|~~~)", re.M)


def site_packages() -> Path:
    return Path(sysconfig.get_paths()["purelib"])


def _pick(files: list[Path], root: Path) -> list[Path]:
    """At most PER_PACKAGE files per top folder (package), by name; `all.html` (Node's API pages
    concatenated into one) is left out, as the pages it repeats are in."""
    by_package: dict[str, list[Path]] = {}
    for path in sorted(f for f in files if f.name != "all.html"):
        by_package.setdefault(path.relative_to(root).parts[0], []).append(path)
    return [path for group in by_package.values() for path in group[:PER_PACKAGE]]


def plain_files() -> list[Path]:
    """The .txt files of /usr/share/doc, by path, up to PLAIN_BYTES in all."""
    chosen, total = [], 0
    for path in sorted(DOC.rglob("*.txt")):
        if path.is_file() and total < PLAIN_BYTES:
            chosen.append(path)
            total += path.stat().st_size
    return chosen


def build_corpus(work: Path) -> Path:
    """Links to the chosen files under work/corpus/<kind>/<origin>/..., PDFs rendered there."""
    corpus = work / "corpus"
    if corpus.exists():
        shutil.rmtree(corpus)
    chosen = {
        "markdown": [(site_packages(), p) for p in _pick(list(site_packages().rglob("*.md")), site_packages())]
        + [(DOC, p) for p in _pick(list(DOC.rglob("*.md")), DOC)],
        "html": [(DOC, p) for p in _pick([p for s in KINDS["html"] for p in DOC.rglob(f"*{s}")], DOC)],
        "text": [(DOC, p) for p in _pick(list(DOC.rglob("*.txt")), DOC)],
        "pdf": [(DOC, p) for p in sorted(DOC.rglob("*.pdf"))],
        "plain": [(DOC, p) for p in plain_files()],  # the plain-text speed check, not a format row
    }
    for kind, files in chosen.items():
        for root, path in files:
            target = corpus / kind / ("python" if root != DOC else "debian") / path.relative_to(root)
            target.parent.mkdir(parents=True, exist_ok=True)
            if not target.exists() and path.is_file():
                target.symlink_to(path.resolve())
    rendered = corpus / "pdf" / "rendered"
    rendered.mkdir(parents=True, exist_ok=True)
    for source, name in RENDERED:
        if (DOC / source).exists():
            subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-pdf-header-footer",
                            "--generate-pdf-document-outline", f"--print-to-pdf={rendered / name}",
                            (DOC / source).resolve().as_uri()], check=True, capture_output=True, timeout=180)
    return corpus


def passage_flags(passage: dict) -> dict[str, bool]:
    """Whether a passage starts or ends inside markup, or inside a code block or table (cut
    through one, or prose carrying a fence or table rule)."""
    text, meta = passage["text"], passage.get("metadata") or {}
    kind = meta.get("kind", "text")
    cut_block = kind in ("code", "table") and bool(meta.get("part"))
    prose_with_block = kind in ("text", "list") and bool(FENCE.search(text) or TABLE_RULE.search(text))
    return {"starts_in_markup": bool(STARTS_IN_MARKUP.match(text)) and kind not in ("code", "table"),
            "ends_in_markup": bool(ENDS_IN_MARKUP.search(text)) and kind not in ("code", "table"),
            "inside_code_or_table": cut_block or prose_with_block}


def read_table(corpus: Path, chunking=(200, 40)) -> list[dict]:
    """Per format: files, pages, passages, read-and-cut time, and the markup shares."""
    from agent.retrieval.corpus import ReadReport, chunk_document, read_documents

    rows = []
    for kind in KINDS:
        folder = corpus / kind
        if not folder.exists():
            continue
        report = ReadReport()
        started = time.perf_counter()
        passages_per_doc, flags = [], {"starts_in_markup": 0, "ends_in_markup": 0, "inside_code_or_table": 0}
        examples: list[str] = []
        for document in read_documents([str(folder)], report):
            passages = chunk_document(document, *chunking)
            passages_per_doc.append(len(passages))
            for passage in passages:
                for name, value in passage_flags(passage).items():
                    flags[name] += value
                    if value and sum(e.endswith(f"[{name}]") for e in examples) < 4:
                        examples.append(f"{passage['text'][:70]!r} in {passage['id']} [{name}]")
        seconds = time.perf_counter() - started
        total = max(1, sum(passages_per_doc))
        rows.append({"format": kind, "files": report.files, "skipped": len(report.problems), "pages": report.pages,
                     "documents": len(passages_per_doc), "passages": sum(passages_per_doc),
                     "passages_per_doc": round(statistics.mean(passages_per_doc), 1) if passages_per_doc else 0,
                     "median_per_doc": statistics.median(passages_per_doc) if passages_per_doc else 0,
                     "seconds": round(seconds, 2), "files_per_s": round(report.files / seconds, 1),
                     "pages_per_s": round(report.pages / seconds, 1) if report.pages else None,
                     **{f"{k}_share": round(v / total, 4) for k, v in flags.items()},
                     "problems": report.problems, "examples": examples})
    return rows


def print_read(rows: list[dict]) -> None:
    print("| format | files | skipped | pages | passages | per doc (mean / median) | files/s | pages/s "
          "| start in markup | end in markup | inside code/table |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        print(f"| {r['format']} | {r['files']} | {r['skipped']} | {r['pages'] or '-'} | {r['passages']} | "
              f"{r['passages_per_doc']} / {r['median_per_doc']} | {r['files_per_s']} | {r['pages_per_s'] or '-'} | "
              f"{r['starts_in_markup_share']:.2%} | {r['ends_in_markup_share']:.2%} | {r['inside_code_or_table_share']:.2%} |")
    for r in rows:
        for line in r["problems"] + r["examples"]:
            print(f"  {r['format']}: {line}", file=sys.stderr)


def timed_ingest(paths: list[str], index: Path) -> dict:
    """Ingest into a fresh index; the embedder is loaded first so its start-up is not counted."""
    from agent.retrieval.corpus import ReadReport, read_documents
    from agent.retrieval.embeddings import get_embedder
    from agent.retrieval.index import IndexStore
    from agent.retrieval.updates import ingest

    if index.exists():
        shutil.rmtree(index)
    get_embedder("minilm").embed(["warm up"])
    store = IndexStore(str(index), create=True)
    report = ReadReport()
    started = time.perf_counter()
    counts = ingest(store, read_documents(paths, report))
    seconds = time.perf_counter() - started
    return {"files": getattr(report, "files", None), "pages": getattr(report, "pages", None),
            "passages": counts["total"], "seconds": round(seconds, 2),
            "passages_per_s": round(counts["total"] / seconds, 1), "skipped": len(report.problems)}


def timed_read(paths: list[str], repeat: int) -> dict:
    """Read and cut without embedding (the part of an ingest the readers change), best of `repeat`."""
    from agent.retrieval.corpus import ReadReport, chunk_document, read_documents

    chunk_document(next(read_documents(paths, ReadReport())))  # load the tokenizer before timing
    best = None
    for _ in range(repeat):
        started = time.perf_counter()
        passages = sum(len(chunk_document(document)) for document in read_documents(paths, ReadReport()))
        seconds = time.perf_counter() - started
        best = min(best or seconds, seconds)
    return {"passages": passages, "seconds": round(best, 3), "passages_per_s": round(passages / best, 1)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("step", choices=["corpus", "read", "ingest", "plain"])
    parser.add_argument("--work", default=str(Path(tempfile.gettempdir()) / "disambig-documents-bench"))
    parser.add_argument("--repeat", type=int, default=3, help="plain: runs (the best one is reported)")
    parser.add_argument("--code", help="plain: import `agent` from this checkout instead")
    parser.add_argument("--no-embed", action="store_true", help="plain: read and cut only (no index)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.code:
        sys.path.insert(0, str(Path(args.code).resolve()))
    work = Path(args.work)
    corpus = work / "corpus"
    if args.step == "corpus":
        corpus = build_corpus(work)
        counts = {kind.name: sum(1 for p in kind.rglob("*") if p.is_file()) for kind in corpus.iterdir()}
        print(json.dumps({"corpus": str(corpus), "files": counts}))
    elif args.step == "read":
        rows = read_table(corpus)
        print(json.dumps(rows) if args.json else "", end="")
        if not args.json:
            print_read(rows)
    elif args.step == "ingest":
        print(json.dumps(timed_ingest([str(corpus / kind) for kind in KINDS], work / "index")))
    elif args.no_embed:
        import agent

        print(json.dumps({"code": str(Path(agent.__file__).parents[1]),
                          **timed_read([str(corpus / "plain")], args.repeat)}))
    else:
        runs = [timed_ingest([str(corpus / "plain")], work / "plain-index") for _ in range(args.repeat)]
        best = max(runs, key=lambda run: run["passages_per_s"])
        import agent

        print(json.dumps({"code": str(Path(agent.__file__).parents[1]), "best": best,
                          "passages_per_s": [run["passages_per_s"] for run in runs]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
