"""The reader as a torch module, its shipped delta, and the ONNX build `make install` runs.

The reader is the packaged all-MiniLM-L6-v2 (a BERT) reading "[CLS] question [SEP] title:
sentence [SEP]" and a small head over the two texts' mean-pooled vectors (`ReaderNet`).
Training (`bench/train_reader.py`) keeps the packaged weights frozen and learns low-rank updates
(LoRA) of the linear layers of the top `adapted_layers` layers, those layers' LayerNorms and the
head. Only those
are shipped (`agent/data/reader_delta.npz`, well under the repository's 3 MB per file); the build
merges them into the packaged weights (W + B A * alpha / rank), exports the graph to ONNX and
checks it against the scores the trained model gave a few pairs, refusing an export that differs.
Torch is needed here, at install and training time, never to score a question.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import sys
import warnings
from pathlib import Path

import numpy as np

from agent.assembly.reader_inputs import (DELTA_PATH, INPUTS, ReaderUnavailableError, encode_pairs, pair_tokenizer,
                                          reader_onnx_path)
from agent.retrieval.arrays import open_npz
from agent.retrieval.onnx_minilm import model_dir

TARGETS = ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense",
           "intermediate.dense", "output.dense")
MAX_SCORE_GAP = 1e-3  # largest |probability difference| the ONNX build may show against the trained model


def torch_modules():
    """The torch classes, defined on first use so importing this module does not import torch."""
    import torch
    from torch import nn

    class LoRALinear(nn.Module):
        """A frozen linear layer plus a trainable low-rank update (B starts at zero: no change)."""

        def __init__(self, base: nn.Linear, rank: int, alpha: float):
            super().__init__()
            self.base, self.scale = base, alpha / rank
            self.A = nn.Parameter(torch.randn(rank, base.in_features) / rank ** 0.5 * 0.1)
            self.B = nn.Parameter(torch.zeros(base.out_features, rank))

        def forward(self, x):
            return self.base(x) + (x @ self.A.T @ self.B.T) * self.scale

    class ReaderNet(nn.Module):
        """BERT over the pair; the mean of the question's tokens (u) and of the sentence's (v),
        each normalized as MiniLM's sentence vectors are, then a small head over [u, v, u*v,
        |u-v|]. MiniLM was trained to make mean-pooled vectors meaningful (its [CLS] and pooler
        were not), so the head starts from a cosine-like signal and the adapted layers add what
        reading the two texts together tells."""

        def __init__(self, bert, hidden: int = 256):
            super().__init__()
            self.bert = bert
            size = bert.config.hidden_size
            self.head = nn.Sequential(nn.Linear(4 * size, hidden), nn.GELU(), nn.Linear(hidden, 1))

        def forward(self, input_ids, attention_mask, token_type_ids):
            states = self.bert(input_ids=input_ids, attention_mask=attention_mask,
                               token_type_ids=token_type_ids).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(states.dtype)
            second = token_type_ids.unsqueeze(-1).to(states.dtype) * mask
            first = mask - second
            u = torch.nn.functional.normalize((states * first).sum(1) / first.sum(1).clamp(min=1.0), dim=-1)
            v = torch.nn.functional.normalize((states * second).sum(1) / second.sum(1).clamp(min=1.0), dim=-1)
            return self.head(torch.cat([u, v, u * v, (u - v).abs()], dim=-1)).squeeze(-1)

    return torch, LoRALinear, ReaderNet


def packaged_bert():
    from transformers import BertModel

    from agent.retrieval.minilm_torch import offline_quiet_environment

    offline_quiet_environment()
    return BertModel.from_pretrained(str(model_dir()), attn_implementation="eager", add_pooling_layer=False)


def trainable_net(adapted_layers: int, rank: int, alpha: float, seed: int):
    """The net to train: packaged weights frozen, LoRA on the top layers' linears, their
    LayerNorms, the pooler and the head trainable."""
    torch, LoRALinear, ReaderNet = torch_modules()
    torch.manual_seed(seed)
    bert = packaged_bert()
    for parameter in bert.parameters():
        parameter.requires_grad = False
    layers = bert.encoder.layer
    for index in range(len(layers) - adapted_layers, len(layers)):
        for target in TARGETS:
            parent_name, _, child = target.rpartition(".")
            parent = layers[index].get_submodule(parent_name)
            setattr(parent, child, LoRALinear(getattr(parent, child), rank, alpha))
        for name, parameter in layers[index].named_parameters():
            if "LayerNorm" in name:
                parameter.requires_grad = True
    return ReaderNet(bert)


def delta_arrays(net) -> dict[str, np.ndarray]:
    """What differs from the packaged weights: every trainable tensor, by name, in half precision
    (the delta of all six layers fits the repository's 3 MB per file; `round_to_shipped` makes the
    trained net score with exactly these values)."""
    return {name: parameter.detach().cpu().numpy().astype(np.float16)
            for name, parameter in net.named_parameters() if parameter.requires_grad}


def round_to_shipped(net) -> None:
    """Round the trainable tensors to the half precision they ship in, so the check scores saved
    with the delta are the scores of what ships."""
    import torch
    with torch.no_grad():
        for parameter in net.parameters():
            if parameter.requires_grad:
                parameter.copy_(parameter.half().float())


def merged_net(delta_path: Path = DELTA_PATH):
    """The packaged BERT with the shipped delta merged in (plain linears), for export."""
    torch, _, ReaderNet = torch_modules()
    with open_npz(delta_path) as data:
        config = json.loads(str(data["config"]))
        delta = {name: data[name].astype(np.float32) for name in data.files if name.startswith(("bert.", "head."))}
    net = ReaderNet(packaged_bert()).eval()
    state = net.state_dict()
    scale = config["alpha"] / config["rank"]
    with torch.no_grad():
        for name, value in delta.items():
            if name.endswith(".A") or name.endswith(".B"):
                continue
            state[name.replace(".base.", ".")].copy_(torch.from_numpy(value))
        for name in [n for n in delta if n.endswith(".A")]:
            stem = name[:-2]
            update = torch.from_numpy(delta[stem + ".B"]) @ torch.from_numpy(delta[name]) * scale
            state[stem + ".weight"].add_(update)
    net.load_state_dict(state)
    return net, config


def _delta_digest(delta_path: Path) -> str:
    return hashlib.sha256(delta_path.read_bytes()).hexdigest()[:16]


def is_built(delta_path: Path = DELTA_PATH) -> bool:
    """Whether a checked build of this delta is in the cache (the stamp beside it says which)."""
    path, stamp = reader_onnx_path(), reader_onnx_path().with_suffix(".verified")
    return (path.is_file() and stamp.is_file()
            and json.loads(stamp.read_text()).get("delta") == _delta_digest(delta_path))


def build_onnx(delta_path: Path = DELTA_PATH, target: Path | None = None, force: bool = False) -> Path:
    """Merge, export and check the reader once per cache dir; a build whose scores differ from
    the trained model's by more than MAX_SCORE_GAP is deleted and refused."""
    if not delta_path.is_file():
        raise ReaderUnavailableError(f"the reader's weights are missing ({delta_path.name}); reinstall the package")
    target = target or reader_onnx_path()
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / ".reader-build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if target == reader_onnx_path() and is_built(delta_path) and not force:
            return target
        partial = target.with_suffix(f".{os.getpid()}.partial")
        try:
            gap = _export_and_check(delta_path, partial)
            if gap > MAX_SCORE_GAP:
                raise ReaderUnavailableError(f"the reader's ONNX build differs from the trained model "
                                             f"(probability gap {gap:.5f} > {MAX_SCORE_GAP}); not used")
            os.replace(partial, target)
        finally:
            partial.unlink(missing_ok=True)
        target.with_suffix(".verified").write_text(json.dumps({"delta": _delta_digest(delta_path),
                                                               "max_gap": round(gap, 7)}))
    return target


