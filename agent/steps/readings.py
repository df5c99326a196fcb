"""Extractive readings after a method's synthesis, for the methods that end with one node
(DIVA, ADF, DtV with `readings` on): the model's checked sentences, then the learned selector's
cited readings from the passages they do not cite (agent/assembly/). auto runs the same steps
as separate nodes, readings first.
"""

from __future__ import annotations

from langgraph.runtime import Runtime

from agent.assembly.checks import model_sentences
from agent.assembly.compose import compose
from agent.assembly.nodes import readings_for
from agent.context import Context
from agent.llm.answers import cited_numbers
from agent.retrieval.retriever import get_retriever
from agent.steps.interpretations import NOT_IN_DOCUMENTS
from agent.steps.nodes import answer_update, synthesize_answer


def synthesize_with_readings(state: dict, runtime: Runtime[Context]) -> dict:
    """The shared synthesis over `passages`, then readings from those passages and the
    `detection_passages` (a method's wider first search) that the answer does not cite.
    Not tracked itself: the route and usage are the synthesis's, the readings cost no call."""
    shown = state.get("passages") or []
    update = synthesize_answer(state, runtime)
    pool = list({p["id"]: p for p in [*shown, *(state.get("detection_passages") or [])]}.values())
    return add_readings(update, state["question"], shown, pool, runtime.context)


def add_readings(update: dict, question: str, shown: list[dict], pool: list[dict], context: Context,
                 ambiguous: bool = True) -> dict:
    """A synthesizing node's `update` over the `shown` passages, its prose checked and followed
    by the selector's readings from `pool` passages neither its interpretations nor its kept
    sentences cite; `passages` becomes what the answer's markers number. A failed call is left
    as it is (nothing to add to)."""
    if update["decision"].get("abstained") and update["answer"] != NOT_IN_DOCUMENTS:
        return {**update, "passages": shown}
    dropped: list[dict] = []
    prose = model_sentences(update["answer"], shown, question, get_retriever(context).embed_queries, dropped)
    kept = update["interpretations"]
    cited = {c for item in kept for c in item["citations"]}
    cited |= {shown[n - 1]["id"] for s in prose for n in cited_numbers(s) if 1 <= n <= len(shown)}
    readings, passages = readings_for(question, pool, context, ambiguous, shown, skip_ids=cited, said=prose)
    answer = compose(prose, [r["text"] for r in readings])
    interpretations = kept + [{"question": r["question"], "answer": r["answer"], "citations": r["citations"]}
                              for r in readings]
    abstained = answer == NOT_IN_DOCUMENTS
    decision = {**update["decision"], "abstained": abstained, "extractive_readings": len(readings),
                "assembly": {"dropped": dropped, "readings": [r["sense"] for r in readings]}}
    return {**update, **answer_update(answer, [] if abstained else interpretations, **decision), "passages": passages}
