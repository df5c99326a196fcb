"""Does an int8 reader keep its score? The shipped (float) reader beside its dynamic int8 quantization.

    .venv/bin/python bench/reader_int8.py --demo-index DIR [--out reader-int8.json]

The int8 file is written beside the float one (onnxruntime's `quantize_dynamic`: the weights of the
linear layers to 8 bits, activations quantized per batch). Both read the same candidates the
product reads (every whole sentence of auto's 15-passage hybrid pool; the selector card's labels)
on the demo test split and the held-out fixture. Reported per reader: ROC-AUC, average precision
and F1 at the shipped threshold; how often the two disagree about the floor (the decision the
product takes with the reader); the largest probability difference; the time per question for
the selector's best `reader_candidates` sentences (cold, one question at a time); file size.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.assembly.reader import reader_probabilities, reader_threshold  # noqa: E402
from agent.assembly.reader_build import ensure_built  # noqa: E402
from agent.assembly.selector import load_selector, reader_floor, reader_read  # noqa: E402
from agent.context import Context  # noqa: E402
from bench.reader_eval import metrics  # noqa: E402
from bench.train_selector import MEMOS, fixture_questions, ids, pools, rows_and_labels  # noqa: E402


def quantized(source: Path) -> Path:
    """The int8 copy of the reader, built once beside it."""
    from onnxruntime.quantization import QuantType, quantize_dynamic
    target = source.with_name(source.stem + ".int8.onnx")
    if not target.exists() or target.stat().st_mtime < source.stat().st_mtime:
        quantize_dynamic(str(source), str(target), weight_type=QuantType.QInt8)
    return target


def read_all(questions: list[dict], path: str | None) -> tuple[np.ndarray, list[float]]:
    """Every candidate's probability under the reader at `path` (None: the shipped float one),
    and the seconds each question's product-sized read took."""
    selector, most = load_selector(), Context().reader_candidates
    probabilities, seconds = [], []
    for q in questions:
        pairs = [(q["question"], c.sentence, c.passage.get("title", "")) for c in q["candidates"]]
        logistic = selector.probabilities(q["rows"]).tolist()
        read = reader_read(list(zip(q["candidates"], logistic)), most)
        started = time.perf_counter()
        reader_probabilities([pairs[i] for i in read], path)
        seconds.append(time.perf_counter() - started)
        probabilities.extend(reader_probabilities(pairs, path))
    return np.array(probabilities), seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--demo-index", required=True)
    parser.add_argument("--out", default="reader-int8.json")
    args = parser.parse_args(argv)
    source = ensure_built()
    target = quantized(source)
    splits = {"demo test": fixture_questions("demo_questions.json", ids("demo_test")),
              "held-out fixture": fixture_questions("heldout_questions.json", None)}
    floor, threshold = reader_floor(Context()), reader_threshold()
    report: dict = {"float_mb": round(source.stat().st_size / 2**20, 1), "int8_mb": round(target.stat().st_size / 2**20, 1)}
    for name, questions in splits.items():
        rows_and_labels(pools(questions, args.demo_index))
        labels = np.array([label for q in questions for label in q["labels"]])
        row = {"candidates": int(len(labels)), "positives": int(labels.sum())}
        found = {}
        for reader, path in (("float", None), ("int8", str(target))):
            found[reader], seconds = read_all(questions, path)
            row[reader] = {**metrics(labels, found[reader], threshold),
                           "seconds_p50": round(float(np.percentile(seconds, 50)), 3),
                           "seconds_p95": round(float(np.percentile(seconds, 95)), 3)}
        row["floor_decisions_that_differ"] = int(((found["float"] >= floor) != (found["int8"] >= floor)).sum())
        row["largest_difference"] = round(float(np.abs(found["float"] - found["int8"]).max()), 3)
        report[name] = row
    for memo in MEMOS.values():
        memo.save()
    Path(args.out).write_text(json.dumps(report, indent=1))
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
