"""`disambig mcp`: the index and the methods as Model Context Protocol tools, for agent hosts.

Desktop assistants, IDE agents and LangGraph agents (through `langchain-mcp-adapters`) take
their tools over MCP. The server is the official SDK's FastMCP, over stdio (a local host starts
it as the user) or streamable HTTP (agent/app/mcp_http.py, behind the server's API keys). It
serves the index and model settings `disambig ask` would use, given once at start.

Tools: `ask` (the answer object of `ask --json`, cut to what a host shows), `search`,
`documents` (what `stats` reports) and, only with `--allow-ingest DIR`, `ingest` of paths
inside DIR. Each cited passage is a resource, `passage://ID`. While `ask` runs, its readings go
out as a progress notification the moment they are chosen (before any model call). When the
question has several grounded readings and the host can elicit, the server asks which one is
meant with the readings as options and answers the one chosen, from what was already written
(the chat's `answer_chosen`); declined, cancelled, or a host without elicitation: every reading.
"""


import json
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import unquote

import anyio
from mcp import types
from mcp.server.fastmcp import Context as McpContext, FastMCP
from mcp.server.fastmcp.exceptions import ResourceError, ToolError
from pydantic import Field

from agent.app.mcp_output import (PASSAGE_URI, AskOutput, Passage, SearchOutput, ask_output, passage_uri, where,
                                   readings_message)
from agent.errors import DisambigError, InputError

SERVER_NAME = "disambig"
ALL_READINGS = "All of them"
Budget = Literal["instant", "fast", "thorough"]
INSTRUCTIONS = (
    "Answers questions over the indexed documents. Questions are often ambiguous (one name, several products "
    "or things): `ask` states each reading the documents support with a short answer and the passages it cites; "
    "`search` ranks passages; `documents` says what the index holds. Cited passages are resources passage://ID."
)


