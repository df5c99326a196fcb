"""`disambig serve --backend postgres`: our graphs on Aegra, a self-hosted Agent Protocol server on PostgreSQL.

We write no server, queue or database: Aegra (`aegra-api`, the `server` extra) serves the same
HTTP API as the LangGraph server (assistants, threads, streaming runs, interrupts; langgraph-sdk
works against it) and keeps threads, runs, checkpoints and interrupts in PostgreSQL, so several
replicas on one database serve the same threads. This module generates its config (every graph by
file path, our API-key handler `agent.app.server_auth:auth`, the thread-owner check
`agent.app.server_guard:app` on Aegra's `http.app` hook), applies its database migrations and default
assistants once under a PostgreSQL advisory lock (replicas starting together must not race), then replaces itself
with uvicorn running Aegra. docs/explanation/why-aegra.md says why Aegra and not the LangGraph server.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import time
from pathlib import Path

from agent.app.conversation import check_database_url, database_host, database_url, unreachable
from agent.app.launch import launch
from agent.errors import InputError

AUTH_PATH = "agent.app.server_auth:auth"
GUARD_APP = "agent.app.server_guard:app"  # runs only on one's own threads (a gap in Aegra 0.6)
MIGRATION_LOCK = 0x64697361  # pg_advisory_lock key shared by every replica ("disa")
# Aegra's own settings (read from the environment); ours only where Aegra's defaults are too small
# for a replica serving tens of concurrent threads. An explicit value in the environment wins.
AEGRA_DEFAULTS = {"ENV_MODE": "PRODUCTION", "LOG_LEVEL": "WARNING",
                  "SQLALCHEMY_POOL_SIZE": "10", "SQLALCHEMY_MAX_OVERFLOW": "10",
                  "LANGGRAPH_MIN_POOL_SIZE": "2", "LANGGRAPH_MAX_POOL_SIZE": "20"}
QUIET_ENV = {"LANGGRAPH_CLI_NO_ANALYTICS": "1", "LANGGRAPH_NO_VERSION_CHECK": "1", "ANONYMIZED_TELEMETRY": "False",
             "OTEL_SDK_DISABLED": "true", "AUTH_TYPE": "custom"}


def graph_files() -> dict[str, str]:
    """Every registered method graph and the chat graph, as Aegra wants them ("/abs/file.py:name"),
    through agent/app/server_graphs.py, which imports them by module name."""
    from graphs.registry import METHODS

    entry = importlib.util.find_spec("agent.app.server_graphs").origin
    return {name: f"{entry}:{name}" for name in [*METHODS, "chat"]}


def aegra_config() -> dict:
    return {"graphs": graph_files(), "auth": {"path": AUTH_PATH}, "http": {"app": GUARD_APP}}


def server_environment(url: str, config_path: Path, environ=os.environ) -> dict:
    env = {**AEGRA_DEFAULTS, **environ, **QUIET_ENV, "DATABASE_URL": url, "AEGRA_CONFIG": str(config_path)}
    env.setdefault("LANGSMITH_TRACING", "false")
    return env


def check_auth(environ) -> None:
    """Refuse to start an open server: Aegra would fall back to anonymous access if our handler failed to load."""
    from agent.app.api_keys import KeyConfigError, load_keys

    try:
        load_keys(environ)
    except KeyConfigError as error:
        raise InputError(f"the production server needs API keys: {error}") from None


def prepare_database(env: dict) -> None:
    """Aegra's migrations and its default assistant per graph, once: Aegra does both at start-up without a
    lock, so replicas starting together collide (duplicate assistant rows). Here they wait on one advisory
    lock; each later replica finds everything in place."""
    import asyncio

    import psycopg

    os.environ.update({k: env[k] for k in ("DATABASE_URL", "AEGRA_CONFIG")})
    from aegra_api.core.database import db_manager
    from aegra_api.core.migrations import run_migrations
    from aegra_api.services.langgraph_service import get_langgraph_service

    async def create_assistants():
        await db_manager.initialize()
        try:
            await get_langgraph_service().initialize()  # registers graphs lazily and inserts missing assistants
        finally:
            await db_manager.close()

    try:
        with psycopg.connect(env["DATABASE_URL"], autocommit=True) as connection:
            # poll, not a blocking pg_advisory_lock: a waiting statement holds a snapshot, and the
            # checkpointer's CREATE INDEX CONCURRENTLY in the lock holder would wait for it forever
            while not connection.execute("SELECT pg_try_advisory_lock(%s)", (MIGRATION_LOCK,)).fetchone()[0]:
                time.sleep(0.5)
            run_migrations()
            asyncio.run(create_assistants())
    except psycopg.OperationalError as error:
        raise unreachable(env["DATABASE_URL"], error) from None


def server_command(host: str, port: int) -> list[str]:
    return [sys.executable, "-m", "uvicorn", "aegra_api.main:app", "--host", host, "--port", str(port),
            "--no-access-log", "--timeout-graceful-shutdown", "10"]


def serve_production(args, state_dir: Path) -> int:
    """Write the Aegra config, migrate the database, then exec the server (this process becomes it)."""
    url = database_url(getattr(args, "database_url", None))
    if not url:
        raise InputError("--backend postgres needs --database-url or DISAMBIG_DATABASE_URL (postgresql://...)")
    check_database_url(url)
    config_path = state_dir / "aegra.json"

    def environment() -> dict:
        env = server_environment(url, config_path)
        prepare_database(env)
        return env

    return launch(
        args, config=aegra_config(), config_path=config_path, command=server_command(args.host, args.port),
        package="aegra_api", missing="--backend postgres needs the Aegra server: pip install 'disambig[server]'",
        environment=environment, check=lambda: check_auth(os.environ),
        banner=[(f"disambig serve (production, Aegra on PostgreSQL {database_host(url)}): http://{args.host}:{args.port} "
                f"(graphs: {', '.join(aegra_config()['graphs'])}); API-key authentication on every request; "
                f"Ctrl-C stops")])
