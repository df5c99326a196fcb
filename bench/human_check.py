"""Sentence precision as the metric counts it beside a careful reading of the same sentences.

    python bench/human_check.py [bench/human/heldout_fast_sentences.jsonl]

Each row of the file is one sentence of a stored answer with two labels: `metric`, whether it
states a gold short answer (agent/evaluation/sentence_metrics.py, as `bench/sense_recall.py`
scored it), and `reader`, whether a reader judged that it answers the question under some
reading; `why` says what the reader saw where the two differ. Gap notes are left out, as the
metric leaves them out. Prints micro precision per label under both, and the rows that differ.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

DEFAULT = Path(__file__).resolve().parent / "human" / "heldout_fast_sentences.jsonl"


def main(argv: list[str]) -> int:
    path = Path(argv[0]) if argv else DEFAULT
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    print("| label | sentences | metric precision | reader precision | difference |\n|---|---:|---:|---:|---:|")
    for label in ("ambiguous", "clear"):
        mine = [r for r in rows if r["label"] == label]
        if mine:
            metric = sum(r["metric"] for r in mine) / len(mine)
            reader = sum(r["reader"] for r in mine) / len(mine)
            print(f"| {label} | {len(mine)} | {metric:.3f} | {reader:.3f} | {100 * (reader - metric):+.1f} points |")
    print("\nwhere they differ:")
    for r in rows:
        if r["metric"] != r["reader"]:
            print(f"- {r['question']} metric {'yes' if r['metric'] else 'no'}, reader {'yes' if r['reader'] else 'no'} "
                  f"({r.get('why', '')}): {r['sentence'][:110]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
