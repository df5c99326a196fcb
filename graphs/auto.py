"""auto, the default method: decide per question whether it is clear or ambiguous from cheap
signals, then answer like vanilla or run an ambiguity method.

retrieve_for_gate (3k passages, ranked as a 2k search) -> assess_ambiguity (no LLM, on the top
2k: query detector, focus of the passages on the question, years the top titles leave open, ADF coherence for the record;
agent/steps/ambiguity_signals.py) ->
  clear:                      keep_top_passages -> synthesize_answer (vanilla's call; its sentences
                              checked as below, no second sense added)
  ambiguous, budget "fast":   answer_each_sense: vanilla's synthesis over the top k (one
                              call, the same as vanilla's), plus extractive, cited readings
                              from the 3k passages no kept reading cites, senses unlike the
                              cited ones first (agent/steps/readings.py)
  ambiguous, budget "thorough": the DIVA graph as a subgraph node (graphs/compose.py; several
                              calls, with the product's settings); its detail goes under `decision.diva`
Either way the shared synthesis keeps only grounded, distinct interpretations and states each.
`decision` = {ambiguous, branch, interpretations_source, abstained, auto: {signals, fired, thresholds,
method}} (+ `diva: {...}` when DIVA answered); the common part is auto's own choice;
the stream carries an `auto_decision` event as soon as the gate has decided.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from agent.context import Context, Readings, VerifyCalls, departure
from agent.errors import InputError, validate_question
from agent.retrieval.retriever import get_retriever, passage_vectors
from agent.state import InputState, OutputState, Passage, RAGState, starts_turn
from agent.steps.ambiguity_signals import (
    DEFAULT_THRESHOLDS,
    GateThresholds,
    detector_signal,
    edition_signal,
    is_ambiguous,
    passage_signals,
)
from agent.steps.readings import synthesize_checked, synthesize_with_readings
from agent.usage import emit, tracked
from graphs.compose import subgraph_node
from graphs.diva import DIVASettings

Budget = Literal["fast", "thorough"]
GATE_POOL = 2  # x k passages the gate looks at (its thresholds were calibrated on 2k)
READING_POOL = 3  # x k passages an ambiguous question's readings may come from
METHOD_FOR_BUDGET = {"fast": "synthesis + extractive readings", "thorough": "diva"}


@dataclass(kw_only=True)
class AutoContext(Context, DIVASettings):
    """auto's knobs: the gate's thresholds and what an ambiguous question may cost; DIVA's
    settings (the thorough budget's subgraph reads them) with the product's departures."""

    readings: Readings = departure("readings", "product")
    verify_calls: VerifyCalls = departure("verify_calls", "product")
    budget: Budget = field(
        default="fast",
        metadata={"description": "Ambiguous questions: fast (vanilla's one call, plus a cited extractive reading "
                                 "for each sense of the passages it missed) "
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
        super().__post_init__()
        if self.budget not in METHOD_FOR_BUDGET:
            raise InputError(f"budget must be fast or thorough, not {self.budget!r}")


class AutoState(RAGState, total=False):
    detection_passages: list[Passage]  # 3k passages: the gate looks at the top 2k, readings at all
    ambiguous: bool


@tracked
def retrieve_for_gate(state: AutoState, runtime: Runtime[AutoContext]) -> dict:
    """3k passages for the question: the gate needs a wider view than the k an answer uses, and
    the readings a wider one still (on the demo fixture 2k held the answer of 89% of the labelled
    senses, 3k of 97%; sense recall 0.598 -> 0.637). Ranked with a 2k search's fusion depth,
    so the gate's 2k and the answer's k are what they were."""
    context = runtime.context
    question = validate_question(state["question"])
    wider = get_retriever(context).search(question, context.retrieval_mode, READING_POOL * context.k,
                                          depth=2 * GATE_POOL * context.k)  # ranked as the gate's 2k alone
    return {"detection_passages": wider, "guidance": ""}


@tracked
def assess_ambiguity(state: AutoState, runtime: Runtime[AutoContext]) -> dict:
    """The cheap signals and the gate's verdict; says in the stream which way it went."""
    context = runtime.context
    passages = (state.get("detection_passages") or [])[:GATE_POOL * context.k]
    retriever = get_retriever(context)
    vectors = passage_vectors(retriever, passages) if passages else []
    query_vector = retriever.embed_queries([state["question"]])[0]
    signals = {**passage_signals(query_vector, vectors, passages), **detector_signal(state["question"]),
               **edition_signal(state["question"], passages[:context.k])}
    thresholds = GateThresholds(detector=context.gate_detector, focus=context.gate_focus)
    ambiguous, fired = is_ambiguous(signals, thresholds)
    method = METHOD_FOR_BUDGET[context.budget] if ambiguous else "vanilla"
    emit({"event": "auto_decision", "ambiguous": ambiguous, "method": method, "fired": fired})
    return {
        "ambiguous": ambiguous,
        "decision": {
            "ambiguous": ambiguous, "branch": "ambiguous" if ambiguous else "clear",
            "interpretations_source": "diva" if method == "diva" else "synthesis",
            "auto": {"gate": "ambiguous" if ambiguous else "clear", "signals": signals, "fired": fired,
                     "method": method, "budget": context.budget,
                     "thresholds": {"detector": thresholds.detector, "focus": thresholds.focus,
                                    "editions": thresholds.editions}},
        },
    }


def route_after_assess_ambiguity(
    state: AutoState, runtime: Runtime[AutoContext]
) -> Literal["keep_top_passages", "answer_each_sense", "diva"]:
    if not state.get("ambiguous"):
        return "keep_top_passages"
    return "diva" if runtime.context.budget == "thorough" else "answer_each_sense"


@tracked
def keep_top_passages(state: AutoState, runtime: Runtime[AutoContext]) -> dict:
    """A clear question is answered like vanilla, from its own top k (already in hand)."""
    return {"passages": (state.get("detection_passages") or [])[:runtime.context.k]}


@tracked
def answer_each_sense(state: AutoState, runtime: Runtime[AutoContext]) -> dict:
    """vanilla's synthesis over the top k (the same call, so the model's answer is vanilla's),
    then up to EXTRA_READINGS extractive readings from the 3k passages no kept reading cites
    (agent/steps/readings.py): small models write one reading; the others sit in the passages."""
    return synthesize_with_readings({**state, "passages": (state.get("detection_passages") or [])[:runtime.context.k]},
                                    runtime)


builder = StateGraph(AutoState, context_schema=AutoContext, input_schema=InputState, output_schema=OutputState)
builder.add_node("retrieve_for_gate", starts_turn(retrieve_for_gate, ambiguous=None, branch="clear",
                                                  interpretations_source="synthesis"))
builder.add_node("assess_ambiguity", assess_ambiguity)
builder.add_node("keep_top_passages", keep_top_passages)
builder.add_node("synthesize_answer", synthesize_checked)
builder.add_node("answer_each_sense", answer_each_sense)
builder.add_node("diva", subgraph_node("diva"))
builder.add_edge(START, "retrieve_for_gate")
builder.add_edge("retrieve_for_gate", "assess_ambiguity")
builder.add_conditional_edges("assess_ambiguity", route_after_assess_ambiguity)
builder.add_edge("keep_top_passages", "synthesize_answer")
builder.add_edge("answer_each_sense", END)
builder.add_edge("synthesize_answer", END)
builder.add_edge("diva", END)

graph = builder.compile(name="auto")