def _export_and_check(delta_path: Path, path: Path) -> float:
    """Export the merged net to `path`; the largest probability gap between the ONNX graph and
    the scores the trained model gave the delta's check pairs."""
    import onnxruntime
    import torch

    net, config = merged_net(delta_path)
    tokenizer = pair_tokenizer(int(config["max_tokens"]))
    sample = encode_pairs(tokenizer, [("a padded question?", "a sentence"), ("q", "a longer sentence to pad the other")])
    arrays = tuple(torch.from_numpy(sample[name]) for name in INPUTS)
    axes = {name: {0: "batch", 1: "tokens"} for name in INPUTS} | {"logit": {0: "batch"}}
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(net, arrays, str(path), input_names=list(INPUTS), output_names=["logit"],
                          dynamic_axes=axes, opset_version=17, dynamo=False)
    with open_npz(delta_path) as data:
        questions, texts, expected = list(data["check_questions"]), list(data["check_texts"]), data["check_scores"]
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    logits = session.run(None, encode_pairs(tokenizer, list(zip(questions, texts))))[0].reshape(-1)
    return float(np.max(np.abs(1 / (1 + np.exp(-logits)) - expected)))


def ensure_built() -> Path:
    """The checked ONNX reader, built now when missing (`make install` does it ahead)."""
    if is_built():
        return reader_onnx_path()
    print(f"disambig: building the answer-sentence reader in {reader_onnx_path().parent} (once; `make install` "
          "does it ahead) ...", file=sys.stderr, flush=True)
    return build_onnx()
