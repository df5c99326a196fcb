"""Nodes more than one graph uses: each exists here once, and graphs import them."""

from __future__ import annotations

from langchain_core.messages import AIMessage
from langgraph.runtime import Runtime

from agent.context import Context
from agent.errors import validate_question
from agent.llm.calls import generate_structured
from agent.llm.answers import cited_ids, clean_answer, folded
from agent.llm.prompts import format_passages
from agent.retrieval.retriever import get_retriever
from agent.llm.schemas import Synthesis
from agent.steps.interpretations import NOT_IN_DOCUMENTS, grounded_output
from agent.state import RAGState
from agent.usage import tracked

NO_PASSAGES = "The indexed documents contain nothing that matches this question."
MODEL_FAILED = "The model did not produce a usable answer (it timed out or replied malformed twice)."


@tracked
def retrieve(state: RAGState, runtime: Runtime[Context]) -> dict:
    """Top-k passages for the question (or for `search_query`, when a method set one, e.g.
    VERDICT's relaxed query) with the configured retriever."""
    context = runtime.context
    question = validate_question(state["question"])
    query = state.get("search_query") or question
    passages = get_retriever(context).search(query, context.retrieval_mode, context.k)
    return {"passages": passages}


def interpretations_from(synthesis: Synthesis, passages: list[dict]) -> list[dict]:
    """Structured interpretations with passage numbers turned into passage ids; an entry that
    repeats an earlier one word for word (small models loop) only adds its citations to it.
    Entries without a `citations` field (closed-book answers) get none."""
    kept: dict[tuple[str, str], dict] = {}
    for item in synthesis.interpretations:
        question, answer = item.question.strip(), item.answer.strip()
        if not question or not answer:
            continue
        citations = cited_ids(getattr(item, "citations", []), passages)
        key = (folded(question), folded(answer))
        if key in kept:
            kept[key]["citations"] += [c for c in citations if c not in kept[key]["citations"]]
        else:
            kept[key] = {"question": question, "answer": answer, "citations": citations}
    return list(kept.values())


def answer_update(answer: str, interpretations: list[dict], **decision) -> dict:
    """The final keys a synthesizing node returns, including the reply appended to `messages`."""
    return {
        "answer": answer,
        "interpretations": interpretations,
        "messages": [AIMessage(answer)],
        "decision": decision,
    }


@tracked
def synthesize_answer(state: RAGState, runtime: Runtime[Context]) -> dict:
    """One call: the interpretations the passages answer, then a long-form answer citing [n].

    `state["guidance"]`, when a method sets it (e.g. sub-questions), is shown to the model.
    """
    passages = state.get("passages") or []
    if not passages:
        return answer_update(NO_PASSAGES, [], abstained=True)
    guidance = state.get("guidance") or ""
    synthesis = generate_structured(
        runtime.context, Synthesis, "synthesize_answer", stream_field="answer",
        question=state["question"], passages=format_passages(passages),
        guidance=f"\n{guidance}\n" if guidance else "",
    )
    if synthesis is None:
        return answer_update(MODEL_FAILED, [], abstained=True)
    return grounded_update(runtime.context, state["question"], interpretations_from(synthesis, passages),
                           passages, synthesis.answer)


def grounded_update(context: Context, question: str, candidates: list[dict], passages: list[dict], prose: str,
                    **decision) -> dict:
    """The final keys of every method that answers from passages: only grounded, distinct
    interpretations, and an answer that states each of them with its citation."""
    answer, kept, details = grounded_output(
        question, candidates, passages, clean_answer(prose, passages), context.answer_style
    )
    return answer_update(answer, kept, abstained=answer == NOT_IN_DOCUMENTS, **details, **decision)
