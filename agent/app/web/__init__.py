"""The chat page `disambig serve` shows at `/`: static HTML and plain JS, no build step.

This Starlette app is mounted into the LangGraph server through `http.app` in the server
config, so the page and the API share one process and one origin: the page's script talks
to the standard LangGraph API (/threads, /threads/{id}/runs/stream, /threads/search) like any
other client. Our own routes are the list of methods the chat graph can answer with, read from
the registry so new methods (and a new default) appear without a page change, and what the
index holds with a few example questions, shown in an empty thread.
"""

from __future__ import annotations

import contextlib
from dataclasses import fields
from pathlib import Path

from starlette.applications import Starlette
from starlette.responses import FileResponse, JSONResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

STATIC = Path(__file__).resolve().parent / "static"


def chat_methods() -> dict:
    """The methods the chat graph accepts, each with its summary, and the chat's default one."""
    from graphs.registry import METHODS
    from graphs.chat import ANSWERING_METHODS, ChatContext

    default = next(f.default for f in fields(ChatContext) if f.name == "downstream")
    return {"default": default,
            "methods": [{"name": name, "summary": METHODS[name][1]} for name in ANSWERING_METHODS]}


METHOD_LIST = chat_methods()  # computed once at start-up: no module imports inside the event loop


async def page(request):
    return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-cache"})


async def methods(request):
    return JSONResponse(METHOD_LIST)


async def index(request):
    """What the index holds and example questions, for an empty thread (agent/app/index_overview.py)."""
    from starlette.concurrency import run_in_threadpool

    from agent.app.index_overview import index_overview

    try:
        return JSONResponse(await run_in_threadpool(index_overview))
    except Exception as error:  # an empty or missing index: the page says so instead of examples
        return JSONResponse({"error": str(error).splitlines()[0] if str(error) else type(error).__name__})


@contextlib.asynccontextmanager
async def warm_start(app):
    """At server start, load the encoder, the index and the local model in the background, so
    the first question finds them warm like every later one (agent/app/warm.py), and let the
    server's workers pick up a new run within 50 ms (agent/app/run_pickup.py)."""
    from agent.app.run_pickup import quicker_run_pickup
    from agent.app.warm import warm_in_background

    quicker_run_pickup()
    warm_in_background()
    yield


app = Starlette(lifespan=warm_start, routes=[
    Route("/", page, methods=["GET"]),
    Route("/ui/methods", methods, methods=["GET"]),
    Route("/ui/index", index, methods=["GET"]),
    Mount("/ui/static", StaticFiles(directory=STATIC), name="static"),
])
