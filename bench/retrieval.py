"""Retrieval benchmark: ingest rate vs the raw encoder, query latency at 10k and 100k passages.

    .venv/bin/python bench/retrieval.py [--sizes 10000 100000] [--ingest 1500] [--queries 200]

Ingest is measured end to end (read, chunk, embed, Chroma, SQLite, BM25) on synthetic passages
against `encode()` alone on the same texts. Query latency uses synthetic Zipf-distributed
passages; document vectors at 10k/100k are random unit vectors (embedding 100k passages takes
~30 min on this CPU and does not change HNSW query cost), queries are embedded for real.
rank_bm25 is timed on the same tokens for the sparse speed ratio, and its scores compared.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.retrieval.bm25 import BM25Index, tokenize  # noqa: E402
from agent.retrieval.corpus import ReadReport, read_passages  # noqa: E402
from agent.retrieval.embeddings import get_embedder  # noqa: E402
from agent.retrieval.index import IndexStore, ingest  # noqa: E402
from agent.retrieval.retriever import Retriever  # noqa: E402


def zipf_vocabulary(size: int, seed: int = 7) -> tuple[list[str], np.ndarray]:
    rng = random.Random(seed)
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = sorted({"".join(rng.choice(letters) for _ in range(rng.randint(3, 10))) for _ in range(size * 2)})[:size]
    rng.shuffle(words)
    weights = 1.0 / np.arange(1, len(words) + 1) ** 1.07
    return words, weights / weights.sum()


def synthetic_texts(count: int, words, probabilities, length: int = 90, seed: int = 1) -> list[str]:
    rng = np.random.default_rng(seed)
    picks = rng.choice(len(words), size=(count, length), p=probabilities)
    return [" ".join(words[i] for i in row) for row in picks]


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(np.array(values) * 1000, q))


def bench_ingest(count: int, workdir: Path) -> dict:
    """Full ingest vs `encode()` alone on exactly the texts ingest embeds (its chunks: long
    synthetic texts are cut into token windows, so there are more chunks than documents)."""
    words, probabilities = zipf_vocabulary(20000)
    texts = synthetic_texts(count, words, probabilities, length=60, seed=3)
    corpus = workdir / "ingest.jsonl"
    corpus.write_text("".join(json.dumps({"id": f"p{i}", "title": f"T{i}", "text": t}) + "\n" for i, t in enumerate(texts)))
    chunks = list(read_passages([str(corpus)], ReadReport()))
    embedder = get_embedder("minilm")
    embedder.embed(["warm up the model"] * 8)
    started = time.perf_counter()
    embedder.embed([f"{c['title']}: {c['text']}" for c in chunks])
    raw_rate = len(chunks) / (time.perf_counter() - started)
    store = IndexStore(str(workdir / "ingest-index"), create=True)
    started = time.perf_counter()
    ingest(store, read_passages([str(corpus)], ReadReport()))
    pipeline_rate = len(chunks) / (time.perf_counter() - started)
    return {"documents": count, "passages": len(chunks), "raw_encoder_per_s": raw_rate,
            "ingest_per_s": pipeline_rate, "ratio": pipeline_rate / raw_rate}


class RandomVectors:
    """Bulk loader stand-in for the encoder: random unit vectors (documents only)."""

    name, dimension = "minilm", 384

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)

    def embed(self, texts):
        vectors = self.rng.standard_normal((len(texts), 384)).astype(np.float32)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def build_synthetic_index(size: int, workdir: Path) -> tuple[IndexStore, list[list[str]]]:
    import agent.retrieval.index as index_module

    words, probabilities = zipf_vocabulary(50000)
    texts = synthetic_texts(size, words, probabilities, seed=size)
    store = IndexStore(str(workdir / f"index-{size}"), create=True)
    real = index_module.get_embedder
    index_module.get_embedder = lambda name: RandomVectors(size)
    try:
        for start in range(0, size, 2000):
            batch = [{"id": f"d{i}", "title": "", "text": texts[i], "source": "synthetic"}
                     for i in range(start, min(size, start + 2000))]
            store.add(batch)
    finally:
        index_module.get_embedder = real
    store.rebuild_sparse()
    return store, [tokenize(t) for t in texts]


def bench_queries(size: int, query_count: int, workdir: Path, with_oracle: bool) -> list[dict]:
    store, tokenized = build_synthetic_index(size, workdir)
    retriever = Retriever(store)
    words, probabilities = zipf_vocabulary(50000)
    rng = np.random.default_rng(99)
    queries = [" ".join(words[i] for i in rng.choice(len(words), size=rng.integers(3, 9), p=probabilities))
               for _ in range(query_count)]
    retriever.search(queries[0], "hybrid", 5)  # load the BM25 file and the encoder
    rows = []
    for mode in ("dense", "sparse", "hybrid"):
        times = []
        for query in queries:
            started = time.perf_counter()
            retriever.search(query, mode, 5)
            times.append(time.perf_counter() - started)
        rows.append({"passages": size, "mode": mode, "p50_ms": percentile(times, 50), "p95_ms": percentile(times, 95)})
    index = BM25Index.load(store.bm25_path)
    core = []
    for query in queries:
        started = time.perf_counter()
        index.search(query, 5)
        core.append(time.perf_counter() - started)
    rows.append({"passages": size, "mode": "bm25 core", "p50_ms": percentile(core, 50), "p95_ms": percentile(core, 95)})
    if with_oracle:
        from rank_bm25 import BM25Okapi

        oracle = BM25Okapi(tokenized)
        oracle_times, max_diff = [], 0.0
        for query in queries[:30]:
            tokens = tokenize(query)
            started = time.perf_counter()
            expected = oracle.get_scores(tokens)
            oracle_times.append(time.perf_counter() - started)
            max_diff = max(max_diff, float(np.abs(index.scores(tokens) - expected).max()))
        rows.append({"passages": size, "mode": "rank_bm25", "p50_ms": percentile(oracle_times, 50),
                     "p95_ms": percentile(oracle_times, 95), "max_score_diff": max_diff})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[10000, 100000], help="index sizes (none: ingest only)")
    parser.add_argument("--ingest", type=int, default=1500)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        ingest_row = bench_ingest(args.ingest, workdir)
        print(f"\nIngest ({ingest_row['documents']} documents -> {ingest_row['passages']} passages, torch threads {os.environ.get('DISAMBIG_TORCH_THREADS', os.cpu_count())})")
        print(f"  raw encoder   {ingest_row['raw_encoder_per_s']:8.1f} passages/s")
        print(f"  full ingest   {ingest_row['ingest_per_s']:8.1f} passages/s  = {ingest_row['ratio']:.0%} of raw (target >= 85%)")
        print("\nQuery latency (k=5)")
        print(f"  {'passages':>9} {'mode':>10} {'p50 ms':>9} {'p95 ms':>9}")
        for size in args.sizes:
            rows = bench_queries(size, args.queries, workdir, with_oracle=True)
            for row in rows:
                print(f"  {row['passages']:>9} {row['mode']:>10} {row['p50_ms']:9.3f} {row['p95_ms']:9.3f}")
            core = next(r for r in rows if r["mode"] == "bm25 core")
            oracle = next(r for r in rows if r["mode"] == "rank_bm25")
            print(f"  {'':>9} sparse speed-up vs rank_bm25: {oracle['p50_ms'] / core['p50_ms']:.0f}x (target >= 30x); "
                  f"max |score diff| {oracle['max_score_diff']:.2e}")


if __name__ == "__main__":
    main()
