"""Run a registered method as a step of another graph (rewrite, chat) and relay its stream.

The method's compiled graph runs inside the calling node, so LangGraph nests it under that
node (its own checkpoint namespace; `stream(..., subgraphs=True)` and Studio's trace show its
steps). It gets its own context class from `method_context`: only the settings the user set
explicitly carry over, the rest keep the method's defaults. Custom events (stages, tokens)
are relayed as they come; with `hold_tokens` the answer tokens are kept back for the caller
to release or drop.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from langchain_core.messages import AIMessage, AnyMessage

from agent.app.methods import decision_contract, unsaved_graph
from agent.app.settings import method_context
from agent.context import Context
from agent.usage import emit


@dataclass
class MethodRun:
    """What the inner method returned, and the answer tokens held back (if asked to)."""

    method: str
    result: dict
    held: list[dict] = field(default_factory=list)

    def release(self) -> None:
        for event in self.held:
            emit(event)


def run_method(name: str, question: str, messages: list[AnyMessage], settings: Context,
               hold_tokens: bool = False) -> MethodRun:
    """Run method `name` on `question` (with the conversation so far), relaying its events."""
    run = MethodRun(method=name, result={})
    for mode, chunk in unsaved_graph(name).stream(
        {"question": question, "messages": list(messages)},
        context=method_context(name, settings),
        stream_mode=["custom", "values"],
    ):
        if mode == "values":
            run.result = chunk
        elif hold_tokens and chunk.get("event") == "token":
            run.held.append(chunk)
        else:
            emit(chunk)
    return run


def method_update(run: MethodRun, query: str, messages: list[AnyMessage], **decision) -> dict:
    """The calling graph's state update from the method's result: its outputs, its usage and
    route (the caller's own steps come first), its decision (common part on top, its detail
    under its name) with the caller's `query` and `downstream_route`."""
    result = run.result
    known = {message.id for message in messages}
    replies = [m for m in result.get("messages") or [] if m.id not in known and m.type == "ai"]
    answer = result.get("answer") or ""
    return {
        "answer": answer,
        "interpretations": result.get("interpretations") or [],
        "passages": result.get("passages") or [],
        "messages": replies or [AIMessage(answer)],
        "usage": result.get("usage") or {},
        "route": result.get("route") or [],
        "decision": {**decision_contract(result.get("decision"), run.method), "query": query,
                     "downstream_route": result.get("route") or [], **decision},
    }
