"""Runs only on one's own threads: closes a gap in Aegra 0.6, mounted through its own `http.app` hook.

Aegra scopes thread reads, searches, state, history, run listings and deletes to the caller's
identity, but its run-creating routes (`POST /threads/{id}/runs`, `/runs/stream`, `/runs/wait`)
do not check who owns the thread: a second user who knew or guessed a thread id could stream a
run on it (seeing its history) or answer its waiting clarification. Aegra serves its routers on
the FastAPI app named by aegra.json `http.app`; this app carries one ASGI middleware that answers
404, exactly as for a missing thread, when the caller's API key (the same handler and keys as
`server_auth`) names someone other than the thread's owner. Anonymous requests pass through to
Aegra's own authentication, which refuses them. No key is logged.

Two more gaps close here: creating a thread under an id another user's thread holds answers 409
(Aegra answered 500), and a run request on one's own thread first lets this replica take over
runs a dead replica left "running" (agent/app/run_takeover.py).
"""

from __future__ import annotations

import re

from fastapi import FastAPI
from sqlalchemy import text
from starlette.responses import JSONResponse

from agent.app.server_auth import _KEYS, presented_key, user_for

THREAD_ROUTE = re.compile(r"^/threads/([^/]+)/runs(?:/|$)")


async def thread_owner(thread_id: str) -> str | None:
    """The owner recorded by Aegra for a thread, or None when there is no such thread."""
    from aegra_api.core.database import db_manager

    async with db_manager.get_engine().connect() as connection:
        row = await connection.execute(text("SELECT user_id FROM thread WHERE thread_id = :id"), {"id": thread_id})
        found = row.first()
    return found[0] if found else None


class ThreadOwnerGuard:
    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        http = scope["type"] == "http"
        match = THREAD_ROUTE.match(scope.get("path", "")) if http else None
        if match:
            user = user_for(presented_key(dict(scope.get("headers") or [])), _KEYS)
            owner = await thread_owner(match.group(1)) if user else None
            if owner is not None and owner != user:
                response = JSONResponse(status_code=404, content={
                    "error": "not_found", "message": f"Thread '{match.group(1)}' not found", "details": None})
                await response(scope, receive, send)
                return
            if owner is not None and scope.get("method") == "POST":
                from agent.app.run_takeover import take_over

                await take_over(match.group(1))  # runs a dead replica left "running" become interrupted
        elif http and scope.get("method") == "POST" and scope.get("path", "").rstrip("/") == "/threads":
            receive, taken = await _thread_taken(scope, receive)
            if taken:
                response = JSONResponse(status_code=409, content={
                    "error": "conflict", "message": f"Thread id '{taken}' is already in use", "details": None})
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


async def _thread_taken(scope, receive):
    """Creating a thread under an id another user's thread has (Aegra answers that with a 500):
    returns the request body's replay and the id when it is taken by someone else."""
    import json

    chunks, more = [], True
    while more:
        message = await receive()
        chunks.append(message)
        more = message.get("type") == "http.request" and message.get("more_body", False)
    body = b"".join(m.get("body", b"") for m in chunks)
    pending = list(chunks)

    async def replay():
        return pending.pop(0) if pending else await receive()

    try:
        wanted = json.loads(body or b"{}").get("thread_id")
    except (ValueError, AttributeError):
        wanted = None
    user = user_for(presented_key(dict(scope.get("headers") or [])), _KEYS)
    if not wanted or not user or not isinstance(wanted, str):
        return replay, None
    owner = await thread_owner(wanted)
    return replay, (wanted if owner is not None and owner != user else None)


app = FastAPI(title="disambig")
app.add_middleware(ThreadOwnerGuard)
