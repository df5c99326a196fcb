"""DIVA retrieval check (the DIVA paper's Table 3 style) on the ASQA pool dev questions.

    DISAMBIG_LLM_THREADS=2 .venv/bin/python bench/diva_retrieval.py [--sample 24] [--model local]

For every dev id in ../shared/data/asqa/pool_dev_ids.txt: MRecall@5 and answer coverage (the
fraction of gold short-answer groups present in the kept passages) of plain top-5 retrieval
vs DIVA's diversified top-5 (union of top-5 for the question and for each interpretation,
pruned by mean cosine to the interpretations), with the gold ASQA disambiguated questions as
oracle pseudo-interpretations. On a seeded sample, the model infers the pseudo-interpretations
(the graph's two calls) and we report how much of the oracle's gain it recovers.

The wiki-pool index is built once in a cache directory outside the repository and reused;
the model's pseudo-interpretations are cached there too, so the table can be reprinted.
Exits cleanly when the shared data is absent.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent.steps.diversify import DiversifyContext, diversify, identify_ambiguity, infer_interpretations  # noqa: E402
from agent.evaluation.metrics import exact_presence, mrecall_at_k  # noqa: E402
from agent.retrieval.index import IndexStore  # noqa: E402
from bench.adf_gate import ensure_index as ensure_pool_index  # noqa: E402
from agent.retrieval.retriever import Retriever  # noqa: E402
from agent.usage import tracked  # noqa: E402

DATA = ROOT.parent / "shared" / "data"
ASQA, POOL_IDS, CORPUS = DATA / "asqa" / "asqa_dev.json", DATA / "asqa" / "pool_dev_ids.txt", DATA / "corpus" / "wiki_pool.jsonl"
K = 5


def ensure_index(path: Path) -> IndexStore:
    """Open the wiki-pool index, adding whatever is missing (a no-op once built)."""
    return IndexStore(ensure_pool_index(path, CORPUS))


def load_questions() -> list[dict]:
    ids = set(POOL_IDS.read_text().split())
    return [row for row in json.loads(ASQA.read_text()) if row["id"] in ids]


def scores(passages: list[dict], groups: list[list[str]]) -> tuple[float, float]:
    """(MRecall@5, answer coverage) of the kept passages."""
    texts = [f"{p.get('title', '')} {p['text']}" for p in passages]
    coverage = sum(exact_presence(group, "\n".join(texts)) for group in groups) / len(groups)
    return mrecall_at_k(texts, groups, K), coverage


@tracked
def model_readings(state: dict, context: DiversifyContext) -> dict:
    """The graph's two diversify calls, tracked so calls and tokens are counted."""
    found = identify_ambiguity(context, state["question"])
    types, reason = found if found else ([], "")
    readings = infer_interpretations(context, state["question"], reason, context.max_interpretations) or []
    return {"types": types, "readings": readings}


def model_pseudo_interpretations(rows: list[dict], model: str, cache_file: Path) -> dict[str, dict]:
    cache = json.loads(cache_file.read_text()) if cache_file.exists() else {}
    context = DiversifyContext(model=model)
    for number, row in enumerate(rows, 1):
        key = f"{model}|{row['id']}"
        if key not in cache:
            started = time.time()
            update = model_readings({"question": row["question"]}, context)
            usage = update["usage"]
            cache[key] = {"types": update["types"], "readings": update["readings"], "llm_calls": usage["llm_calls"],
                          "tokens": usage["prompt_tokens"] + usage["completion_tokens"], "seconds": time.time() - started}
            cache_file.write_text(json.dumps(cache, indent=1))
            print(f"[{number}/{len(rows)}] {row['question']} -> {cache[key]['readings']}", file=sys.stderr)
    return {row["id"]: cache[f"{model}|{row['id']}"] for row in rows}


def evaluate(retriever: Retriever, rows: list[dict], mode: str, readings: dict[str, list[str]] | None) -> dict:
    """Mean MRecall@5 and coverage: plain top-5 and diversified top-5 with the given readings
    (the gold disambiguated questions when `readings` is None)."""
    plain, diversified = [], []
    for row in rows:
        groups = [pair["short_answers"] for pair in row["qa_pairs"]]
        interpretations = [pair["question"] for pair in row["qa_pairs"]] if readings is None else readings[row["id"]]
        plain.append(scores(retriever.search(row["question"], mode, K), groups))
        kept, _ = diversify(retriever, row["question"], interpretations, mode=mode, candidate_k=K, k=K)
        diversified.append(scores(kept, groups))
    mean = lambda values, i: sum(v[i] for v in values) / len(values)  # noqa: E731
    return {"plain": (mean(plain, 0), mean(plain, 1)), "diva": (mean(diversified, 0), mean(diversified, 1))}


