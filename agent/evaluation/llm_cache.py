"""A persistent LLM response cache, so a re-run or a resumed evaluation costs no model calls.

`CachedChatModel` wraps the real chat model. Replies are keyed by (model setting,
temperature, max_tokens, the request options such as the response schema, the messages)
plus an occurrence number: within one question the n-th identical request replays the n-th
stored reply, so a retry after a malformed answer replays the retry's reply, not the first
one again. The stored usage is replayed too, which keeps token figures identical.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import json
import sqlite3
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any, Iterator

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import ConfigDict

INTERNAL = {"tags": ["nostream"]}
CACHED_PREFIX = "cached:"
LOGPROBS = "logprobs"  # the key under which a reply's log-probabilities are stored with its usage


class ResponseStore:
    """SQLite table of replies; safe to share between threads. Counts hits and real calls."""

    def __init__(self, path: str | Path):
        self.path = Path(path).expanduser()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, timeout=60, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS replies (key TEXT PRIMARY KEY, model TEXT NOT NULL, "
                         "content TEXT NOT NULL, usage TEXT NOT NULL, created REAL NOT NULL)")
        self._lock = threading.Lock()
        self.model_calls = 0
        self.cache_hits = 0

    def get(self, key: str) -> tuple[str, dict] | None:
        with self._lock:
            row = self._db.execute("SELECT content, usage FROM replies WHERE key = ?", (key,)).fetchone()
            if row is not None:
                self.cache_hits += 1
        return None if row is None else (row[0], json.loads(row[1]))

    def put(self, key: str, model: str, content: str, usage: dict) -> None:
        with self._lock:
            self.model_calls += 1
            self._db.execute("INSERT OR REPLACE INTO replies VALUES (?, ?, ?, ?, ?)",
                             (key, model, content, json.dumps(usage), time.time()))

    def close(self) -> None:
        with self._lock:
            self._db.close()


class _Occurrences:
    """How many replies each request key has been served within one question."""

    def __init__(self) -> None:
        self._counts: Counter[str] = Counter()
        self._lock = threading.Lock()

    def take(self, key: str) -> int:
        with self._lock:
            self._counts[key] += 1
            return self._counts[key] - 1

    def give_back(self, key: str) -> None:
        with self._lock:
            self._counts[key] -= 1


_scope: contextvars.ContextVar[_Occurrences | None] = contextvars.ContextVar("replay_scope", default=None)


@contextlib.contextmanager
def replay_scope() -> Iterator[None]:
    """Number identical requests from 0 while the block runs (wrap one question's run)."""
    token = _scope.set(_Occurrences())
    try:
        yield
    finally:
        _scope.reset(token)


def request_key(model: str, temperature: float, max_tokens: int, messages: list[BaseMessage], options: dict) -> str:
    payload = {
        "model": model, "temperature": temperature, "max_tokens": max_tokens, "options": options,
        "messages": [[m.type, m.content] for m in messages],
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str, ensure_ascii=False).encode()).hexdigest()


class CachedChatModel(BaseChatModel):
    """Replays stored replies; on a miss calls the wrapped model and stores its reply."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    inner: Any
    spec: str
    temperature: float = 0.0
    max_tokens: int = 0
    store: Any

    @property
    def _llm_type(self) -> str:
        return "cached"

    def _key(self, messages: list[BaseMessage], stop, kwargs: dict) -> tuple[str, _Occurrences | None, str]:
        base = request_key(self.spec, self.temperature, self.max_tokens, messages, {"stop": stop, **kwargs})
        scope = _scope.get()
        return base, scope, f"{base}:{scope.take(base) if scope else 0}"

    @staticmethod
    def _message(content: str, usage: dict, chunk: bool = False, replayed: bool = True):
        """A reply message; `replayed` marks it as served from the store (usage counts it: no
        model time was spent), which a live reply must not be or its question goes untimed.
        Log-probabilities (a judge's reply, agent/assembly/judge.py) are stored beside the usage."""
        usage = dict(usage or {})
        logprobs = usage.pop(LOGPROBS, None)
        metadata = {"cached_reply": True} if replayed else {}
        if logprobs is not None:
            metadata["logprobs"] = logprobs
        usage = usage or None
        if chunk:
            return AIMessageChunk(content=content, usage_metadata=usage, response_metadata=metadata)
        return AIMessage(content=content, usage_metadata=usage, response_metadata=metadata)

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        base, scope, key = self._key(messages, stop, kwargs)
        if (hit := self.store.get(key)) is not None:
            return ChatResult(generations=[ChatGeneration(message=self._message(*hit))])
        try:
            reply = self.inner.invoke(messages, config=INTERNAL, stop=stop, **kwargs)
        except BaseException:
            if scope:
                scope.give_back(base)
            raise
        usage = dict(reply.usage_metadata or {})
        if reply.response_metadata.get("logprobs") is not None:
            usage[LOGPROBS] = reply.response_metadata["logprobs"]
        self.store.put(key, self.spec, str(reply.content), usage)
        live = self._message(str(reply.content), usage, replayed=False)
        return ChatResult(generations=[ChatGeneration(message=live)])

    def _stream(self, messages, stop=None, run_manager=None, **kwargs) -> Iterator[ChatGenerationChunk]:
        base, scope, key = self._key(messages, stop, kwargs)
        if (hit := self.store.get(key)) is not None:
            yield ChatGenerationChunk(message=self._message(*hit, chunk=True))
            return
        merged = None
        try:
            for chunk in self.inner.stream(messages, config=INTERNAL, stop=stop, **kwargs):
                merged = chunk if merged is None else merged + chunk
                yield ChatGenerationChunk(message=AIMessageChunk(content=chunk.content, usage_metadata=chunk.usage_metadata))
        except BaseException:
            if scope:
                scope.give_back(base)
            raise
        content = str(merged.content) if merged is not None else ""
        self.store.put(key, self.spec, content, dict(getattr(merged, "usage_metadata", None) or {}))


def register_cached_model(spec: str, store: ResponseStore) -> str:
    """Register `cached:<spec>` as a model setting that serves `spec` through `store`."""
    from agent.llm.models import check_model_setting, get_chat_model, register_chat_model

    check_model_setting(spec)
    name = CACHED_PREFIX + spec

    def factory(context):
        inner = get_chat_model(context.replace(model=spec))
        return CachedChatModel(inner=inner, spec=spec, temperature=context.temperature,
                               max_tokens=context.max_tokens, store=store)

    register_chat_model(name, factory)
    return name
