"""`disambig mcp --http`: the MCP server over streamable HTTP, behind the server's API keys.

Over HTTP anyone who reaches the port could read the index and spend the model, so every
request needs one of the keys `disambig serve --backend postgres` takes (DISAMBIG_API_KEYS /
DISAMBIG_API_KEYS_FILE, sent as `Authorization: Bearer KEY` or `X-Api-Key: KEY`); without a
configured key the server does not start. Keys are compared as digests, never logged.
"""

from __future__ import annotations

import json
import os

from agent.errors import InputError

UNAUTHORIZED = json.dumps({"jsonrpc": "2.0", "id": None,
                           "error": {"code": -32001, "message": "missing or unknown API key"}}).encode()


def configured_keys(environ=os.environ) -> dict[bytes, str]:
    """The server's keys, or an InputError saying how to configure one (HTTP never runs open)."""
    from agent.app.api_keys import KeyConfigError, load_keys

    try:
        return load_keys(environ)
    except KeyConfigError as error:
        raise InputError(f"{error} (--http serves only clients with a key)") from None


class RequireKey:
    """ASGI middleware: 401 for any HTTP request without a known key; the user rides along in the scope."""

    def __init__(self, app, keys: dict[bytes, str]):
        self.app, self.keys = app, keys

    async def __call__(self, scope, receive, send):
        from agent.app.api_keys import presented_key, user_for

        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        user = user_for(presented_key(dict(scope.get("headers") or [])), self.keys)
        if user is None:
            await send({"type": "http.response.start", "status": 401,
                        "headers": [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer")]})
            await send({"type": "http.response.body", "body": UNAUTHORIZED})
            return
        scope.setdefault("state", {})["user"] = user
        return await self.app(scope, receive, send)


def http_app(server, keys: dict[bytes, str]):
    """The server's streamable HTTP app (path /mcp), keys required."""
    return RequireKey(server.streamable_http_app(), keys)


class ClientGone:
    """Drops the SDK's traceback for a client that closed its notification stream: an
    ordinary disconnect, not a server fault (every other record passes)."""

    def filter(self, record) -> bool:
        from anyio import ClosedResourceError

        error = record.exc_info[1] if record.exc_info else None
        return not (record.getMessage() == "Error in standalone SSE writer" and isinstance(error, ClosedResourceError))


def run_http(server, host: str, port: int, keys: dict[bytes, str]) -> None:
    import logging

    import uvicorn

    logging.getLogger("mcp.server.streamable_http").addFilter(ClientGone())
    uvicorn.run(http_app(server, keys), host=host, port=port, log_level="warning", lifespan="on")
