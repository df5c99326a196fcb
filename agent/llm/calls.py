"""Calling the chat model: bounded retries, structured answers, usage, answer streaming.

Nodes call `generate_text` or `generate_structured` in one line. Failures degrade one step:
timeouts and 5xx are retried with backoff and jitter, then the call returns None (the caller
abstains); a malformed structured answer is retried once, then None. Only an unreachable
or misconfigured server raises (ModelUnavailableError), because no run can succeed then.
"""

from __future__ import annotations

import json
import random
import time
from typing import Any, Callable, TypeVar

from langchain_core.messages import AIMessage, BaseMessage, SystemMessage
from langchain_core.utils.json import parse_partial_json
from pydantic import BaseModel, ValidationError

from agent.context import Context
from agent.errors import ModelOutputError, ModelUnavailableError
from agent.llm.models import endpoint, get_chat_model
from agent.llm.prompts import fragment, render
from agent.llm.streaming import ShownSentences, stream_sentences
from agent.retrieval.tokens import count_tokens
from agent.usage import emit, record, record_round

Schema = TypeVar("Schema", bound=BaseModel)
INTERNAL = {"tags": ["nostream"]}  # LangGraph's messages stream skips these calls


def _backoff(attempt: int) -> float:
    return min(8.0, 0.5 * 2**attempt) * (0.5 + random.random())


def _record_usage(messages: list[BaseMessage], reply: AIMessage) -> None:
    usage = reply.usage_metadata or {}
    prompt = usage.get("input_tokens") or sum(count_tokens(str(m.content)) for m in messages)
    completion = usage.get("output_tokens") or count_tokens(str(reply.content))
    cached = int(bool(reply.response_metadata.get("cached_reply")))  # replayed by `disambig eval`
    record(llm_calls=1, prompt_tokens=prompt, completion_tokens=completion, cached_replies=cached)


def _partial_object(text: str) -> dict | None:
    """The JSON object streamed so far, or None while it does not parse yet."""
    start = text.find("{")
    try:
        return parse_partial_json(text[start:]) if start >= 0 else None
    except ValueError:
        return None


def _invoke_once(context: Context, messages: list[BaseMessage], bind: dict, stream_field: str | None,
                 shown: ShownSentences | None) -> AIMessage:
    model = get_chat_model(context)
    if bind:
        model = model.bind(**bind)
    if stream_field is None:
        return model.invoke(messages, config=INTERNAL)
    reply, content, looped = stream_sentences(model, messages, stream_field, shown or ShownSentences(), INTERNAL,
                                             _partial_object)
    if reply is None:
        return AIMessage("")
    usage = reply.usage_metadata
    if looped:  # the request was closed before the server's usage report: count what it sent
        record(loops_stopped=1)
        usage = {"input_tokens": 0, "output_tokens": count_tokens(str(reply.content)), "total_tokens": 0}
    return AIMessage(content=content, usage_metadata=usage, response_metadata=reply.response_metadata)


def call_model(
    context: Context, messages: list[BaseMessage], *, bind: dict | None = None, stream_field: str | None = None,
    max_tokens: int | None = None, shown: ShownSentences | None = None,
) -> AIMessage | None:
    """One model call with bounded retries; None when every attempt timed out or failed.
    `max_tokens` caps this call's completion below the context's cap (a node knows how long
    its answer can be; an uncapped small model that loops runs to the global cap).
    `stream_field`: stream that string field of the JSON reply to the user sentence by sentence
    (agent/llm/streaming.py: only sentences that stand are shown, a loop stops the request);
    `shown` carries what was shown across retries and the `stands` check."""
    import openai  # here, not at import: 1 s of a cold process, which shows the readings before any call

    transient = (openai.InternalServerError, openai.RateLimitError, openai.APIStatusError)
    shown = shown or ShownSentences()
    bind = dict(bind or {})
    if max_tokens:
        bind["max_tokens"] = min(max_tokens, context.max_tokens)
    for attempt in range(context.max_retries + 1):
        record_round()
        try:
            reply = _invoke_once(context, messages, bind, stream_field, shown)
            _record_usage(messages, reply)
            return reply
        except openai.APITimeoutError:
            record(timeouts=1)
        except openai.APIConnectionError as error:
            if attempt == context.max_retries:
                raise ModelUnavailableError(
                    f"cannot reach the model server at {endpoint(context)} ({type(error).__name__}); "
                    "start it, or choose another with --model / DISAMBIG_MODEL / OPENAI_BASE_URL"
                ) from None
        except (openai.AuthenticationError, openai.PermissionDeniedError, openai.NotFoundError) as error:
            raise ModelUnavailableError(
                f"the model server at {endpoint(context)} refused the request "
                f"({error.status_code}): check the model name and API key"
            ) from None
        except openai.BadRequestError:
            record(abstentions=1)  # deterministic (e.g. prompt too long): retrying cannot help
            return None
        except transient:
            pass
        if attempt < context.max_retries:
            record(retries=1)
            time.sleep(_backoff(attempt))
    record(abstentions=1)
    return None


