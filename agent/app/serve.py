"""`disambig serve`: every method graph and the chat graph behind the LangGraph server API.

We do not write our own server: `langgraph dev` (the in-memory LangGraph server from
`langgraph-cli[inmem]`, the `serve` extra) already gives threads, streaming runs (SSE),
interrupts and resumes, and LangGraph Studio. This command writes a server config naming
the graphs by module (so it works from an installed package, not only from a checkout),
then replaces itself with `langgraph dev` bound to 127.0.0.1 unless told otherwise, with
analytics, the version check and LangSmith tracing off.

The chat page (agent/app/web/) rides along through the server's own custom-route hook
(`http.app`), so `/` serves the page from the same process. The in-memory server keeps its
threads in `.langgraph_api/` under its working directory, flushed every few seconds and at
shutdown; the working directory is the state dir (per-user by default), so threads outlive a
restart.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from agent.app.launch import launch
from agent.context import APP_NAME

PAGE_APP = "agent.app.web:app"  # the chat page, mounted into the LangGraph server
QUIET_ENV = {"LANGGRAPH_CLI_NO_ANALYTICS": "1", "LANGGRAPH_NO_VERSION_CHECK": "1", "ANONYMIZED_TELEMETRY": "False"}


def server_config() -> dict:
    """A langgraph.json for the registered methods plus the chat graph."""
    from graphs.registry import METHODS

    graphs = {name: f"{module}:graph" for name, (module, _) in METHODS.items()}
    graphs["chat"] = "graphs.chat:graph"
    return {"dependencies": ["."], "graphs": graphs, "http": {"app": PAGE_APP}, "env": {}}


def default_state_dir() -> Path:
    """Where the server keeps its config and its in-memory store's snapshots."""
    from platformdirs import user_data_dir

    return Path(user_data_dir(APP_NAME)) / "server"


def server_command(config_path: Path, host: str, port: int, browser: bool) -> list[str]:
    command = [sys.executable, "-m", "langgraph_cli", "dev", "--config", str(config_path),
               "--host", host, "--port", str(port), "--no-reload"]
    return command if browser else [*command, "--no-browser"]


def serve_command(args) -> int:
    """Write the config, then exec the LangGraph server (this process becomes the server)."""
    state_dir = Path(args.state_dir) if args.state_dir else default_state_dir()
    if (getattr(args, "backend", None) or os.environ.get("DISAMBIG_SERVE_BACKEND") or "dev") == "postgres":
        from agent.app.deploy import serve_production  # production: Aegra on PostgreSQL, API keys

        return serve_production(args, state_dir)
    own_config = Path(args.config).resolve() if args.config else None
    config_path = own_config or state_dir / "langgraph.json"

    def environment() -> dict:
        env = {**os.environ, **QUIET_ENV}
        env.setdefault("LANGSMITH_TRACING", "false")
        return env

    graphs = ", ".join(server_config()["graphs"])
    return launch(
        args, config=server_config(), config_path=None if own_config else config_path,
        command=server_command(config_path, args.host, args.port, args.studio), package="langgraph_api",
        missing="disambig serve needs the LangGraph server: pip install 'disambig[serve]'", environment=environment,
        banner=[(f"disambig serve: chat page at http://{args.host}:{args.port}/ (graphs: {graphs}); API docs at /docs; "
                f"threads kept in {config_path.parent / '.langgraph_api'}; Ctrl-C stops"),
                (f"disambig serve: development server (langgraph dev, in memory): NO AUTHENTICATION, anyone who can "
                f"reach {args.host}:{args.port} can read and run every thread; it binds to 127.0.0.1 unless --host "
                f"says otherwise. For several users use --backend postgres (docs: how-to/multi-user-deployment.md).")])
