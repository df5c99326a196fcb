"""The answer-sentence reader: a cross-encoder that reads a question and a sentence together.

The reading selector's hand features see words and vectors, so a sentence about the subject
and close to the question in meaning ("the largemouth bass, the most popular game fish" for
"Who made the bass popular?") looks like an answer. The reader reads both texts through one
transformer and gives the probability that the sentence answers the question.

It is the packaged all-MiniLM-L6-v2 with its top layers adapted and a classification head
(trained by `bench/train_reader.py`; card: agent/data/reader_card.md). The repository ships
only what differs from the packaged weights (`agent/data/reader_delta.npz`); `make install`
builds the ONNX file from the two (`agent/assembly/reader_build.py`), so scoring a question
needs neither torch nor a download. The ONNX session is loaded on first use, once per process.
"""

from __future__ import annotations

import threading
from functools import lru_cache
from pathlib import Path
from typing import Sequence

import numpy as np

from agent.assembly.reader_inputs import (DELTA_PATH, ReaderUnavailableError, encode_pairs,  # noqa: F401
                                          pair_tokenizer, reader_config, reader_onnx_path, segment)

BATCH = 32


class Reader:
    """The reader's ONNX session and tokenizer (one per process: `load_reader`)."""

    def __init__(self, path: Path, config: dict):
        import onnxruntime

        from agent.retrieval.minilm_torch import torch_threads

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = torch_threads()
        options.log_severity_level = 3
        self._session = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        self._tokenizer = pair_tokenizer(int(config["max_tokens"]))
        self._lock = threading.Lock()  # the tokenizer's padding state is per object
        self.config = config

    def logits(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """Raw scores; pairs of similar length share a batch, since a batch is padded to its longest."""
        order = sorted(range(len(pairs)), key=lambda i: len(pairs[i][0]) + len(pairs[i][1]))
        out = np.zeros(len(pairs), dtype=np.float32)
        for start in range(0, len(order), BATCH):
            batch = order[start:start + BATCH]
            with self._lock:
                feeds = encode_pairs(self._tokenizer, [pairs[i] for i in batch])
            out[batch] = self._session.run(None, feeds)[0].reshape(-1)
        return out


@lru_cache(maxsize=2)
def load_reader(path: str | None = None) -> Reader:
    """The reader, loaded once per process. At the default place a missing file is built now
    (as the encoder's export is) when torch is installed; an explicit `path` that does not
    exist, or a build that cannot run, is the clear error."""
    target = Path(path) if path else reader_onnx_path()
    if path is None:
        from agent.assembly.reader_build import ensure_built

        try:
            ensure_built()
        except ImportError as error:
            raise ReaderUnavailableError(f"the answer-sentence reader is not built ({target} is missing) and "
                                         f"cannot be built here ({error}): run `make install`") from error
    if not target.is_file():
        raise ReaderUnavailableError(f"the answer-sentence reader is not built ({target} is missing): "
                                     "run `make install`")
    return Reader(target, reader_config())


def reader_probabilities(pairs: Sequence[tuple[str, str]] | Sequence[tuple[str, str, str]],
                         path: str | None = None) -> list[float]:
    """P(the sentence answers the question) for each (question, sentence) or (question,
    sentence, passage title) pair, in order. A title helps: "Phoenix (mythology): Herodotus
    wrote ..." tells the reader which sense the sentence is about."""
    if not pairs:
        return []
    texts = [(str(p[0]).strip(), segment(p[1], p[2] if len(p) > 2 else "").strip()) for p in pairs]
    key = path or ""
    missing = list(dict.fromkeys(t for t in texts if (key, t) not in _MEMO))
    if missing:
        logits = load_reader(path).logits(missing)
        with _MEMO_LOCK:
            if len(_MEMO) > MEMO_SIZE:
                _MEMO.clear()
            _MEMO.update({(key, t): float(1.0 / (1.0 + np.exp(-float(z)))) for t, z in zip(missing, logits)})
    return [_MEMO[(key, t)] for t in texts]


# the gate, the readings, the prose floor and the gap notes read one pool's sentences in turn
MEMO_SIZE = 20000
_MEMO: dict[tuple[str, tuple[str, str]], float] = {}
_MEMO_LOCK = threading.Lock()


def reader_threshold() -> float:
    """The probability at which the shipped reader's sentence counts as an answer (tuned on tune)."""
    return float(reader_config()["threshold"])
