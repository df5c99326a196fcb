"""The reader's close-domain pairs: the manuals benchmark's tune questions against the units their
pools hold, as the product gate reads them.

    .venv/bin/python bench/manuals_reader_pairs.py --manuals-index DIR --with PAIRS.jsonl --out OUT.jsonl

DIR is an index of the tune products alone (`bench/manuals.py split --split tune`); the test split
is never read. Each tune question's pool is auto's (`bench/train_selector.py`'s `pools`), read by
product as the product gate reads it; every readable unit of a product's passages is a pair
(question, the unit as the reader reads it, under its product's title), labelled 1 when it
states a short answer of that product's sense. All positives are kept, and per question the
`--negatives` the shipped reader scores highest (the units it confuses with answers) plus as many
drawn at random. The pairs are written in `bench/reader_data.py`'s format with source "demo" and
group "manuals:<product>", after the `--with` file's demo pairs, so `bench/train_reader.py
--init agent/data/reader_delta.npz --skip-public` adapts the reader on both.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from agent.assembly.features import candidates  # noqa: E402
from agent.assembly.products import product_groups  # noqa: E402
from agent.assembly.reader import reader_probabilities  # noqa: E402
from agent.assembly.selector import readable  # noqa: E402
from agent.assembly.units import unit_prose  # noqa: E402
from agent.evaluation.sentence_metrics import states_any  # noqa: E402
from agent.retrieval.products import product_title  # noqa: E402
from train_product_gate import sense_of  # noqa: E402
from train_selector import MANUALS, pools  # noqa: E402


def question_pairs(question: dict, pool: list[dict], negatives: int, rng: random.Random) -> list[dict]:
    groups = [passages for key, passages in product_groups(pool).items() if key] or [pool]
    found = []
    for passages in groups:
        for candidate in candidates(passages):
            if not readable(candidate):
                continue
            sense = sense_of(candidate.passage, question)
            label = int(sense is not None and states_any(candidate.sentence, sense["answers"]))
            found.append({"qid": f"manuals:{question['id']}", "source": "demo",
                          "group": f"manuals:{question['senses'][0]['product']}", "query": question["question"],
                          "kind": "question", "title": product_title(candidate.passage),
                          "sentence": unit_prose(candidate.sentence), "label": label,
                          "why": "answer" if label else "manual unit"})
    found = list({(p["title"], p["sentence"]): p for p in found}.values())
    positives = [p for p in found if p["label"]]
    rest = [p for p in found if not p["label"]]
    scores = reader_probabilities([(p["query"], p["sentence"], p["title"]) for p in rest])
    hardest = [p for _, p in sorted(zip(scores, rest), key=lambda item: -item[0])][:negatives]
    others = [p for p in rest if p not in hardest]
    return positives + hardest + rng.sample(others, min(negatives, len(others)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--manuals-index", required=True, help="index of the manuals benchmark's tune products alone")
    parser.add_argument("--with", dest="base", help="a bench/reader_data.py pairs file whose demo pairs go first")
    parser.add_argument("--negatives", type=int, default=15)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--out", required=True, help="JSONL file of pairs (keep it outside the repository)")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    questions = [q for q in json.loads(MANUALS.read_text())["questions"] if q["split"] == "tune"]
    items = pools([{"id": q["id"], "question": q["question"], "fixture": q} for q in questions], args.manuals_index)
    pairs = []
    if args.base:
        pairs += [p for p in map(json.loads, Path(args.base).read_text().splitlines()) if p["source"] == "demo"]
    base = len(pairs)
    for item in items:
        pairs += question_pairs(item["fixture"], item["pool"], args.negatives, rng)
    Path(args.out).write_text("".join(json.dumps(p) + "\n" for p in pairs), encoding="utf-8")
    manuals = pairs[base:]
    print(json.dumps({"demo_pairs": base, "manuals_pairs": len(manuals),
                      "manuals_positives": sum(p["label"] for p in manuals),
                      "manuals_questions": len({p["qid"] for p in manuals})}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
