"""The reader on tune topics it never saw: grouped leave-topics-out folds of its adaptation stage.

    .venv/bin/python bench/reader_folds.py --pairs PAIRS.jsonl --demo-index DIR --tune-index DIR \
        --tune-all-index DIR --work DIR [--folds 9] [--skip-training]

The reader's public stage sees no tune topic, so only its adaptation on the tune topics needs
folds. This trains the public stage once (`bench/train_reader.py --skip-adapt`), then one
adaptation per fold from it with that fold's topics held out (`--init --skip-public
--holdout-groups`): the 27 tune topics (demo tune and tune fixture) in `--folds` seeded groups.
Each tune question's candidates (auto's 15-passage pool, as bench/reader_eval.py reads them) are
then scored by the fold's reader that never saw its topic: out-of-fold scores for all 197 tune
questions. It reports:

- the reader alone (ROC-AUC / average precision / F1 at its 0.80 floor) on held-out topics, per
  part: the demo tune split, the tune fixture's 8 topics the selector learned from, and its 8
  others (which no model learned from);
- the mix refitted on out-of-sample scores of both scorers (the selector's leave-one-topic-out
  probabilities on demo tune; the fixture topics it never saw) and a grid of mix threshold and
  reader floor on readings-only precision and sense recall, beside the shipped mix;
- for the clear questions, how often each way of scoring puts an answering sentence first.

`--work` holds the stage-1 delta, the fold deltas, their ONNX builds and the scores
(`oof.json`). `--skip-training` reuses the deltas there. The training takes about 15 minutes
plus 4 to 5 per fold on 2 cores. Tune data only; nothing is written to agent/data.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent.assembly.selector import NOT_READ, logit, load_mix, load_selector, reader_read, whole  # noqa: E402
from agent.context import Context  # noqa: E402
from bench.reader_eval import metrics, mix_weights  # noqa: E402
from bench.train_selector import (MEMOS, corpus_senses, cross_validated, fixture_questions, ids, pools,  # noqa: E402
                                  rows_and_labels, selection_scores, trained_topics, tune_fixture_questions)

FLOOR = 0.80  # the shipped reader's floor, where its F1 is read
PARTS = ("demo tune", "fixture, selector's topics", "fixture, unseen topics")


def fold_groups(pairs_path: Path, folds: int, seed: int) -> list[list[str]]:
    groups = sorted({row["group"] for row in map(json.loads, pairs_path.read_text().splitlines()) if row["source"] == "demo"})
    random.Random(seed).shuffle(groups)
    return [groups[i::folds] for i in range(folds)]


def train(args, folds: list[list[str]]) -> None:
    script = [sys.executable, str(ROOT / "bench" / "train_reader.py"), "--pairs", args.pairs, "--seed", str(args.seed)]
    stage1 = args.work / "stage1.npz"
    subprocess.run([*script, "--skip-adapt", "--out", str(stage1)], check=True)
    for k, groups in enumerate(folds):
        subprocess.run([*script, "--init", str(stage1), "--skip-public", "--holdout-groups", ",".join(groups),
                        "--out", str(args.work / f"fold{k}.npz")], check=True)


def fold_readers(work: Path, folds: int) -> list[str]:
    from agent.assembly.reader_build import build_onnx
    paths = []
    for k in range(folds):
        target = work / f"fold{k}" / "answer-reader.onnx"
        if not target.is_file():
            build_onnx(work / f"fold{k}.npz", target=target, force=True)
        paths.append(str(target))
    return paths


def tune_candidates(args) -> list[dict]:
    """Every tune question of the three parts with its pool, candidates, labels and the
    selector's leave-one-topic-out probabilities on demo tune (`cv_probs`)."""
    parts = {PARTS[0]: pools(fixture_questions("demo_questions.json", ids("demo_tune")), args.demo_index),
             PARTS[1]: pools(tune_fixture_questions(), args.tune_index),
             PARTS[2]: pools([q for q in tune_fixture_questions(all_topics=True) if q["topic"] not in trained_topics()],
                             args.tune_all_index)}
    questions = [q | {"part": part} for part, found in parts.items() for q in found]
    rows_and_labels(questions)
    for memo in MEMOS.values():
        memo.save()
    cross_validated([q for q in questions if q["part"] == PARTS[0]], [q for q in questions if q["part"] == PARTS[1]])
    return questions


def scored_questions(args, folds: list[list[str]]) -> list[dict]:
    """Every tune question with its candidates, labels, the selector's probabilities (leave one
    topic out on demo tune) and the out-of-fold reader's."""
    from agent.assembly.reader import reader_probabilities
    readers = fold_readers(args.work, len(folds))
    fold_of = {group.split(":", 1)[1]: k for k, groups in enumerate(folds) for group in groups}
    questions = tune_candidates(args)
    for q in questions:
        pairs = [(q["question"], c.sentence, c.passage.get("title", "")) for c in q["candidates"]]
        add_scores(q, reader_probabilities(pairs, path=readers[fold_of[q["topic"]]]) if pairs else [])
    return questions


def add_scores(q: dict, reader: list[float]) -> None:
    """A question's `selector` probabilities (out of sample: leave one topic out on demo tune; the
    unseen topics were never trained on), its `reader` ones, and `reader_read`: the reader's as the
    product reads them, NOT_READ for a sentence the selector ranks below the reader's candidates."""
    final = load_selector().probabilities(q["rows"]).tolist()
    q["selector"] = q["cv_probs"] if q["part"] == PARTS[0] else final
    q["reader"] = reader
    read = set(reader_read(list(zip(q["candidates"], final)), Context().reader_candidates))
    q["reader_read"] = [p if i in read else NOT_READ for i, p in enumerate(reader)]


