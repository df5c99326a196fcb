"""The last step of DIVA, ADF and DtV: their synthesis as published, or with the product's
extractive readings streamed before it (setting `readings`, agent.context.DEPARTURES).

`readings=off` is the method's own synthesis (agent.steps.nodes.synthesize_answer); `on`
streams extractive readings of the method's passages before the same call and states them
first (agent.steps.readings.synthesize_with_readings); they make no model call. Both keep the node
name `synthesize_answer`, and the decision says which ran (`readings`, `answer_length`).
"""

from __future__ import annotations

from langgraph.runtime import Runtime

from agent.context import Context
from agent.steps.nodes import synthesize_answer
from agent.steps.readings import synthesize_with_readings


def synthesize(state: dict, runtime: Runtime[Context]) -> dict:
    """The synthesis, with extractive readings first when the context's `readings` is on. Not
    tracked itself: the route and usage are the synthesis's."""
    readings, answer_length = runtime.context.readings, runtime.context.answer_length
    update = (synthesize_with_readings if readings == "on" else synthesize_answer)(state, runtime)
    return {**update, "decision": {**(update.get("decision") or {}), "readings": readings,
                                   "answer_length": answer_length}}
