"""A chat thread in Python: send messages, answer clarification questions, keep the history.

    with open_checkpointer("chat.sqlite") as saver:
        session = ChatSession(saver, "my-thread", {"model": "local"})
        for event in session.send("What is HP?"):
            ...  # {"event": "stage"|"token"|..., ...}, then "clarification" or "result"
        for event in session.choose(1):
            ...

The thread lives in the checkpointer (SQLite for `disambig chat` by default, PostgreSQL when a
database URL is given or DISAMBIG_DATABASE_URL is set), so a session opened later on the same
thread id, on this machine or another one sharing the database, sees the history and any question
still waiting for a reply.
"""

from __future__ import annotations

import os
import sqlite3
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from langgraph.types import Command

from agent.app.api import RECURSION_LIMIT, to_result
from agent.context import APP_NAME, make_context
from agent.errors import DisambigError, InputError, validate_question
from agent.llm.models import check_model_setting


def default_db_path() -> Path:
    """Chat threads live in the per-user data directory unless `--db` says otherwise."""
    from platformdirs import user_data_dir

    return Path(user_data_dir(APP_NAME)) / "chat.sqlite"


DATABASE_URL_ENV = "DISAMBIG_DATABASE_URL"


def database_url(explicit: str | None = None) -> str | None:
    """The PostgreSQL URL for threads: the flag, else $DISAMBIG_DATABASE_URL, else None (SQLite)."""
    return explicit or os.environ.get(DATABASE_URL_ENV) or None


def database_host(url: str) -> str:
    """A database URL as it may be shown: what follows the credentials, never the password."""
    return url.split("@")[-1]


def check_database_url(url: str) -> None:
    if not url.startswith(("postgresql://", "postgres://")):
        raise InputError("the database URL must start with postgresql:// (e.g. postgresql://user:pass@host:5432/db)")


def unreachable(url: str, error: Exception) -> DisambigError:
    """The error for a PostgreSQL server that refused or timed out: its host and the driver's first line."""
    return DisambigError(f"cannot connect to PostgreSQL at {database_host(url)}: {str(error).strip().splitlines()[0]}")


@contextmanager
def open_checkpointer(path: str | Path | None = None, database_url: str | None = None):
    """A PostgresSaver on `database_url` when one is given, else a SqliteSaver on `path` (created
    with its parent directory); closed on exit."""
    if database_url:
        with _postgres_checkpointer(database_url) as saver:
            yield saver
        return
    from langgraph.checkpoint.sqlite import SqliteSaver

    path = Path(path) if path else default_db_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(str(path), check_same_thread=False)
    try:
        saver = SqliteSaver(connection)
        saver.setup()
        yield saver
    finally:
        connection.close()


@contextmanager
def _postgres_checkpointer(url: str):
    """A PostgresSaver on one connection; `.setup()` creates or migrates its tables (idempotent).

    The saver commits each write itself, so the connection is autocommit, and it reads rows as
    dicts (dict_row), as langgraph-checkpoint-postgres requires of connections made by hand."""
    try:
        import psycopg
        from langgraph.checkpoint.postgres import PostgresSaver
        from psycopg.rows import dict_row
    except ImportError as error:
        raise DisambigError("a PostgreSQL database needs: pip install 'disambig[postgres]'") from error
    check_database_url(url)
    try:
        connection = psycopg.connect(url, autocommit=True, row_factory=dict_row, prepare_threshold=0)
    except psycopg.OperationalError as error:
        raise unreachable(url, error) from error
    try:
        saver = PostgresSaver(connection)
        saver.setup()
        yield saver
    finally:
        connection.close()


def chat_context(settings: dict[str, Any] | None = None):
    """A ChatContext from overrides, with the model setting checked before any work."""
    from graphs.chat import ChatContext

    context = make_context(ChatContext, settings)  # an unknown `downstream` fails here, naming the choices
    check_model_setting(context.model)
    return context


def parse_chat_settings(pairs: list[str]) -> dict[str, Any]:
    """`NAME=VALUE` pairs of chat settings (clarify_policy=..., downstream=...), cast to their types."""
    from agent.app.settings import parse_settings
    from graphs.chat import ChatContext

    return parse_settings(pairs, ChatContext)


def detector_event(update: dict) -> dict:
    """The rewrite gate's verdict, from the update of its `classify_ambiguity` node."""
    decision = update.get("decision")
    decision = getattr(decision, "value", decision) or {}  # the turn's first node overwrites `decision`
    return {"event": "ambiguity", "label": decision.get("ambiguity"), "rewrite": bool(decision.get("needs_rewrite")),
            "skipped": decision.get("rewrite_skipped"), "product": decision.get("product"),
            "named_product": decision.get("rewrite_source") == "product"}


class ChatSession:
    """One thread of the chat graph: each call streams events for one turn or one reply."""

    def __init__(self, checkpointer, thread_id: str, context=None):
        from graphs.chat import ChatContext, builder

        self.context = context if isinstance(context, ChatContext) else chat_context(context)
        self.graph = builder.compile(checkpointer=checkpointer, name="chat")
        self.config = {"configurable": {"thread_id": thread_id}, "recursion_limit": RECURSION_LIMIT}

    def messages(self) -> list:
        """The conversation so far (user messages and final answers)."""
        return list(self.graph.get_state(self.config).values.get("messages") or [])

    def pending(self) -> dict | None:
        """The clarification request this thread is waiting on, if any."""
        for interrupt in self.graph.get_state(self.config).interrupts:
            return interrupt.value
        return None

    def send(self, text: str) -> Iterator[dict]:
        """Stream one user turn."""
        return self._run({"question": validate_question(text)})

    def choose(self, choice: Any) -> Iterator[dict]:
        """Answer the waiting clarification request (option number, question text, or "all")."""
        if self.pending() is None:
            raise InputError("no clarification question is waiting on this thread")
        return self._run(Command(resume=choice))

    def _run(self, payload) -> Iterator[dict]:
        """Custom events as they come (plus {"event": "ambiguity"} from the rewrite gate); then
        {"event": "clarification", ...request} when the graph paused, else {"event": "result"}."""
        request = None
        for mode, chunk in self.graph.stream(payload, self.config, context=self.context,
                                             stream_mode=["custom", "updates"]):
            if mode == "custom":
                yield chunk
            elif "__interrupt__" in chunk:
                request = chunk["__interrupt__"][0].value
            elif "classify_ambiguity" in chunk:
                yield detector_event(chunk["classify_ambiguity"])
        if request is not None:
            yield {"event": "clarification", **request}
        else:
            yield {"event": "result", "result": to_result(self.graph.get_state(self.config).values, "chat")}
