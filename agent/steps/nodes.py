"""Nodes more than one graph uses: each exists here once, and graphs import them."""

from __future__ import annotations

import re

from langchain_core.messages import AIMessage
from langgraph.runtime import Runtime

from agent.context import Context
from agent.errors import validate_question
from agent.llm.calls import generate_structured
from agent.llm.answers import cited_ids, clean_answer, folded, may_stream, uncut
from agent.llm.prompts import format_passages
from agent.retrieval.retriever import get_retriever
from agent.llm.schemas import ANSWER_CAP, QUESTION_CAP, Synthesis
from agent.steps.compression import SentenceRanker, compress_passages
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
        question, answer = uncut(item.question, QUESTION_CAP), uncut(item.answer, ANSWER_CAP)
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
def synthesize_answer(state: RAGState, runtime: Runtime[Context], stands=None, shows=None,
                      rank: SentenceRanker | None = None) -> dict:
    """One call: the interpretations the passages answer, then the answer citing [n]: a sentence
    per interpretation, or with `answer_length=long` a long-form answer, as the papers wrote it.

    `state["guidance"]`, when a method sets it (e.g. sub-questions), is shown to the model.
    `stands(sentence)`: the check a streamed sentence must pass to be shown (default `may_stream`:
    complete, it cites a passage), `shows(sentence)`: the text shown for it (agent/llm/calls.py).
    `rank`: how the prompt's compression scores each passage's sentences (`compress_passages`).
    """
    passages = state.get("passages") or []
    if not passages:
        return answer_update(NO_PASSAGES, [], abstained=True)
    guidance = state.get("guidance") or ""
    context = runtime.context
    long_form = context.answer_length == "long"  # the papers' long-form answer (a departure, agent.context.PROFILES)
    synthesis = generate_structured(
        context, Synthesis, "synthesize_long_answer" if long_form else "synthesize_answer", stream_field="answer",
        max_tokens=context.max_tokens if long_form else context.max_answer_tokens,
        stands=stands or may_stream, shows=shows, question=state["question"],
        guidance=f"\n{guidance}\n" if guidance else "",
        passages=format_passages(prompt_passages(context, state["question"], passages, rank),
                                 getattr(context, "passage_chars", 900)),
    )
    if synthesis is None:
        return answer_update(MODEL_FAILED, [], abstained=True)
    return grounded_update(runtime.context, state["question"], final_interpretations(state, synthesis, passages),
                           passages, synthesis.answer)


def prompt_passages(context: Context, question: str, passages: list[dict],
                    rank: SentenceRanker | None = None) -> list[dict]:
    """The passages as the synthesis prompt shows them: with `compress_passages`, only the
    sentences bearing on the question (agent/steps/compression.py, scored by `rank` when
    given); the checks after the model always read the whole passages."""
    if not context.compress_passages:
        return passages
    return compress_passages(question, passages, get_retriever(context).embed_queries, rank)


def final_interpretations(state: RAGState, synthesis: Synthesis, passages: list[dict]) -> list[dict]:
    """The interpretations a method reports: the synthesized ones, kept only where they answer
    a question the method verified (`verified_questions`, DtV)."""
    found = interpretations_from(synthesis, passages)
    verified = state.get("verified_questions")
    return found if verified is None else matched_to(verified, found)


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.casefold()))


def matched_to(questions: list[str], found: list[dict]) -> list[dict]:
    """For each allowed question, the synthesized interpretation sharing most words with it
    (each used once), reported under the allowed question; the rest are dropped."""
    kept, used = [], set()
    for question in questions:
        overlaps = [(len(_words(question) & _words(item["question"])), index) for index, item in enumerate(found)
                    if index not in used]
        best = max(overlaps, default=(0, -1))
        if best[0] > 0:
            used.add(best[1])
            kept.append({**found[best[1]], "question": question})
    return kept


def grounded_update(context: Context, question: str, candidates: list[dict], passages: list[dict], prose: str,
                    checked: tuple | None = None, **decision) -> dict:
    """The final keys of every method that answers from passages: only grounded, distinct
    interpretations, and an answer that states each of them with its citation. `checked`: the
    method's own `checked_interpretations` result, when it needed the kept ones earlier."""
    answer, kept, details = grounded_output(
        question, candidates, passages, clean_answer(prose, passages), context.answer_style, checked
    )
    return answer_update(answer, kept, abstained=answer == NOT_IN_DOCUMENTS, **details, **decision)
