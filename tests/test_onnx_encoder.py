"""The ONNX MiniLM: the same vectors as the torch encoder, a refused bad export, and a query
path (`disambig search`) that imports neither torch nor sentence-transformers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from agent.errors import ModelUnavailableError
from agent.retrieval import onnx_minilm

ROOT = Path(__file__).resolve().parents[1]


def test_onnx_vectors_match_the_torch_encoder_on_every_demo_passage():
    from agent.retrieval.minilm_torch import TorchMiniLM

    path = onnx_minilm.ensure_exported()
    stamp = json.loads(path.with_suffix(".verified").read_text())
    texts = onnx_minilm.demo_texts()
    assert stamp["texts"] == len(texts) == 162 and stamp["min_cosine"] >= onnx_minilm.MIN_COSINE
    # and the odd inputs: longer than 256 tokens (truncated), empty, padded with spaces, a batch of mixed lengths
    texts += ["horsepower " * 400, "", "   What is HP?  ", "HP"]
    fast, reference = onnx_minilm.OnnxMiniLM(path).embed(texts), TorchMiniLM().embed(texts)
    assert fast.shape == reference.shape == (len(texts), 384) and fast.dtype == np.float32
    cosines = np.sum(fast * reference, axis=1)
    assert cosines.min() >= onnx_minilm.MIN_COSINE, (cosines.argmin(), cosines.min())
    assert np.allclose(np.linalg.norm(fast, axis=1), 1.0, atol=1e-5)


def test_batches_of_similar_length_keep_every_vector_in_its_place():
    encoder = onnx_minilm.OnnxMiniLM(onnx_minilm.ensure_exported(), batch_size=2)
    texts = ["Hewlett-Packard is an American technology company founded in 1939 in a Palo Alto garage.",
             "HP", "Horsepower is a unit of power.", "What is HP?", "Hit points measure damage."]
    together = encoder.embed(texts)  # sorted by length into 3 batches, then put back in order
    alone = np.concatenate([encoder.embed([text]) for text in texts])
    assert np.sum(together * alone, axis=1).min() > 0.9999
    assert float(together[0] @ together[1]) < 0.9  # not all one vector


def test_an_export_that_differs_from_the_torch_encoder_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("DISAMBIG_CACHE", str(tmp_path))
    monkeypatch.setattr(onnx_minilm, "MIN_COSINE", 1.0001)  # no export can reach it: stands in for a bad one
    with pytest.raises(ModelUnavailableError, match="differs from the torch encoder"):
        onnx_minilm.export_onnx(check_texts=["What is HP?", "Hewlett-Packard is a company."])
    assert not onnx_minilm.is_exported()
    assert not list((tmp_path / "models").glob("all-MiniLM*"))  # neither the file nor a partial one is left


def test_another_install_of_the_same_weights_reuses_the_export(tmp_path, monkeypatch):
    real = onnx_minilm._weights_digest()
    copy = tmp_path / "model"
    copy.mkdir()
    with open(copy / "model.safetensors", "wb") as handle:  # the same size, written now: another mtime
        handle.truncate((onnx_minilm.model_dir() / "model.safetensors").stat().st_size)
    monkeypatch.setattr(onnx_minilm, "model_dir", lambda: copy)
    assert onnx_minilm._weights_digest() == real
    with open(copy / "model.safetensors", "ab") as handle:  # other weights: another export
        handle.write(b"0")
    assert onnx_minilm._weights_digest() != real


HEAVY = ('torch', 'sentence_transformers', 'transformers', 'sklearn')  # seconds of a fresh process's start each


@pytest.mark.parametrize("command, shows", [
    (["search", "What is HP?"], "hp-"),  # HP passages ranked
    (["ask", "What is HP?", "--budget", "instant"], "["),  # the readings, cited: gate, selector, no model
])
def test_the_query_path_imports_no_torch_sentence_transformers_or_scikit_learn(demo_index, command, shows):
    onnx_minilm.ensure_exported()  # as `make install` does; the search must not need torch even to export
    probe = ("import sys; from agent.app.cli import main; code = main(sys.argv[1:]);"
             f"print('LOADED', sorted(m for m in {HEAVY!r} if m in sys.modules));"
             "sys.exit(code)")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", probe, *command, "--index", demo_index], capture_output=True,
                          text=True, env=env, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert shows in done.stdout
    assert "LOADED []" in done.stdout, done.stdout
