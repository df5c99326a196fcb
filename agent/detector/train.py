"""Training and evaluating the ambiguity detector, for `disambig train-detector` and the
shipped default model.

    python -m agent.detector.train      # rebuild agent/data: augmented rows, model, card

Labelled files are CSV or JSONL with a text column (`text`, `query` or `question`) and a
`label` (clear/ambiguous, or vague/unclear, 0/1); an optional `split` column (train/test)
fixes the held-out split, otherwise a stratified one is drawn. Scores are always reported on
held-out queries the model never saw, next to the rules-only (and optionally LLM) baselines.
"""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path

import numpy as np

from agent.detector.classifier import AMBIGUOUS, AmbiguityDetector, normalize_label, rules_label
from agent.detector.report import format_report
from agent.detector.features import DEFAULT_ENTITY_TYPES, numeric_features
from agent.errors import InputError

TEXT_COLUMNS = ("text", "query", "question")
C_GRID = (0.1, 0.3, 1.0, 3.0, 10.0)


def read_labelled(path: str | Path) -> list[dict]:
    """Rows {text, label, ...} from a labelled CSV or JSONL file (InputError naming the line)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"no such file: {path}")
    if path.suffix.lower() not in (".csv", ".jsonl", ".json"):
        raise InputError(f"{path}: expected a .csv or .jsonl file")
    with path.open(encoding="utf-8", newline="") as handle:
        if path.suffix.lower() == ".csv":
            raw = [(number, row) for number, row in enumerate(csv.DictReader(handle), 2)]
        else:
            raw = []
            for number, line in enumerate(handle, 1):
                if line.strip():
                    try:
                        raw.append((number, json.loads(line)))
                    except json.JSONDecodeError as error:
                        raise InputError(f"{path}:{number}: not JSON ({error.msg})") from None
    rows = []
    for number, record in raw:
        text = next((str(record[c]).strip() for c in TEXT_COLUMNS if record.get(c)), "")
        if not text or record.get("label") in (None, ""):
            raise InputError(f"{path}:{number}: need a text column ({'/'.join(TEXT_COLUMNS)}) and a label")
        try:
            label = normalize_label(record["label"])
        except InputError as error:
            raise InputError(f"{path}:{number}: {error}") from None
        rows.append({**record, "text": text, "label": label, "group": str(record.get("parent") or record.get("id") or number)})
    if len({row["label"] for row in rows}) < 2:
        raise InputError(f"{path}: need both clear and ambiguous examples")
    return rows


def split_rows(rows: list[dict], test_size: float = 0.25, seed: int = 0) -> tuple[list[dict], list[dict]]:
    """(train, test): the file's own `split` column when every row has one, else a split
    stratified by label that keeps each group (a query and its augmented variants) together."""
    if all(row.get("split") in ("train", "test") for row in rows):
        return [r for r in rows if r["split"] == "train"], [r for r in rows if r["split"] == "test"]
    rng = random.Random(seed)
    test_groups: set[str] = set()
    for label in ("clear", AMBIGUOUS):
        groups = sorted({r["group"] for r in rows if r["label"] == label})
        rng.shuffle(groups)
        test_groups.update(groups[: max(1, round(test_size * len(groups)))])
    train = [r for r in rows if r["group"] not in test_groups]
    test = [r for r in rows if r["group"] in test_groups]
    if not train or not test:
        raise InputError("too few labelled queries to hold some out; give at least a few of each label")
    return train, test


def _design(texts: list[str], embedder: str) -> tuple[np.ndarray, np.ndarray]:
    from agent.retrieval.embeddings import get_embedder

    return get_embedder(embedder).embed(texts).astype(np.float64), np.array([numeric_features(t) for t in texts])


def _choose_c(x: np.ndarray, y: np.ndarray, groups: list[str], scored: np.ndarray, seed: int) -> float:
    """The regularization strength with the best grouped cross-validated F1 (ambiguous),
    scored only on `scored` rows (the written queries, not their augmented variants)."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import f1_score
    from sklearn.model_selection import GroupKFold

    folds = min(5, len(set(groups)), int(min(np.bincount(y, minlength=2))))
    if folds < 2:
        return 1.0
    scores = {}
    for c in C_GRID:
        fold_scores = []
        for train_index, test_index in GroupKFold(n_splits=folds).split(x, y, groups):
            if len(set(y[train_index])) < 2:
                continue
            model = LogisticRegression(C=c, class_weight="balanced", max_iter=5000, random_state=seed)
            model.fit(x[train_index], y[train_index])
            test_index = test_index[scored[test_index]]
            if len(test_index):
                fold_scores.append(f1_score(y[test_index], model.predict(x[test_index]), zero_division=0))
        scores[c] = float(np.mean(fold_scores)) if fold_scores else 0.0
    return max(scores, key=lambda c: (scores[c], -c))


