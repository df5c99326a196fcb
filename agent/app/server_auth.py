"""API keys for the production server, as a LangGraph custom auth handler (`langgraph_sdk.Auth`).

The server (Aegra, or the LangGraph server) loads `auth` from this module and calls the
authenticate handler on every request except its health checks: a request without a known
key gets 401 before it reaches any thread. Keys come from DISAMBIG_API_KEYS
("alice:KEY,bob:KEY") and/or the file named by DISAMBIG_API_KEYS_FILE (one "user:KEY" a line,
# comments allowed). Clients send `Authorization: Bearer KEY` (what langgraph-sdk sends for
`headers={"Authorization": ...}`) or `X-Api-Key: KEY` (what it sends for `api_key=`).

Only SHA-256 digests of the keys stay in memory, comparisons are constant-time, and no key or
header is ever logged or put in an error message. The user name a key maps to is the identity
the server stores as each thread's owner; Aegra scopes every thread, run and state query to it.
"""

from __future__ import annotations

from langgraph_sdk import Auth

from agent.app.api_keys import KEYS_ENV, KEYS_FILE_ENV, KeyConfigError, load_keys, parse_keys, presented_key, user_for

__all__ = ["KEYS_ENV", "KEYS_FILE_ENV", "KeyConfigError", "auth", "load_keys", "parse_keys", "presented_key", "user_for"]

auth = Auth()
_KEYS = load_keys()  # fails the server's start-up when no key is configured


@auth.authenticate
async def authenticate(headers: dict) -> Auth.types.MinimalUserDict:
    user = user_for(presented_key(headers), _KEYS)
    if user is None:
        raise Auth.exceptions.HTTPException(status_code=401, detail="missing or unknown API key")
    return {"identity": user, "display_name": user, "is_authenticated": True}


@auth.on.threads
async def owner_only(ctx: Auth.types.AuthContext, value: dict):
    """Threads (and their runs) are tagged with their creator and filtered by it: on the LangGraph
    server this is what scopes threads to their owner; Aegra also scopes them itself by user id."""
    if isinstance(value, dict) and isinstance(value.get("metadata"), dict):
        value["metadata"]["owner"] = ctx.user.identity
    return {"owner": ctx.user.identity}