def generate_text(context: Context, prompt: str, *, max_tokens: int | None = None, **values: Any) -> str | None:
    """Plain-text completion of prompt file `prompt`; None if the model could not answer."""
    reply = call_model(context, render(prompt, **values), max_tokens=max_tokens)
    return None if reply is None else str(reply.content).strip()


def _structured_request(context: Context, schema: type[BaseModel], messages: list[BaseMessage]):
    """The response_format binding and messages for the configured structured-output method."""
    json_schema = schema.model_json_schema()
    # sent as extra_body so langchain-openai does not switch to its strict parsing client
    if context.structured_output == "json_schema":
        response_format = {"type": "json_schema", "json_schema": {"name": schema.__name__, "schema": json_schema}}
        return {"extra_body": {"response_format": response_format}}, messages
    hint = SystemMessage(fragment("json_schema_hint", schema=json.dumps(json_schema)))
    bind = {"extra_body": {"response_format": {"type": "json_object"}}} if context.structured_output == "json_object" else {}
    return bind, [*messages, hint]


def parse_json_reply(text: str, schema: type[Schema]) -> Schema:
    """Validate a model's JSON reply, tolerating code fences, text around the object and a
    reply cut off by the token limit (the complete part is kept); ModelOutputError otherwise."""
    start = text.find("{")
    if start < 0:
        raise ModelOutputError(f"{schema.__name__}: no JSON object in the reply")
    end = text.rfind("}")
    try:
        data = json.loads(text[start:end + 1])
    except json.JSONDecodeError:
        data = _partial_object(text)  # cut off by the token limit: keep the complete part
        if data == {}:  # garbage such as "not json {" would otherwise pass as an all-defaults answer
            raise ModelOutputError(f"{schema.__name__}: the reply holds no complete JSON field") from None
        if isinstance(data, dict):
            data = _complete_part(data, schema, text)
    if not isinstance(data, dict):
        raise ModelOutputError(f"{schema.__name__}: the reply is not a JSON object")
    try:
        return schema.model_validate(data)
    except ValidationError as error:
        raise ModelOutputError(f"{schema.__name__}: {error.error_count()} field(s) do not fit the schema") from None


def _complete_part(data: dict, schema: type[Schema], text: str) -> dict:
    """What a reply cut off by the token limit holds in full: the field being written when it
    was cut (the last one) loses its list item cut mid-value (a string keeps what was written:
    its sentences are checked later), list items that do not validate go, and a string field
    not reached yet is empty. The same prompt would be cut the same way again, so a retry
    would only double the cost."""
    from pydantic import TypeAdapter

    fixed = dict(data)
    last = next(reversed(fixed), None)
    cut_mid_value = not text.rstrip().rstrip(",").rstrip().endswith(("}", "]", '"'))
    if isinstance(fixed.get(last), list) and fixed[last] and cut_mid_value:
        fixed[last] = fixed[last][:-1]
    for name, info in schema.model_fields.items():
        value = fixed.get(name)
        if isinstance(value, list):
            adapter, kept = TypeAdapter(info.annotation), []
            for item in value:
                try:
                    adapter.validate_python([item])
                except ValidationError:
                    break
                kept.append(item)
            fixed[name] = kept
        elif value is None and info.annotation is str and info.is_required():
            fixed[name] = ""
    return fixed


def generate_structured(
    context: Context, schema: type[Schema], prompt: str, *, stream_field: str | None = None,
    max_tokens: int | None = None, stands: Callable[[str], bool] | None = None,
    shows: Callable[[str], str] | None = None, **values: Any
) -> Schema | None:
    """A `schema` instance from prompt file `prompt`; retried once when malformed, then None.

    `stream_field` names a string field shown to the user while it streams, a sentence at a
    time: a sentence is shown only once it is complete, does not repeat the text before it and
    `stands(sentence)` is true (default: it is not cut off), so nothing shown is withdrawn
    later; a failing sentence is withheld and the stream goes on. A repeated sentence or run
    of 8 words ends the request there (counted as `loops_stopped`; the field keeps the text
    before the repeat). `shows(sentence)` is the text shown for a sentence that stands (default:
    the sentence)."""
    bind, messages = _structured_request(context, schema, render(prompt, **values))
    shown = ShownSentences(stands, shows)
    for attempt in range(2):
        reply = call_model(context, messages, bind=bind, stream_field=stream_field, max_tokens=max_tokens,
                           shown=shown)
        if reply is None:
            return None
        try:
            return parse_json_reply(str(reply.content), schema)
        except ModelOutputError:
            record(malformed=1)
            if attempt == 0:
                record(retries=1)
    record(abstentions=1)
    return None
