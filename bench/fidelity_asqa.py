"""Fidelity check: score third-party ASQA outputs with our metrics and compare to reference figures.

    .venv/bin/python bench/fidelity_asqa.py [--data ../shared/data]

Reads `peer/peer_asqa_outputs.jsonl` (answers of a published system, 12 configurations) and
`asqa/asqa_dev.json`, prints STR-EM, STR-HIT and ROUGE-Lsum per configuration, then checks the
two configurations whose figures were computed independently with the reference scorers.
Exits 0 when the data folder is absent (nothing to check on a user's machine).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent.evaluation.datasets import load_asqa  # noqa: E402
from agent.evaluation.metrics import remove_citations, rouge_lsum, str_em_hit  # noqa: E402

# (approach, retrieval, model) -> (STR-EM, ROUGE-Lsum), from the reference scorers
EXPECTED = {
    ("agentic", "hybrid", "gpt-4o-mini"): (35.7, 35.7),
    ("vanilla", "hybrid", "gpt-4o-mini"): (34.1, 29.5),
}
TOLERANCE = 0.3


def score_configurations(peer_path: Path, asqa_path: Path) -> dict[tuple, dict]:
    gold = {example.id: example for example in load_asqa(asqa_path)}
    groups: dict[tuple, list[dict]] = defaultdict(list)
    with open(peer_path, encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            groups[(row["approach"], row["retrieval"], row["model"])].append(row)
    table = {}
    for key, rows in sorted(groups.items()):
        em = hit = rouge = 0.0
        for row in rows:
            example = gold[str(row["id"])]
            answer = remove_citations(row.get("answer") or "")
            e, h = str_em_hit([p["short_answers"] for p in example.qa_pairs], answer)
            em, hit = em + e, hit + h
            rouge += rouge_lsum(example.long_answers, answer)
        n = len(rows)
        table[key] = {"n": n, "str_em": 100 * em / n, "str_hit": 100 * hit / n, "rouge_lsum": 100 * rouge / n}
    return table


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "data"), help="the evaluation data folder")
    args = parser.parse_args()
    data = Path(args.data)
    peer, asqa = data / "peer" / "peer_asqa_outputs.jsonl", data / "asqa" / "asqa_dev.json"
    if not (peer.exists() and asqa.exists()):
        print(f"evaluation data not present under {data}: nothing to check")
        return 0
    table = score_configurations(peer, asqa)
    print(f"{'approach':10} {'retrieval':9} {'model':12} {'n':>4} {'STR-EM':>7} {'STR-HIT':>8} {'ROUGE-Lsum':>11}")
    for (approach, retrieval, model), row in table.items():
        print(f"{approach:10} {retrieval:9} {model:12} {row['n']:4d} {row['str_em']:7.2f} {row['str_hit']:8.2f} "
              f"{row['rouge_lsum']:11.2f}")
    print("\nagainst the reference figures (tolerance 0.3 points):")
    ok = True
    for key, (em, rouge) in EXPECTED.items():
        row = table[key]
        for name, ours, theirs in (("STR-EM", row["str_em"], em), ("ROUGE-Lsum", row["rouge_lsum"], rouge)):
            within = abs(ours - theirs) <= TOLERANCE
            ok &= within
            print(f"  {'/'.join(key):28} {name:10} ours {ours:6.2f}  reference {theirs:5.1f}  "
                  f"diff {ours - theirs:+.2f}  {'ok' if within else 'OUTSIDE TOLERANCE'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
