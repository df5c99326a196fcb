"""Detection quality of ADF's coherence gate, per threshold preset (no LLM involved).

    .venv/bin/python bench/adf_gate.py [--modes hybrid dense sparse] [--cache DIR] [--no-pool]

1. The demo fixture's labelled questions (agent/data/demo_questions.json, clear and ambiguous)
   over the demo corpus: precision / recall / F1 / accuracy of "ambiguous", counting as positive
   either what the graph decomposes by default (Ambiguous or Uncertain) or Ambiguous alone
   (`uncertain_fallback=direct`); next to it the query-only detector of the query-rewrite paper, as in the
   paper's ablation of retrieval-based against question-based gating.
2. Recall on the ASQA pool dev ids over ../shared/data/corpus/wiki_pool.jsonl: every ASQA
   question is ambiguous by construction, so recall is the share the gate lets through.
Indexes are built once in a cache directory outside the repository (default: the user cache).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.steps.coherence import PRESETS, classify, dispersion, separability  # noqa: E402
from agent.context import Context, cache_dir  # noqa: E402
from agent.retrieval.corpus import ReadReport, read_passages  # noqa: E402
from agent.retrieval.retriever import passage_vectors  # noqa: E402
from agent.evaluation.metrics import detection_scores  # noqa: E402
from agent.retrieval.index import IndexStore, ingest  # noqa: E402
from agent.retrieval.retriever import get_retriever  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DEMO_CORPUS = ROOT / "agent" / "data" / "demo_corpus.jsonl"
DEMO_QUESTIONS = ROOT / "agent" / "data" / "demo_questions.json"
SHARED = ROOT.parent / "shared" / "data"
POOL_CORPUS = SHARED / "corpus" / "wiki_pool.jsonl"
ASQA = SHARED / "asqa" / "asqa_dev.json"
POOL_IDS, DEV_IDS = SHARED / "asqa" / "pool_dev_ids.txt", SHARED / "asqa" / "dev_ids.txt"
DETECTION_K = 10  # 2k with k = 5, as the graph retrieves


POOL_CHUNK_TOKENS, POOL_OVERLAP = 400, 40  # DPR's 100-word passages stay whole; every bench's pool index is cut alike


def ensure_index(path: Path, corpus: Path) -> str:
    """Ingest `corpus` into `path` unless it already holds all of it (ingest is idempotent);
    the one way every bench builds its demo and wiki-pool indexes."""
    passages = list(read_passages([str(corpus)], ReadReport(), POOL_CHUNK_TOKENS, POOL_OVERLAP))
    store = IndexStore(str(path), create=True)
    if store.count() < len(passages) or not store.sparse_is_current():
        started = time.time()
        counts = ingest(store, passages)
        print(f"indexed {counts['added']} passages of {corpus.name} in {time.time() - started:.0f}s -> {path}",
              file=sys.stderr)
    return str(path)


def coherence(index_dir: str, questions: list[str], mode: str) -> list[tuple[float, float]]:
    """(variance, separability) of each question's 2k detection passages."""
    retriever = get_retriever(Context(index_dir=index_dir))
    stats = []
    for ranking in retriever.search_batch(questions, mode, DETECTION_K):
        vectors = passage_vectors(retriever, ranking) if ranking else []
        stats.append((dispersion(vectors), separability(vectors)))
    return stats


def gates(stats: list[tuple[float, float]], preset: str) -> list[str]:
    thresholds = PRESETS[preset]
    return [classify(v, s, thresholds.tau_var, thresholds.tau_sep) for v, s in stats]


def score_row(name: str, predicted: list[bool], gold: list[bool]) -> str:
    s = detection_scores(zip(predicted, gold))
    return (f"| {name} | {s['precision']:.3f} | {s['recall']:.3f} | {s['f1']:.3f} | {s['accuracy']:.3f} "
            f"| {s['tp']}/{s['fp']}/{s['fn']}/{s['tn']} |")


def auc(values: list[float], gold: list[bool]) -> float:
    from sklearn.metrics import roc_auc_score

    return float(roc_auc_score(gold, values))


def query_detector_labels(questions: list[str]) -> list[bool] | None:
    """The query-rewrite paper's query-only detector, when it is installed in this tree."""
    try:
        from agent.detector.classifier import AMBIGUOUS, load_detector
    except ImportError:
        return None
    return [label == AMBIGUOUS for label in load_detector().labels(questions)]


def topic_table(index_dir: str, mode: str) -> None:
    """The gate on each demo topic's sample question, as `disambig ask --method adf` decides it."""
    topics = json.loads(DEMO_QUESTIONS.read_text())["topics"]
    stats = coherence(index_dir, [t["sample_question"] for t in topics], mode)
    print(f"\n## Demo topics: the gate on each sample question ({mode})\n")
    print("| topic | question | variance | separability | " + " | ".join(PRESETS) + " |")
    print("|---|---|---:|---:|" + "---|" * len(PRESETS))
    decisions = {preset: gates(stats, preset) for preset in PRESETS}
    for number, (topic, (variance, separation)) in enumerate(zip(topics, stats)):
        cells = " | ".join(decisions[preset][number] for preset in PRESETS)
        print(f"| {topic['topic']} | {topic['sample_question']} | {variance:.3f} | {separation:.3f} | {cells} |")


