"""One method's graph inside another's, natively: as a subgraph node, or run from a node.

- `subgraph_node(name)`: a method's compiled graph added to another graph as a node (auto's
  thorough budget adds DIVA so). It runs in the parent's run: Studio draws its nodes inside the
  node (`xray`), the stream shows them (`subgraphs=True`), it checkpoints under the parent's
  thread, and it reads the parent's context (which holds its settings, see AutoContext). Its
  output becomes the parent's update with the common decision left to the parent and its
  detail, with the branch it took, under its name.
- `run_method(...)` + `method_update(...)`: a method picked per run by a setting (rewrite's
  `downstream`, chat's), run from inside the calling node with its own context class
  (`registry.inner_context`: only the settings the user set explicitly carry over). LangGraph
  nests it under that node (its own checkpoint namespace; `stream(..., subgraphs=True)` shows
  its steps). Custom events (stages, tokens) are relayed as they come; with `hold_tokens` the
  answer tokens are kept back for the caller to release or drop.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from langchain_core.messages import AIMessage, AnyMessage
from langchain_core.runnables import Runnable, RunnableLambda

from agent.context import Context
from agent.state import COMMON_DECISION
from agent.usage import emit
from graphs.registry import decision_contract, inner_context, load_method, unsaved_graph


def nested_output(result: dict, method: str) -> dict:
    """A subgraph's output as the parent's update: the route gets the node's name first; the
    decision keeps only `abstained` at the top (the rest of the common part is the parent's
    choice) and the method's detail, with its branch, under its name."""
    inner = dict(result.get("decision") or {})
    detail = {"branch": inner.get("branch"), **{k: v for k, v in inner.items() if k not in COMMON_DECISION}}
    return {**result, "route": [method, *(result.get("route") or [])],
            "decision": {"abstained": inner.get("abstained"), method: detail}}


def subgraph_node(method: str) -> Runnable:
    """Method `method`'s compiled graph, then `nested_output`: add it with `builder.add_node`."""
    return load_method(method).graph | RunnableLambda(lambda result: nested_output(result, method),
                                                      name=f"{method}_output")


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
        context=inner_context(name, settings),
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
