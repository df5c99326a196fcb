"""A throwaway PostgreSQL server for tests (the `postgres` fixture in tests/conftest.py) and benches: Debian's `postgresql` binaries, a temp dir, a free port.

    with PostgresServer() as pg:
        pg.url  # postgresql://postgres@127.0.0.1:PORT/postgres
        pg.create_database("aegra")  # -> its URL

PostgreSQL refuses to run as root, so under root the cluster directory is handed to the `postgres`
system user (created by the Debian package) and the server runs as that user via `runuser`.
It listens on 127.0.0.1 only, trusts loopback connections (no password: a test database) and is
stopped (fast shutdown) and deleted on exit. `make test` installs the package when initdb is missing.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile


def postgres_bin_dir() -> str | None:
    """The newest /usr/lib/postgresql/N/bin holding initdb, else the directory of initdb on PATH."""
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    if candidates:
        return os.path.dirname(candidates[-1])
    found = shutil.which("initdb")
    return os.path.dirname(found) if found else None


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class PostgresServer:
    def __init__(self, startup_seconds: float = 60):
        self.bin = postgres_bin_dir()
        if self.bin is None:
            raise RuntimeError("PostgreSQL server binaries not found: apt-get install -y postgresql (see Makefile)")
        self.port = free_port()
        self.startup_seconds = startup_seconds
        self.root = tempfile.mkdtemp(prefix="disambig-pg-")
        self.data = os.path.join(self.root, "data")
        self.as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _run(self, *command: str) -> None:
        done = subprocess.run([*self.as_user, *command], capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"{command[0]} failed: {done.stderr[-2000:] or done.stdout[-2000:]}")

    def start(self) -> "PostgresServer":
        if self.as_user:
            os.chmod(self.root, 0o755)
            shutil.chown(self.root, "postgres", "postgres")
        self._run(f"{self.bin}/initdb", "-D", self.data, "-U", "postgres", "--auth=trust", "-E", "UTF8",
                  "--no-sync", "--locale=C")
        options = (f"-p {self.port} -h 127.0.0.1 -k {self.root} -c fsync=off -c max_connections=200 "
                   f"-c shared_buffers=32MB")
        self._run(f"{self.bin}/pg_ctl", "-D", self.data, "-l", os.path.join(self.root, "server.log"),
                  "-o", options, "-w", "-t", str(int(self.startup_seconds)), "start")
        return self

    def log(self) -> str:
        try:
            with open(os.path.join(self.root, "server.log")) as handle:
                return handle.read()[-3000:]
        except OSError:
            return ""

    def create_database(self, name: str) -> str:
        """A new empty database; returns its URL."""
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as connection:
            connection.execute(f'CREATE DATABASE "{name}"')
        return self.url.rsplit("/", 1)[0] + f"/{name}"

    def stop(self) -> None:
        if os.path.exists(os.path.join(self.data, "postmaster.pid")):
            subprocess.run([*self.as_user, f"{self.bin}/pg_ctl", "-D", self.data, "-m", "fast", "-w", "stop"],
                           capture_output=True, timeout=120)
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> "PostgresServer":
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc) -> None:
        self.stop()

