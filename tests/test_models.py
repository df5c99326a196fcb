"""Weights assembly from part packages, and the settings precedence of the context."""

import hashlib

import pytest

from agent.context import Context, default_model, make_context
from agent.errors import InputError, ModelUnavailableError
from agent.llm.models import PackagedWeights, assemble_weights


@pytest.fixture
def part_packages(tmp_path, monkeypatch):
    """Three fake part packages on sys.path holding the pieces of a small file."""
    pieces = [b"GGUF" + bytes(range(256)) * 10, b"middle" * 100, b"end"]
    for number, piece in enumerate(pieces, 1):
        package = tmp_path / "site" / f"fakeparts_part{number}"
        (package / "data").mkdir(parents=True)
        (package / "__init__.py").write_text("")
        (package / "data" / f"part{number:02}.bin").write_bytes(piece)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.setenv("DISAMBIG_CACHE", str(tmp_path / "cache"))
    return b"".join(pieces)


def weights(sha: str, parts: int = 3) -> PackagedWeights:
    return PackagedWeights("fake.gguf", "fakeparts_part", "fakeparts-part{i}", parts, sha, "fake")


def test_parts_are_joined_in_order_and_verified(part_packages, tmp_path):
    path = assemble_weights(weights(hashlib.sha256(part_packages).hexdigest()))
    assert path.read_bytes() == part_packages
    assert path.parent == tmp_path / "cache" / "models"
    assert assemble_weights(weights(hashlib.sha256(part_packages).hexdigest())) == path  # cached


def test_joining_weights_reports_progress(part_packages, monkeypatch):
    """Joining and hash-checking gigabytes takes a while: the user is told, then the parts counted."""
    import agent.llm.models

    lines = []
    monkeypatch.setattr(agent.llm.models, "status", lines.append)
    assemble_weights(weights(hashlib.sha256(part_packages).hexdigest()))
    assert lines[0].startswith("joining the model weights fake.gguf from 3 parts and checking their sha256")
    assert lines[-1] == "weights: 3 of 3 parts joined"
    lines.clear()
    assemble_weights(weights(hashlib.sha256(part_packages).hexdigest()))
    assert lines == []  # already joined and checked: nothing slow, nothing said


def test_a_hash_mismatch_is_refused_and_leaves_no_file(part_packages, tmp_path):
    with pytest.raises(ModelUnavailableError, match="sha256 mismatch"):
        assemble_weights(weights("0" * 64))
    assert not (tmp_path / "cache" / "models" / "fake.gguf").exists()
    assert not list((tmp_path / "cache" / "models").glob("*.partial"))


def test_a_missing_part_names_the_install_command(part_packages):
    with pytest.raises(ModelUnavailableError, match=r"part 4/4 is not installed.*disambig\[fake\]"):
        assemble_weights(weights("0" * 64, parts=4))


def test_explicit_settings_beat_the_environment_which_beats_defaults(monkeypatch):
    monkeypatch.delenv("DISAMBIG_MODEL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert Context().model == "local" and Context().k == 5
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    assert default_model() == "openai:gpt-4o-mini"
    monkeypatch.setenv("DISAMBIG_MODEL", "local-small")
    monkeypatch.setenv("DISAMBIG_INDEX", "/tmp/from-env")
    monkeypatch.setenv("DISAMBIG_RETRIEVAL", "sparse")
    assert Context().model == "local-small" and Context().index_dir == "/tmp/from-env"
    context = make_context(Context, {"model": "openai:x", "index_dir": None, "retrieval_mode": "dense"})
    assert (context.model, context.index_dir, context.retrieval_mode) == ("openai:x", "/tmp/from-env", "dense")


def test_unknown_settings_are_named():
    with pytest.raises(InputError, match="unknown setting.*tau"):
        make_context(Context, {"tau": 1})


def test_warm_up_starts_only_a_local_server_whose_weights_are_ready(tmp_path):
    import threading
    import time

    from agent.context import Context
    from agent.llm.models import warm_up

    assert warm_up(Context(model="openai:gpt-4o-mini")) is False  # nothing to start for a remote model
    assert warm_up(Context(model=f"gguf:{tmp_path / 'missing.gguf'}")) is False  # no file: the call reports it
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"not a model")
    assert warm_up(Context(model=f"gguf:{broken}")) is True  # starts in the background and never raises
    deadline = time.time() + 30
    while any(t.name == "llama-server-warm-up" for t in threading.enumerate()) and time.time() < deadline:
        time.sleep(0.1)
    assert not any(t.name == "llama-server-warm-up" for t in threading.enumerate())
