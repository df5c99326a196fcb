"""Ambiguity-guided query rewrite (the query-rewrite paper): the conversational front door.

Each turn: `classify_ambiguity` runs the trained detector on the new message; a clear message
goes downstream unchanged, with no LLM call. Over several products' manuals, the same step
then names the product an ambiguous follow-up is about when the conversation decides it (the
product it names, else the thread's `product`; agent/steps/follow_up.py), still with no LLM
call; what stays ambiguous is rewritten by `rewrite_query` from the last five turns (references
resolved, the user's entity values kept verbatim, typos fixed). `run_downstream` then answers the (rewritten) query with the
configured method (auto, vanilla, adf, diva or verdict), run as a subgraph from that node
(graphs/compose.py) with its own context class. The conversation lives
in `messages` on a checkpointer thread: each turn appends the user's message and the answer.

Modes (setting `rewrite_mode`): never, always, guided (the paper's method).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Literal

from langchain_core.messages import AnyMessage, HumanMessage
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from pydantic import BaseModel, Field

from agent.context import Context
from agent.detector.classifier import AMBIGUOUS, load_detector
from agent.errors import validate_question
from agent.llm.calls import generate_structured
from agent.retrieval.pool import user_turns
from agent.retrieval.retriever import get_retriever
from agent.steps import follow_up
from agent.state import InputState, OutputState, RAGState, message_text, starts_turn
from agent.usage import emit, tracked
from graphs.compose import method_update, run_method

ASSISTANT_CHARS = 500  # an earlier answer is context, not evidence: its start is enough


@dataclass(kw_only=True)
class RewriteContext(Context):
    """Settings of the conversational front door; the downstream method gets the shared ones."""

    rewrite_mode: Literal["never", "always", "guided"] = field(
        default="guided",
        metadata={"description": "never: pass every message through; always: rewrite every follow-up; "
                                 "guided: rewrite only messages the detector calls ambiguous"},
    )
    downstream: Literal["auto", "vanilla", "adf", "diva", "verdict"] = field(
        default="auto", metadata={"description": "Method that answers the (rewritten) query (auto, the default "
                                                 "method, like chat)"},
    )
    history_turns: int = field(default=5, metadata={"description": "Earlier exchanges shown to the rewriter"})
    detector_model: str = field(
        default="", metadata={"description": "Detector .npz from `disambig train-detector`; empty: the shipped one"},
    )
    entity_types: str = field(
        default="", metadata={"description": "Comma-separated entity-type words for the lexical rule; "
                                             "empty: those saved with the detector"},
    )
    lexical_rule: bool = field(
        default=True, metadata={"description": "Let the lexical rule turn a clear prediction into ambiguous"},
    )
    resolve_product: Literal["off", "ambiguous", "unnamed"] = field(
        default="ambiguous",
        metadata={"description": "guided mode over several products' documents: name the product a follow-up is "
                                 "about from the conversation, without a model call (off: the model rewrites; "
                                 "ambiguous: follow-ups the detector's classifier or rules call ambiguous; "
                                 "unnamed: also clear ones that name no product)"},
    )


class RewriteState(RAGState, total=False):
    query: str  # what goes downstream: the message itself, or its rewrite
    product: str | None  # the product the thread is about (named, chosen, or the last answer's), None: undecided


class QueryRewrite(BaseModel):
    question: str = Field(max_length=400, description="the latest message as a self-contained question")


def earlier_turns(messages: list[AnyMessage] | None, question: str, turns: int) -> list[AnyMessage]:
    """User and assistant messages before the current one, at most the last `turns` exchanges."""
    history = [m for m in messages or [] if m.type in ("human", "ai") and message_text(m)]
    if history and history[-1].type == "human" and message_text(history[-1]) == question:
        history = history[:-1]
    starts = [index for index, message in enumerate(history) if message.type == "human"]
    if turns <= 0:
        return []
    return history[starts[-turns]:] if len(starts) >= turns else history


def format_history(history: list[AnyMessage]) -> str:
    lines = []
    for message in history:
        text = " ".join(message_text(message).split())
        if message.type == "ai":
            text = text if len(text) <= ASSISTANT_CHARS else text[:ASSISTANT_CHARS] + " ..."
        lines.append(f"{'User' if message.type == 'human' else 'Assistant'}: {text}")
    return "\n".join(lines)


def rewrite_question(context: Context, question: str, history: list[AnyMessage]) -> str | None:
    """The message rewritten to stand alone; None when the model failed or returned nothing."""
    reply = generate_structured(context, QueryRewrite, "rewrite_query", question=question,
                                history=format_history(history))
    text = (reply.question if reply else "").strip().strip("\"'“”").strip()
    return text or None


@tracked
def classify_ambiguity(state: RewriteState, runtime: Runtime[RewriteContext]) -> dict:
    """Record the user's message and decide whether it needs a rewrite before answering: the
    detector's verdict, then the product the conversation gives it (`product_update`)."""
    context = runtime.context
    question = validate_question(state["question"])
    history = earlier_turns(state.get("messages"), question, context.history_turns)
    decision: dict = {"original_query": question, "rewrite_mode": context.rewrite_mode, "ambiguity": None,
                      "rewrite": None, "rewritten": False, "downstream": context.downstream}
    wanted = context.rewrite_mode == "always"
    if context.rewrite_mode == "guided":
        verdict = load_detector(context.detector_model, context.entity_types, context.lexical_rule).predict(question)
        decision.update(ambiguity=verdict["label"], ambiguity_probability=verdict["probability"],
                        ambiguity_source=verdict["source"])
        wanted = verdict["label"] == AMBIGUOUS
    if wanted and not history:
        decision["rewrite_skipped"] = "no earlier turn to resolve the message against"
    decision["needs_rewrite"] = wanted and bool(history)
    resolved = product_update(state, context, question, decision)
    messages = state.get("messages") or []
    is_recorded = bool(messages) and messages[-1].type == "human" and message_text(messages[-1]) == question
    return {"query": question, **resolved, "decision": decision,
            "messages": [] if is_recorded else [HumanMessage(question)]}


