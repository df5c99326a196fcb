"""Write the fixed tune/test splits under bench/splits/ (seeded, committed; rerun to check them).

    python bench/make_splits.py [--check]

Every development set is split by id, half tune, half test, with seed 0 (the demo fixture
stratified by label, so both halves hold clear and ambiguous questions). Rules, weights and
thresholds are chosen on `*_tune.txt` only; `*_test.txt` is for reporting. The held-out
fixture (agent/data/heldout_questions.json) is test only and has no tune half. Ids of
../shared/data are written here, never its content.
"""

from __future__ import annotations

import argparse
import json
import random
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("DISAMBIG_SHARED_DATA") or ROOT.parent / "shared" / "data")
OUT = ROOT / "bench" / "splits"
SEED = 0


def halves(ids: list[str], seed: int = SEED) -> tuple[list[str], list[str]]:
    """A seeded half/half split of sorted ids (the order of the source file does not matter)."""
    shuffled = sorted(set(ids))
    random.Random(seed).shuffle(shuffled)
    cut = (len(shuffled) + 1) // 2
    return sorted(shuffled[:cut]), sorted(shuffled[cut:])


def sources() -> dict[str, list[list[str]]]:
    """name -> groups of ids, each group split on its own (strata)."""
    demo = json.loads((ROOT / "agent" / "data" / "demo_questions.json").read_text())["questions"]
    found = {"demo": [[q["id"] for q in demo if q["label"] == label] for label in ("ambiguous", "clear")]}
    lists = {"asqa_pool": DATA / "asqa" / "pool_dev_ids.txt", "condambigqa": DATA / "condambigqa" / "dev_ids.txt",
             "ambignq": DATA / "ambignq" / "dev_ids.txt"}
    for name, path in lists.items():
        if path.exists():
            found[name] = [[line.strip() for line in path.read_text().splitlines() if line.strip()]]
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check that the committed files match")
    args = parser.parse_args(argv)
    OUT.mkdir(parents=True, exist_ok=True)
    stale = []
    for name, groups in sources().items():
        tune, test = [], []
        for group in groups:
            a, b = halves(group)
            tune += a
            test += b
        for part, ids in (("tune", sorted(tune)), ("test", sorted(test))):
            path = OUT / f"{name}_{part}.txt"
            text = "\n".join(ids) + "\n"
            if args.check:
                stale += [] if path.exists() and path.read_text() == text else [path.name]
            else:
                path.write_text(text)
            print(f"{path.relative_to(ROOT)}: {len(ids)} ids")
    if stale:
        print("stale or missing: " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
