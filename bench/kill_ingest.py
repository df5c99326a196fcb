"""Ingest, update and delete killed with SIGKILL at random points, then re-run: nothing lost,
nothing duplicated.

    .venv/bin/python bench/kill_ingest.py [--trials 5] [--passages 1200] [--seed 0] [--operations ingest,update,delete]

`ingest` trials start a fresh ingest of a synthetic corpus into a new index and kill it with
SIGKILL at a random point of a phase: during start-up (a random delay), after a random number
of passages were committed plus a random delay (so the kill lands in the next batch's
embedding, Chroma write or SQLite commit), or once everything is committed (BM25 rebuild and
exit). `update` trials take a copy of a finished index and run `ingest --sync` of a revised
corpus (a fifth of the texts changed, a tenth grown into several chunks, a twentieth gone),
killed at a random moment; `delete` trials run `disambig delete` of a third of the documents,
killed at a random moment. The state at the kill (read from SQLite's settings) says how far
the write got. Then the same command runs again (`delete --missing-ok`) and the index is
checked against the expected corpus: the passage set and texts, no duplicate ids, and SQLite,
Chroma and BM25 holding the same ids. Prints one row per trial.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
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
from agent.retrieval.corpus import Document, chunk_document  # noqa: E402
from agent.retrieval.index import IndexStore  # noqa: E402
from agent.retrieval.updates import stats  # noqa: E402

TOPICS = ["engines", "printers", "games", "planets", "rivers", "coffee", "snakes", "contracts"]


def corpus_rows(count: int, revision: int = 0) -> list[dict]:
    """The synthetic corpus; revision 1 changes a fifth of the texts, grows a tenth into
    several chunks and drops a twentieth."""
    rows = []
    for i in range(count):
        topic = TOPICS[i % len(TOPICS)]
        text = f"Passage {i} about {topic}: fact number {i * 7}, detail {i % 13} and remark {i % 31}."
        if revision and i % 20 == 19:
            continue
        if revision and i % 5 == 1:
            text += f" Revised: the {topic} figure is now {i * 11}."
        if revision and i % 10 == 3:
            text += " " + " ".join(f"{topic} grows longer with clause {n} of many." for n in range(25))
        rows.append({"id": f"doc-{i}", "title": f"{topic} {i}", "text": text})
    return rows


def write_corpus(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


def expected_passages(rows: list[dict]) -> dict[str, str]:
    return {p["id"]: p["text"] for row in rows
            for p in chunk_document(Document(row["id"], row["title"], row["text"], "", ""))}


def cli(*arguments: str) -> list[str]:
    return [sys.executable, "-m", "agent.app.cli", *arguments]


def check(index: Path, expected: dict[str, str]) -> dict:
    store = IndexStore(str(index))
    passages = [(row[0], row[2]) for row in store.all_passages()]
    vectors = store.collection.get(include=["documents"])
    sparse_ids = BM25Index.load(store.bm25_path).ids if os.path.exists(store.bm25_path) else []
    ids = [i for i, _ in passages]
    return {
        "count": len(ids),
        "duplicates": len(ids) - len(set(ids)),
        "agree": sorted(ids) == sorted(vectors["ids"]) == sorted(sparse_ids),
        "current": dict(passages) == expected == dict(zip(vectors["ids"], vectors["documents"])),
        "consistent": stats(store)["check"]["consistent"],
    }


def read_state(index: Path) -> dict[str, str]:
    """SQLite's settings and passage count, read-only (an IndexStore would write)."""
    if not (index / "passages.sqlite").exists():
        return {}
    with sqlite3.connect(index / "passages.sqlite", timeout=30) as db:
        try:
            state = dict(db.execute("SELECT key, value FROM settings").fetchall())
            state["committed"] = str(db.execute("SELECT COUNT(*) FROM passages").fetchone()[0])
            return state
        except sqlite3.OperationalError:  # the tables are not created yet
            return {}


def committed(index: Path) -> int:
    return int(read_state(index).get("committed", 0))


def describe(before: dict, after: dict) -> str:
    """How far a write had got when it was killed."""
    if after.get("version") == before.get("version"):
        return "vectors being written" if after.get("dense_version") == "-1" != before.get("dense_version") \
            else "not started"
    if after.get("dense_version") == "-1":
        return f"{int(after['version']) - int(before.get('version', 0))} commits, vectors pending"
    return "written (BM25/exit)"


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


