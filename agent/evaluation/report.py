"""Summaries and reports: per-question JSONL, summary.json, a Markdown table, PNG plots."""

from __future__ import annotations

import json
import os
from pathlib import Path

from agent.evaluation.metrics import detection_scores, percentile
from agent.evaluation.scoring import COST_FIELDS

# (summary key, Markdown column); shown only when some method has the metric
QUALITY = [
    ("str_em", "STR-EM"), ("str_hit", "STR-HIT"), ("rouge_lsum", "ROUGE-Lsum"), ("answer_f1", "Answer F1"),
    ("ndcg@5", "nDCG@5"), ("recall@5", "Recall@5"), ("mrecall@5", "MRecall@5"),
    ("sentence_precision", "Sent-P"), ("sense_f1", "Sense-F1"),
    ("g_precision", "G-Prec"), ("g_recall", "G-Rec"), ("g_f1", "G-F1"), ("disambig_f1", "Disambig-F1"), ("dr", "DR"),
]
# per-answer counts, shown as numbers (not percent)
COUNTS = [("broken_sentences", "Broken/ans"), ("chars", "Chars/ans")]
PLOT_FILES = {"quality": "quality_vs_tokens.png", "latency": "latency.png", "detection": "detection_confusion.png"}


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _timed(record: dict) -> bool:
    """Whether the record's latency is real: no reply was replayed from the response cache."""
    return bool(record.get("usage")) and not record["usage"].get("cached_replies")


def summarize_method(records: list[dict], concurrency: int = 1) -> dict:
    """Means of every metric over the questions that have it; costs per query; latency tails,
    marked with the number of questions that were in flight while they were measured."""
    done = [r for r in records if r.get("output") is not None]
    quality = {}
    for key, _ in QUALITY + COUNTS:
        values = [r["metrics"][key] for r in done if key in r.get("metrics", {})]
        if values:
            quality[key] = _mean(values)
    labelled = [(r["metrics"]["predicted_ambiguous"], r["metrics"]["gold_ambiguous"])
                for r in done if "gold_ambiguous" in r.get("metrics", {})]
    if labelled:
        quality["detection"] = detection_scores(labelled)
    walls = [r["usage"]["wall_s"] for r in done if _timed(r)]
    cost = {name: _mean([r["usage"][name] for r in done]) for name in COST_FIELDS}
    if done:
        cost["tokens"] = cost["prompt_tokens"] + cost["completion_tokens"]
        cost["wall_s"] = {"measured": len(walls), "concurrency": concurrency}
        if walls:
            cost["wall_s"].update(mean=_mean(walls), p50=percentile(walls, 50), p95=percentile(walls, 95),
                                  p99=percentile(walls, 99))
    return {"n": len(records), "answered": len(done), "errors": len(records) - len(done), "quality": quality,
            "cost": cost}


def summarize(records: list[dict], *, config, model: str, settings: dict, hashes: dict, run: dict) -> dict:
    methods = list(dict.fromkeys(r["method"] for r in records))
    return {
        "dataset": config.dataset, "data": str(config.data), "model": model,
        "questions": len({r["id"] for r in records}), "selection": {
            "ids": config.ids, "limit": config.limit, "sample": config.sample, "seed": config.seed},
        "methods": {m: summarize_method([r for r in records if r["method"] == m], config.concurrency)
                    for m in methods},
        "settings": settings, "settings_hash": hashes, "run": run,
    }


def _pct(value) -> str:
    return "–" if value is None else f"{100 * value:.1f}"


def markdown_table(summary: dict) -> str:
    """One row per method: quality in percent, then cost per query and latency percentiles."""
    methods = summary["methods"]
    shown = [(key, label) for key, label in QUALITY if any(key in m["quality"] for m in methods.values())]
    detection = any("detection" in m["quality"] for m in methods.values())
    counted = [(key, label) for key, label in COUNTS if any(key in m["quality"] for m in methods.values())]
    head = ["Method", "n", *[label for _, label in shown], *[label for _, label in counted]]
    head += ["Det-P", "Det-R", "Det-F1", "Det-Acc"] if detection else []
    flight = next((m["cost"]["wall_s"].get("concurrency") for m in methods.values() if m["cost"].get("wall_s")), 1)
    head += ["LLM calls/q", "Tokens/q", "Retrievals/q", "timed",
             *[f"{p} s ({flight} in flight)" for p in ("p50", "p95", "p99")]]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, m in methods.items():
        row = [name, str(m["answered"]) + (f" ({m['errors']} failed)" if m["errors"] else "")]
        row += [_pct(m["quality"].get(key)) for key, _ in shown]
        row += ["–" if m["quality"].get(key) is None else f"{m['quality'][key]:.2f}" for key, _ in counted]
        if detection:
            d = m["quality"].get("detection") or {}
            row += [_pct(d.get(k)) for k in ("precision", "recall", "f1", "accuracy")]
        c = m["cost"]
        wall = c.get("wall_s") or {}
        row += [f"{c.get('llm_calls') or 0:.1f}", f"{c.get('tokens') or 0:.0f}", f"{c.get('retriever_calls') or 0:.1f}"]
        row += [str(wall.get("measured", 0))]
        row += ["–" if wall.get(p) is None else f"{wall[p]:.1f}" for p in ("p50", "p95", "p99")]
        lines.append("| " + " | ".join(row) + " |")
    run = summary["run"]
    notes = (f"\n{summary['dataset']}: {summary['questions']} questions, model `{summary['model']}`. "
             f"Quality in percent. This run: {run['model_calls']} model calls, {run['cache_hits']} cached replies, "
             f"{run['questions_from_cache']} questions from cache. Latency only over the `timed` questions, "
             "whose replies all came from the model rather than the response cache, with "
             f"{flight} question(s) in flight at once.\n")
    return "\n".join(lines) + "\n" + notes


