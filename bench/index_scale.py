"""Index scale: the embedded backend and PostgreSQL (pgvector) at growing sizes, without the encoder.

    .venv/bin/python bench/index_scale.py --backend embedded --size 100000
    .venv/bin/python bench/index_scale.py --backend postgresql --size 100000 [--database-url URL [--measure-only]]

One row per run: ingest rate through the product's own `ingest` (precomputed vectors, so the
encoder is out of the picture: an embedder stand-in returns each passage's synthetic vector),
with the index build at the end of that ingest (embedded: the BM25 matrix built from SQLite, the
Chroma HNSW graph grows during the ingest; PostgreSQL: the HNSW graph built once after the first
load, and the statistics), query latency p50/p95 for dense,
sparse and hybrid with one client, hybrid throughput with 8 concurrent clients (threads, each
its own connection), memory (the bench process's RSS, plus the PostgreSQL server's PSS) and
disk. Synthetic passages: 40-90 words drawn from a Zipf vocabulary of 50,000 words (so common
words have BM25's floored idf, as in real text), vectors clustered around 2,000 unit centroids.
Queries: 4-8 words by the same law; query vectors near a random passage's. The machine's two
cores are shared (run under `flock /tmp/disambig-heavy.lock`); each run is one size and backend.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

VOCABULARY, CENTROIDS, DIMENSION = 50_000, 2_000, 384
BLOCK = 5_000  # passages drawn (and streamed to ingest) at a time


class Synthetic:
    """Deterministic passages, vectors and queries for a size."""

    def __init__(self, size: int, seed: int = 0):
        self.size = size
        self.random = np.random.default_rng(seed)
        ranks = np.arange(1, VOCABULARY + 1)
        self.law = (1.0 / ranks) / (1.0 / ranks).sum()
        centroids = self.random.standard_normal((CENTROIDS, DIMENSION)).astype(np.float32)
        self.centroids = centroids / np.linalg.norm(centroids, axis=1, keepdims=True)
        self.assignment = self.random.integers(0, CENTROIDS, size)

    def words(self, count: int) -> str:
        return " ".join(f"w{i}" for i in self.random.choice(VOCABULARY, count, p=self.law))

    def _draw(self, start: int, end: int) -> tuple[np.ndarray, np.ndarray]:
        """The block's passage lengths and words, in one vectorized draw (drawing per passage costs
        more than the ingest); `passages` and `skip` both draw through here, so they stay in step."""
        lengths = self.random.integers(40, 91, end - start)
        return lengths, self.random.choice(VOCABULARY, int(lengths.sum()), p=self.law)

    def passages(self, start: int, end: int) -> list[dict]:
        lengths, drawn = self._draw(start, end)
        bounds = np.concatenate([[0], np.cumsum(lengths)])
        return [{"id": f"p{i}", "title": f"p{i}", "text": " ".join(f"w{w}" for w in drawn[bounds[n]:bounds[n + 1]]),
                 "source": "synthetic", "metadata": {}} for n, i in enumerate(range(start, end))]

    def skip(self) -> None:
        """Draw what the passages would draw, without building them: the queries that follow are then
        those of a run that ingested them (to measure an index that an earlier run built)."""
        for start in range(0, self.size, BLOCK):
            self._draw(start, min(start + BLOCK, self.size))

    def vector(self, row: int) -> np.ndarray:
        noise = np.random.default_rng(row).standard_normal(DIMENSION).astype(np.float32) * 0.6 / np.sqrt(DIMENSION)
        vector = self.centroids[self.assignment[row]] + noise * 4
        return vector / np.linalg.norm(vector)

    def queries(self, count: int) -> list[tuple[str, np.ndarray]]:
        rows = self.random.integers(0, self.size, count)
        return [(self.words(int(self.random.integers(4, 9))), self.vector(int(r))) for r in rows]


class Vectors:
    """The embedder stand-in: a passage's synthetic vector from its title ("p123: ..."), a query's from the table."""

    def __init__(self, synthetic: Synthetic):
        self.synthetic = synthetic
        self.queries: dict[str, np.ndarray] = {}

    def embed(self, texts):
        return np.stack([self.queries[t] if t in self.queries else self.synthetic.vector(int(t.split(":", 1)[0][1:]))
                         for t in texts]).astype(np.float32)


def open_store(backend: str, url: str | None, workdir: str):
    if backend == "embedded":
        from agent.retrieval.index import IndexStore

        return IndexStore(os.path.join(workdir, "index"), create=True)
    from agent.retrieval.pg_index import PgIndexStore

    return PgIndexStore(url, create=True)


def ingest_all(store, synthetic: Synthetic, block: int = BLOCK) -> tuple[float, float]:
    """One `ingest` of every passage, streamed; returns (seconds, of which the final index build)."""
    from agent.retrieval.updates import ingest

    started = time.perf_counter()
    finished = {}

    def stream():
        for start in range(0, synthetic.size, block):
            yield from synthetic.passages(start, min(start + block, synthetic.size))
            done = min(start + block, synthetic.size)
            print(f"  {done} passages, {done / (time.perf_counter() - started):.0f}/s", file=sys.stderr, flush=True)
        finished["at"] = time.perf_counter()

    original = store.refresh if store.backend == "postgresql" else store.rebuild_sparse

    def timed(*args, **kwargs):  # the end of the write: HNSW graph (PostgreSQL) or BM25 matrix (embedded)
        begun = time.perf_counter()
        result = original(*args, **kwargs)
        finished["build"] = finished.get("build", 0.0) + time.perf_counter() - begun
        return result

    setattr(store, "refresh" if store.backend == "postgresql" else "rebuild_sparse", timed)
    ingest(store, stream())
    return time.perf_counter() - started, finished.get("build", 0.0)


def latencies(retriever, queries, mode: str) -> tuple[float, float]:
    timings = []
    for text, _ in queries:
        started = time.perf_counter()
        retriever.search(text, mode, 5)
        timings.append(1000 * (time.perf_counter() - started))
    timings.sort()
    return statistics.median(timings), timings[int(0.95 * (len(timings) - 1))]


def throughput(retriever, queries, clients: int = 8, seconds: float = 20.0) -> float:
    done, stop = [0] * clients, threading.Event()

    def client(number: int):
        position = number
        while not stop.is_set():
            retriever.search(queries[position % len(queries)][0], "hybrid", 5)
            done[number] += 1
            position += clients

    workers = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    started = time.perf_counter()
    for worker in workers:
        worker.start()
    time.sleep(seconds)
    stop.set()
    for worker in workers:
        worker.join()
    return sum(done) / (time.perf_counter() - started)


def memory_and_disk(store, workdir: str) -> tuple[float, float, float]:
    """(bench process RSS MB, PostgreSQL server PSS MB or 0, disk MB)."""
    import psutil

    rss = psutil.Process().memory_info().rss / 1e6
    if store.backend == "embedded":
        disk = sum(f.stat().st_size for f in Path(workdir).rglob("*") if f.is_file()) / 1e6
        return rss, 0.0, disk
    server = 0.0
    for process in psutil.process_iter(["name"]):
        if process.info["name"] == "postgres":
            try:
                server += process.memory_full_info().pss / 1e6
            except (psutil.Error, AttributeError):
                pass
    disk = store._query("SELECT pg_database_size(current_database())")[0][0] / 1e6
    return rss, server, disk


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", choices=["embedded", "postgresql"], required=True)
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=20.0, help="duration of the 8-client throughput run")
    parser.add_argument("--database-url", help="an existing PostgreSQL with pgvector (default: a throwaway server)")
    parser.add_argument("--measure-only", action="store_true",
                        help="measure the index an earlier run of this size built at --database-url (no ingest)")
    args = parser.parse_args(argv)
    if args.measure_only and not (args.database_url and args.backend == "postgresql"):
        parser.error("--measure-only measures a PostgreSQL index built earlier: give --backend postgresql --database-url")

    import agent.retrieval.index as index_module
    import agent.retrieval.pg_index as pg_index_module
    import agent.retrieval.retriever as retriever_module
    from agent.retrieval.retriever import Retriever
    from bench.postgres import PostgresServer

    synthetic = Synthetic(args.size)
    vectors = Vectors(synthetic)
    for module in (index_module, pg_index_module, retriever_module):
        module.get_embedder = lambda name: vectors
    index_module.BATCH = 1024
    workdir = tempfile.mkdtemp(prefix="index-scale-")
    server = None
    if args.backend == "postgresql" and not args.database_url:
        # the HNSW build is fast only while its graph fits in maintenance_work_mem (pgvector says when it
        # no longer does): ~4 KB a passage at 384 dimensions, so 1M passages want 4 GB
        server = PostgresServer(pgvector=True, settings={
            "shared_buffers": "1GB", "maintenance_work_mem": f"{max(1024, args.size * 4 // 1000)}MB",
            "max_wal_size": "4GB", "synchronous_commit": "off", "max_parallel_maintenance_workers": "1"}).start()
    try:
        url = args.database_url or (server.create_database("scale") if server else None)
        store = open_store(args.backend, url, workdir)
        if args.measure_only:
            synthetic.skip()
            ingest_s, build_s = float("nan"), float("nan")
        else:
            ingest_s, build_s = ingest_all(store, synthetic)
        queries = synthetic.queries(args.queries)
        vectors.queries.update({text: vector for text, vector in queries})
        retriever = Retriever(store)
        retriever.search(queries[0][0], "hybrid", 5)  # warm: the BM25 file or the connection
        rows = {mode: latencies(retriever, queries, mode) for mode in ("dense", "sparse", "hybrid")}
        qps = throughput(retriever, queries, seconds=args.seconds)
        rss, server_mb, disk = memory_and_disk(store, workdir)
        print("| backend | passages | ingest /s | build s | dense p50/p95 ms | sparse p50/p95 ms | hybrid p50/p95 ms "
              "| hybrid q/s, 8 clients | RSS MB (bench + server) | disk MB |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        print(f"| {args.backend} | {args.size} | {args.size / ingest_s:.0f} | {build_s:.1f} | "
              + " | ".join(f"{rows[m][0]:.1f} / {rows[m][1]:.1f}" for m in ("dense", "sparse", "hybrid"))
              + f" | {qps:.1f} | {rss:.0f} + {server_mb:.0f} | {disk:.0f} |", flush=True)
    finally:
        if server:
            server.stop()
        shutil.rmtree(workdir, ignore_errors=True)  # the embedded index (~0.5 GB at 100k)
    return 0


if __name__ == "__main__":
    sys.exit(main())
