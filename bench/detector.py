"""Ambiguity detector benchmark: held-out scores, augmentation ablation, AmbigNQ (out of
domain), LLM few-shot baseline and prediction latency.

    DISAMBIG_LLM_THREADS=2 .venv/bin/python bench/detector.py [--model local] [--llm-sample 40]
        [--ambignq-llm-sample 30] [--splits 5] [--no-llm]

1. The project's held-out split (written queries never seen in training, no augmented
   variants of them in training): rules only / classifier / classifier + lexical rule, all
   queries; the LLM few-shot detector on a stratified sample, with the others on that sample.
2. Augmentation ablation: retrain on 5 random grouped splits of the written queries, with
   and without the paper's augmentation, mean and spread of F1/accuracy.
3. AmbigNQ dev ids (../shared/data/ambignq, skipped when absent): ambiguous = any multipleQAs
   annotation. OUT OF DOMAIN: AmbigNQ ambiguity is about several possible answers to a
   self-contained question, not about references to earlier turns, so low recall is expected.
4. Latency of `predict` per query after the model is loaded (target < 20 ms).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent.context import Context, make_context  # noqa: E402
from agent.detector.classifier import AMBIGUOUS, CLEAR, default_model_path, load_detector  # noqa: E402
from agent.detector.augment import augment  # noqa: E402
from agent.detector.report import format_report  # noqa: E402
from agent.detector.train import evaluate, fit, read_labelled, split_rows, stratified_sample  # noqa: E402
from agent.retrieval.embeddings import get_embedder  # noqa: E402

AMBIGNQ = ROOT.parent / "shared" / "data" / "ambignq"


def cache_embeddings() -> None:
    """Memoize the embedder in this process: the ablation embeds the same texts many times."""
    embedder = get_embedder("minilm")
    original, memo = embedder.embed, {}

    def embed(texts):
        missing = [t for t in dict.fromkeys(texts) if t not in memo]
        if missing:
            memo.update(zip(missing, original(missing)))
        return np.array([memo[t] for t in texts], dtype=np.float32).reshape(len(texts), -1)

    embedder.embed = embed


def held_out(detector, rows, llm_context, llm_sample: int) -> None:
    train, test = split_rows(rows)
    test = [r for r in test if r["origin"] == "written"]
    print(format_report(evaluate(detector, test), f"\n## Project held-out split: {len(test)} written queries "
                                                  f"({sum(r['label'] == AMBIGUOUS for r in test)} ambiguous)"))
    if llm_context is not None and llm_sample:
        started = time.perf_counter()
        report = evaluate(detector, test, llm_context=llm_context, llm_sample=llm_sample, seed=1)
        seconds = time.perf_counter() - started
        sample = stratified_sample(test, llm_sample, 1)
        from agent.detector.classifier import rules_label
        from agent.detector.train import scores

        sampled = {"rules only (same sample)": scores([r["label"] for r in sample], [rules_label(r["text"]) for r in sample]),
                   "classifier + lexical rule (same sample)": report["classifier + lexical rule (same sample)"],
                   f"LLM few-shot ({llm_context.model})": report["LLM few-shot"]}
        print(format_report(sampled, f"\n## Same held-out split, stratified sample of {len(sample)} for the LLM "
                                     f"({seconds / len(sample):.1f} s per LLM query)"))


def ablation(rows, splits: int) -> None:
    written = [{k: v for k, v in r.items() if k != "split"} for r in rows if r["origin"] == "written"]
    results = {"with augmentation": [], "without augmentation": []}
    for seed in range(splits):
        train, test = split_rows(written, 0.25, seed=100 + seed)
        for name, extra in (("with augmentation", augment(train, seed)), ("without augmentation", [])):
            detector = fit(train + [{**r, "group": r["parent"]} for r in extra], seed=seed)
            results[name].append(evaluate(detector, test)["classifier + lexical rule"])
    print(f"\n## Augmentation ablation: {splits} random grouped splits of the {len(written)} written queries "
          "(classifier + lexical rule; mean ± sd)")
    for name, runs in results.items():
        f1 = [r["f1"] for r in runs]
        accuracy = [r["accuracy"] for r in runs]
        print(f"{name:24} F1 {statistics.mean(f1):.3f} ± {statistics.pstdev(f1):.3f}   "
              f"acc {statistics.mean(accuracy):.3f} ± {statistics.pstdev(accuracy):.3f}")


def ambignq(detector, llm_context, llm_sample: int) -> None:
    data_file, ids_file = AMBIGNQ / "ambignq_dev_light.json", AMBIGNQ / "dev_ids.txt"
    if not data_file.exists() or not ids_file.exists():
        print("\n## AmbigNQ: skipped (../shared/data/ambignq not present)")
        return
    dev_ids = set(ids_file.read_text().split())
    rows = [{"text": item["question"],
             "label": AMBIGUOUS if any(a["type"] == "multipleQAs" for a in item["annotations"]) else CLEAR}
            for item in json.loads(data_file.read_text()) if item["id"] in dev_ids]
    title = (f"\n## OUT-OF-DOMAIN check: AmbigNQ dev ids, {len(rows)} single-turn open-domain questions "
             f"({sum(r['label'] == AMBIGUOUS for r in rows)} ambiguous = multipleQAs)")
    print(format_report(evaluate(detector, rows), title))
    if llm_context is not None and llm_sample:
        report = evaluate(detector, rows, llm_context=llm_context, llm_sample=llm_sample, seed=2)
        sample = {k: v for k, v in report.items() if k in ("LLM few-shot", "classifier + lexical rule (same sample)")}
        print(format_report(sample, f"AmbigNQ stratified sample of {report['LLM few-shot']['n']} for the LLM"))


def latency(detector, rows, count: int = 200) -> None:
    """Per-query `predict` time, split into the encoder and everything else (features, rule,
    logistic regression); the CPU is shared, so the load average is printed with it."""
    import os

    import torch

    texts = [r["text"] for r in random.Random(0).sample(rows, min(count, len(rows)))]
    embedder = get_embedder("minilm")
    detector.predict("warm up the encoder")
    total, encoder, cpu = [], [], []
    for text in texts:
        started, cpu_started = time.perf_counter(), time.process_time()
        detector.predict(text)
        total.append((time.perf_counter() - started) * 1000)
        cpu.append((time.process_time() - cpu_started) * 1000)
        started = time.perf_counter()
        embedder.embed([text])
        encoder.append((time.perf_counter() - started) * 1000)
    vectors = dict(zip(texts, embedder.embed(texts)))
    original = embedder.embed
    embedder.embed = lambda batch: np.array([vectors[t] for t in batch])
    rest = []
    for text in texts:
        started = time.perf_counter()
        detector.predict(text)
        rest.append((time.perf_counter() - started) * 1000)
    embedder.embed = original
    batch_started = time.perf_counter()
    detector.predict_many(texts)
    batch_ms = (time.perf_counter() - batch_started) * 1000 / len(texts)
    print(f"\n## Latency per query after load ({len(texts)} queries, one call each; target < 20 ms; "
          f"torch threads {torch.get_num_threads()}, load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    rows_out = (("predict (wall)", total), ("predict (CPU time)", cpu), ("  encoder only", encoder),
                ("  features+rule+LR", rest))
    for name, values in rows_out:
        values = np.array(values)
        print(f"{name:20} p50 {np.percentile(values, 50):7.2f} ms   p95 {np.percentile(values, 95):7.2f} ms   "
              f"mean {values.mean():7.2f} ms")
    print(f"{'predict_many':20} {batch_ms:7.2f} ms per query in one batch of {len(texts)}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="local", help="chat model for the LLM baseline")
    parser.add_argument("--llm-sample", type=int, default=40)
    parser.add_argument("--ambignq-llm-sample", type=int, default=30)
    parser.add_argument("--splits", type=int, default=5)
    parser.add_argument("--no-llm", action="store_true")
    args = parser.parse_args()
    started = time.perf_counter()
    detector = load_detector()
    print(f"model {default_model_path()} ({Path(default_model_path()).stat().st_size} bytes), "
          f"loaded with the encoder in {time.perf_counter() - started:.1f} s; C={detector.metadata.get('C')}")
    rows = read_labelled(ROOT / "agent" / "data" / "detector_queries.jsonl")
    llm_context = None if args.no_llm else make_context(Context, {"model": args.model})
    latency(detector, rows)
    held_out(detector, rows, llm_context, args.llm_sample)
    ambignq(detector, llm_context, args.ambignq_llm_sample)
    cache_embeddings()
    ablation(rows, args.splits)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
