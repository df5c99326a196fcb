"""Runs only on one's own threads: closes a gap in Aegra 0.6, mounted through its own `http.app` hook.

Aegra scopes thread reads, searches, state, history, run listings and deletes to the caller's
identity, but its run-creating routes (`POST /threads/{id}/runs`, `/runs/stream`, `/runs/wait`)
do not check who owns the thread: a second user who knew or guessed a thread id could stream a
run on it (seeing its history) or answer its waiting clarification. Aegra serves its routers on
the FastAPI app named by aegra.json `http.app`; this app carries one ASGI middleware that answers
404, exactly as for a missing thread, when the caller's API key (the same handler and keys as
`server_auth`) names someone other than the thread's owner. Anonymous requests pass through to
Aegra's own authentication, which refuses them. No key is logged.
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
        match = THREAD_ROUTE.match(scope.get("path", "")) if scope["type"] == "http" else None
        if match:
            user = user_for(presented_key(dict(scope.get("headers") or [])), _KEYS)
            owner = await thread_owner(match.group(1)) if user else None
            if owner is not None and owner != user:
                response = JSONResponse(status_code=404, content={
                    "error": "not_found", "message": f"Thread '{match.group(1)}' not found", "details": None})
                await response(scope, receive, send)
                return
        await self.app(scope, receive, send)


app = FastAPI(title="disambig")
app.add_middleware(ThreadOwnerGuard)
