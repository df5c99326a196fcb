"""Production server replicas (`disambig serve --backend postgres`) on loopback, for tests and benches.

    replica = Replica(database_url, env).start()   # its own process group, waits for /health
    client = replica.client("alice-key-...")     # httpx.Client with the bearer key
    replica.kill()                                # SIGKILL the whole group (a crash)
    replica.stop()                                # SIGTERM, then SIGKILL if it lingers
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from bench.postgres import free_port

STARTUP_SECONDS = 300  # the CPU is shared; a cold start imports torch, chromadb and every graph


class Replica:
    def __init__(self, database_url: str, env: dict, port: int | None = None, state_dir: str | None = None):
        self.database_url, self.env = database_url, env
        self.port = port or free_port()
        self.owns_state_dir = state_dir is None  # a temp dir of its own goes when it stops
        self.state_dir = state_dir or tempfile.mkdtemp(prefix="disambig-replica-")
        self.log_path = Path(self.state_dir) / "server.log"
        self.base = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen | None = None

    def launch(self) -> "Replica":
        command = [sys.executable, "-m", "agent.app.cli", "serve", "--backend", "postgres", "--database-url",
                   self.database_url, "--port", str(self.port), "--state-dir", self.state_dir]
        self.process = subprocess.Popen(command, env=self.env, stdout=self.log_path.open("w"),
                                        stderr=subprocess.STDOUT, start_new_session=True)
        return self

    def wait_ready(self) -> "Replica":
        try:
            wait_ready(self.process, f"{self.base}/health", self.log_path)
        except RuntimeError:
            self.stop()
            raise
        return self

    def start(self) -> "Replica":
        return self.launch().wait_ready()

    def log(self) -> str:
        return log_tail(self.log_path)

    def client(self, key: str | None, timeout: float = 120) -> httpx.Client:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        return httpx.Client(base_url=self.base, headers=headers, timeout=timeout)

    def kill(self) -> None:
        """A crash: SIGKILL to the whole process group, no shutdown handlers run."""
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=30)

    def stop(self) -> None:
        if self.process:
            stop_group(self.process)
        if self.owns_state_dir:
            shutil.rmtree(self.state_dir, ignore_errors=True)


def wait_ready(process: subprocess.Popen, url: str, log_path: Path, seconds: float = STARTUP_SECONDS) -> None:
    """Poll `url` until it answers 200; RuntimeError with the log's tail if the process exits or time runs out."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode}:\n{log_tail(log_path)}")
        try:
            if httpx.get(url, timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"server not ready after {seconds:.0f}s:\n{log_tail(log_path)}")


def log_tail(log_path: Path) -> str:
    return log_path.read_text()[-3000:] if log_path.exists() else ""


def stop_group(process: subprocess.Popen) -> None:
    """Stop a server started in its own session (its whole process group): SIGTERM, then SIGKILL if it lingers."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)


def replica_env(model_url: str, index_dir: str, keys: str, **extra: str) -> dict:
    """The environment of a replica: the model server, the index, the API keys; no telemetry."""
    env = {**os.environ, "OPENAI_BASE_URL": model_url, "OPENAI_API_KEY": "test-key", "DISAMBIG_INDEX": index_dir,
           "DISAMBIG_API_KEYS": keys, "ANONYMIZED_TELEMETRY": "False", "LANGSMITH_TRACING": "false", **extra}
    env.pop("DISAMBIG_MODEL", None)
    return env


def sse_events(response: httpx.Response):
    """(event name, data) pairs of a server-sent event stream, as they arrive."""
    name = None
    for line in response.iter_lines():
        if line.startswith("event: "):
            name = line[len("event: "):]
        elif line.startswith("data: ") and name:
            yield name, json.loads(line[len("data: "):])


def interrupt_of(name: str, data) -> dict | None:
    """The interrupt value carried by an event (Aegra sends it in `values`, the LangGraph server in `updates`)."""
    if name.split("|")[0] in ("values", "updates") and isinstance(data, dict) and data.get("__interrupt__"):
        return data["__interrupt__"][0]["value"]
    return None
