"""DIVA (the Diversify-Verify-Adapt paper): diversify, verify, adapt.

identify_ambiguity_type -> infer_pseudo_interpretations -> retrieve_diversified ->
verify_passages -> Useful / PartialUseful: synthesize_answer, guided by the verified readings;
Useless: answer_closed_book (the model's own knowledge, flagged as not supported by the corpus).
The synthesis is the paper's Eq. 1 and 2 in one call, as in vanilla: it extracts the
interpretations, then writes the answer (a separate extraction call read the passages a third
time for 31% of DIVA's tokens). As published it verifies with one Yes/No call per
pseudo-interpretation and answers with the synthesis alone; the product's settings
(`verify_calls=batched`, `readings=on`, agent.context.PROFILES) verify in one call and state
extractive readings of its passages, streamed before the synthesis call, with the model's new
sentences after them (agent/steps/readings.py). The diversify and verify steps are
shared with the DtV baseline (agent/steps/diversify.py).
"""

from dataclasses import dataclass, field
from typing import Literal

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from pydantic import BaseModel, Field

from agent.context import AnswerLength, Context, Readings, departure
from agent.steps.answer_modes import synthesize
from agent.steps.diversify import (
    DiversifySettings,
    DiversifyState,
    identify_ambiguity,
    infer_pseudo_interpretations,
    retrieve_diversified,
    targets,
    verify_passages,
)
from agent.errors import validate_question
from agent.llm.calls import generate_structured
from agent.steps.nodes import MODEL_FAILED, answer_update, interpretations_from
from agent.llm.answers import clean_answer
from agent.state import InputState, OutputState, starts_turn
from agent.usage import emit, record, tracked

UNSUPPORTED = "Not supported by the indexed documents; from the model's general knowledge, unverified:"


@dataclass(kw_only=True)
class DIVASettings(DiversifySettings):
    """What DIVA's nodes read beyond the shared settings: K (`candidate_k` per query, `k` kept),
    the interpretation cap, verification, the adapt switch and the answer's readings. A graph
    that runs DIVA as a subgraph (auto) holds these too, with its own defaults."""

    adaptive_generation: bool = field(
        default=True,
        metadata={"description": "Answer from the model's own knowledge when the passages are Useless (off: always use them)"},
    )
    readings: Readings = departure("readings", "paper")


@dataclass(kw_only=True)
class DIVAContext(Context, DIVASettings):
    """DIVA's settings, as published by default (agent.context.PROFILES["paper"])."""

    answer_length: AnswerLength = departure("answer_length", "paper")  # here: Context's default would win over a mixin's


class ClosedBookInterpretation(BaseModel):
    question: str = Field(max_length=300)
    answer: str = Field(max_length=200)


class ClosedBookAnswer(BaseModel):
    interpretations: list[ClosedBookInterpretation] = Field(max_length=6)
    answer: str = Field(max_length=1200)


@tracked
def identify_ambiguity_type(state: DiversifyState, runtime: Runtime[DIVAContext]) -> dict:
    """One call names the ambiguity types and why; the reason guides the next call."""
    found = identify_ambiguity(runtime.context, validate_question(state["question"]))
    types, reason = found if found is not None else ([], "")
    return {"ambiguity_reason": reason, "decision": {"ambiguous": None if found is None else bool(types),
                                                     "ambiguity_types": types, "ambiguity_reason": reason}}


def route_after_verify_passages(
    state: DiversifyState, runtime: Runtime[DIVAContext]
) -> Literal["synthesize_answer", "answer_closed_book"]:
    """Useless passages would only mislead the answer: use the model's own knowledge instead."""
    if state.get("grade") == "Useless" and runtime.context.adaptive_generation:
        return "answer_closed_book"
    return "synthesize_answer"


@tracked
def answer_closed_book(state: DiversifyState, runtime: Runtime[DIVAContext]) -> dict:
    """The model's own answer, flagged as unsupported by the corpus and without citations."""
    emit({"event": "token", "text": UNSUPPORTED + " "})
    reply = generate_structured(
        runtime.context, ClosedBookAnswer, "answer_closed_book", stream_field="answer", max_tokens=400,
        question=state["question"], readings=" / ".join(targets(state)),
    )
    decision = {"branch": "closed_book", "interpretations_source": "closed_book", "supported_by_corpus": False}
    if reply is None:
        return answer_update(f"{UNSUPPORTED} {MODEL_FAILED}", [], abstained=True, **decision)
    unsupported = interpretations_from(reply, [])  # no passages: nothing cites, nothing is grounded
    if unsupported:
        record(dropped_interpretations=len(unsupported))
    answer = f"{UNSUPPORTED} {clean_answer(reply.answer, [])}"  # nothing to cite
    return answer_update(answer, [], abstained=False, ungrounded_readings=unsupported, **decision)


builder = StateGraph(DiversifyState, context_schema=DIVAContext, input_schema=InputState, output_schema=OutputState)
builder.add_node("identify_ambiguity_type", starts_turn(identify_ambiguity_type, ambiguous=None, branch="passages",
                                                                 interpretations_source="synthesis"))
builder.add_node("infer_pseudo_interpretations", infer_pseudo_interpretations)
builder.add_node("retrieve_diversified", retrieve_diversified)
builder.add_node("verify_passages", verify_passages)
builder.add_node("synthesize_answer", synthesize)
builder.add_node("answer_closed_book", answer_closed_book)
builder.add_edge(START, "identify_ambiguity_type")
builder.add_edge("identify_ambiguity_type", "infer_pseudo_interpretations")
builder.add_edge("infer_pseudo_interpretations", "retrieve_diversified")
builder.add_edge("retrieve_diversified", "verify_passages")
builder.add_conditional_edges("verify_passages", route_after_verify_passages)
builder.add_edge("synthesize_answer", END)
builder.add_edge("answer_closed_book", END)

graph = builder.compile(name="diva")
