"""Relaxed single retrieval, shared by VERDICT and its RAC baseline (the VERDICT paper, Eq. 6-7).

One call rewrites the question into a broader search query, so that the one top-k retrieval
(k=20) covers every reading of the question found in the corpus (a high-recall universe).
A published implementation skipped this call and searched with the question unchanged; here
the call is made, and a switch turns it off. The shared `retrieve` node then searches with
`search_query` instead of the question.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from langgraph.runtime import Runtime

from agent.context import Context
from agent.errors import validate_question
from agent.llm.answers import clean_query
from agent.llm.calls import generate_text
from agent.state import RAGState
from agent.usage import tracked

@dataclass(kw_only=True)
class RelaxedRetrievalContext(Context):
    """Knobs of the relaxed single retrieval (VERDICT and RAC use top-20 passages)."""

    relax_query: bool = field(
        default=True, metadata={"description": "Rewrite the question into a broader search query first (one LLM call)"}
    )
    k: int = field(default=20, metadata={"description": "Passages retrieved once for the relaxed query (the universe)"})


@tracked
def relax_query(state: RAGState, runtime: Runtime[RelaxedRetrievalContext]) -> dict:
    """Broaden the question for a high-recall search; the question itself when off or on failure."""
    context = runtime.context
    question = validate_question(state["question"])
    query = ""
    if context.relax_query:
        query = clean_query(generate_text(context, "relax_query", max_tokens=32, question=question))
    query = query or question
    return {"search_query": query, "decision": {"search_query": query, "relaxed": query != question}}
