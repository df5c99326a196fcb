"""Never / always / ambiguity-guided rewriting against gold rewrites (the query-rewrite paper's Table 5 style).

    DISAMBIG_LLM_THREADS=2 .venv/bin/python bench/rewrite.py [--model local] [--limit N] [--out FILE]

The project's own multi-turn set (`agent/data/rewrite_conversations.jsonl`: conversations
with a final user message and its gold rewrite; a clear message's gold is itself). For each
final message, the mode's output is compared with the gold by token F1 (SQuAD-normalized
tokens) and by cosine of MiniLM embeddings. `always` rewrites every message with the graph's
own `rewrite_question`; `guided` rewrites only what the shipped detector calls ambiguous and
reuses the `always` rewrite for it (the same prompt at temperature 0), so the model runs once
per conversation; the LLM-call column counts the calls each mode itself would make.
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import statistics
import string
import sys
import time
from pathlib import Path

from langchain_core.messages import AIMessage, HumanMessage

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent.context import Context, make_context  # noqa: E402
from agent.detector.classifier import AMBIGUOUS, load_detector  # noqa: E402
from agent.retrieval.embeddings import get_embedder  # noqa: E402
from graphs.rewrite import earlier_turns, rewrite_question  # noqa: E402

DATA = ROOT / "agent" / "data" / "rewrite_conversations.jsonl"
MODES = ("never", "always", "guided")


def normalize_tokens(text: str) -> list[str]:
    text = "".join(ch for ch in text.lower() if ch not in string.punctuation + "“”‘’")
    return re.sub(r"\b(a|an|the)\b", " ", text).split()


def token_f1(prediction: str, gold: str) -> float:
    predicted, expected = normalize_tokens(prediction), normalize_tokens(gold)
    common = sum((collections.Counter(predicted) & collections.Counter(expected)).values())
    if not predicted or not expected or not common:
        return float(predicted == expected)
    precision, recall = common / len(predicted), common / len(expected)
    return 2 * precision * recall / (precision + recall)


def history_messages(conversation: dict) -> list:
    return [HumanMessage(t["content"]) if t["role"] == "user" else AIMessage(t["content"])
            for t in conversation["history"]]


def run(conversations: list[dict], context: Context) -> list[dict]:
    detector = load_detector()
    records = []
    for number, conversation in enumerate(conversations, 1):
        question = conversation["question"]
        history = earlier_turns(history_messages(conversation), question, 5)
        verdict = detector.predict(question)
        started = time.perf_counter()
        rewrite = rewrite_question(context, question, history)
        seconds = time.perf_counter() - started
        always = rewrite or question
        guided = always if verdict["label"] == AMBIGUOUS else question
        records.append({**conversation, "detected": verdict["label"], "probability": verdict["probability"],
                        "never": question, "always": always, "guided": guided, "rewrite_failed": rewrite is None,
                        "rewrite_seconds": round(seconds, 2)})
        print(f"[{number}/{len(conversations)}] {verdict['label']:9} {seconds:5.1f}s  {question!r} -> {always!r}",
              file=sys.stderr, flush=True)
    return records


def table(records: list[dict]) -> str:
    embedder = get_embedder("minilm")
    gold_vectors = embedder.embed([r["gold"] for r in records])
    lines = [f"{'mode':8} {'subset':22} {'token F1':>9} {'cosine':>7} {'exact':>6} {'LLM calls':>9} {'n':>4}"]
    subsets = {"all": records,
               "gold needs rewrite": [r for r in records if r["label"] == AMBIGUOUS],
               "gold is the message": [r for r in records if r["label"] != AMBIGUOUS]}
    for mode in MODES:
        vectors = embedder.embed([r[mode] for r in records])
        cosine = {id(r): float(v @ g) for r, v, g in zip(records, vectors, gold_vectors)}
        for name, subset in subsets.items():
            if not subset:
                continue
            calls = {"never": 0, "always": len(subset),
                     "guided": sum(r["detected"] == AMBIGUOUS for r in subset)}[mode]
            f1 = statistics.mean(token_f1(r[mode], r["gold"]) for r in subset)
            cos = statistics.mean(cosine[id(r)] for r in subset)
            exact = statistics.mean(normalize_tokens(r[mode]) == normalize_tokens(r["gold"]) for r in subset)
            lines.append(f"{mode:8} {name:22} {f1:9.3f} {cos:7.3f} {exact:6.2f} {calls:9d} {len(subset):4d}")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="local")
    parser.add_argument("--limit", type=int, default=0, help="first N conversations only")
    parser.add_argument("--out", help="write per-conversation outputs as JSONL")
    args = parser.parse_args()
    conversations = [json.loads(line) for line in DATA.read_text(encoding="utf-8").splitlines() if line.strip()]
    conversations = conversations[: args.limit] if args.limit else conversations
    context = make_context(Context, {"model": args.model, "temperature": 0.0})
    records = run(conversations, context)
    if args.out:
        Path(args.out).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    detected = collections.Counter((r["label"], r["detected"]) for r in records)
    print(f"\n## Rewrite modes vs gold rewrites: {len(records)} conversations, model {args.model}, "
          f"{sum(r['rewrite_failed'] for r in records)} failed rewrites, "
          f"{statistics.mean(r['rewrite_seconds'] for r in records):.1f} s per rewrite call")
    print(f"detector on the final messages (gold label, detected): {dict(sorted(detected.items()))}")
    print(table(records))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