def fit(rows: list[dict], *, embedder: str = "minilm", seed: int = 0, metadata: dict | None = None) -> AmbiguityDetector:
    """Robust-scale the numeric features, then a class-balanced logistic regression."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import RobustScaler

    texts = [r["text"] for r in rows]
    y = np.array([1 if r["label"] == AMBIGUOUS else 0 for r in rows])
    embeddings, numeric = _design(texts, embedder)
    scaler = RobustScaler().fit(numeric)
    scale = np.where(scaler.scale_ > 0, scaler.scale_, 1.0)
    x = np.hstack([embeddings, (numeric - scaler.center_) / scale])
    written = np.array([r.get("origin", "written") == "written" for r in rows])
    c = _choose_c(x, y, [r.get("group", str(i)) for i, r in enumerate(rows)], written, seed)
    model = LogisticRegression(C=c, class_weight="balanced", max_iter=5000, random_state=seed).fit(x, y)
    info = {**(metadata or {}), "C": c, "train_rows": len(rows), "train_ambiguous": int(y.sum())}
    return AmbiguityDetector(model.coef_[0], float(model.intercept_[0]), scaler.center_, scale,
                             embedder=embedder, metadata=info)


def scores(gold: list[str], predicted: list[str | None]) -> dict:
    """Precision, recall and F1 of the ambiguous class, and accuracy (None counts as clear)."""
    from agent.evaluation.metrics import detection_scores

    result = detection_scores((p == AMBIGUOUS, g == AMBIGUOUS) for g, p in zip(gold, predicted))
    return {**result, "failed": sum(p is None for p in predicted)}


def evaluate(detector: AmbiguityDetector, test: list[dict], *, llm_context=None, llm_sample: int = 0,
             seed: int = 0) -> dict[str, dict]:
    """Held-out scores of rules only, the classifier alone, the classifier with the rule
    override (the detector as used), and the LLM baseline on a stratified sample."""
    texts, gold = [r["text"] for r in test], [r["label"] for r in test]
    probabilities = detector.probabilities(texts)
    alone = [AMBIGUOUS if p >= detector.threshold else "clear" for p in probabilities]
    report = {
        "rules only": scores(gold, [rules_label(t, detector.entity_types) for t in texts]),
        "classifier (no rule)": scores(gold, alone),
        "classifier + lexical rule": scores(gold, detector.labels(texts)),
    }
    if llm_context is not None and llm_sample > 0:
        from agent.detector.llm_baseline import llm_labels

        sample = stratified_sample(test, llm_sample, seed)
        report["LLM few-shot"] = scores([r["label"] for r in sample], llm_labels(llm_context, [r["text"] for r in sample]))
        report["classifier + lexical rule (same sample)"] = scores(
            [r["label"] for r in sample], detector.labels([r["text"] for r in sample]))
    return report


def stratified_sample(rows: list[dict], size: int, seed: int = 0) -> list[dict]:
    """About `size` rows keeping the label proportions (all rows when size is larger)."""
    if size >= len(rows):
        return list(rows)
    rng = random.Random(seed)
    picked = []
    for label in ("clear", AMBIGUOUS):
        group = [r for r in rows if r["label"] == label]
        picked += rng.sample(group, min(len(group), max(1, round(size * len(group) / len(rows)))))
    return picked


def train_from_file(path: str, out: str, *, test_size: float = 0.25, seed: int = 0, augment: bool = False,
                    entity_types: tuple[str, ...] = DEFAULT_ENTITY_TYPES, llm_context=None, llm_sample: int = 0):
    """Train on a labelled file's training split, save the model to `out`, score the rest."""
    from agent.detector.augment import augment as augment_rows

    rows = read_labelled(path)
    train, test = split_rows(rows, test_size, seed)
    train = [r for r in train if r.get("origin", "written") == "written"] if augment else train
    if augment:
        for index, row in enumerate(train):
            row.setdefault("id", row["group"] or str(index))
        train = train + [{**r, "group": r["parent"]} for r in augment_rows(train, seed)]
    test = [r for r in test if r.get("origin", "written") == "written"]
    detector = fit(train, seed=seed, metadata={"trained_on": Path(path).name})
    detector = detector.configured(entity_types=entity_types)
    saved = detector.save(out)
    return saved, train, test, evaluate(detector, test, llm_context=llm_context, llm_sample=llm_sample, seed=seed)


