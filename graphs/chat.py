"""Streaming chat with human clarification: the conversational product on a checkpointer thread.

read_message -> classify_ambiguity -> [rewrite_query] -> run_method -> (several grounded
interpretations and `clarify` on) ask_clarification -> synthesize_answer on the chosen one,
or deliver_answer for "all of them"; otherwise the method's answer ends the turn.

The rewrite steps are the rewrite graph's own nodes (graphs/rewrite.py); the method is any
registered one (`downstream`), run as a subgraph. `ask_clarification` makes no model call:
it re-runs when the thread is resumed with `Command(resume=choice)`.

Streaming: custom events only. Every node sends {"event": "stage"}; answer tokens arrive as
{"event": "token"}. With `clarify` on, the method's tokens are held back until it is known
whether the user will be asked (then they are dropped, and the focused answer streams).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Annotated, Literal

from langchain_core.messages import AIMessage, AnyMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.runtime import Runtime
from langgraph.types import interrupt
from typing_extensions import NotRequired, TypedDict

from agent.steps.clarify import (
    clarification_options,
    clarification_request,
    focus_guidance,
    focus_passages,
    needs_clarification,
    resolve_choice,
)
from agent.context import Context, make_context
from agent.errors import InputError
from agent.app.methods import METHODS, load_method
from agent.steps.nodes import synthesize_answer
from agent.state import OutputState
from agent.usage import emit, tracked
from graphs.rewrite import (
    RewriteContext,
    RewriteState,
    classify_ambiguity,
    rewrite_query,
    route_after_classify_ambiguity,
)

ANSWERING_METHODS = tuple(name for name in METHODS if name != "rewrite")
MAX_ASKS = 3  # a reply that names no option is asked again at most this often, then all are answered


@dataclass(kw_only=True)
class ChatContext(RewriteContext):
    """The rewrite settings, the answering method, and when to ask the user to choose."""

    downstream: Literal[ANSWERING_METHODS] = field(  # type: ignore[valid-type]
        default="auto", metadata={"description": "Method that answers each (rewritten) message"},
    )
    clarify: bool = field(
        default=True,
        metadata={"description": "Ask which meaning was intended when the method finds several grounded "
                                 "interpretations (off: the answer covers them all)"},
    )
    min_options: int = field(default=2, metadata={"description": "Grounded interpretations needed before asking"})
    max_options: int = field(default=5, metadata={"description": "Options offered at most"})


class ChatInput(TypedDict):
    """A turn: `question`, or a new human message at the end of `messages` (Studio's chat)."""

    question: NotRequired[str]
    messages: NotRequired[Annotated[list[AnyMessage], add_messages]]


class ChatState(RewriteState, total=False):
    options: list[dict]  # grounded interpretations offered to the user this turn


def method_context(schema: type[Context], context: ChatContext) -> Context:
    """The method's own context: shared settings changed from their defaults carry over, the
    rest keep the method's defaults (VERDICT and RAC retrieve k=20, not the chat's 5)."""
    defaults = Context()
    changed = {f.name: getattr(context, f.name) for f in fields(Context)
               if getattr(context, f.name) != getattr(defaults, f.name)}
    names = {f.name for f in fields(schema)}
    return make_context(schema, {name: value for name, value in changed.items() if name in names})


@tracked
def read_message(state: ChatState, runtime: Runtime[ChatContext]) -> dict:
    """Take the turn's question from `question`, or from a trailing human message (chat UIs send
    only messages). On a thread `question` still holds the last turn's text, so it counts only
    when it differs from the message the previous turn answered."""
    messages = state.get("messages") or []
    question = state.get("question")
    fresh = bool(question) and question != (state.get("decision") or {}).get("original_query")
    if messages and messages[-1].type == "human" and not fresh:
        return {"question": str(messages[-1].content)}
    if not question:
        raise InputError("send a question, or a human message at the end of messages")
    return {}


@tracked
def run_method(state: ChatState, runtime: Runtime[ChatContext]) -> dict:
    """Answer the query with the configured method, relaying its events; offer options when asking."""
    context = runtime.context
    if context.downstream not in ANSWERING_METHODS:
        raise InputError(f"chat cannot answer with {context.downstream!r}; choose one of {', '.join(ANSWERING_METHODS)}")
    module = load_method(context.downstream)
    messages = list(state.get("messages") or [])
    held: list[dict] = []
    result: dict = {}
    for mode, chunk in module.graph.stream(
        {"question": state["query"], "messages": messages},
        context=method_context(module.builder.context_schema, context),
        stream_mode=["custom", "values"],
    ):
        if mode == "values":
            result = chunk
        elif context.clarify and chunk.get("event") == "token":
            held.append(chunk)
        else:
            emit(chunk)
    interpretations = result.get("interpretations") or []
    options = clarification_options(interpretations, context.max_options)
    asking = context.clarify and needs_clarification(options, context.min_options)
    emit({"event": "interpretations_found", "count": len(interpretations), "grounded": len(options),
          "questions": [item["question"] for item in interpretations], "asking": asking})
    update = {
        "answer": result.get("answer") or "",
        "interpretations": interpretations,
        "passages": result.get("passages") or [],
        "options": options if asking else [],
        "usage": result.get("usage") or {},
        "route": result.get("route") or [],
        "decision": {**(result.get("decision") or {}), "query": state["query"], "clarify": asking,
                     "downstream_route": result.get("route") or []},
    }
    if not asking:
        for event in held:
            emit(event)
        update["messages"] = [AIMessage(update["answer"])]
    return update


def route_after_run_method(state: ChatState) -> Literal["ask_clarification", "__end__"]:
    return "ask_clarification" if state.get("options") else END


@tracked
def ask_clarification(state: ChatState, runtime: Runtime[ChatContext]) -> dict:
    """Pause the thread with the options; the resume value picks one (or all). No model call
    here: LangGraph runs this node again from the top when the thread resumes."""
    options = state["options"]
    error = None
    for _ in range(MAX_ASKS):
        reply = interrupt(clarification_request(state["query"], options, error))
        try:
            chosen = resolve_choice(reply, options)
        except InputError as problem:
            error = str(problem)
            continue
        if chosen is None:
            return {"decision": {"choice": "all"}}
        emit({"event": "chosen", "option": chosen})
        return {
            "decision": {"choice": chosen["option"], "chosen_question": chosen["question"]},
            "guidance": focus_guidance(chosen),
            "passages": focus_passages(chosen, state.get("passages") or []),
        }
    return {"decision": {"choice": "all", "choice_error": error}}


def route_after_ask_clarification(state: ChatState) -> Literal["synthesize_answer", "deliver_answer"]:
    return "deliver_answer" if state["decision"].get("choice") == "all" else "synthesize_answer"


@tracked
def deliver_answer(state: ChatState, runtime: Runtime[ChatContext]) -> dict:
    """The user wanted every interpretation: the method's held-back answer is the reply."""
    emit({"event": "token", "text": state["answer"]})
    return {"messages": [AIMessage(state["answer"])]}


builder = StateGraph(ChatState, context_schema=ChatContext, input_schema=ChatInput, output_schema=OutputState)
builder.add_node("read_message", read_message)
builder.add_node("classify_ambiguity", classify_ambiguity)
builder.add_node("rewrite_query", rewrite_query)
builder.add_node("run_method", run_method)
builder.add_node("ask_clarification", ask_clarification)
builder.add_node("synthesize_answer", synthesize_answer)
builder.add_node("deliver_answer", deliver_answer)
builder.add_edge(START, "read_message")
builder.add_edge("read_message", "classify_ambiguity")
builder.add_conditional_edges("classify_ambiguity", route_after_classify_ambiguity,
                              {"rewrite_query": "rewrite_query", "run_downstream": "run_method"})
builder.add_edge("rewrite_query", "run_method")
builder.add_conditional_edges("run_method", route_after_run_method)
builder.add_conditional_edges("ask_clarification", route_after_ask_clarification)
builder.add_edge("synthesize_answer", END)
builder.add_edge("deliver_answer", END)

graph = builder.compile(name="chat")
