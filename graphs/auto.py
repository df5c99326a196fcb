"""auto, the default method: decide per question whether it is clear or ambiguous from cheap
signals, then answer like vanilla or run an ambiguity method.

retrieve_for_gate (2k passages) -> assess_ambiguity (no LLM: query detector, focus of the
passages on the question, ADF coherence; agent/steps/ambiguity_signals.py) ->
  clear:                      keep_top_passages -> synthesize_answer (vanilla's shared node)
  ambiguous, budget "fast":   spread_over_senses (ADF's clusters, round-robin) -> synthesize_answer
                              guided by each cluster's subject (one call, like vanilla)
  ambiguous, budget "thorough": the DIVA graph as a subgraph (several calls, per-reading verification)
Either way the shared synthesis keeps only grounded, distinct interpretations and states each.
`decision` = {ambiguous, branch, interpretations_source, auto: {signals, fired, thresholds, method}};
the stream carries an `auto_decision` event as soon as the gate has decided.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from agent.errors import InputError, validate_question
from agent.retrieval.retriever import get_retriever, passage_vectors
from agent.state import InputState, OutputState, Passage, RAGState
from agent.steps.ambiguity_signals import DEFAULT_THRESHOLDS, GateThresholds, detector_signal, is_ambiguous, passage_signals
from agent.steps.coherence import cluster_passages
from agent.steps.nodes import synthesize_answer
from agent.usage import emit, tracked
from graphs.diva import DIVAContext
from graphs.diva import graph as diva_graph

Budget = Literal["fast", "thorough"]
METHOD_FOR_BUDGET = {"fast": "sense-spread synthesis", "thorough": "diva"}


@dataclass(kw_only=True)
class AutoContext(DIVAContext):
    """auto's knobs: the gate's thresholds and what an ambiguous question may cost."""

    budget: Budget = field(
        default="fast",
        metadata={"description": "Ambiguous questions: fast (passages spread over the senses, one call) "
                                 "or thorough (DIVA: pseudo-interpretations, verification, several calls)"},
    )
    gate_detector: float = field(
        default=DEFAULT_THRESHOLDS.detector,
        metadata={"description": "Ambiguous when the query detector's probability is at least this"},
    )
    gate_focus: float = field(
        default=DEFAULT_THRESHOLDS.focus,
        metadata={"description": "Ambiguous when the best passage is closer to the question than the mean by less than this"},
    )

    def __post_init__(self) -> None:
        if self.budget not in METHOD_FOR_BUDGET:
            raise InputError(f"budget must be fast or thorough, not {self.budget!r}")


class AutoState(RAGState, total=False):
    detection_passages: list[Passage]  # the 2k passages the gate looks at
    ambiguous: bool


@tracked
def retrieve_for_gate(state: AutoState, runtime: Runtime[AutoContext]) -> dict:
    """2k passages for the question: the gate needs a wider view than the k an answer uses."""
    context = runtime.context
    question = validate_question(state["question"])
    return {"detection_passages": get_retriever(context).search(question, context.retrieval_mode, 2 * context.k),
            "guidance": ""}


@tracked
def assess_ambiguity(state: AutoState, runtime: Runtime[AutoContext]) -> dict:
    """The cheap signals and the gate's verdict; says in the stream which way it went."""
    context = runtime.context
    passages = state.get("detection_passages") or []
    retriever = get_retriever(context)
    vectors = passage_vectors(retriever, passages) if passages else []
    query_vector = retriever.embed_queries([state["question"]])[0]
    signals = {**passage_signals(query_vector, vectors, passages), **detector_signal(state["question"])}
    thresholds = GateThresholds(detector=context.gate_detector, focus=context.gate_focus)
    ambiguous, fired = is_ambiguous(signals, thresholds)
    method = METHOD_FOR_BUDGET[context.budget] if ambiguous else "vanilla"
    emit({"event": "auto_decision", "ambiguous": ambiguous, "method": method, "fired": fired})
    return {
        "ambiguous": ambiguous,
        "decision": {
            "ambiguous": ambiguous, "branch": "ambiguous" if ambiguous else "clear",
            "interpretations_source": "diva" if method == "diva" else "synthesis",
            "auto": {"signals": signals, "fired": fired, "method": method, "budget": context.budget,
                     "thresholds": {"detector": thresholds.detector, "focus": thresholds.focus}},
        },
    }


def route_after_assess_ambiguity(
    state: AutoState, runtime: Runtime[AutoContext]
) -> Literal["keep_top_passages", "spread_over_senses", "diva"]:
    if not state.get("ambiguous"):
        return "keep_top_passages"
    return "diva" if runtime.context.budget == "thorough" else "spread_over_senses"


@tracked
def keep_top_passages(state: AutoState, runtime: Runtime[AutoContext]) -> dict:
    """A clear question is answered like vanilla, from its own top k (already in hand)."""
    return {"passages": (state.get("detection_passages") or [])[:runtime.context.k]}


def round_robin(clusters: list[list[int]], limit: int) -> list[int]:
    """Indices taken one per cluster in turn (best cluster first), up to `limit`."""
    order: list[int] = []
    depth = 0
    while len(order) < limit and any(depth < len(c) for c in clusters):
        order += [c[depth] for c in clusters if depth < len(c)][: limit - len(order)]
        depth += 1
    return order


@tracked
def spread_over_senses(state: AutoState, runtime: Runtime[AutoContext]) -> dict:
    """k passages spread over the senses: ADF's clusters of the 2k passages (those near the
    question), one passage from each in turn; each cluster's top title guides the synthesis."""
    context = runtime.context
    passages = state.get("detection_passages") or []
    if len(passages) < 3:
        return {"passages": passages[:context.k]}
    retriever = get_retriever(context)
    clusters = [c for c in cluster_passages(passage_vectors(retriever, passages),
                                            retriever.embed_queries([state["question"]])[0]) if c["kept"]]
    chosen = sorted(round_robin([sorted(c["members"]) for c in clusters], context.k) or range(context.k))
    groups = [[chosen.index(i) + 1 for i in sorted(c["members"]) if i in chosen] for c in clusters]
    subjects = [(passages[min(c["members"])]["title"], numbers) for c, numbers in zip(clusters, groups) if numbers]
    guidance = ("This question may mean different things. The passages fall into these groups: "
                + "; ".join(f"{title} (passages {', '.join(map(str, numbers))})" for title, numbers in subjects)
                + ". Give one interpretation for each group the passages answer, with a question that names "
                "that group's meaning.") if len(subjects) > 1 else ""
    return {"passages": [passages[i] for i in chosen], "guidance": guidance,
            "decision": {"auto_subjects": [title for title, _ in subjects]}}


builder = StateGraph(AutoState, context_schema=AutoContext, input_schema=InputState, output_schema=OutputState)
builder.add_node("retrieve_for_gate", retrieve_for_gate)
builder.add_node("assess_ambiguity", assess_ambiguity)
builder.add_node("keep_top_passages", keep_top_passages)
builder.add_node("spread_over_senses", spread_over_senses)
builder.add_node("synthesize_answer", synthesize_answer)
builder.add_node("diva", diva_graph)
builder.add_edge(START, "retrieve_for_gate")
builder.add_edge("retrieve_for_gate", "assess_ambiguity")
builder.add_conditional_edges("assess_ambiguity", route_after_assess_ambiguity)
builder.add_edge("keep_top_passages", "synthesize_answer")
builder.add_edge("spread_over_senses", "synthesize_answer")
builder.add_edge("synthesize_answer", END)
builder.add_edge("diva", END)

graph = builder.compile(name="auto")
