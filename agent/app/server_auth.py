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

import hashlib
import hmac
import os
from pathlib import Path

from langgraph_sdk import Auth

KEYS_ENV = "DISAMBIG_API_KEYS"
KEYS_FILE_ENV = "DISAMBIG_API_KEYS_FILE"
MIN_KEY_LENGTH = 16


class KeyConfigError(ValueError):
    """The configured keys are missing or malformed (the message never contains a key)."""


def _digest(key: str) -> bytes:
    return hashlib.sha256(key.encode()).digest()


def parse_keys(text: str, source: str) -> dict[bytes, str]:
    """{sha256(key): user} from "user:KEY" entries separated by commas or newlines."""
    keys: dict[bytes, str] = {}
    entries = [e.strip() for line in text.splitlines() for e in line.split("#", 1)[0].split(",")]
    for number, entry in enumerate((e for e in entries if e), 1):
        user, sep, key = entry.partition(":")
        if not sep or not user.strip() or not key.strip():
            raise KeyConfigError(f"{source}: entry {number} is not user:KEY")
        if len(key.strip()) < MIN_KEY_LENGTH:
            raise KeyConfigError(f"{source}: the key of user {user.strip()!r} is shorter than {MIN_KEY_LENGTH} characters")
        keys[_digest(key.strip())] = user.strip()
    return keys


def load_keys(environ=os.environ) -> dict[bytes, str]:
    """Every configured key; raises KeyConfigError when there is none (the server must not run open)."""
    keys = parse_keys(environ.get(KEYS_ENV, ""), KEYS_ENV)
    if path := environ.get(KEYS_FILE_ENV):
        try:
            keys.update(parse_keys(Path(path).read_text(), path))
        except OSError as error:
            raise KeyConfigError(f"{KEYS_FILE_ENV}: cannot read {path}: {error.strerror}") from None
    if not keys:
        raise KeyConfigError(f"no API keys configured: set {KEYS_ENV}=user:KEY,... or {KEYS_FILE_ENV}=FILE")
    return keys


def presented_key(headers: dict) -> str | None:
    """The key in `Authorization: Bearer KEY` or `X-Api-Key: KEY` (header names in any case, str or bytes)."""
    found = {(k.decode() if isinstance(k, bytes) else k).lower(): (v.decode() if isinstance(v, bytes) else v)
             for k, v in (headers or {}).items()}
    scheme, _, token = (found.get("authorization") or "").partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        return token.strip()
    return (found.get("x-api-key") or "").strip() or None


def user_for(key: str | None, keys: dict[bytes, str]) -> str | None:
    if not key:
        return None
    digest = _digest(key)
    match = None
    for known, user in keys.items():  # compare against every key: no early exit to time
        if hmac.compare_digest(digest, known):
            match = user
    return match


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
