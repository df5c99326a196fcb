"""The registry of method graphs: name -> module under `graphs/` and a one-line summary."""

from __future__ import annotations

import importlib
from types import ModuleType

from agent.errors import InputError

METHODS: dict[str, tuple[str, str]] = {
    "auto": ("graphs.auto", "Default: cheap signals decide clear or ambiguous; clear is answered like vanilla, ambiguous spread over the senses (or DIVA)"),
    "vanilla": ("graphs.vanilla", "Vanilla RAG baseline: retrieve top-k, one cited answer listing interpretations"),
    "rewrite": ("graphs.rewrite", "Ambiguity-guided query rewrite: detect unclear follow-ups, rewrite from history, hand off"),
    "diva": ("graphs.diva", "DIVA: pseudo-interpretations, diversified retrieval, per-interpretation verification, adaptive answer"),
    "dtv": ("graphs.dtv", "DtV baseline: pseudo-interpretations, top-5 each, pruned, verified post hoc, then answered"),
    "verdict": ("graphs.verdict", "VERDICT: relaxed top-20 retrieval, parallel per-passage extraction, grounding check, HDBSCAN consolidation"),
    "rac": ("graphs.rac", "RAC baseline: relaxed top-20 retrieval, one long-context call listing interpretations and the answer"),
    "adf": ("graphs.adf", "ADF: coherence-gated decomposition, HyDE, dual-pathway retrieval, RRF, structured synthesis"),
    "iterative": ("graphs.iterative", "Iterative RAG baseline: retrieve, draft, assess progress, reformulate; at most 3 rounds"),
}


def load_method(name: str) -> ModuleType:
    """The graph module for a method name (raises InputError naming the choices)."""
    if name not in METHODS:
        raise InputError(f"unknown method {name!r}; available: {', '.join(METHODS)}")
    return importlib.import_module(METHODS[name][0])