def kill_and_rerun(command: list[str], rerun: list[str], index: Path, wait, env: dict) -> tuple[float, str, int]:
    before = read_state(index)
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    started = time.perf_counter()
    wait(process)
    process.send_signal(signal.SIGKILL)
    process.wait()
    killed_after = time.perf_counter() - started
    state = describe(before, read_state(index))
    result = subprocess.run(rerun, capture_output=True, text=True, env=env)
    return killed_after, state, result.returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=5, help="trials per operation")
    parser.add_argument("--passages", type=int, default=1200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--operations", default="ingest,update,delete")
    args = parser.parse_args(argv)
    draw = random.Random(args.seed)
    env = {**os.environ, "ANONYMIZED_TELEMETRY": "False"}
    operations = args.operations.split(",")
    phases = ["start-up", "end"] + ["batches"] * max(0, args.trials - 2)
    draw.shuffle(phases)
    failures = runs = 0
    with tempfile.TemporaryDirectory(prefix="disambig-kill-") as scratch:
        corpus, scratch = Path(scratch) / "corpus.jsonl", Path(scratch)
        original, revised = corpus_rows(args.passages), corpus_rows(args.passages, revision=1)
        write_corpus(corpus, original)
        base = scratch / "base"
        if {"update", "delete"} & set(operations):
            subprocess.run(cli("ingest", str(corpus), "--index", str(base), "--quiet"), check=True, env=env,
                           stdout=subprocess.DEVNULL)
        durations = {}  # seconds an uninterrupted update / delete takes: kills are drawn over it
        for operation in {"update", "delete"} & set(operations):
            copy = scratch / f"timing-{operation}"
            shutil.copytree(base, copy)
            write_corpus(corpus, revised if operation == "update" else original)
            command = (cli("ingest", "--sync", str(corpus), "--index", str(copy), "--quiet") if operation == "update"
                       else cli("delete", *[row["id"] for row in original[::3]], "--index", str(copy)))
            started = time.perf_counter()
            subprocess.run(command, check=True, env=env, stdout=subprocess.DEVNULL)
            durations[operation] = time.perf_counter() - started
            shutil.rmtree(copy)
        print(f"{args.passages} synthetic documents, {args.trials} trials per operation; uninterrupted: "
              + ", ".join(f"{name} {seconds:.1f}s" for name, seconds in durations.items()) + "\n")
        print("| trial | operation | killed after s | state at kill | re-run exit | passages | expected | duplicates | "
              "SQLite = Chroma = BM25 | texts current | ok |")
        print("|---:|---|---:|---|---:|---:|---:|---:|---|---|---|")
        for operation in operations:
            for trial in range(1, args.trials + 1):
                index = scratch / f"{operation}-{trial}"
                write_corpus(corpus, original)
                if operation == "ingest":
                    phase = phases[(trial - 1) % len(phases)]
                    command = rerun = cli("ingest", str(corpus), "--index", str(index))
                    expected = expected_passages(original)
                    wait = lambda process, phase=phase: wait_until_phase(process, index, phase, args.passages, draw)
                    label = f"ingest ({phase})"
                elif operation == "update":
                    shutil.copytree(base, index)
                    write_corpus(corpus, revised)
                    command = rerun = cli("ingest", "--sync", str(corpus), "--index", str(index))
                    expected = expected_passages(revised)
                    wait = lambda process: time.sleep(draw.uniform(0.3, 1.05 * durations["update"]))
                    label = "update (ingest --sync)"
                else:
                    shutil.copytree(base, index)
                    gone = [row["id"] for row in original if int(row["id"].split("-")[1]) % 3 == trial % 3]
                    command = cli("delete", *gone, "--index", str(index))
                    rerun = [*command, "--missing-ok"]
                    expected = expected_passages([row for row in original if row["id"] not in set(gone)])
                    wait = lambda process: time.sleep(draw.uniform(0.3, 1.05 * durations["delete"]))
                    label = f"delete {len(gone)}"
                killed_after, state, code = kill_and_rerun(command, rerun, index, wait, env)
                result = check(index, expected)
                ok = code == 0 and result["current"] and result["agree"] and result["consistent"] \
                    and not result["duplicates"]
                failures += not ok
                runs += 1
                print(f"| {trial} | {label} | {killed_after:.1f} | {state} | {code} | {result['count']} | "
                      f"{len(expected)} | {result['duplicates']} | {'yes' if result['agree'] else 'NO'} | "
                      f"{'yes' if result['current'] else 'NO'} | {'yes' if ok else 'NO'} |", flush=True)
                shutil.rmtree(index, ignore_errors=True)
    print(f"\n{runs - failures}/{runs} trials complete and consistent after the re-run")
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
