"""Iterative RAG (the ADF paper's baseline): retrieve, draft, assess, reformulate, repeat.

start_loop -> retrieve -> generate -> assess_progress -> (progress >= threshold, rounds left)
    reformulate_query -> retrieve ...      otherwise deliver_answer
The passage pool accumulates across rounds and every draft is written from the whole pool.
The loop is bounded in state (`iteration` against `max_iterations`), not by the recursion limit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from agent.context import Context
from agent.retrieval.retriever import passage_vectors
from agent.errors import validate_question
from agent.llm.answers import clean_query
from agent.llm.calls import generate_structured, generate_text
from agent.steps.nodes import MODEL_FAILED, NO_PASSAGES, answer_update, grounded_update, interpretations_from
from agent.llm.answers import clean_answer
from agent.llm.prompts import format_passages
from agent.retrieval.retriever import get_retriever
from agent.llm.schemas import Synthesis
from agent.state import InputState, OutputState, Passage, RAGState, starts_turn
from agent.usage import emit, tracked

QUALITY_WEIGHT, NOVELTY_WEIGHT = 0.6, 0.4
PASSAGE_CHARS, POOL_MIN_CHARS = 900, 300


@dataclass(kw_only=True)
class IterativeContext(Context):
    """The loop's knobs: the iteration cap and the progress score below which it stops."""

    max_iterations: int = field(default=3, metadata={"description": "Retrieval rounds at most"})
    progress_threshold: float = field(
        default=0.3, metadata={"description": "Stop when 0.6*quality + 0.4*novelty of a round falls below this"}
    )


class IterativeState(RAGState, total=False):
    """Working state: the round counter and its bound, the queries run, each round's scores."""

    iteration: int  # rounds retrieved so far
    max_iterations: int  # copied from the context by start_loop: the bound lives in state
    query: str  # the query of the current round
    queries: list[str]
    round_passages: list[Passage]  # what the current round retrieved
    round_novelty: float  # share of them the pool did not hold yet
    progress: list[dict]  # per round: {iteration, query, quality, novelty, progress}
    draft: dict  # {answer, interpretations, failed}
    stop_reason: str


def progress_score(quality: float, novelty: float) -> float:
    return QUALITY_WEIGHT * quality + NOVELTY_WEIGHT * novelty


def novelty(round_ids: list[str], pool_ids: list[str]) -> float:
    """Share of this round's passages that the pool did not hold yet."""
    known = set(pool_ids)
    return sum(i not in known for i in round_ids) / len(round_ids) if round_ids else 0.0