def rebuild_shipped_data(data_path: Path, seed: int = 0) -> list[dict]:
    """Regenerate the augmented rows of the shipped data from its written training rows."""
    from agent.detector.augment import augment as augment_rows

    written = [json.loads(line) for line in data_path.read_text(encoding="utf-8").splitlines() if line.strip()]
    written = [r for r in written if r.get("origin") == "written"]
    augmented = [{"id": f"a{i:03d}", **r, "split": "train"}
                 for i, r in enumerate(augment_rows([r for r in written if r["split"] == "train"], seed))]
    with data_path.open("w", encoding="utf-8") as handle:
        for row in written + augmented:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    return written + augmented


def main(argv: list[str] | None = None) -> int:
    """Rebuild the shipped detector: augmented data, model and card, all in agent/data."""
    import argparse

    from agent.detector.classifier import default_model_path
    from agent.detector.card import write_card

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    data_path = Path(default_model_path()).with_name("detector_queries.jsonl")
    rebuild_shipped_data(data_path, args.seed)
    rows = read_labelled(data_path)
    train, test = split_rows(rows)
    detector = fit(train, seed=args.seed, metadata={"trained_on": data_path.name})
    detector.save(default_model_path())
    written_train = [r for r in train if r["origin"] == "written"]
    baseline = fit(written_train, seed=args.seed)
    report = evaluate(detector, test)
    report["classifier + lexical rule, no augmentation"] = evaluate(baseline, test)["classifier + lexical rule"]
    write_card(Path(default_model_path()).with_name("detector_card.md"), detector, rows, report)
    print(format_report(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


def train_command(args) -> int:
    """`disambig train-detector`: train, save, and print held-out scores with the baselines."""
    from agent.context import Context, make_context
    from agent.detector.features import parse_entity_types

    if not 0 < args.test_size < 1:
        raise InputError("--test-size must be between 0 and 1")
    llm_context = make_context(Context, {"model": args.model}) if args.llm_sample > 0 else None
    saved, train, test, report = train_from_file(
        args.data, args.out, test_size=args.test_size, seed=args.seed, augment=args.augment,
        entity_types=parse_entity_types(args.entity_types), llm_context=llm_context, llm_sample=args.llm_sample,
    )
    ambiguous = sum(r["label"] == AMBIGUOUS for r in train)
    if args.json:
        print(json.dumps({"model": str(saved), "train": len(train), "train_ambiguous": ambiguous,
                          "test": len(test), "scores": report}, indent=2))
        return 0
    print(f"trained on {len(train)} queries ({ambiguous} ambiguous); model written to {saved}")
    print(format_report(report, f"held-out split: {len(test)} queries"))
    if llm_context is None:
        print("LLM few-shot baseline: not run (add --llm-sample N and optionally --model)")
    return 0
