"""Load what a first question needs while the user is still typing it.

A long-running front end (`disambig serve` with its chat page, `disambig chat`) answers many
questions in one process: the encoder, the index and the embedded model server are loaded once
and stay warm (they are cached per process). This starts that loading in the background when
the front end starts, so the first question does not wait for it either. Failures are left to
the first question, which reports them as it always does.
"""

from __future__ import annotations

import threading

from agent.context import Context


def warm_serving(context: Context) -> None:
    """Open the index, load the encoder and start a local model server (when its weights are ready)."""
    from agent.llm.models import warm_up
    from agent.retrieval.retriever import get_retriever

    warm_up(context)  # its own thread: the llama.cpp server loads beside the encoder
    try:
        get_retriever(context).embed_queries(["warm up"])
    except Exception:  # noqa: BLE001 - a missing index or encoder is reported by the first question
        pass


def warm_in_background(context: Context | None = None) -> threading.Thread:
    thread = threading.Thread(target=warm_serving, args=(context or Context(),), name="disambig-warm-up", daemon=True)
    thread.start()
    return thread
