"""The registry of method graphs: name -> module under `graphs/` and a one-line summary.

It lives beside the graphs so that a graph running another method (rewrite, chat) needs nothing
from the app layer: `agent/app` depends on `graphs/`, never the reverse (tests/test_layout.py).
"""

from __future__ import annotations

import importlib
from dataclasses import fields
from functools import cache
from types import ModuleType

from agent.context import Context, make_context
from agent.errors import InputError
from agent.state import COMMON_DECISION

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


def context_schema(name: str) -> type[Context]:
    return load_method(name).builder.context_schema


def inner_context(name: str, outer: Context) -> Context:
    """The context method `name` runs with inside a graph whose context is `outer`: its own
    class and defaults, overridden only by what the user set explicitly on `outer` that it
    has (VERDICT behind rewrite keeps its k=20 unless the user asked for a k)."""
    schema = context_schema(name)
    if type(outer) is schema:
        return outer
    known = {f.name for f in fields(schema)}
    return make_context(schema, {key: value for key, value in outer.explicit.items() if key in known})


def decision_contract(decision: dict | None, method: str) -> dict:
    """A graph's `decision` as results show it: the common part (agent.state.Decision) at the
    top, every key present; the method's own detail under its name. A sub-key named after
    another method (the one rewrite or chat ran) stays as it is."""
    detail = dict(decision or {})
    common = {key: detail.pop(key, None) for key in COMMON_DECISION}
    nested = {name: detail.pop(name) for name in list(detail) if name in METHODS and isinstance(detail[name], dict)}
    nested[method] = {**nested.get(method, {}), **detail}
    return {**common, **nested}


@cache
def unsaved_graph(name: str):
    """A method's graph for running whole inside another graph's synchronous node (chat, rewrite):
    without a checkpointer of its own, not even the thread's. Inheriting it, the inner graph would
    checkpoint through the thread's saver from that node; on a server with an async saver (Aegra's
    AsyncPostgresSaver) each such call blocks an executor thread while the saver itself needs one,
    and about six concurrent chats deadlocked a replica."""
    return load_method(name).builder.compile(checkpointer=False, name=name)
