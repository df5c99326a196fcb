"""disambig as a tool inside another agent (LangChain `@tool`, usable with `create_agent`).

    from langchain.agents import create_agent
    from agent.app.tools import make_ask_tool

    agent = create_agent(model, [make_ask_tool({"index_dir": "..."})])

One tool with a `method` argument answers a question over the indexed documents and returns
a compact JSON object an LLM can use: the answer, the interpretations with the passage ids
that support them, and the cited sources. With `ask_back`, a question with several grounded
interpretations comes back as options ("needs_clarification") instead of an answer, so the
calling agent can ask its user which one they mean. Problems come back as
{"status": "error"} so the agent can recover, never as an exception.
"""

from __future__ import annotations

from typing import Any, Literal

from langchain_core.tools import BaseTool, tool
from pydantic import BaseModel, Field

from agent.steps.clarify import PROMPT, SENSE_MERGE, MAX_OPTIONS, needs_clarification, result_options
from agent.context import Context
from agent.documents.citation import citation, location
from agent.errors import DisambigError
from graphs.registry import METHODS

TOOL_METHODS = tuple(name for name in METHODS if name != "rewrite")  # rewrite needs a conversation
DESCRIPTION = (
    "Answer a question from the indexed documents. Questions are often ambiguous (one name, several "
    "things); the result lists each interpretation the documents support with a short answer and the "
    "ids of the passages that support it, plus a long answer citing sources as [n]."
)


class AskDocuments(BaseModel):
    question: str = Field(description="a self-contained question about the documents")
    method: Literal[TOOL_METHODS] = Field(  # type: ignore[valid-type]
        default="auto", description="answering method: " + "; ".join(f"{m}: {METHODS[m][1]}" for m in TOOL_METHODS),
    )
    budget: Literal["instant", "fast", "thorough"] = Field(
        default="fast",
        description="auto only: instant (cited sentences from the documents, no LLM call, fastest), fast (those "
                    "plus one model call) or thorough (fast, and an ambiguous question's readings judged by the "
                    "model: about 7 calls)",
    )
    ask_back: bool = Field(
        default=False,
        description="true: when the question has several supported meanings, return them as options "
                    "(status needs_clarification) so you can ask the user which one they mean",
    )


def compact_result(result: dict) -> dict:
    """The answer object cut down to what an LLM needs: no passage texts, no usage."""
    cited = set(result["cited"])  # what the answer and the interpretations cite, numbered as in `passages`
    sources = [{"n": n, "id": p["id"], "title": p["title"], "citation": citation(p), **location(p)}
               for n, p in enumerate(result["passages"], 1) if p["id"] in cited]
    interpretations = [{key: item[key] for key in ("question", "answer", "citations")}
                       for item in result["interpretations"]]
    return {"status": "answered", "answer": result["answer"], "interpretations": interpretations, "sources": sources}


def make_ask_tool(
    context: Context | dict[str, Any] | None = None, *, name: str = "ask_documents",
    min_options: int = 2, max_options: int = MAX_OPTIONS,
) -> BaseTool:
    """A tool answering with any registered method; `context` holds the shared settings
    (model, index_dir, k, ...) and is resolved per call, so nothing is built here."""

    @tool(name, args_schema=AskDocuments, description=DESCRIPTION)
    def ask_documents(question: str, method: str = "auto", budget: str = "fast", ask_back: bool = False) -> dict:
        from agent.app.api import ask
        from agent.app.settings import method_context

        try:  # the shared settings apply where the method has them; its own defaults cover the rest
            settings = dict(context.explicit if isinstance(context, Context) else context or {})
            if method == "auto":
                settings["budget"] = budget
            run_context = method_context(method, settings, strict=False)
            result = ask(question, method, run_context)
        except DisambigError as error:
            return {"status": "error", "error": str(error)}
        if not ask_back:
            return compact_result(result)
        # the chat's options: one per sense, named, with its cited passage (agent/steps/clarify.py)
        options, _ = result_options(result, max_options, run_context, SENSE_MERGE)
        if needs_clarification(options, min_options):
            return {"status": "needs_clarification", "question": question, "prompt": PROMPT,
                    "options": [{key: option[key] for key in ("option", "label", "question", "answer", "source")}
                                for option in options],
                    "reply_with": "an option number, 0 for all of them, or 'none of these' and what the user meant"}
        return compact_result(result)

    return ask_documents


ask_documents = make_ask_tool()  # default settings (environment): `from agent.app.tools import ask_documents`
