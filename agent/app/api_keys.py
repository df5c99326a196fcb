"""The server's API keys: where they are configured, how a request presents one, whose it is.

Keys come from DISAMBIG_API_KEYS ("alice:KEY,bob:KEY") and/or the file named by
DISAMBIG_API_KEYS_FILE (one "user:KEY" a line, # comments allowed). Clients send
`Authorization: Bearer KEY` or `X-Api-Key: KEY`. Only SHA-256 digests of the keys stay in
memory, comparisons are constant-time, and no key is ever put in an error message. Both servers
use these: the LangGraph/Aegra server (agent/app/server_auth.py) and `disambig mcp --http`.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from pathlib import Path

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
