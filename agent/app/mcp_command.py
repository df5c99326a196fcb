"""`disambig mcp`: its flags and the command that starts the MCP server (agent/app/mcp_server.py);
the SDK is imported only when the command runs."""

from __future__ import annotations

import sys

from agent.app.index_flags import index_overrides
from agent.app.settings import parse_settings
from agent.errors import InputError


def add_mcp_parser(commands, with_index) -> None:
    """Register `mcp` on the CLI's subparsers (`with_index` adds the index flags every command takes)."""
    mcp = with_index(commands.add_parser("mcp", help="serve ask, search and documents to agent hosts over MCP "
                                                     "(stdio, or --http with API keys)"))
    mcp.add_argument("--http", action="store_true", help="streamable HTTP on --host/--port (path /mcp) instead of "
                     "stdio; every request needs a key of $DISAMBIG_API_KEYS or $DISAMBIG_API_KEYS_FILE")
    mcp.add_argument("--host", default="127.0.0.1", help="interface to bind with --http (default 127.0.0.1)")
    mcp.add_argument("--port", type=int, default=8765, help="port with --http (default 8765)")
    mcp.add_argument("--allow-ingest", metavar="DIR", help="offer the ingest tool, for paths inside DIR only")
    mcp.add_argument("--no-clarify", action="store_true", help="never ask back; answers state every reading")
    mcp.add_argument("--model", help="local, local-small, gguf:PATH or openai:NAME (default as for ask)")
    mcp.add_argument("--mode", choices=["dense", "sparse", "hybrid"], help="retriever (default hybrid)")
    mcp.add_argument("--k", type=int, help="passages to retrieve")
    mcp.add_argument("--set", action="append", metavar="NAME=VALUE", help="any other setting, as for ask")
    mcp.set_defaults(run=cmd_mcp)


def cmd_mcp(args) -> int:
    """The MCP server: stdio for a local host (as the user who started it), or --http behind API keys."""
    try:
        from agent.app.mcp_server import DisambigMcp, build_server, run_stdio
    except ModuleNotFoundError as error:
        if error.name != "mcp":
            raise
        raise InputError("disambig mcp needs the MCP SDK: pip install 'disambig[mcp]'") from None
    from graphs.registry import load_method

    schema = load_method("auto").builder.context_schema
    settings = {**parse_settings(args.set or [], schema), **index_overrides(args), "model": args.model,
                "retrieval_mode": args.mode, "k": args.k}
    app = DisambigMcp(settings, allow_ingest=args.allow_ingest, clarify=not args.no_clarify)
    app.context()  # a bad setting or model name fails here, before a host connects
    if not args.http:
        run_stdio(build_server(app))
        return 0
    from agent.app.mcp_http import configured_keys, run_http

    keys = configured_keys()
    server = build_server(app, host=args.host, port=args.port)
    print(f"disambig mcp: streamable HTTP on http://{args.host}:{args.port}/mcp ({len(keys)} API keys)", file=sys.stderr)
    run_http(server, args.host, args.port, keys)
    return 0
