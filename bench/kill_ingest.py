"""Ingest killed with SIGKILL at random points, then re-run: nothing lost, nothing duplicated.

    .venv/bin/python bench/kill_ingest.py [--trials 5] [--passages 1500] [--seed 0]

A calibration run times a full `disambig ingest` of a synthetic corpus. Each trial starts a
fresh ingest into a new index, kills it with SIGKILL after a random delay drawn over that
duration (so kills land during start-up, embedding, Chroma writes, SQLite commits or the BM25
rebuild), then runs the same command again and checks: passage count equals the source count,
no duplicate ids, and SQLite, Chroma and BM25 hold the same id set. Prints one row per trial.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent.bm25 import BM25Index  # noqa: E402
from agent.index import IndexStore  # noqa: E402

TOPICS = ["engines", "printers", "games", "planets", "rivers", "coffee", "snakes", "contracts"]


def write_corpus(path: Path, count: int) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for i in range(count):
            topic = TOPICS[i % len(TOPICS)]
            text = f"Passage {i} about {topic}: fact number {i * 7}, detail {i % 13} and remark {i % 31}."
            handle.write(json.dumps({"id": f"doc-{i}", "title": f"{topic} {i}", "text": text}) + "\n")


def command(corpus: Path, index: Path) -> list[str]:
    return [sys.executable, "-m", "agent.cli", "ingest", str(corpus), "--index", str(index)]


def check(index: Path, expected: int) -> dict:
    store = IndexStore(str(index))
    passage_ids = [row[0] for row in store.all_passages()]
    vector_ids = store.collection.get(include=[])["ids"]
    sparse_ids = BM25Index.load(store.bm25_path).ids if os.path.exists(store.bm25_path) else []
    return {
        "count": len(passage_ids),
        "duplicates": len(passage_ids) - len(set(passage_ids)),
        "agree": sorted(passage_ids) == sorted(vector_ids) == sorted(sparse_ids),
        "complete": len(passage_ids) == expected,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--passages", type=int, default=1500)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    draw = random.Random(args.seed)
    env = {**os.environ, "ANONYMIZED_TELEMETRY": "False"}
    with tempfile.TemporaryDirectory(prefix="disambig-kill-") as scratch:
        corpus = Path(scratch) / "corpus.jsonl"
        write_corpus(corpus, args.passages)
        started = time.perf_counter()
        subprocess.run(command(corpus, Path(scratch) / "calibration"), check=True, capture_output=True, env=env)
        full = time.perf_counter() - started
        print(f"{args.passages} passages; a full ingest takes {full:.1f}s (process start included)\n")
        print("| trial | killed after s | committed before kill | re-run exit | count | duplicates | "
              "SQLite = Chroma = BM25 | complete |")
        print("|---:|---:|---:|---:|---:|---:|---|---|")
        failures = 0
        for trial in range(1, args.trials + 1):
            index = Path(scratch) / f"trial-{trial}"
            delay = draw.uniform(0.5, full)
            process = subprocess.Popen(command(corpus, index), stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL, env=env)
            time.sleep(delay)
            process.send_signal(signal.SIGKILL)
            process.wait()
            partial = IndexStore(str(index)).count() if (index / "passages.sqlite").exists() else 0
            rerun = subprocess.run(command(corpus, index), capture_output=True, text=True, env=env)
            result = check(index, args.passages)
            ok = rerun.returncode == 0 and result["complete"] and result["agree"] and not result["duplicates"]
            failures += not ok
            print(f"| {trial} | {delay:.1f} | {partial} | {rerun.returncode} | {result['count']} | "
                  f"{result['duplicates']} | {'yes' if result['agree'] else 'NO'} | {'yes' if ok else 'NO'} |")
    print(f"\n{args.trials - failures}/{args.trials} trials complete and consistent after the re-run")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
