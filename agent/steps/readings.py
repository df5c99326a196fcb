"""Extractive readings around a method's synthesis, for the methods that end with one node
(DIVA, ADF, DtV with `readings` on): the learned selector's cited readings from the method's
passages are chosen and streamed first, with no model call; then the method's own synthesis
streams the sentences that will stand under them; the answer states the readings, then the
model's checked sentences that say something new (agent/assembly/). auto runs the same steps
as separate nodes.
"""

from __future__ import annotations

from langgraph.runtime import Runtime

from agent.assembly.checks import model_sentences
from agent.assembly.compose import compose
from agent.assembly.draft import stream_checks
from agent.assembly.nodes import announce, readings_for, with_reading_interpretations
from agent.context import Context
from agent.retrieval.retriever import get_retriever
from agent.steps.interpretations import NOT_IN_DOCUMENTS
from agent.steps.nodes import answer_update, synthesize_answer


def synthesize_with_readings(state: dict, runtime: Runtime[Context]) -> dict:
    """Readings from `passages` and the `detection_passages` (a method's wider first search),
    on screen before the model call, then the shared synthesis over `passages`, streamed and
    checked under them. Not tracked itself: the route and usage are the synthesis's, the
    readings cost no call."""
    question, context = state["question"], runtime.context
    shown = state.get("passages") or []
    if not shown:  # nothing to synthesize over: the synthesis says so
        return synthesize_answer(state, runtime)
    pool = list({p["id"]: p for p in [*shown, *(state.get("detection_passages") or [])]}.values())
    readings, passages = readings_for(question, pool, context, True, shown)
    announce(readings, passages)
    stands, shows = stream_checks(shown, question, [r["text"] for r in readings])
    update = synthesize_answer(state, runtime, stands=stands, shows=shows)
    return with_readings(update, question, shown, readings, passages, context)


def with_readings(update: dict, question: str, shown: list[dict], readings: list[dict], passages: list[dict],
                  context: Context) -> dict:
    """The synthesis `update` over the `shown` passages as an answer under the `readings`
    already on screen: the readings, then the model's checked sentences that do not repeat
    them; `passages` is what the answer's markers number (`shown`, then the readings'). A
    failed call leaves the readings alone, and with none the update as it is."""
    failed = bool(update["decision"].get("abstained")) and update["answer"] != NOT_IN_DOCUMENTS
    if failed and not readings:
        return {**update, "passages": shown}
    dropped: list[dict] = []
    prose = [] if failed else model_sentences(update["answer"], shown, question,
                                              get_retriever(context).embed_queries, dropped)
    answer = compose([r["text"] for r in readings], prose)
    interpretations = with_reading_interpretations(update["interpretations"], readings)
    abstained = answer == NOT_IN_DOCUMENTS
    decision = {**update["decision"], "abstained": abstained, "extractive_readings": len(readings),
                "assembly": {"dropped": dropped, "readings": [r["sense"] for r in readings]}}
    return {**update, **answer_update(answer, [] if abstained else interpretations, **decision), "passages": passages}