def alone(questions: list[dict], key: str, threshold: float) -> dict:
    labels = np.concatenate([q["labels"] for q in questions]).astype(int)
    return {"candidates": int(len(labels)), "positives": int(labels.sum()),
            **metrics(labels, np.concatenate([q[key] for q in questions]), threshold)}


def readings(questions: list[dict], key: str, threshold: float, floor: float, senses: dict) -> dict:
    """Readings-only precision and sense recall as the product chooses them (one per sense), less
    what the reader gives under `floor` (its veto)."""
    for q in questions:
        q["vetoed"] = [0.0 if p >= threshold and r < floor else p for p, r in zip(q[key], q["reader_read"])]
    found = selection_scores(questions, None, threshold, senses, probabilities="vetoed", one_per_sense=True)
    p, r = found["precision"], found["sense_recall"] or 0.0
    return {"f1": round(2 * p * r / (p + r) if p + r else 0.0, 3), "precision": round(p, 3), "sense_recall": round(r, 3),
            "threshold": float(threshold), "floor": floor}


def refit(questions: list[dict], senses: dict) -> dict:
    fit_on = [q for q in questions if q["part"] != PARTS[1]]  # both scorers out of sample
    mixes = {"shipped mix": load_mix(), "refitted mix": mix_weights(fit_on, selector_key="selector")}
    out = {"fitted on": f"{len(fit_on)} questions (demo tune, unseen fixture topics)"}
    for name, mix in mixes.items():
        for q in questions:
            q[name] = mix.mixed(q["selector"], q["reader_read"])
        grid = [readings(fit_on, name, t, floor, senses) for floor in (0.0, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9)
                for t in np.round(np.arange(0.1, 0.51, 0.05), 2)]
        out[name] = {"weights": [round(mix.selector_weight, 3), round(mix.reader_weight, 3), round(mix.intercept, 3)],
                     "shipped settings": readings(fit_on, name, load_mix().threshold, FLOOR, senses),
                     "best": max(grid, key=lambda row: (row["f1"], row["threshold"]))}
    return out


def clear_first(questions: list[dict]) -> dict:
    """Clear questions: the share whose best-scored whole sentence states the answer."""
    clear = [q for q in questions if q["label"] != "ambiguous"]

    def hits(key) -> dict:
        out = {}
        for part in (*PARTS, "all"):
            mine = [q for q in clear if part in (q["part"], "all")]
            firsts = [max((i for i, c in enumerate(q["candidates"]) if whole(c.sentence)), key=lambda i: key(q)[i], default=None)
                      for q in mine]
            judged = [(q, i) for q, i in zip(mine, firsts) if i is not None]
            out[part] = f"{sum(q['labels'][i] for q, i in judged) / max(len(judged), 1):.3f} of {len(judged)}"
        return out
    table = {"selector": hits(lambda q: q["selector"]), "reader": hits(lambda q: q["reader_read"]),
             "shipped mix": hits(lambda q: q["shipped mix"]),
             "shipped mix's first passage, its sentences by the reader": hits(within_first_passage)}
    for weight in (0.5, 1.0, 2.0, 4.0):
        table[f"selector logit + {weight} x reader logit"] = hits(
            lambda q, w=weight: logit(np.asarray(q["selector"])) + w * logit(np.asarray(q["reader_read"])))
    return table


def within_first_passage(q: dict) -> list[float]:
    """Scores that keep the mix's order of passages and order each passage's read sentences by the
    reader: the mix chooses the passage, the reader the sentence."""
    best: dict[str, float] = {}
    for c, p in zip(q["candidates"], q["shipped mix"]):
        best[c.passage["id"]] = max(best.get(c.passage["id"], 0.0), p)
    return [best[c.passage["id"]] - 1e-6 * (1.0 - r) if r > NOT_READ else p * 0.999
            for c, p, r in zip(q["candidates"], q["shipped mix"], q["reader_read"])]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", required=True, help="bench/reader_data.py output")
    parser.add_argument("--demo-index", required=True)
    parser.add_argument("--tune-index", required=True, help="the tune fixture's 8 trained topics with the demo corpus")
    parser.add_argument("--tune-all-index", required=True, help="all 16 tune fixture topics with the demo corpus")
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--folds", type=int, default=9)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--skip-training", action="store_true", help="reuse the deltas in --work")
    args = parser.parse_args(argv)
    args.work.mkdir(parents=True, exist_ok=True)
    folds = fold_groups(Path(args.pairs), args.folds, args.seed)
    if not args.skip_training:
        train(args, folds)
    questions = scored_questions(args, folds)
    senses = corpus_senses()
    report = {"folds": folds,
              "reader alone, held-out topics": {part: alone([q for q in questions if q["part"] == part], "reader", FLOOR)
                                                for part in PARTS},
              "selector, out of sample": {part: alone([q for q in questions if q["part"] == part], "selector",
                                                      load_selector().threshold) for part in (PARTS[0], PARTS[2])},
              "reader, selector's card set": alone([q for q in questions if q["part"] != PARTS[2]], "reader", FLOOR),
              "reader, all tune": alone(questions, "reader", FLOOR),
              "mix": refit(questions, senses), "clear questions, first sentence answers": clear_first(questions)}
    (args.work / "oof.json").write_text(json.dumps(
        [{k: q[k] for k in ("id", "part", "labels", "selector", "reader")} for q in questions], default=float))
    print(json.dumps(report, indent=1, default=float))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
