"""Ingest N synthetic documents, then update 1% of them: seconds and passages re-embedded.

    .venv/bin/python bench/index_update.py [--documents 10000] [--changed 0.01] [--seed 0]

The corpus is generated here (JSONL, one document a line, a tenth of them long enough for
several passages) into a temporary directory. Steps, each timed on the same index with the
real embedder: the first ingest; the same input again (nothing changed); the input with a
share of the documents edited (texts of short ones rewritten, the last sentence of long ones
changed, so most of their passages are reused); the same share deleted with `delete`. The
CPU is shared with other work on this machine, so seconds vary from run to run; the
re-embedded counts do not.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent.retrieval.corpus import ReadReport, read_documents  # noqa: E402
from agent.retrieval.index import IndexStore  # noqa: E402
from agent.retrieval.updates import delete_documents, ingest  # noqa: E402

WORDS = ("engine printer planet river coffee snake contract league bridge harbor orbit valve ledger tariff "
         "glacier violin sensor cargo comet tunnel").split()


def document(i: int, revision: int, draw: random.Random) -> dict:
    words = [draw.choice(WORDS) for _ in range(40)]
    sentences = [f"Document {i} section {n}: " + " ".join(draw.sample(WORDS, 12)) + "." for n in range(
        25 if i % 10 == 0 else 2)]
    if revision:
        sentences[-1] = f"Revision {revision} of document {i} changes this closing sentence."
    return {"id": f"doc-{i}", "title": f"{words[0]} {i}", "text": " ".join(sentences)}


def write(path: Path, count: int, changed: set[int]) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for i in range(count):
            handle.write(json.dumps(document(i, 1 if i in changed else 0, random.Random(i))) + "\n")


def timed(step: str, run) -> dict:
    started = time.perf_counter()
    counts = run()
    return {"step": step, "seconds": time.perf_counter() - started, **counts}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=10000)
    parser.add_argument("--changed", type=float, default=0.01, help="share of documents edited, then deleted")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    changed = set(random.Random(args.seed).sample(range(args.documents), max(1, int(args.documents * args.changed))))
    with tempfile.TemporaryDirectory(prefix="disambig-update-") as scratch:
        corpus = Path(scratch) / "corpus.jsonl"
        store = IndexStore(str(Path(scratch) / "index"), create=True)

        def run_ingest():
            return ingest(store, read_documents([str(corpus)], ReadReport()))

        write(corpus, args.documents, set())
        rows = [timed("first ingest", run_ingest), timed("same input again", run_ingest)]
        write(corpus, args.documents, changed)
        rows.append(timed(f"{len(changed)} documents edited ({args.changed:.0%})", run_ingest))
        ids = [f"doc-{i}" for i in sorted(changed)]
        rows.append(timed(f"{len(changed)} documents deleted", lambda: delete_documents(store, ids)))
    print(f"{args.documents} synthetic documents (a tenth long: ~25 sentences), MiniLM on this machine's shared CPU\n")
    print("| step | seconds | documents added / updated / unchanged / deleted | passages re-embedded | "
          "passages removed | passages in index |")
    print("|---|---:|---|---:|---:|---:|")
    for row in rows:
        documents = "/".join(str(row.get(f"documents_{kind}", 0)) for kind in ("added", "updated", "unchanged", "deleted"))
        print(f"| {row['step']} | {row['seconds']:.1f} | {documents} | {row.get('embedded', 0)} | "
              f"{row.get('removed', 0)} | {row['total']} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
