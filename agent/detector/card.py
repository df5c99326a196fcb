"""The model card written next to the shipped detector (agent/data/detector_card.md)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from agent.detector.classifier import AmbiguityDetector
from agent.detector.report import format_report


def _count_table(rows: list[dict]) -> str:
    counts = Counter((r["split"], r["origin"], r["label"]) for r in rows)
    lines = ["| split | origin | label | queries |", "|---|---|---|---|"]
    lines += [f"| {s} | {o} | {l} | {n} |" for (s, o, l), n in sorted(counts.items())]
    written = [r for r in rows if r["origin"] == "written"]
    mix = Counter((r["domain"], r["kind"], r["label"]) for r in written)
    lines += ["", "Written queries by domain and turn type:", "", "| domain | turn | label | queries |", "|---|---|---|---|"]
    lines += [f"| {d} | {k} | {l} | {n} |" for (d, k, l), n in sorted(mix.items())]
    return "\n".join(lines)


SHIPPED, NO_AUGMENTATION = "classifier + lexical rule", "classifier + lexical rule, no augmentation"


def _augmentation_note(report: dict) -> str:
    """What the augmentation does to held-out F1, from this run's report (never a fixed figure)."""
    if SHIPPED not in report or NO_AUGMENTATION not in report:
        return "Augmentation's effect was not measured in this run"
    with_f1, without_f1 = report[SHIPPED]["f1"], report[NO_AUGMENTATION]["f1"]
    effect = "costs" if with_f1 < without_f1 else "does not cost"
    return (f"On this held-out split the augmentation {effect} F1 ({with_f1:.3f} with, {without_f1:.3f} "
            f"without; the \"no augmentation\" row)")


def write_card(path: Path, detector: AmbiguityDetector, rows: list[dict], report: dict) -> None:
    meta = detector.metadata
    text = f"""# Ambiguity detector (shipped default)

`agent/data/detector_model.npz`, loaded by `agent.detector.classifier.load_detector()`; used by the
`rewrite` graph to decide which conversational turns need a query rewrite (the ambiguity-guided query rewrite).

## Model
- Inputs: the all-MiniLM-L6-v2 sentence embedding of the query (384-d, the packaged model)
  and three numeric features, robust-scaled (median removed, divided by the interquartile
  range): query length in words, count of referential words (this, that, those, it, its,
  some, others, another, other, them, above, previous), Coleman-Liau index.
- Classifier: scikit-learn logistic regression, `class_weight="balanced"`, C={meta.get("C")}
  chosen by grouped 5-fold cross-validation (F1 of the ambiguous class) on the training split;
  stored as plain arrays (weights, bias, scaler centre/scale), so predicting needs numpy only.
- Rule override: a "clear" prediction becomes "ambiguous" when the query, with URLs, quoted
  strings and identifier-like tokens masked as ENTITY, has an ENTITY but no entity-type word
  ({", ".join(detector.entity_types[:12])}, ...; configurable).
- Threshold {detector.threshold} on the ambiguous probability.

## Data
Every query was written for this project (`agent/data/detector_queries.jsonl`): enterprise
data-platform and workplace questions, and open-domain questions, as single turns and as
follow-up turns. Clear training queries were expanded with the paper's augmentation rules
(omit the details after "the X of", insert referential words, turn imperatives into vague
statements, drop the type word beside an identifier), all labelled ambiguous. The held-out
split was drawn from the written queries before augmentation, and no variant of a held-out
query is in training. {meta.get("train_rows")} training rows ({meta.get("train_ambiguous")} ambiguous).

{_count_table(rows)}

## Held-out scores (precision/recall/F1 of the ambiguous class)

```
{format_report(report)}
```

{_augmentation_note(report)}: our held-out
queries come from the same writers as the training ones, while the paper added augmented
queries for real logs with few ambiguous examples. The shipped model keeps it as specified;
retrain without `--augment` when your labelled data has enough ambiguous queries.

"rules only" flags referential words, queries of at most two words, and the lexical rule.
The LLM few-shot baseline, an out-of-domain check on AmbigNQ and the latency per query are
in `bench/detector.py`. The held-out split is small ({report["rules only"]["n"]} queries)
and written by the same people as the training data, so expect lower scores on real logs;
retrain on your own labelled queries with `disambig train-detector DATA.csv --out model.npz`.
"""
    path.write_text(text, encoding="utf-8")
