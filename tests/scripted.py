"""A scripted chat model for tests (never the product default).

It answers each call from the first rule whose marker occurs in the prompt text, supports
`bind(...)` (structured-output bindings are recorded, not enforced) and token streaming, and
reports usage like a real server, so graphs run end to end without a model server.

    model = ScriptedChatModel(rules=[("Reply with JSON", '{"answer": "x", "interpretations": []}')])
    register_chat_model("scripted", lambda context: model)
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Iterator

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import ConfigDict, Field, PrivateAttr

SYNTHESIS_MARKER = "\"citations\" the passages holding it"  # text only the two synthesis prompts (short, long) hold

Reply = str | Callable[[list[BaseMessage]], str] | Exception
Rule = tuple[str, Reply]


def prompt_text(messages: list[BaseMessage]) -> str:
    return "\n".join(str(m.content) for m in messages)


class ScriptedChatModel(BaseChatModel):
    """Replies chosen by marker substrings; a rule's reply may be a string, a function of the
    messages, a list consumed one per call, or an exception to raise."""

    model_config = ConfigDict(arbitrary_types_allowed=True)
    rules: list[Any] = Field(default_factory=list)
    default: Any = '{"interpretations": [], "answer": "scripted default answer"}'
    _calls: list[dict] = PrivateAttr(default_factory=list)
    _lock: Any = PrivateAttr(default_factory=threading.Lock)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    @property
    def calls(self) -> list[dict]:
        """Every call so far: {"text": prompt text, "kwargs": bound options}."""
        return self._calls

    def _reply(self, messages: list[BaseMessage], kwargs: dict) -> str:
        text = prompt_text(messages)
        with self._lock:
            self._calls.append({"text": text, "kwargs": kwargs})
            reply: Any = self.default
            for marker, candidate in self.rules:
                if marker in text:
                    reply = candidate.pop(0) if isinstance(candidate, list) and len(candidate) > 1 else candidate
                    if isinstance(reply, list):
                        reply = reply[0]
                    break
        if isinstance(reply, Exception):
            raise reply
        return reply(messages) if callable(reply) else reply

    @staticmethod
    def _usage(messages: list[BaseMessage], content: str) -> dict:
        prompt = sum(len(str(m.content).split()) for m in messages)
        completion = len(content.split())
        return {"input_tokens": prompt, "output_tokens": completion, "total_tokens": prompt + completion}

    @staticmethod
    def _judgment(content: str, kwargs: dict) -> tuple[str, dict]:
        """A reply "yes 0.9" to a request for log-probabilities is sent as "yes" with P(yes) = 0.9
        among its first token's alternatives, as a server reports them."""
        import math

        word, _, probability = content.partition(" ")
        if not kwargs.get("logprobs") or word not in ("yes", "no") or not probability:
            return content, {}
        yes = float(probability)
        tops = [{"token": "yes", "logprob": math.log(max(yes, 1e-9))}, {"token": "no", "logprob": math.log(max(1 - yes, 1e-9))}]
        return word, {"logprobs": {"content": [{"token": word, "logprob": tops[word == "no"]["logprob"], "top_logprobs": tops}]}}

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        content, metadata = self._judgment(self._reply(messages, kwargs), kwargs)
        message = AIMessage(content=content, usage_metadata=self._usage(messages, content), response_metadata=metadata)
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _stream(self, messages, stop=None, run_manager=None, **kwargs) -> Iterator[ChatGenerationChunk]:
        content = self._reply(messages, kwargs)
        pieces = [content[i:i + 7] for i in range(0, len(content), 7)] or [""]
        for index, piece in enumerate(pieces):
            usage = self._usage(messages, content) if index == len(pieces) - 1 else None
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=piece, usage_metadata=usage))
            if run_manager:
                run_manager.on_llm_new_token(piece, chunk=chunk)
            yield chunk


def passage_number(messages: list[BaseMessage], word: str) -> int:
    """The number of the first passage shown in the last message that contains `word` (1 when
    none does): scripted replies cite the passage that really supports their answer."""
    import re

    for number, body in re.findall(r"^\[(\d+)\] (.*)$", str(messages[-1].content), re.MULTILINE):
        if word.casefold() in body.casefold():
            return int(number)
    return 1
