"""Runs left "running" by a replica that died: the replica that takes the thread over marks them
interrupted.

Aegra records a run's status in PostgreSQL and updates it as the run ends; a replica killed
mid-run never does, so the row stays "running" (and the thread "busy") forever. Each replica
holds a session advisory lock of its own for its lifetime (on a connection of its own, which
goes, with the lock, when the process dies) and records, per thread, which replica last started
a run on it (`disambig_thread_runner`). Before a replica starts a run on a thread whose last runner
was another replica, it tries that replica's lock: if it can take it, that replica is gone, and
the thread's pending and running runs are marked interrupted and the thread idle. A live
replica's runs, streaming or in the background, are never touched: its lock is held (and its
record stays, so two replicas running on one thread at once leave it to the first one's).
"""

from __future__ import annotations

import os
import random
import threading

from sqlalchemy import text

NAMESPACE = 0x6469  # first key of every replica's advisory lock ("di"); the second is the replica's number
REPLICA = random.randint(1, 2**31 - 1)
MESSAGE = "interrupted: the server running it stopped before the run ended"
_held: list = []
_holding = threading.Lock()

SCHEMA = ("CREATE TABLE IF NOT EXISTS disambig_thread_runner (thread_id text PRIMARY KEY, replica integer NOT NULL, "
          "started timestamptz NOT NULL DEFAULT now())")


def hold_replica_lock() -> None:
    """Take this replica's lifetime lock once (a blocking call: run it off the event loop)."""
    import psycopg

    with _holding:
        if _held:
            return
        connection = psycopg.connect(os.environ["DATABASE_URL"], autocommit=True)
        connection.execute("SELECT pg_advisory_lock(%s, %s)", (NAMESPACE, REPLICA))
        _held.append(connection)


async def take_over(thread_id: str) -> int:
    """Mark the thread's runs of a dead replica interrupted and record this replica as its runner;
    returns how many runs were marked."""
    import asyncio

    from aegra_api.core.database import db_manager

    await asyncio.to_thread(hold_replica_lock)
    marked, gone = 0, False
    async with db_manager.get_engine().connect() as connection:
        async with connection.begin():
            await connection.execute(text("SELECT pg_advisory_xact_lock(:a, 0)"), {"a": NAMESPACE})
            await connection.execute(text(SCHEMA))
        runner = (await connection.execute(text("SELECT replica FROM disambig_thread_runner WHERE thread_id = :t"),
                                           {"t": thread_id})).scalar()
        await connection.commit()
        if runner is not None and runner != REPLICA:
            gone = (await connection.execute(text("SELECT pg_try_advisory_lock(:a, :b)"),
                                             {"a": NAMESPACE, "b": runner})).scalar()
            if gone:
                await connection.execute(text("SELECT pg_advisory_unlock(:a, :b)"), {"a": NAMESPACE, "b": runner})
                marked = (await connection.execute(text(
                    "UPDATE runs SET status = 'interrupted', error_message = :m, updated_at = now() "
                    "WHERE thread_id = :t AND status IN ('pending', 'running')"), {"t": thread_id, "m": MESSAGE})).rowcount
                await connection.execute(text("UPDATE thread SET status = 'idle', updated_at = now() "
                                              "WHERE thread_id = :t AND status = 'busy'"), {"t": thread_id})
            await connection.commit()
        if runner is None or gone:  # a live replica's record stays: its runs are still its own
            await connection.execute(text(
                "INSERT INTO disambig_thread_runner (thread_id, replica) VALUES (:t, :r) ON CONFLICT (thread_id) "
                "DO UPDATE SET replica = excluded.replica, started = now()"), {"t": thread_id, "r": REPLICA})
            await connection.commit()
    return marked
