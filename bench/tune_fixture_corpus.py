"""Write the tune fixture passages the shipped selector and gate were trained over.

    .venv/bin/python bench/tune_fixture_corpus.py --out T.jsonl [--all-topics]
    disambig ingest T.jsonl agent/data/demo_corpus.jsonl --index DIR   # the --tune-index of
    bench/train_selector.py and bench/train_gate.py

The models learned from the fixture's first 8 topics (bench/splits/tune_fixture_trained_topics.txt)
over an index of those topics' passages; an index of all 16 gives their questions other pools, and
the commands in the model cards would no longer reproduce the shipped models.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.train_selector import TUNE_FIXTURE, trained_topics  # noqa: E402


def trained_passages(all_topics: bool = False) -> list[str]:
    """The corpus lines (JSON) of the trained topics, as the fixture writes them."""
    topics = None if all_topics else trained_topics()
    lines = (TUNE_FIXTURE / "tune_corpus.jsonl").read_text(encoding="utf-8").splitlines()
    return [line for line in lines if line.strip() and (topics is None or json.loads(line).get("topic") in topics)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--all-topics", action="store_true", help="every topic's passages")
    args = parser.parse_args(argv)
    passages = trained_passages(args.all_topics)
    Path(args.out).write_text("\n".join(passages) + "\n", encoding="utf-8")
    print(f"{len(passages)} passages -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