def demo_table(index_dir: str, modes: list[str]) -> None:
    items = json.loads(DEMO_QUESTIONS.read_text())["questions"]
    questions, gold = [q["question"] for q in items], [q["label"] == "ambiguous" for q in items]
    print(f"\n## Demo fixture: {len(items)} questions ({sum(gold)} ambiguous, {len(gold) - sum(gold)} clear)\n")
    print("| gate | precision | recall | F1 | accuracy | TP/FP/FN/TN |")
    print("|---|---|---|---|---|---|")
    separations = {}
    for mode in modes:
        stats = coherence(index_dir, questions, mode)
        separations[mode] = stats
        for preset in PRESETS:
            labels = gates(stats, preset)
            print(score_row(f"{mode}, {preset}: decompose (Ambiguous+Uncertain)", [g != "Unambiguous" for g in labels], gold))
            print(score_row(f"{mode}, {preset}: Ambiguous only", [g == "Ambiguous" for g in labels], gold))
    query_based = query_detector_labels(questions)
    if query_based is not None:
        print(score_row("query-only detector (shipped model)", query_based, gold))
    print(f"| always ambiguous (base rate) | {sum(gold) / len(gold):.3f} | 1.000 | "
          f"{2 * sum(gold) / (len(gold) + sum(gold)):.3f} | {sum(gold) / len(gold):.3f} | |")
    print("\n| retrieval mode | mean variance clear / ambiguous | mean separability clear / ambiguous "
          "| ROC-AUC variance | ROC-AUC separability |")
    print("|---|---|---|---|---|")
    for mode, stats in separations.items():
        variance, separation = np.array([s[0] for s in stats]), np.array([s[1] for s in stats])
        mask = np.array(gold)
        print(f"| {mode} | {variance[~mask].mean():.3f} / {variance[mask].mean():.3f} "
              f"| {separation[~mask].mean():.3f} / {separation[mask].mean():.3f} "
              f"| {auc(list(variance), gold):.3f} | {auc(list(separation), gold):.3f} |")


def pool_table(index_dir: str, modes: list[str]) -> None:
    from agent.evaluation.datasets import load_dataset, read_ids

    dev = set(read_ids(DEV_IDS))
    ids = [i for i in read_ids(POOL_IDS) if i in dev]
    examples = load_dataset("asqa", ASQA, ids=ids)
    questions = [e.question for e in examples]
    print(f"\n## ASQA pool dev ids: {len(examples)} questions over wiki_pool.jsonl (all ambiguous by construction; "
          f"{sum(len(e.qa_pairs) > 1 for e in examples)} with more than one QA pair)\n")
    print("| gate | Ambiguous | Uncertain | Unambiguous | recall (decompose) | recall (Ambiguous only) |")
    print("|---|---|---|---|---|---|")
    for mode in modes:
        stats = coherence(index_dir, questions, mode)
        for preset in PRESETS:
            labels = gates(stats, preset)
            counts = {g: labels.count(g) for g in ("Ambiguous", "Uncertain", "Unambiguous")}
            print(f"| {mode}, {preset} | {counts['Ambiguous']} | {counts['Uncertain']} | {counts['Unambiguous']} "
                  f"| {(counts['Ambiguous'] + counts['Uncertain']) / len(labels):.3f} "
                  f"| {counts['Ambiguous'] / len(labels):.3f} |")
    query_based = query_detector_labels(questions)
    if query_based is not None:
        print(f"| query-only detector | | | | {sum(query_based) / len(query_based):.3f} | |")
    print("\n(paper: 74% of ASQA questions classified ambiguous with the asqa thresholds)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modes", nargs="+", default=["hybrid"], choices=["hybrid", "dense", "sparse"])
    parser.add_argument("--cache", default=str(cache_dir() / "bench"), help="where the bench indexes live")
    parser.add_argument("--no-pool", action="store_true", help="skip the ASQA wiki-pool part")
    args = parser.parse_args(argv)
    cache = Path(args.cache).expanduser()
    if cache.resolve().is_relative_to(ROOT):
        parser.error("keep the bench indexes outside the repository")
    print("# ADF coherence gate: detection quality (2k = 10 passages, thresholds per preset)")
    print("presets: " + ", ".join(f"{n} (tau_var {p.tau_var}, tau_sep {p.tau_sep})" for n, p in PRESETS.items()))
    demo_index = ensure_index(cache / "demo-index", DEMO_CORPUS)
    demo_table(demo_index, args.modes)
    topic_table(demo_index, args.modes[0])
    if args.no_pool:
        return 0
    if not all(p.exists() for p in (POOL_CORPUS, ASQA, POOL_IDS, DEV_IDS)):
        print(f"\n(skipped the ASQA pool part: evaluation data not present under {SHARED})")
        return 0
    pool_table(ensure_index(cache / "wiki-pool-index", POOL_CORPUS), args.modes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