def normalized_query(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


@tracked
def start_loop(state: IterativeState, runtime: Runtime[IterativeContext]) -> dict:
    """Put the loop's bound and an empty pool into state (a thread's earlier turn left its own)."""
    return {"iteration": 0, "max_iterations": runtime.context.max_iterations, "query": "", "queries": [],
            "passages": [], "progress": [], "draft": {}, "stop_reason": ""}


@tracked
def retrieve(state: IterativeState, runtime: Runtime[IterativeContext]) -> dict:
    """One round: top-k for the current query (the question itself in round 1), pooled."""
    context = runtime.context
    question = validate_question(state["question"])
    query = state.get("query") or question
    found = get_retriever(context).search(query, context.retrieval_mode, context.k)
    pool = list(state.get("passages") or [])
    known = {p["id"] for p in pool}
    fresh = [p for p in found if p["id"] not in known]
    return {
        "passages": pool + fresh,
        "round_passages": found,
        "round_novelty": novelty([p["id"] for p in found], list(known)),
        "iteration": state.get("iteration", 0) + 1,
        "query": query,
        "queries": [*(state.get("queries") or []), query],
    }


def pool_chars(pool_size: int, k: int) -> int:
    """Characters per passage so a draft over the pooled rounds reads about as much as one
    over k passages: the pool grows by up to k a round, the prompt should not."""
    return max(POOL_MIN_CHARS, PASSAGE_CHARS * k // max(pool_size, 1)) if pool_size > k else PASSAGE_CHARS


@tracked
def generate(state: IterativeState, runtime: Runtime[IterativeContext]) -> dict:
    """Draft interpretations and an answer from the whole pool (not streamed: only the last
    draft becomes the answer, and the reformulation reads it)."""
    pool = state.get("passages") or []
    if not pool:
        return {"draft": {"answer": NO_PASSAGES, "interpretations": [], "failed": True}}
    synthesis = generate_structured(
        runtime.context, Synthesis, "synthesize_answer",
        question=state["question"], passages=format_passages(pool, pool_chars(len(pool), runtime.context.k)),
        guidance="",
    )
    if synthesis is None:
        return {"draft": {"answer": MODEL_FAILED, "interpretations": [], "failed": True}}
    interpretations = interpretations_from(synthesis, pool)
    answer = clean_answer(synthesis.answer, pool)
    return {"draft": {"answer": answer, "interpretations": interpretations, "failed": False}}


@tracked
def assess_progress(state: IterativeState, runtime: Runtime[IterativeContext]) -> dict:
    """quality = mean cosine of this round's passages to the question (clipped to [0, 1]),
    novelty = share of them new to the pool; progress = 0.6 * quality + 0.4 * novelty."""
    retriever = get_retriever(runtime.context)
    found = state.get("round_passages") or []
    quality = 0.0
    if found:
        similarities = passage_vectors(retriever, found) @ retriever.embed_queries([state["question"]])[0]
        quality = float(np.clip(similarities.mean(), 0.0, 1.0))
    new_share = state.get("round_novelty", 0.0)
    scores = {"iteration": state["iteration"], "query": state["query"], "quality": round(quality, 4),
              "novelty": round(new_share, 4), "progress": round(progress_score(quality, new_share), 4)}
    emit({"event": "progress", **scores})
    return {"progress": [*(state.get("progress") or []), scores]}


def stop_reason(state: IterativeState, threshold: float) -> str | None:
    """Why the loop ends after this round, or None to go on."""
    last = (state.get("progress") or [{}])[-1]
    if (state.get("draft") or {}).get("failed"):
        return "no usable draft"
    if state.get("iteration", 0) >= state.get("max_iterations", 1):
        return f"reached {state.get('max_iterations')} iterations"
    if last.get("progress", 0.0) < threshold:
        return f"progress {last.get('progress', 0.0):.2f} < {threshold}"
    return None


def route_after_assess_progress(
    state: IterativeState, runtime: Runtime[IterativeContext]
) -> Literal["reformulate_query", "deliver_answer"]:
    return "deliver_answer" if stop_reason(state, runtime.context.progress_threshold) else "reformulate_query"


@tracked
def reformulate_query(state: IterativeState, runtime: Runtime[IterativeContext]) -> dict:
    """One call: a new query aimed at what the draft lacks; none when it repeats a query."""
    queries = state.get("queries") or []
    reply = generate_text(
        runtime.context, "reformulate_query", max_tokens=40, question=state["question"],
        queries="\n".join(f"- {q}" for q in queries), draft=state["draft"]["answer"],
    )
    query = clean_query(reply)
    if not query or normalized_query(query) in {normalized_query(q) for q in queries}:
        reason = "the model wrote no new query" if not query or reply is None else "the new query repeats an earlier one"
        return {"query": "", "stop_reason": reason}
    return {"query": query}


def route_after_reformulate_query(state: IterativeState) -> Literal["retrieve", "deliver_answer"]:
    return "retrieve" if state.get("query") else "deliver_answer"


@tracked
def deliver_answer(state: IterativeState, runtime: Runtime[IterativeContext]) -> dict:
    """The last draft becomes the answer; the decision says how many rounds ran and why it stopped."""
    draft = state.get("draft") or {"answer": NO_PASSAGES, "interpretations": [], "failed": True}
    reason = state.get("stop_reason") or stop_reason(state, runtime.context.progress_threshold) or "stopped"
    if draft["answer"] == NO_PASSAGES:
        reason = "no passages"
    details = {"iterations": state.get("iteration", 0), "max_iterations": state.get("max_iterations"),
               "queries": state.get("queries") or [], "progress": state.get("progress") or [], "stop_reason": reason}
    if draft["failed"]:
        return answer_update(draft["answer"], [], abstained=True, **details)
    return grounded_update(runtime.context, state["question"], draft["interpretations"], state.get("passages") or [],
                           draft["answer"], **details)


builder = StateGraph(IterativeState, context_schema=IterativeContext, input_schema=InputState, output_schema=OutputState)
builder.add_node("start_loop", starts_turn(start_loop, ambiguous=None, branch="loop", interpretations_source="synthesis"))
builder.add_node("retrieve", retrieve)
builder.add_node("generate", generate)
builder.add_node("assess_progress", assess_progress)
builder.add_node("reformulate_query", reformulate_query)
builder.add_node("deliver_answer", deliver_answer)
builder.add_edge(START, "start_loop")
builder.add_edge("start_loop", "retrieve")
builder.add_edge("retrieve", "generate")
builder.add_edge("generate", "assess_progress")
builder.add_conditional_edges("assess_progress", route_after_assess_progress)
builder.add_conditional_edges("reformulate_query", route_after_reformulate_query)
builder.add_edge("deliver_answer", END)

graph = builder.compile(name="iterative")
