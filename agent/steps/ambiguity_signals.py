"""Cheap signals that a question is ambiguous, computed before any LLM call, and the gate that
`auto` uses to choose between answering directly and running an ambiguity method.

Signals (all free: one query embedding, the indexed passage vectors, a logistic detector):
- `detector`: the shipped query-only detector's probability (the query-rewrite paper's), wording alone;
- `separability`, `variance`: ADF's coherence of the retrieved passages (the ADF paper);
- `focus`: how much closer the best passage is to the question than the rest (top-1 cosine
  minus the mean cosine of the detection passages): a specific question has one passage that
  fits it clearly better; an ambiguous one fits several groups about equally;
- `titles`: distinct passage titles among the detection passages, as a share;
- `editions`: distinct years in the titles of the top k passages that the question does not
  name, 0 when it names one: "Who won the hackathon?" over "NorthHack 2021", "NorthHack 2022"
  asks about several editions (temporal ambiguity, which wording and focus do not see).
The thresholds are calibrated on dev data only (bench/auto_gate.py prints the sweep).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from agent.steps.coherence import cosine, dispersion, separability


@dataclass(frozen=True)
class GateThresholds:
    """Ambiguous when the question's wording says so (detector), the passages are not focused
    on one answer (focus below its threshold), or the top passages are about several editions
    of what the question names (at least `editions` years it leaves open)."""

    detector: float
    focus: float
    editions: int = 2


# chosen on the demo fixture's 83 labelled questions and the ASQA pool dev ids (bench/auto_gate.py)
DEFAULT_THRESHOLDS = GateThresholds(detector=0.35, focus=0.14)


def passage_signals(query_vector, vectors, passages: list[dict]) -> dict:
    """The retrieval-side signals over the detection passages."""
    if not len(passages):
        return {"focus": 0.0, "separability": 0.0, "variance": 0.0, "titles": 0.0, "passages": 0}
    similarities = np.array([cosine(query_vector, v) for v in vectors])
    return {
        "focus": round(float(similarities.max() - similarities.mean()), 4),
        "separability": round(separability(vectors), 4),
        "variance": round(dispersion(vectors), 4),
        "titles": round(len({p.get("title", "") for p in passages}) / len(passages), 4),
        "passages": len(passages),
    }


_YEAR = re.compile(r"\b(1[5-9]\d\d|20\d\d)\b")


def years_named(text: str) -> set[str]:
    """The years a text names ("Who won NorthHack 2021?": 2021)."""
    return set(_YEAR.findall(text))


def title_years(passage: dict) -> set[str]:
    """The years a passage's title names: the edition it is about ("NorthHack 2022")."""
    return years_named(passage.get("title", ""))


def edition_signal(question: str, top: list[dict]) -> dict:
    """How many years the titles of the top passages name that the question leaves open."""
    asked = years_named(question)
    years = set().union(*(title_years(passage) for passage in top)) if top else set()
    return {"editions": 0 if asked else len(years)}


def detector_signal(question: str) -> dict:
    """The query-only detector's probability and label (the lexical rule included)."""
    from agent.detector.classifier import load_detector

    decision = load_detector().predict(question)
    return {"detector": decision["probability"], "detector_label": decision["label"], "detector_source": decision["source"]}


def is_ambiguous(signals: dict, thresholds: GateThresholds = DEFAULT_THRESHOLDS) -> tuple[bool, list[str]]:
    """The gate's verdict and which signals fired."""
    fired = []
    if signals.get("detector", 0.0) >= thresholds.detector:
        fired.append(f"detector {signals['detector']:.2f} >= {thresholds.detector}")
    if signals.get("passages") and signals.get("focus", 1.0) < thresholds.focus:
        fired.append(f"focus {signals['focus']:.3f} < {thresholds.focus}")
    if signals.get("editions", 0) >= thresholds.editions:
        fired.append(f"editions {signals['editions']} >= {thresholds.editions}")
    return bool(fired), fired
