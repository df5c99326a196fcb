"""Choose the gated clarify policy's threshold from two simulated runs on a tune split.

    python bench/clarify_threshold.py NEVER_DIR ALWAYS_DIR [--confirm CONFIRM_DIR] [--max-false-ask 0.05]

NEVER_DIR and ALWAYS_DIR are `disambig eval --simulate-user` outputs (clarify_policy=never and
=always) on the same questions. For each threshold t, a question is asked about when `always`
asked it and its gate probability is >= t; its outcome is then `always`'s, else `never`'s (the
answer of a question not asked is the same under both). Prints success, precision and asks on
ambiguous questions and the false-ask rate on clear ones per threshold, and the chosen t: the
highest ambiguous success, then precision, then fewest asks, with the false-ask rate within the
limit. Run on tune splits only; report the chosen threshold's live run on test.

--confirm CONFIRM_DIR, a `gated` run with `confirm_threshold=0` (every question with one grounded
sense is asked "is it this one?"), chooses `confirm_threshold` the same way once `clarify_threshold`
is chosen: a one-sense question is asked when its gate probability is >= t, with CONFIRM_DIR's
outcome. The gate probability and the number of senses are read from the `never` run, which
records the first turn's decision (a run that asked records the decision after the choice).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def load(folder: str) -> dict[str, dict]:
    rows = [json.loads(line) for line in (Path(folder) / "predictions.jsonl").read_text().splitlines() if line.strip()]
    return {row["id"]: row for row in rows if row.get("simulated")}


def first_turn(never: dict) -> dict:
    """The first turn's signals (senses, gate probability): `never` never asks, so its one decision is it."""
    return (never["conversation"].get("clarify") or {}).get("signals") or {}


def outcome(never: dict, always: dict, threshold: float) -> dict:
    asked = always["simulated"]["asks"] > 0 and first_turn(never).get("gate_probability", 1.0) >= threshold
    return (always if asked else never)["simulated"]


def confirm_outcome(never: dict, always: dict, confirm: dict, threshold: float, confirm_at: float) -> dict:
    signals = first_turn(never)
    if signals.get("senses") == 1 and confirm["simulated"]["asks"] > 0:
        return (confirm if signals.get("gate_probability", 1.0) >= confirm_at else never)["simulated"]
    return outcome(never, always, threshold)


def table(never: dict[str, dict], always: dict[str, dict], thresholds: list[float],
          confirm: dict[str, dict] | None = None, clarify_at: float = 0.0) -> list[dict]:
    """Per threshold, the outcomes; with `confirm`, the thresholds are confirm_threshold's at `clarify_at`."""
    rows = []
    for t in thresholds:
        chosen = {qid: (confirm_outcome(never[qid], always[qid], confirm[qid], clarify_at, t) if confirm
                        else outcome(never[qid], always[qid], t))
                  for qid in never if qid in always and (not confirm or qid in confirm)}
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
    parser.add_argument("--confirm", help="a gated run with confirm_threshold=0: also choose confirm_threshold")
    parser.add_argument("--max-false-ask", type=float, default=0.05)
    args = parser.parse_args()
    never, always = load(args.never), load(args.always)
    grid = [round(0.05 * i, 2) for i in range(0, 21)]
    chosen = choose(table(never, always, grid), args.max_false_ask, "clarify_threshold")
    if args.confirm:
        choose(table(never, always, grid, load(args.confirm), chosen), args.max_false_ask, "confirm_threshold")


def choose(rows: list[dict], max_false_ask: float, name: str) -> float:
    """Print the table and the chosen threshold: best success, then precision, then fewest asks."""
    print(f"\n{name}\n\n| threshold | success | precision | asks | false_ask_rate | clear success |\n|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['threshold']:.2f} | {r['success']:.3f} | {r['precision']:.3f} | {r['asks']:.2f} | "
              f"{r['false_ask_rate']:.3f} | {r['clear_success']:.3f} |")
    allowed = [r for r in rows if r["false_ask_rate"] <= max_false_ask] or rows
    best = max(allowed, key=lambda r: (round(r["success"], 3), round(r["precision"], 3), -r["asks"], r["threshold"]))
    print(f"chosen {name}: {best['threshold']:.2f}")
    return best["threshold"]


if __name__ == "__main__":
    main()
