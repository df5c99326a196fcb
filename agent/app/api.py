"""The public Python API: run a method on a question, streaming or not.

    from agent.app.api import ask
    result = ask("What is HP?", method="vanilla", context={"k": 5})
"""

from __future__ import annotations

from typing import Any, Iterator

from graphs.registry import decision_contract, load_method
from agent.app.settings import method_context
from agent.documents.citation import location
from agent.context import Context
from agent.errors import validate_question
from agent.llm.answers import cited_passage_ids

RESULT_KEYS = ("answer", "interpretations", "passages", "cited", "route", "decision", "usage")
RECURSION_LIMIT = 200  # every loop is bounded in state; this only stops runaway bugs


def to_result(state: dict, method: str) -> dict:
    """The JSON-able answer object: answer, interpretations, passages (what was retrieved),
    cited (ids of the passages the answer and interpretations cite), route, decision, usage."""
    result = {key: state.get(key) for key in RESULT_KEYS}
    result["answer"] = result["answer"] or ""
    result["interpretations"] = result["interpretations"] or []
    result["passages"] = [  # where a passage read by structure stands: document, section, page
        {"id": p["id"], "title": p.get("title", ""), "text": p["text"], "score": p.get("score"), **location(p)}
        for p in result["passages"] or []
    ]
    result["cited"] = cited_passage_ids(result["answer"], result["interpretations"], result["passages"])
    result["route"] = result["route"] or []
    result["decision"] = decision_contract(result["decision"], method)
    result["usage"] = result["usage"] or {}
    return result


def _graph(method: str, checkpointer=None):
    module = load_method(method)
    return module.graph if checkpointer is None else module.builder.compile(checkpointer=checkpointer, name=method)


def _config(thread_id: str | None) -> dict:
    config: dict[str, Any] = {"recursion_limit": RECURSION_LIMIT}
    if thread_id:
        config["configurable"] = {"thread_id": thread_id}
    return config


def ask(
    question: str, method: str = "auto", context: Context | dict | None = None, *,
    checkpointer=None, thread_id: str | None = None,
) -> dict:
    """Answer a question with a method; returns the result object (see `to_result`)."""
    question = validate_question(question)
    graph = _graph(method, checkpointer)
    state = graph.invoke({"question": question}, config=_config(thread_id), context=method_context(method, context))
    return to_result(state, method)


def stream(
    question: str, method: str = "auto", context: Context | dict | None = None, *,
    checkpointer=None, thread_id: str | None = None,
) -> Iterator[dict]:
    """Events while a method runs: {"event": "stage", "node"}, {"event": "token", "text"},
    {"event": "done", "node", "seconds"}, and last {"event": "result", "result": {...}}.
    Every custom event a graph writes passes through as it is, among them {"event": "readings",
    "readings": [{"sense", "text", "citations"}], "passages": [{"n", "id", "title"}]}: a method's
    cited line per reading, sent before its model call (then the prose's tokens, then the result)."""
    question = validate_question(question)
    graph = _graph(method, checkpointer)
    state: dict = {}
    for mode, chunk in graph.stream(
        {"question": question}, config=_config(thread_id), context=method_context(method, context),
        stream_mode=["custom", "updates", "values"],
    ):
        if mode == "custom":
            yield chunk
        elif mode == "updates":
            for node, update in (chunk or {}).items():
                usage = (update or {}).get("usage") or {}
                usage = getattr(usage, "value", usage)  # a turn's first node resets it with langgraph's Overwrite
                seconds = usage.get("nodes", {}).get(node, {}).get("seconds")
                yield {"event": "done", "node": node, "seconds": seconds}
        else:
            state = chunk
    yield {"event": "result", "result": to_result(state, method)}