class DisambigMcp:
    """The settings one server answers with, and the tools over them."""

    def __init__(self, settings: dict[str, Any] | None = None, allow_ingest: str | None = None,
                 clarify: bool = True):
        self.settings = {name: value for name, value in (settings or {}).items() if value is not None}
        self.allow_ingest = Path(allow_ingest).expanduser().resolve() if allow_ingest else None
        self.clarify = clarify
        if self.allow_ingest is not None and not self.allow_ingest.is_dir():
            raise InputError(f"--allow-ingest: {allow_ingest} is not a directory")

    def context(self, method: str = "auto", budget: str | None = None):
        from agent.app.settings import method_context

        settings = dict(self.settings)
        if method == "auto" and budget:
            settings["budget"] = budget
        return method_context(method, settings, strict=False)

    def run_ask(self, question: str, method: str, budget: str | None, on_readings) -> tuple[dict, Any]:
        """The method's result (as `ask --json` has it), calling `on_readings` for each readings event."""
        from agent.app import api
        from agent.errors import validate_question

        question = validate_question(question)
        context = self.context(method, budget)
        result: dict = {}
        for event in api.stream(question, method, context):
            if event.get("event") == "readings":
                on_readings(event)
            elif event.get("event") == "result":
                result = event["result"]
        return result, context

    def options(self, result: dict, context) -> tuple[list[dict], list[dict]]:
        """(the options to ask with, none when there is nothing to choose; the passages numbering them)."""
        from agent.steps.clarify import MAX_OPTIONS, SENSE_MERGE, needs_clarification, result_options

        options, passages = result_options(result, MAX_OPTIONS, context, SENSE_MERGE)
        return (options if needs_clarification(options) else []), passages

    def search(self, query: str, k: int) -> SearchOutput:
        from agent.retrieval.retriever import get_retriever

        if k < 1:
            raise InputError("k must be at least 1")
        context = self.context()
        passages = get_retriever(context).search(query, context.retrieval_mode, k)
        return SearchOutput(passages=[Passage(id=p["id"], title=p["title"], text=p["text"], score=p.get("score"),
                                              uri=passage_uri(p["id"]), **where(p)) for p in passages])

    def documents(self) -> dict:
        from agent.retrieval.retriever import open_store
        from agent.retrieval.updates import stats

        return stats(open_store(self.context()))

    def passage(self, passage_id: str) -> dict:
        from agent.retrieval.retriever import get_retriever

        found = get_retriever(self.context()).store.get([passage_id]).get(passage_id)
        if found is None:
            raise InputError(f"no passage {passage_id!r} in the index")
        return found

    def allowed_paths(self, paths: list[str]) -> list[str]:
        """Each path resolved inside the allowed folder (links followed), else an InputError naming it."""
        if self.allow_ingest is None:
            raise InputError("ingest is off: start the server with --allow-ingest DIR to allow it")
        if not paths:
            raise InputError("give at least one file or directory to ingest")
        resolved = []
        for given in paths:
            path = Path(given).expanduser()
            path = (path if path.is_absolute() else self.allow_ingest / path).resolve()
            if not path.is_relative_to(self.allow_ingest):
                raise InputError(f"{given}: outside the folder this server may ingest from")
            if not path.exists():
                raise InputError(f"{given}: no such file or directory")
            for inner in path.rglob("*") if path.is_dir() else []:
                if inner.is_symlink() and not inner.resolve().is_relative_to(self.allow_ingest):
                    raise InputError(f"{given}: {inner.relative_to(path)} links outside the folder this server may ingest from")
            resolved.append(str(path))
        return resolved

    def ingest(self, paths: list[str]) -> dict:
        from agent.assembly.manual_units import embed_units_under
        from agent.retrieval.corpus import ReadReport, read_documents
        from agent.retrieval.retriever import open_store
        from agent.retrieval.updates import ingest

        inside = self.allowed_paths(paths)
        report = ReadReport()
        counts = ingest(open_store(self.context(), create=True), read_documents(inside, report),
                        keep=report.problem_files)
        units = embed_units_under(self.context(), inside)  # so the host's first question does not embed them
        return {**counts, "renamed": report.renamed + counts["renamed"], "answer_units": units,
                "skipped": [str(problem) for problem in report.problems], "files": report.files}


async def in_thread(function, *args):
    """Run blocking work off the event loop; a DisambigError becomes an MCP tool error carrying
    the CLI's message (empty question, missing index, unreachable model)."""
    try:
        return await anyio.to_thread.run_sync(function, *args)
    except DisambigError as error:
        raise ToolError(str(error)) from None


def can_elicit(ctx: McpContext) -> bool:
    return ctx.session.check_client_capability(types.ClientCapabilities(elicitation=types.ElicitationCapability()))


async def ask_which(ctx: McpContext, question: str, options: list[dict]) -> dict | None:
    """Elicit the reading the user means; None for all of them (or declined, or cancelled)."""
    from agent.steps.clarify import PROMPT, shortened

    labels = [option["label"] for option in options]
    schema = {"type": "object", "required": ["choice"], "properties": {"choice": {
        "type": "string", "title": PROMPT, "enum": [*labels, ALL_READINGS],
        "enumNames": [f"{label}: {shortened(option['answer'])}" for label, option in zip(labels, options)] + [ALL_READINGS],
        "description": "the reading to answer, or all of them"}}}
    reply = await ctx.session.elicit_form(message=f"{question}\n{PROMPT}", requestedSchema=schema,
                                          related_request_id=ctx.request_id)
    if reply.action != "accept" or not reply.content:
        return None
    choice = str(reply.content.get("choice", ""))
    return next((option for option in options if option["label"] == choice), None)


def chosen_result(result: dict, option: dict) -> dict:
    """The result narrowed to the chosen reading, from what the method already wrote."""
    from agent.llm.answers import cited_passage_ids
    from agent.steps.clarify import chosen_answer

    answer, interpretations = chosen_answer(option, result["answer"], result["interpretations"], result["passages"])
    return {**result, "answer": answer, "interpretations": interpretations,
            "cited": cited_passage_ids(answer, interpretations, result["passages"])}


