"""Connections of the PostgreSQL index: the primary for writes, read replicas for searches.

Every read runs as one REPEATABLE READ, READ ONLY transaction, so a search sees one committed
version of the whole index (passages, vectors, postings, statistics). Reads go to the replicas
in turn; a replica that refuses or drops a connection (killed, restarting, cancelled by WAL
replay) is skipped for a while and the same read runs again on the next one, the primary last,
so a dead replica costs a retry, never a failed request. One connection per thread and server.
A read may hand a part of its work to a second connection on the same server (`beside`), so a
hybrid search's dense and sparse halves run on two cores at once.
"""

from __future__ import annotations

import struct
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Callable, TypeVar

import numpy as np

from agent.errors import DisambigError, InputError

T = TypeVar("T")
RETRY_AFTER = 5.0  # seconds a failed replica is left alone before it is tried again
CONNECT_TIMEOUT = 3
HELPERS = 8  # threads (each with its connections) that run the parts handed off by `beside`


class Vector:
    """A float32 vector sent in pgvector's binary format (no text formatting of 384 floats)."""

    __slots__ = ("values",)

    def __init__(self, values):
        self.values = np.asarray(values, dtype=">f4")


def _register_vector(connection) -> None:
    from psycopg.adapt import Dumper
    from psycopg.pq import Format

    row = connection.execute("SELECT oid FROM pg_type WHERE typname = 'vector'").fetchone()
    if row is None:
        return  # the extension is not created yet: the schema step creates it, then reconnects

    class VectorDumper(Dumper):
        format = Format.BINARY
        oid = row[0]

        def dump(self, obj: Vector) -> bytes:
            return struct.pack(">HH", len(obj.values), 0) + obj.values.tobytes()

    connection.adapters.register_dumper(Vector, VectorDumper)


def parse_vector(text: str) -> np.ndarray:
    """pgvector's text form '[0.1,0.2,...]' as float32."""
    return np.array(text[1:-1].split(","), dtype=np.float32)


def database_host(url: str) -> str:
    """A database URL as it may be shown: what follows the credentials, never the password."""
    return url.split("@")[-1]


def check_database_url(url: str) -> None:
    if not url.startswith(("postgresql://", "postgres://")):
        raise InputError(f"the index database URL must start with postgresql:// (got {url.split('://')[0]}://...)"
                         if "://" in url else "the index database URL must start with postgresql://")


def redact(url: str) -> str:
    """The URL without its password: what the product prints and hashes."""
    return f"postgresql://{database_host(url)}"


class Connections:
    """The primary and the read replicas of one index database."""

    def __init__(self, url: str, read_urls: list[str] | None = None):
        for each in [url, *(read_urls or [])]:
            check_database_url(each)
        self.url = url
        self.read_urls = list(read_urls or [])
        self._local = threading.local()
        self._down: dict[str, float] = {}
        self._turn = 0
        self._lock = threading.Lock()
        self._helpers: ThreadPoolExecutor | None = None
        self.reads: dict[str, int] = {}  # served reads per server (host:port/db), for tests and benches

    def _connection(self, url: str, read_only: bool):
        import psycopg

        pool = self._local.__dict__.setdefault("connections", {})
        connection = pool.get((url, read_only))
        if connection is None or connection.closed:
            try:
                connection = psycopg.connect(url, autocommit=True, connect_timeout=CONNECT_TIMEOUT)
            except psycopg.OperationalError as error:
                raise Unreachable(url, error) from None
            if read_only:
                connection.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
                connection.read_only = True
            _register_vector(connection)
            pool[(url, read_only)] = connection
        return connection

    def primary(self):
        """This thread's connection to the primary (autocommit; `with conn.transaction():`)."""
        return self._connection(self.url, read_only=False)

    def reset(self) -> None:
        """Close this thread's connections (after the schema changed types they cache)."""
        for connection in self._local.__dict__.pop("connections", {}).values():
            connection.close()

    def _order(self) -> list[str]:
        now = time.monotonic()
        with self._lock:
            replicas = [u for u in self.read_urls if self._down.get(u, 0) <= now]
            self._turn += 1
            if replicas:
                shift = self._turn % len(replicas)
                replicas = replicas[shift:] + replicas[:shift]
        return [*replicas, self.url]

    def read(self, work: Callable[[object], T], primary: bool = False) -> T:
        """Run `work(cursor)` in one snapshot transaction on a replica, else (or when `primary`)
        on the primary."""
        import psycopg

        last: Exception | None = None
        for url in ([self.url] if primary else self._order()):
            try:
                self._local.reading = url
                connection = self._connection(url, read_only=True)
                with connection.transaction(), connection.cursor() as cursor:
                    result = work(cursor)
            except (Unreachable, psycopg.OperationalError) as error:
                last = error
                self._drop(url)
                if url != self.url:
                    with self._lock:
                        self._down[url] = time.monotonic() + RETRY_AFTER
                continue
            key = database_host(url)
            self.reads[key] = self.reads.get(key, 0) + 1
            return result
        raise last if isinstance(last, Unreachable) else Unreachable(self.url, last)

    def beside(self, work: Callable[[object], T]) -> Future:
        """From inside `read`: run `work(cursor)` in a helper thread, in its own snapshot
        transaction on the server this thread reads from. That snapshot may be newer than the
        reader's (a write can land between the two): the caller compares versions. A failure
        comes back through the future; the caller then does the work itself."""
        url = self._local.reading
        with self._lock:
            if self._helpers is None:
                self._helpers = ThreadPoolExecutor(HELPERS, thread_name_prefix="disambig-pg-read")

        def run():
            try:
                connection = self._connection(url, read_only=True)
                with connection.transaction(), connection.cursor() as cursor:
                    return work(cursor)
            except Exception:
                self._drop(url)  # a broken connection is not kept for the next part
                raise

        return self._helpers.submit(run)

    def _drop(self, url: str) -> None:
        dropped = self._local.__dict__.get("connections", {}).pop((url, True), None)
        if dropped is not None:
            dropped.close()


class Unreachable(DisambigError):
    def __init__(self, url: str, error: Exception | None):
        detail = str(error).strip().splitlines()[0] if error and str(error).strip() else "connection failed"
        super().__init__(f"cannot connect to PostgreSQL at {database_host(url)}: {detail}")