def plot(records: list[dict], summary: dict, out: Path) -> dict[str, str]:
    """PNG plots: quality vs tokens per query, latency per method, detection confusion."""
    os.environ.setdefault("MPLBACKEND", "Agg")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    methods = summary["methods"]
    written = {}
    metrics = [(k, label) for k, label in QUALITY if any(k in m["quality"] for m in methods.values())][:4]
    if metrics:
        fig, axes = plt.subplots(1, len(metrics), figsize=(4.2 * len(metrics), 3.6), squeeze=False)
        for axis, (key, label) in zip(axes[0], metrics):
            for name, m in methods.items():
                if key in m["quality"]:
                    axis.scatter(m["cost"].get("tokens") or 0, 100 * m["quality"][key], s=40)
                    axis.annotate(name, (m["cost"].get("tokens") or 0, 100 * m["quality"][key]),
                                  textcoords="offset points", xytext=(4, 4), fontsize=8)
            top = max([100 * m["quality"][key] for m in methods.values() if key in m["quality"]] + [1.0])
            axis.set_ylim(0, min(100.0, top * 1.2 + 1))
            axis.set_xlabel("tokens per query")
            axis.set_ylabel(f"{label} (%)")
            axis.grid(alpha=0.3)
        fig.suptitle(f"{summary['dataset']}: quality vs cost ({summary['model']})", fontsize=10)
        fig.tight_layout()
        fig.savefig(out / PLOT_FILES["quality"], dpi=110)
        plt.close(fig)
        written["quality"] = str(out / PLOT_FILES["quality"])
    walls = {name: [r["usage"]["wall_s"] for r in records if r["method"] == name and _timed(r)]
             for name in methods}
    walls = {name: values for name, values in walls.items() if values}
    if walls:
        fig, axis = plt.subplots(figsize=(1.6 * len(walls) + 3, 3.6))
        axis.boxplot(list(walls.values()), showfliers=True)
        axis.set_xticks(range(1, len(walls) + 1), list(walls))
        axis.set_ylabel("seconds per query")
        axis.set_title("latency per method", fontsize=10)
        axis.grid(alpha=0.3, axis="y")
        fig.tight_layout()
        fig.savefig(out / PLOT_FILES["latency"], dpi=110)
        plt.close(fig)
        written["latency"] = str(out / PLOT_FILES["latency"])
    confusions = {n: m["quality"]["detection"] for n, m in methods.items() if "detection" in m["quality"]}
    if confusions:
        fig, axes = plt.subplots(1, len(confusions), figsize=(2.8 * len(confusions), 3.0), squeeze=False)
        for axis, (name, d) in zip(axes[0], confusions.items()):
            grid = [[d["tp"], d["fn"]], [d["fp"], d["tn"]]]
            axis.imshow(grid, cmap="Blues")
            for i in range(2):
                for j in range(2):
                    dark = grid[i][j] > max(max(row) for row in grid) / 2
                    axis.text(j, i, str(grid[i][j]), ha="center", va="center", color="white" if dark else "black")
            axis.set_xticks([0, 1], ["pred amb.", "pred clear"])
            axis.set_yticks([0, 1], ["gold amb.", "gold clear"])
            axis.set_title(name, fontsize=9)
        fig.tight_layout()
        fig.savefig(out / PLOT_FILES["detection"], dpi=110)
        plt.close(fig)
        written["detection"] = str(out / PLOT_FILES["detection"])
    return written


def write(out_dir: str, records: list[dict], summary: dict) -> None:
    """predictions.jsonl, summary.json, summary.md and the plots, in `out_dir`."""
    out = Path(out_dir).expanduser()
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "predictions.jsonl", "w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    summary["plots"] = plot(records, summary, out)
    (out / "summary.json").write_text(json.dumps(summary, indent=2, ensure_ascii=False, default=str) + "\n")
    table = markdown_table(summary)
    if summary.get("conversations"):
        from agent.evaluation.conversations import conversation_table, transcript

        table += "\nSimulated conversations:\n\n" + conversation_table(summary)
        talks = [transcript(r) for r in records if r.get("conversation") and r.get("output") is not None]
        (out / "conversations.txt").write_text("\n\n".join(talks) + "\n")
    if summary.get("follow_ups"):
        from agent.evaluation.multi_turn import follow_up_table, transcript as turns_transcript

        table += "\nFollow-ups:\n\n" + follow_up_table(summary)
        talks = [turns_transcript(r) for r in records if r.get("conversation") and r.get("output") is not None]
        (out / "conversations.txt").write_text("\n\n".join(talks) + "\n")
    (out / "summary.md").write_text(table)
