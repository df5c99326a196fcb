"""Which index a command uses: the embedded one in a directory (the default) or PostgreSQL.

`--database-url postgresql://...` (or DISAMBIG_INDEX_URL) keeps the index in PostgreSQL;
`--read-url` (repeatable, or a comma list; DISAMBIG_INDEX_READ_URL) sends searches to read
replicas, the primary answering when none does. On `chat` and `serve`, `--database-url` already
holds the threads; it holds the index too unless an index directory is named (`--index` or
DISAMBIG_INDEX), so one server may keep both and existing thread setups keep their directory.
"""

from __future__ import annotations

import os

from agent.errors import InputError

DATABASE_HELP = "PostgreSQL (pgvector) URL holding the index (default $DISAMBIG_INDEX_URL; empty: the embedded index)"
READ_HELP = "a read replica of the index database for searches (repeatable or comma-separated; the primary is the fallback)"
SHARED_HELP = ("PostgreSQL URL for threads (default $DISAMBIG_DATABASE_URL); it holds the index too unless --index "
               "or $DISAMBIG_INDEX names a directory (the index alone: $DISAMBIG_INDEX_URL)")


def add_index_flags(sub, shared: bool = False) -> None:
    """--database-url (unless the command has its own, shared with threads) and --read-url."""
    if not shared:
        sub.add_argument("--database-url", help=DATABASE_HELP)
    sub.add_argument("--read-url", action="append", metavar="URL", help=READ_HELP)


def index_url_for(args, shared: bool = False) -> str | None:
    """The PostgreSQL URL the flags name for the index ("" forces the embedded one, None: the environment decides)."""
    url = getattr(args, "database_url", None)
    directory = getattr(args, "index", None)
    if shared:
        if directory:
            return ""  # a named directory beats $DISAMBIG_INDEX_URL; the URL keeps the threads
        return url if url and not os.environ.get("DISAMBIG_INDEX") else None
    if url and directory:
        raise InputError("--index names a directory index and --database-url a PostgreSQL one: give one of them")
    return url if url else ("" if directory else None)


def index_overrides(args, shared: bool = False) -> dict:
    """Context overrides for the index flags (None: not given, the environment or default decides)."""
    reads = ",".join(getattr(args, "read_url", None) or []) or None
    return {"index_dir": getattr(args, "index", None), "chroma_url": getattr(args, "chroma_url", None),
            "index_url": index_url_for(args, shared), "read_url": reads}


def index_context(args):
    """The context a command's index flags give (the rest from the environment and defaults)."""
    from agent.context import Context, make_context

    return make_context(Context, index_overrides(args))


def open_index(args, create: bool = False):
    """The index a command's flags name (`create`: an empty one where there is none)."""
    from agent.retrieval.retriever import open_store

    return open_store(index_context(args), create=create)


def export_for_server(args) -> None:
    """`serve`: the server reads its index from the environment, so the flags go there."""
    url = index_url_for(args, shared=True)
    if url:
        os.environ["DISAMBIG_INDEX_URL"] = url
    if getattr(args, "read_url", None):
        os.environ["DISAMBIG_INDEX_READ_URL"] = ",".join(args.read_url)
