"""DtV, diversify-then-verify (the baseline VERDICT compares against, §3.2 of its paper).

infer_pseudo_interpretations (the model alone, no ambiguity-type step) -> retrieve_diversified
(top-5 per interpretation, pruned to the 5 most similar to all interpretations) ->
verify_passages (a Yes/No call per interpretation, as published; one call over all of them
with `verify_calls=batched`) -> synthesize_answer over the kept passages, guided by the
interpretations that passed (extractive readings streamed before it with `readings=on`);
when none passed there is nothing verified to answer from, and the graph abstains.
Verification is post hoc, as in the paper: it filters interpretations, not passages.
"""

from dataclasses import dataclass, field
from typing import Literal

from langgraph.graph import END, START, StateGraph

from agent.context import AnswerLength, Readings, departure
from agent.steps.answer_modes import synthesize
from agent.steps.diversify import DiversifyContext, DiversifyState, infer_pseudo_interpretations, retrieve_diversified, verify_passages
from agent.steps.nodes import answer_update
from agent.state import InputState, OutputState, starts_turn
from agent.usage import tracked

NOTHING_VERIFIED = "None of the interpretations of this question could be verified against the indexed documents."


@dataclass(kw_only=True)
class DtVContext(DiversifyContext):
    """DtV retrieves for the pseudo-interpretations only, not for the original question, and
    reports only the interpretations it verified."""

    include_question: bool = field(
        default=False, metadata={"description": "Also retrieve candidates for the original question (DtV: no)"}
    )
    verified_only: bool = field(
        default=True, metadata={"description": "Report only the verified readings (DtV's post-hoc filter)"}
    )
    readings: Readings = departure("readings", "paper")
    answer_length: AnswerLength = departure("answer_length", "paper")


def route_after_verify_passages(state: DiversifyState) -> Literal["synthesize_answer", "abstain"]:
    """Answer only when at least one interpretation was verified."""
    return "abstain" if state.get("grade") == "Useless" else "synthesize_answer"


@tracked
def abstain(state: DiversifyState) -> dict:
    """No verified interpretation, so nothing is claimed (`passages` still shows what was retrieved)."""
    return answer_update(NOTHING_VERIFIED, [], abstained=True, branch="abstain")


builder = StateGraph(DiversifyState, context_schema=DtVContext, input_schema=InputState, output_schema=OutputState)
builder.add_node("infer_pseudo_interpretations", starts_turn(infer_pseudo_interpretations, ambiguous=None, branch="verified",
                                                                       interpretations_source="verified_synthesis"))
builder.add_node("retrieve_diversified", retrieve_diversified)
builder.add_node("verify_passages", verify_passages)
builder.add_node("synthesize_answer", synthesize)
builder.add_node("abstain", abstain)
builder.add_edge(START, "infer_pseudo_interpretations")
builder.add_edge("infer_pseudo_interpretations", "retrieve_diversified")
builder.add_edge("retrieve_diversified", "verify_passages")
builder.add_conditional_edges("verify_passages", route_after_verify_passages)
builder.add_edge("synthesize_answer", END)
builder.add_edge("abstain", END)

graph = builder.compile(name="dtv")
