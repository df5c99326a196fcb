"""`disambig ingest`: its flags, the bundled demo corpora it can add, and the command, which reads
documents into the index and then embeds their answer units."""

from __future__ import annotations

import json
import sys
from importlib import resources

from agent.app.index_flags import index_context, open_index
from agent.errors import InputError

DEMO_CORPUS = "demo_corpus.jsonl"
# the held-out fixture's documents (for testing only, never tuning) ship in the demo index beside the demo corpus
HELDOUT_CORPUS = "heldout_corpus.jsonl"


def demo_corpus_path() -> str:
    return str(resources.files("agent").joinpath("data", DEMO_CORPUS))


def demo_corpus_paths() -> list[str]:
    """What `ingest --demo` reads: the demo corpus and the held-out fixture's corpus."""
    return [demo_corpus_path(), str(resources.files("agent").joinpath("data", HELDOUT_CORPUS))]


def add_ingest_parser(commands, with_index) -> None:
    """Register `ingest` on the CLI's subparsers (`with_index` adds the index flags every command takes)."""
    ingest = with_index(commands.add_parser("ingest", help="add documents (PDF, HTML, Word, Markdown, reStructuredText, text, JSONL, manual pages, directories)"))
    ingest.add_argument("paths", nargs="*", metavar="PATH")
    ingest.add_argument("--demo", action="store_true", help="also ingest the bundled demo corpora (the demo and held-out fixtures)")
    ingest.add_argument("--chunk-tokens", type=int, default=200, help="tokens per passage (default 200)")
    ingest.add_argument("--chunk-overlap", type=int, default=40, help="tokens shared by neighbours (default 40)")
    ingest.add_argument("--json", action="store_true", help="print the summary as JSON")
    ingest.add_argument("--quiet", action="store_true", help="no progress bar")
    ingest.add_argument("--sync", action="append", metavar="PATH",
                        help="ingest PATH and delete the documents read earlier from under it that it no longer has")
    ingest.set_defaults(run=cmd_ingest)


SKIPPED_EXIT = 3  # ingest: everything readable went in, and some files, pages or records were skipped


def cmd_ingest(args) -> int:
    """Exit 0: every input read; SKIPPED_EXIT: the rest went in but something was skipped (one
    line each on stderr); 1: an error, nothing written."""
    import time

    from tqdm import tqdm

    from agent.retrieval.corpus import ReadReport, input_count, read_documents
    from agent.retrieval.updates import ingest

    sync = list(args.sync or [])
    paths = list(dict.fromkeys(list(args.paths) + sync + (demo_corpus_paths() if args.demo else [])))
    if not paths:
        raise InputError("give at least one file or directory to ingest (or --demo)")
    report = ReadReport()
    store = open_index(args, create=True)
    started = time.perf_counter()
    # the bar counts files as they are read (documents stream through, nothing is read first)
    with tqdm(total=input_count(paths), unit="file", desc="ingest", file=sys.stderr, disable=args.quiet) as bar:
        done = {"embedded": 0}  # files are read ahead of the embedding: the postfix shows both

        def show(embedded: int = 0, advance: int = 0) -> None:
            done["embedded"] += embedded
            bar.set_postfix(pages=report.pages, embedded=done["embedded"], refresh=not advance)
            bar.update(advance)

        report.on_file = lambda read: show(advance=1)
        counts = ingest(store, read_documents(paths, report), chunking=(args.chunk_tokens, args.chunk_overlap),
                        sync=sync, keep=report.problem_files, embedded=show)
    seconds = time.perf_counter() - started
    units = _embed_units(args, paths)
    units_seconds = time.perf_counter() - started - seconds
    for problem in report.problems:
        print(f"skipped {problem}", file=sys.stderr)
    if report.ignored_types:
        kinds = ", ".join(f"{suffix} ({count})" for suffix, count in sorted(report.ignored_types.items()))
        print(f"ignored {report.ignored_files} files of types no reader takes: {kinds}", file=sys.stderr)
    if report.links:
        print(f"left out {report.links} links to files read under their own names", file=sys.stderr)
    renamed = report.renamed + counts["renamed"]
    if renamed:
        print(f"named {len(renamed)} documents with their folder, their path being another file's document: "
              f"{', '.join(renamed[:5])}{' ...' if len(renamed) > 5 else ''}", file=sys.stderr)
    summary = {**counts, "renamed": renamed, "skipped": len(report.problems), "duplicates": report.duplicates,
               "ignored_files": report.ignored_files, "links": report.links, "files": report.files, "pages": report.pages,
               "answer_units": units, "seconds": round(seconds, 3), "index": str(store.path)}
    print(json.dumps(summary) if args.json else
          f"added {counts['added']} passages ({counts['already_present']} already present, "
          f"{len(report.problems)} skipped); documents: {counts['documents_added']} added, "
          f"{counts['documents_updated']} updated, {counts['documents_unchanged']} unchanged, "
          f"{len(report.problems)} skipped" + (f", {counts['documents_deleted']} deleted" if sync else "") +
          f"; index {store.path} holds {counts['documents_total']} documents, {counts['total']} passages")
    if not args.quiet:
        print(_throughput(report, counts["embedded"], seconds), file=sys.stderr)
        if units:
            print(f"{units} answer units of the documents embedded in {units_seconds:.1f}s", file=sys.stderr)
    return SKIPPED_EXIT if report.problems else 0


def _embed_units(args, paths: list[str]) -> int:
    """Embed the answer units of the documents read from `paths` (an embedded index keeps their
    vectors beside it, a PostgreSQL one in its database), so the first question over them is as
    quick as the next."""
    from agent.assembly.manual_units import embed_units_under

    return embed_units_under(index_context(args), paths)


def _throughput(report, embedded: int, seconds: float) -> str:
    per = max(seconds, 1e-9)
    pages = f" ({report.pages} pages, {report.pages / per:.1f} pages/s)" if report.pages else ""
    return (f"read {report.files} files in {seconds:.1f}s: {report.files / per:.1f} files/s{pages}, "
            f"{embedded} passages embedded ({embedded / per:.1f}/s)")
