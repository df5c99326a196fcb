"""Sentence embeddings: the packaged all-MiniLM-L6-v2 by default, OpenAI-compatible optionally.

Every vector is L2-normalized float32, so a dot product is the cosine similarity.
"""

from __future__ import annotations

import os
import sys
import threading
from functools import lru_cache

import numpy as np
from chromadb.api.types import Documents, EmbeddingFunction, Embeddings

from agent.errors import InputError, ModelUnavailableError
from agent.retrieval.minilm_torch import TorchMiniLM
from agent.retrieval.onnx_minilm import OnnxMiniLM


class MiniLMEmbedder:
    """all-MiniLM-L6-v2, offline, 384-d: through onnxruntime (agent/retrieval/onnx_minilm.py),
    so neither queries nor indexing import torch. Measured on 2 shared cores: a query 0.02 s
    vs 0.34 s warm, 648 passages 27-29 s vs 33-40 s. When no verified export can be made (no
    `onnx` package, or an export that differs), the torch encoder runs instead and says so."""

    name = "minilm"
    dimension = 384

    def __init__(self, batch_size: int = 16):
        self.batch_size = batch_size  # small batches of similar length pad less (agent/retrieval/onnx_minilm.py)
        self._encoder = None
        self._lock = threading.Lock()

    def _load(self):
        with self._lock:
            if self._encoder is None:
                try:
                    self._encoder = OnnxMiniLM(batch_size=self.batch_size)
                except (ImportError, ModelUnavailableError) as error:
                    print(f"disambig: warning: the ONNX encoder is unavailable ({error}); "
                          "using the slower torch encoder", file=sys.stderr)
                    self._encoder = TorchMiniLM(self.batch_size)
        return self._encoder

    def embed(self, texts: list[str]) -> np.ndarray:
        return self._load().embed(texts)


class OpenAIEmbedder:
    """Embeddings from an OpenAI-compatible `/v1/embeddings` endpoint (OPENAI_BASE_URL)."""

    def __init__(self, model: str):
        from openai import OpenAI

        self.name = f"openai:{model}"
        self.model = model
        self._client = OpenAI(
            base_url=os.environ.get("OPENAI_BASE_URL") or None, api_key=os.environ.get("OPENAI_API_KEY") or "none"
        )
        self.dimension = len(self.embed(["dimension probe"])[0])

    def embed(self, texts: list[str]) -> np.ndarray:
        import openai

        if not texts:
            return np.zeros((0, getattr(self, "dimension", 0)), dtype=np.float32)
        try:
            response = self._client.embeddings.create(model=self.model, input=list(texts))
        except openai.APIConnectionError:
            raise ModelUnavailableError(
                f"cannot reach the embeddings server at {self._client.base_url}"
            ) from None
        vectors = np.array([item.embedding for item in response.data], dtype=np.float32)
        return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)


@lru_cache(maxsize=4)
def get_embedder(name: str = "minilm"):
    """The embedder for a setting name, loaded once per process."""
    if name == "minilm":
        return MiniLMEmbedder()
    if name.startswith("openai:") and len(name) > len("openai:"):
        return OpenAIEmbedder(name[len("openai:"):])
    raise InputError(f"unknown embedding model {name!r}; use minilm or openai:NAME")


class ChromaEmbeddings(EmbeddingFunction[Documents]):
    """Our embedder as a Chroma embedding function, so Chroma never loads its own model."""

    def __init__(self, embedder_name: str = "minilm"):
        self.embedder_name = embedder_name

    def __call__(self, input: Documents) -> Embeddings:
        return list(get_embedder(self.embedder_name).embed(list(input)))

    @staticmethod
    def name() -> str:
        return "disambig"

    def get_config(self) -> dict:
        return {"embedder_name": self.embedder_name}

    @staticmethod
    def build_from_config(config: dict) -> "ChromaEmbeddings":
        return ChromaEmbeddings(config.get("embedder_name", "minilm"))
