"""Choose the gated clarify policy's threshold from two simulated runs on a tune split.

    python bench/clarify_threshold.py NEVER_DIR ALWAYS_DIR [--max-false-ask 0.05]

NEVER_DIR and ALWAYS_DIR are `disambig eval --simulate-user` outputs (clarify_policy=never and
=always) on the same questions. For each threshold t, a question is asked about when `always`
asked it and its gate probability is >= t; its outcome is then `always`'s, else `never`'s (the
answer of a question not asked is the same under both). Prints success, precision and asks on
ambiguous questions and the false-ask rate on clear ones per threshold, and the chosen t: the
highest ambiguous success, then precision, then fewest asks, with the false-ask rate within the
limit. Run on tune splits only; report the chosen threshold's live run on test.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def load(folder: str) -> dict[str, dict]:
    rows = [json.loads(line) for line in (Path(folder) / "predictions.jsonl").read_text().splitlines() if line.strip()]
    return {row["id"]: row for row in rows if row.get("simulated")}


def outcome(never: dict, always: dict, threshold: float) -> dict:
    signals = ((always["conversation"].get("clarify") or {}).get("signals") or {})
    asked = always["simulated"]["asks"] > 0 and signals.get("gate_probability", 1.0) >= threshold
    return (always if asked else never)["simulated"]


def table(never: dict[str, dict], always: dict[str, dict], thresholds: list[float]) -> list[dict]:
    rows = []
    for t in thresholds:
        chosen = {qid: outcome(never[qid], always[qid], t) for qid in never if qid in always}
        ambiguous = [m for m in chosen.values() if m["ambiguous"]]
        clear = [m for m in chosen.values() if not m["ambiguous"]]
        mean = lambda values: sum(values) / len(values) if values else 0.0  # noqa: E731
        rows.append({"threshold": t, "success": mean([m["success"] for m in ambiguous]),
                     "precision": mean([m["precision"] for m in ambiguous]), "asks": mean([m["asks"] for m in ambiguous]),
                     "false_ask_rate": mean([float(m["asks"] > 0) for m in clear]),
                     "clear_success": mean([m["success"] for m in clear])})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("never")
    parser.add_argument("always")
    parser.add_argument("--max-false-ask", type=float, default=0.05)
    args = parser.parse_args()
    never, always = load(args.never), load(args.always)
    rows = table(never, always, [round(0.05 * i, 2) for i in range(0, 21)])
    print("| threshold | success | precision | asks | false_ask_rate | clear success |\n|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['threshold']:.2f} | {r['success']:.3f} | {r['precision']:.3f} | {r['asks']:.2f} | "
              f"{r['false_ask_rate']:.3f} | {r['clear_success']:.3f} |")
    allowed = [r for r in rows if r["false_ask_rate"] <= args.max_false_ask] or rows
    best = max(allowed, key=lambda r: (round(r["success"], 3), round(r["precision"], 3), -r["asks"], r["threshold"]))
    print(f"chosen threshold: {best['threshold']:.2f} ({len(never)} questions)")


if __name__ == "__main__":
    main()