def build_server(app: DisambigMcp, **fastmcp_settings) -> FastMCP:
    """The FastMCP server with disambig's tools and passage resources."""
    from graphs.registry import METHODS

    methods = tuple(name for name in METHODS if name != "rewrite")  # rewrite needs a conversation
    server = FastMCP(SERVER_NAME, instructions=INSTRUCTIONS, log_level="WARNING", **fastmcp_settings)

    @server.tool(description="Answer a question from the indexed documents: every reading the documents support, "
                             "each with a short answer and its cited passages. Progress notifications carry the "
                             "readings before the answer; an ambiguous question may be asked back (elicitation).")
    async def ask(ctx: McpContext,
                  question: Annotated[str, Field(description="a self-contained question")],
                  method: Annotated[str, Field(description="answering method: " + ", ".join(methods))] = "auto",
                  budget: Annotated[Budget, Field(description="auto only: instant (no model call), fast (one call) "
                                                              "or thorough")] = "fast") -> AskOutput:
        if method not in methods:
            raise ToolError(f"unknown method {method!r}: choose one of {', '.join(methods)}")

        def on_readings(event: dict) -> None:  # in the worker thread: sent now, on the server's loop
            anyio.from_thread.run(ctx.report_progress, 1, 2, readings_message(event))

        result, context = await in_thread(app.run_ask, question, method, budget, on_readings)
        await ctx.report_progress(2, 2, "answer ready")
        options, passages = app.options(result, context) if app.clarify and can_elicit(ctx) else ([], [])
        chosen = await ask_which(ctx, question, options) if options else None
        if chosen is not None:  # an offered product's passage is numbered after the answer's own
            return ask_output(chosen_result({**result, "passages": passages}, chosen), question, method, chosen["label"])
        return ask_output(result, question, method)

    @server.tool(description="Rank passages of the indexed documents for a query (hybrid BM25 + embeddings).")
    async def search(query: Annotated[str, Field(description="what to look for")],
                     k: Annotated[int, Field(description="passages to return")] = 5) -> SearchOutput:
        return await in_thread(app.search, query, k)

    @server.tool(description="What the index holds: documents, passages, size, encoder, last update, consistency.")
    async def documents() -> dict[str, Any]:
        return await in_thread(app.documents)

    if app.allow_ingest is not None:
        @server.tool(description=f"Add or update files and folders (inside {app.allow_ingest.name}/, the folder this "
                                 "server may read) in the index; only changed documents are re-embedded.")
        async def ingest(paths: Annotated[list[str], Field(description="files or folders, relative to the "
                                                                        "allowed folder")]) -> dict[str, Any]:
            return await in_thread(app.ingest, paths)

    @server.resource(PASSAGE_URI, name="passage", mime_type="application/json",
                     description="A passage of the index by its id, with where it stands (document, section, page).")
    async def passage(passage_id: str) -> str:
        try:
            found = await anyio.to_thread.run_sync(app.passage, unquote(passage_id))
        except DisambigError as error:
            raise ResourceError(str(error)) from None
        return json.dumps(found, ensure_ascii=False)

    return server


def run_stdio(server: FastMCP) -> None:
    """Serve one host over stdin/stdout. The protocol keeps the real stdout to itself: anything a
    library prints (a progress bar, a C library's notice) goes to stderr instead of corrupting it."""
    import io
    import os
    import sys

    from mcp.server.stdio import stdio_server

    protocol = io.TextIOWrapper(os.fdopen(os.dup(sys.stdout.fileno()), "wb"), encoding="utf-8")
    sys.stdout.flush()
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr

    async def serve() -> None:
        async with stdio_server(stdout=anyio.wrap_file(protocol)) as (read, write):
            lowlevel = server._mcp_server  # what FastMCP.run("stdio") drives, here over the kept stdout
            await lowlevel.run(read, write, lowlevel.create_initialization_options())

    anyio.run(serve)
