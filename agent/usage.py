"""Usage accounting shared by every graph: LLM calls, tokens, retrievals, faults, time.

A node wrapped with `@tracked` gets a fresh recorder in a context variable; the LLM and
retrieval helpers add to whatever recorder is current; on return the wrapper puts the
node's figures into the `usage` key, which the `merge_usage` reducer sums across nodes.
"""

from __future__ import annotations

import contextvars
import functools
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Iterable, TypeVar

COUNTERS = (
    "llm_calls",
    "prompt_tokens",
    "completion_tokens",
    "retriever_calls",
    "retries",
    "timeouts",
    "malformed",
    "abstentions",
    "invalid_citations",
    "dropped_interpretations",  # interpretations not grounded in their cited passage, or not distinct
    "cached_replies",  # replies replayed from `disambig eval`'s response cache: no live latency
    "llm_rounds",  # sequential rounds of LLM calls: calls made side by side count once
    "loops_stopped",  # streamed answers cut off (and their request closed) when the model repeated itself
)


class UsageRecorder:
    """Thread-safe counters for one node execution."""

    def __init__(self) -> None:
        self.counts = dict.fromkeys(COUNTERS, 0)
        self._lock = threading.Lock()

    def add(self, **amounts: int) -> None:
        with self._lock:
            for name, amount in amounts.items():
                self.counts[name] += amount


_current: contextvars.ContextVar[UsageRecorder | None] = contextvars.ContextVar("usage_recorder", default=None)


def record(**amounts: int) -> None:
    """Add to the current node's counters (a no-op outside a tracked node)."""
    recorder = _current.get()
    if recorder is not None:
        recorder.add(**amounts)


_round_sink: contextvars.ContextVar[list[int] | None] = contextvars.ContextVar("round_sink", default=None)


def record_round() -> None:
    """Count one sequential LLM round: in a `map_concurrent` item it counts toward that item
    (the batch adds its longest item's rounds), elsewhere it goes to the current node."""
    sink = _round_sink.get()
    if sink is not None:
        sink[0] += 1
    else:
        record(llm_rounds=1)


def emit(event: dict) -> None:
    """Send a custom stream event when running inside a graph (a no-op elsewhere)."""
    try:
        from langgraph.config import get_stream_writer

        get_stream_writer()(event)
    except RuntimeError:
        pass


def status(text: str) -> None:
    """A progress line for the user while something slow runs (the CLI shows it on stderr)."""
    emit({"event": "status", "text": text})


def empty_usage() -> dict[str, Any]:
    return {**dict.fromkeys(COUNTERS, 0), "wall_s": 0.0, "nodes": {}}


def merge_usage(left: dict | None, right: dict | None) -> dict:
    """Reducer: sum counters and per-node figures; wall time spans first start to last end."""
    if not left:
        left = empty_usage()
    if not right:
        return left
    merged = {name: left.get(name, 0) + right.get(name, 0) for name in COUNTERS}
    nodes = {name: dict(figures) for name, figures in left.get("nodes", {}).items()}
    for name, figures in right.get("nodes", {}).items():
        into = nodes.setdefault(name, {})
        for key, value in figures.items():
            into[key] = round(into.get(key, 0) + value, 6)
    starts = [u["started_at"] for u in (left, right) if "started_at" in u]
    ends = [u["ended_at"] for u in (left, right) if "ended_at" in u]
    merged["nodes"] = nodes
    if starts and ends:
        merged["started_at"], merged["ended_at"] = min(starts), max(ends)
        merged["wall_s"] = round(merged["ended_at"] - merged["started_at"], 6)
    else:
        merged["wall_s"] = left.get("wall_s", 0.0)
    return merged


def append_route(left: list[str] | None, right: list[str] | str | None) -> list[str]:
    """Reducer for `route`: the ordered node names that ran, parallel repeats collapsed."""
    route = list(left or [])
    for name in [right] if isinstance(right, str) else right or []:
        if name not in route[-1:]:
            route.append(name)
    return route


def tracked(node: Callable) -> Callable:
    """Wrap a node so its LLM/retriever usage, time and name land in `usage` and `route`."""

    @functools.wraps(node)
    def wrapper(state, *args, **kwargs):
        recorder = UsageRecorder()
        emit({"event": "stage", "node": node.__name__})
        token = _current.set(recorder)
        started = time.time()
        try:
            update = node(state, *args, **kwargs)
        finally:
            _current.reset(token)
        ended = time.time()
        figures = {"seconds": round(ended - started, 6), "calls": 1}
        figures.update({name: value for name, value in recorder.counts.items() if value})
        usage = {**recorder.counts, "started_at": started, "ended_at": ended, "nodes": {node.__name__: figures}}
        return _attach(update, usage, node.__name__)

    return wrapper


def _attach(update: Any, usage: dict, name: str) -> Any:
    """Add usage and route to a node's return value (a dict or a langgraph Command)."""
    from langgraph.types import Command

    if isinstance(update, Command):
        payload = dict(update.update or {})
        payload["usage"] = merge_usage(payload.get("usage"), usage)
        payload["route"] = append_route([name], payload.get("route"))
        return Command(graph=update.graph, update=payload, resume=update.resume, goto=update.goto)
    update = dict(update or {})
    update["usage"] = merge_usage(update.get("usage"), usage)
    update["route"] = append_route([name], update.get("route"))
    return update


T = TypeVar("T")
R = TypeVar("R")


def map_concurrent(function: Callable[[T], R], items: Iterable[T], limit: int) -> list[R]:
    """Apply `function` to items with at most `limit` in flight, keeping order and the
    caller's context (so usage recording and LangGraph streaming still work)."""
    items = list(items)
    if not items:
        return []
    if limit <= 1 or len(items) == 1:
        return [function(item) for item in items]
    sinks = [[0] for _ in items]

    def run(index: int) -> R:
        _round_sink.set(sinks[index])
        return function(items[index])

    context = contextvars.copy_context()
    with ThreadPoolExecutor(max_workers=min(limit, len(items))) as pool:
        results = list(pool.map(lambda index: context.copy().run(run, index), range(len(items))))
    width = min(limit, len(items))  # items start in waves of `width`: each wave lasts its longest item
    for _ in range(sum(max(s[0] for s in sinks[i:i + width]) for i in range(0, len(sinks), width))):
        record_round()
    return results