def recovered(plain: float, model: float, oracle: float) -> str:
    """The model's gain over plain as a share of the oracle's; undefined unless the oracle gains."""
    if oracle - plain <= 1e-9:
        return f"n/a (oracle gain {oracle - plain:+.3f}; model {model - plain:+.3f})"
    return f"{(model - plain) / (oracle - plain):.0%} (model {model - plain:+.3f} of oracle {oracle - plain:+.3f})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", default=os.environ.get("DISAMBIG_WIKIPOOL_INDEX", "wikipool-index"))
    parser.add_argument("--modes", nargs="+", default=["dense", "hybrid"], choices=["dense", "sparse", "hybrid"])
    parser.add_argument("--sample", type=int, default=24, help="questions whose pseudo-interpretations the model infers")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--model", default="local", help="model setting; 'none' skips the model rows")
    args = parser.parse_args(argv)
    if not all(path.exists() for path in (ASQA, POOL_IDS, CORPUS)):
        print(f"skipped: the shared ASQA pool data is not present under {DATA}")
        return 0
    index = Path(args.index)
    retriever = Retriever(ensure_index(index))
    rows = load_questions()
    sample = random.Random(args.seed).sample(rows, min(args.sample, len(rows))) if args.model != "none" else []
    model_rows = model_pseudo_interpretations(sample, args.model, index / "diva_pseudo_interpretations.json") if sample else {}

    print(f"\nDIVA retrieval on ASQA pool dev questions (k={K}; index {index})\n")
    print("| retrieval | questions | pseudo-interpretations | MRecall@5 | answer coverage |")
    print("|---|---|---|---|---|")
    for mode in args.modes:
        full = evaluate(retriever, rows, mode, None)
        for label, key, source in (("plain top-5", "plain", "-"), ("DIVA diversified top-5", "diva", "gold (oracle)")):
            mrecall, coverage = full[key]
            print(f"| {mode}: {label} | {len(rows)} | {source} | {mrecall:.3f} | {coverage:.3f} |")
    if not model_rows:
        return 0
    readings = {qid: found["readings"] for qid, found in model_rows.items()}
    print(f"\nSeeded sample (seed {args.seed}) with pseudo-interpretations from `{args.model}`\n")
    print("| retrieval | questions | pseudo-interpretations | MRecall@5 | answer coverage |")
    print("|---|---|---|---|---|")
    gains = []
    for mode in args.modes:
        oracle, model = evaluate(retriever, sample, mode, None), evaluate(retriever, sample, mode, readings)
        rows_out = (("plain top-5", oracle["plain"], "-"), ("DIVA diversified top-5", model["diva"], args.model),
                    ("DIVA diversified top-5", oracle["diva"], "gold (oracle)"))
        for label, (mrecall, coverage), source in rows_out:
            print(f"| {mode}: {label} | {len(sample)} | {source} | {mrecall:.3f} | {coverage:.3f} |")
        gains.append((mode, [recovered(oracle["plain"][i], model["diva"][i], oracle["diva"][i]) for i in (0, 1)]))
    print("\n| retrieval | oracle gain recovered: MRecall@5 | answer coverage |\n|---|---|---|")
    for mode, (mrecall, coverage) in gains:
        print(f"| {mode} | {mrecall} | {coverage} |")
    found = list(model_rows.values())
    gold = sum(len(row["qa_pairs"]) for row in sample) / len(sample)
    print(f"\nmodel: {sum(len(f['readings']) for f in found) / len(found):.1f} pseudo-interpretations per question "
          f"(gold: {gold:.1f}); {sum(not f['readings'] for f in found)} empty; "
          f"{sum(f['llm_calls'] for f in found) / len(found):.1f} calls and "
          f"{sum(f['tokens'] for f in found) / len(found):.0f} tokens per question for the two diversify calls; "
          f"{sum(f['seconds'] for f in found) / len(found):.1f}s per question")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