def route_after_classify_ambiguity(state: RewriteState) -> Literal["rewrite_query", "run_downstream"]:
    return "rewrite_query" if state["decision"].get("needs_rewrite") else "run_downstream"


def product_update(state: RewriteState, context: RewriteContext, question: str, decision: dict) -> dict:
    """The product the message is about, from the conversation and without a model call (guided
    mode): the state update, and what it adds to the decision (a message it leaves unsure still
    goes to the model)."""
    if context.rewrite_mode != "guided" or context.resolve_product == "off":
        return {}
    started = time.perf_counter()
    turns = user_turns(state.get("messages"), question)[:context.history_turns]
    thread = state.get("product")
    products, words = follow_up.candidate_products(get_retriever(context), [question, *turns], [thread] if thread else [])
    found = follow_up.resolve_product(
        question, follow_up.unclear(question, decision.get("ambiguity")), thread_product=thread,
        previous_query=state.get("query"), user_turns=turns, products=products, words=words,
        unnamed=context.resolve_product == "unnamed", answered=follow_up.answer_products(state) if turns else [])
    decision.update(product=found["product"], product_source=found["product_source"],
                    needs_rewrite=decision["needs_rewrite"] and found["unsure"],
                    product_seconds=round(time.perf_counter() - started, 4),
                    **({"product_among": found["among"]} if found.get("among") else {}))
    if found["query"] != question:
        decision.update(rewrite=found["query"], rewritten=True, rewrite_source="product")
    if found["product"]:
        emit({"event": "product", "product": found["product"], "source": found["product_source"],
              "question": found["query"], "rewritten": found["query"] != question})
    return {"query": found["query"], "product": found["product"] or thread}


@tracked
def rewrite_query(state: RewriteState, runtime: Runtime[RewriteContext]) -> dict:
    """Resolve references from the last turns; on model failure keep the original message."""
    question = state["query"]
    history = earlier_turns(state.get("messages"), question, runtime.context.history_turns)
    rewrite = rewrite_question(runtime.context, question, history)
    if rewrite is None:
        return {"decision": {"rewrite_failed": True}}
    emit({"event": "rewrite", "question": rewrite})
    return {"query": rewrite, "decision": {"rewrite": rewrite, "rewritten": rewrite != question}}


@tracked
def run_downstream(state: RewriteState, runtime: Runtime[RewriteContext]) -> dict:
    """Answer the query with the configured method, nested in this step, relaying its stream."""
    name = runtime.context.downstream  # a Literal setting: validated when the context is made
    messages = list(state.get("messages") or [])
    run = run_method(name, state["query"], messages, runtime.context)
    return {**method_update(run, state["query"], messages),
            "product": follow_up.product_after(state["decision"].get("product"), run.result)}


builder = StateGraph(RewriteState, context_schema=RewriteContext, input_schema=InputState, output_schema=OutputState)
builder.add_node("classify_ambiguity", starts_turn(classify_ambiguity))
builder.add_node("rewrite_query", rewrite_query)
builder.add_node("run_downstream", run_downstream)
builder.add_edge(START, "classify_ambiguity")
builder.add_conditional_edges("classify_ambiguity", route_after_classify_ambiguity)
builder.add_edge("rewrite_query", "run_downstream")
builder.add_edge("run_downstream", END)

graph = builder.compile(name="rewrite")
