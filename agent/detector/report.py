"""The detector's scores as a table, shared by training, the model card and the benches."""

from __future__ import annotations


def format_report(report: dict[str, dict], title: str = "held-out split") -> str:
    """The scores as a fixed-width table (precision/recall/F1 of the ambiguous class)."""
    lines = [f"{title}", f"{'detector':42} {'prec':>6} {'recall':>6} {'F1':>6} {'acc':>6} {'n':>5}"]
    for name, s in report.items():
        failed = f"  ({s['failed']} unanswered)" if s.get("failed") else ""
        lines.append(f"{name:42} {s['precision']:6.3f} {s['recall']:6.3f} {s['f1']:6.3f} {s['accuracy']:6.3f} "
                     f"{s['n']:5d}{failed}")
    return "\n".join(lines)
