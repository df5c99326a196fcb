"""What each method costs per question: tokens, ratio to vanilla, calls, sequential rounds,
latency and quality, on the same questions.

    # the real thing: a seeded sample of ASQA pool dev ids, the wiki-pool index, the local model
    .venv/bin/python bench/cost.py --model local --n 30 --index ~/.cache/disambig/bench/wiki-pool-index
    # free and quick: the prompts each method sends, counted, against the fake OpenAI server
    .venv/bin/python bench/cost.py --fake --questions demo --methods vanilla,diva,adf

Real runs go through `disambig eval` (agent.evaluation.run_eval): replies land in its response
cache, so a rerun costs nothing and its latency is reported as untimed. `--fake` answers every
call with a minimal schema-valid reply (bench/schema_reply.py) and reports usage 0, so the
client counts the tokens it sent: prompt figures are exact, completion figures are not.
`--nodes` adds where the tokens go (usage.nodes), the figures the prompt budget was cut from.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

DATA = Path(os.environ.get("DISAMBIG_SHARED_DATA") or ROOT.parent / "shared" / "data") / "asqa"
DEFAULT_METHODS = "vanilla,diva,adf,dtv,rac,iterative,verdict"


def sample_ids(n: int, seed: int) -> list[str]:
    """`n` pool dev ids, seeded, so every method and every run sees the same questions."""
    ids = [line.strip() for line in (DATA / "pool_dev_ids.txt").read_text().splitlines() if line.strip()]
    return sorted(random.Random(seed).sample(ids, min(n, len(ids))))


def demo_questions(n: int) -> list[str]:
    topics = json.loads((ROOT / "agent" / "data" / "demo_questions.json").read_text())["topics"]
    return [t["sample_question"] for t in topics][:n]


def real_run(args, methods: list[str]) -> list[dict]:
    """Every method through run_eval on the ASQA sample; one row of figures per method."""
    from agent.evaluation.runner import EvalConfig, run_eval

    ids = Path(tempfile.mkdtemp()) / "ids.txt"
    ids.write_text("\n".join(sample_ids(args.n, args.seed)) + "\n")
    config = EvalConfig(dataset="asqa", data=str(DATA / "asqa_dev.json"), methods=methods, out=args.out,
                        model=args.model, ids=str(ids), index_dir=args.index, cache=args.cache,
                        concurrency=args.concurrency, progress=True)
    summary = run_eval(config)
    records = [json.loads(line) for line in (Path(args.out) / "predictions.jsonl").read_text().splitlines()]
    rows = []
    for method in methods:
        figures = summary["methods"][method]
        mine = [r for r in records if r["method"] == method and r.get("usage")]
        wall = figures["cost"].get("wall_s") or {}
        rows.append({
            "method": method, "n": figures["answered"], "usage": [r["usage"] for r in mine],
            "str_em": figures["quality"].get("str_em"), "rouge_lsum": figures["quality"].get("rouge_lsum"),
            "timed": wall.get("measured", 0), "p50": wall.get("p50"), "p95": wall.get("p95"),
        })
    return rows


def asqa_questions(n: int, seed: int) -> list[str]:
    from agent.evaluation.datasets import load_asqa

    wanted = set(sample_ids(n, seed))
    return [e.question for e in load_asqa(DATA / "asqa_dev.json") if e.id in wanted]


def fake_run(args, methods: list[str]) -> list[dict]:
    """Every method against the fake server (demo or ASQA sample questions); prompt tokens are exact."""
    from agent.app.api import ask
    from bench.fake_openai import FakeOpenAI
    from bench.schema_reply import schema_reply

    questions = asqa_questions(args.n, args.seed) if args.questions == "asqa" else demo_questions(args.n)
    index = args.index or build_demo_index()
    rows = []
    with FakeOpenAI(reply=schema_reply, report_usage=False) as fake:
        os.environ.update(OPENAI_BASE_URL=fake.base_url, OPENAI_API_KEY="sk-fake")
        for method in methods:
            usages = [ask(q, method, {"model": "openai:fake", "index_dir": index})["usage"] for q in questions]
            rows.append({"method": method, "n": len(questions), "usage": usages})
    return rows


def build_demo_index() -> str:
    from agent.retrieval.corpus import ReadReport, read_passages
    from agent.retrieval.index import IndexStore, ingest

    directory = Path(tempfile.gettempdir()) / "disambig-cost-demo-index"
    store = IndexStore(str(directory), create=True)
    if store.count() == 0:
        ingest(store, read_passages([str(ROOT / "agent" / "data" / "demo_corpus.jsonl")], ReadReport()))
    return str(directory)


def mean(values) -> float:
    values = list(values)
    return sum(values) / len(values) if values else 0.0


def tokens(usage: dict) -> int:
    return usage.get("prompt_tokens", 0) + usage.get("completion_tokens", 0)


def table(rows: list[dict], fake: bool) -> str:
    base = next((mean(tokens(u) for u in r["usage"]) for r in rows if r["method"] == "vanilla"), 0.0)
    head = ["Method", "n", "Tokens/q", "Prompt/q", "Completion/q", "x vanilla", "Calls/q", "Rounds/q"]
    if not fake:
        head += ["timed", "p50 s", "p95 s", "STR-EM", "ROUGE-Lsum"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in rows:
        usage = row["usage"]
        total = mean(tokens(u) for u in usage)
        cells = [row["method"], str(row["n"]), f"{total:.0f}", f"{mean(u.get('prompt_tokens', 0) for u in usage):.0f}",
                 f"{mean(u.get('completion_tokens', 0) for u in usage):.0f}",
                 f"{total / base:.2f}" if base else "–", f"{mean(u.get('llm_calls', 0) for u in usage):.1f}",
                 f"{mean(u.get('llm_rounds', 0) for u in usage):.1f}"]
        if not fake:
            cells += [str(row["timed"])] + ["–" if row[k] is None else f"{row[k]:.1f}" for k in ("p50", "p95")]
            cells += ["–" if row[k] is None else f"{100 * row[k]:.1f}" for k in ("str_em", "rouge_lsum")]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def node_table(rows: list[dict]) -> str:
    """Mean prompt and completion tokens and calls per question, per node, per method."""
    lines = ["| Method | Node | Prompt/q | Completion/q | Calls/q |", "|---|---|---|---|---|"]
    for row in rows:
        names = list(dict.fromkeys(n for u in row["usage"] for n in u.get("nodes", {})))
        for name in names:
            nodes = [u.get("nodes", {}).get(name, {}) for u in row["usage"]]
            if not any(n.get("llm_calls") for n in nodes):
                continue
            lines.append(f"| {row['method']} | {name} | {mean(n.get('prompt_tokens', 0) for n in nodes):.0f} | "
                         f"{mean(n.get('completion_tokens', 0) for n in nodes):.0f} | "
                         f"{mean(n.get('llm_calls', 0) for n in nodes):.1f} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--methods", default=DEFAULT_METHODS)
    parser.add_argument("--n", type=int, default=30, help="questions (ASQA pool dev sample, or demo questions)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--model", default="local")
    parser.add_argument("--index", help="index directory (real: the wiki-pool index; fake: default the demo corpus)")
    parser.add_argument("--out", default=str(Path(tempfile.gettempdir()) / "disambig-cost"))
    parser.add_argument("--cache", help="eval cache directory (replies and finished questions)")
    parser.add_argument("--fake", action="store_true", help="count prompt tokens against the fake server")
    parser.add_argument("--questions", choices=["demo", "asqa"], default="demo",
                        help="--fake: the demo sample questions or the ASQA sample (give --index then)")
    parser.add_argument("--nodes", action="store_true", help="also print tokens per node")
    parser.add_argument("--concurrency", type=int, default=1,
                        help="questions in flight at once (real runs; latency is then measured at this load)")
    args = parser.parse_args()
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    if "vanilla" in methods:
        methods.remove("vanilla")
    methods.insert(0, "vanilla")  # the reference every ratio is taken to
    rows = fake_run(args, methods) if args.fake else real_run(args, methods)
    print(table(rows, args.fake))
    if args.nodes:
        print()
        print(node_table(rows))
    where = f"{args.questions} questions, fake server (prompt tokens exact, completions minimal)" if args.fake else (
        f"ASQA pool dev sample (n={args.n}, seed {args.seed}), model {args.model}, "
        f"{args.concurrency} question(s) in flight")
    print(f"\n{where}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
