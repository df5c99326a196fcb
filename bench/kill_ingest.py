"""Ingest killed with SIGKILL at random points, then re-run: nothing lost, nothing duplicated.

    .venv/bin/python bench/kill_ingest.py [--trials 5] [--passages 1500] [--seed 0]

Each trial starts a fresh ingest of a synthetic corpus into a new index and kills it with
SIGKILL at a random point of a phase: during start-up (a random delay), after a random number
of passages were committed plus a random delay (so the kill lands in the next batch's
embedding, Chroma write or SQLite commit), or once everything is committed (BM25 rebuild and
exit). Phases are shuffled so every run covers each. Then the same command runs again and the
index is checked: passage count equals the source count, no duplicate ids, and SQLite, Chroma
and BM25 hold the same id set. Prints one row per trial.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent.retrieval.bm25 import BM25Index  # noqa: E402
from agent.retrieval.index import IndexStore  # noqa: E402

TOPICS = ["engines", "printers", "games", "planets", "rivers", "coffee", "snakes", "contracts"]


def write_corpus(path: Path, count: int) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for i in range(count):
            topic = TOPICS[i % len(TOPICS)]
            text = f"Passage {i} about {topic}: fact number {i * 7}, detail {i % 13} and remark {i % 31}."
            handle.write(json.dumps({"id": f"doc-{i}", "title": f"{topic} {i}", "text": text}) + "\n")


def command(corpus: Path, index: Path) -> list[str]:
    return [sys.executable, "-m", "agent.app.cli", "ingest", str(corpus), "--index", str(index)]


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


def committed(index: Path) -> int:
    """Passages committed to SQLite so far (0 before the database exists). A plain read-only
    query: opening an IndexStore would write to the database the ingest is filling."""
    if not (index / "passages.sqlite").exists():
        return 0
    with sqlite3.connect(index / "passages.sqlite", timeout=30) as db:
        try:
            return db.execute("SELECT COUNT(*) FROM passages").fetchone()[0]
        except sqlite3.OperationalError:  # the table is not created yet
            return 0


def wait_until_phase(process: subprocess.Popen, index: Path, phase: str, total: int, draw: random.Random) -> None:
    """Return at a random moment of `phase` (or when the process ended on its own)."""
    if phase == "start-up":
        time.sleep(draw.uniform(0.3, 3.0))
        return
    target = total if phase == "end" else draw.randint(1, total - 1)
    while process.poll() is None and committed(index) < target:
        time.sleep(0.05)
    if phase == "batches":
        time.sleep(draw.uniform(0.0, 1.5))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--passages", type=int, default=1200)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    draw = random.Random(args.seed)
    env = {**os.environ, "ANONYMIZED_TELEMETRY": "False"}
    phases = ["start-up", "end"] + ["batches"] * max(0, args.trials - 2)
    draw.shuffle(phases)
    with tempfile.TemporaryDirectory(prefix="disambig-kill-") as scratch:
        corpus = Path(scratch) / "corpus.jsonl"
        write_corpus(corpus, args.passages)
        print(f"{args.passages} synthetic passages, {args.trials} trials\n")
        print("| trial | phase | killed after s | committed before kill | re-run exit | count | duplicates | "
              "SQLite = Chroma = BM25 | complete |")
        print("|---:|---|---:|---:|---:|---:|---:|---|---|")
        failures = 0
        for trial, phase in enumerate(phases[:args.trials], 1):
            index = Path(scratch) / f"trial-{trial}"
            process = subprocess.Popen(command(corpus, index), stdout=subprocess.DEVNULL,
                                       stderr=subprocess.DEVNULL, env=env)
            started = time.perf_counter()
            wait_until_phase(process, index, phase, args.passages, draw)
            process.send_signal(signal.SIGKILL)
            process.wait()
            killed_after = time.perf_counter() - started
            partial = committed(index)
            rerun = subprocess.run(command(corpus, index), capture_output=True, text=True, env=env)
            result = check(index, args.passages)
            ok = rerun.returncode == 0 and result["complete"] and result["agree"] and not result["duplicates"]
            failures += not ok
            print(f"| {trial} | {phase} | {killed_after:.1f} | {partial} | {rerun.returncode} | {result['count']} | "
                  f"{result['duplicates']} | {'yes' if result['agree'] else 'NO'} | {'yes' if ok else 'NO'} |",
                  flush=True)
    print(f"\n{args.trials - failures}/{args.trials} trials complete and consistent after the re-run")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
