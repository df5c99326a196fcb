"""What the reader's runtime (agent/assembly/reader.py) and its build (reader_build.py) share:
where its files are, its settings, and how a (question, sentence) pair becomes model inputs."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Sequence

import numpy as np

from agent.context import cache_dir
from agent.errors import ModelUnavailableError
from agent.retrieval.arrays import open_npz

DELTA_PATH = Path(__file__).resolve().parents[1] / "data" / "reader_delta.npz"
INPUTS = ("input_ids", "attention_mask", "token_type_ids")


class ReaderUnavailableError(ModelUnavailableError):
    """The reader's ONNX file is not built (or not usable)."""


def reader_onnx_path() -> Path:
    """Where `make install` builds the reader: beside the encoder's ONNX export."""
    return cache_dir() / "models" / "answer-reader.onnx"


@lru_cache(maxsize=1)
def reader_config(delta_path: str = str(DELTA_PATH)) -> dict:
    """The shipped reader's settings (max tokens, adapted layers, threshold) from its delta file."""
    path = Path(delta_path)
    if not path.is_file():
        raise ReaderUnavailableError(f"the reader's weights are missing ({path.name}); reinstall the package")
    with open_npz(path) as data:
        return json.loads(str(data["config"]))


def segment(sentence: str, title: str = "") -> str:
    """The second text the reader reads: the sentence after its passage's title, as in training."""
    return f"{title}: {sentence}" if title else sentence


def pair_tokenizer(max_tokens: int):
    """The packaged MiniLM's tokenizer for (question, sentence) pairs, longest text cut first."""
    from tokenizers import Tokenizer

    from agent.retrieval.onnx_minilm import model_dir

    tokenizer = Tokenizer.from_file(str(model_dir() / "tokenizer.json"))
    tokenizer.enable_truncation(max_tokens, strategy="longest_first")
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
    return tokenizer


def encode_pairs(tokenizer, pairs: Sequence[tuple[str, str]]) -> dict[str, np.ndarray]:
    """The model's three int64 inputs for a batch of (question, second text) pairs."""
    encoded = tokenizer.encode_batch([(str(q).strip(), str(s).strip()) for q, s in pairs])
    return {name: np.array([getattr(e, field) for e in encoded], dtype=np.int64)
            for name, field in zip(INPUTS, ("ids", "attention_mask", "type_ids"))}
