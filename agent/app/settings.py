"""User settings -> a method's context: the one path every entry point uses.

The CLI (`--set NAME=VALUE`, flags), the Python API, `disambig eval` and the agent tool all
turn what the user set into a method's context with `method_context` (the methods that run
another method, rewrite and chat, do the same inside graphs/ with `graphs.registry.inner_context`). Only what the user set explicitly overrides the method's own
defaults: VERDICT behind rewrite keeps k=20 unless the user asked for a k, and an explicit
`--k 5` reaches it even though 5 is the front door's default.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from agent.context import Context, make_context
from agent.errors import InputError


def cast_setting(name: str, raw: Any, schema: type[Context]) -> Any:
    """A setting typed as text (`--set k=8`) cast to the type of the field's default."""
    if not isinstance(raw, str):
        return raw
    current = getattr(schema(), name)
    if isinstance(current, bool):
        return raw.lower() in ("1", "true", "yes", "on")
    if isinstance(current, (int, float)):
        try:
            return type(current)(raw)
        except ValueError:
            raise InputError(f"--set {name}: {raw!r} is not a {type(current).__name__}") from None
    return raw


def parse_settings(pairs: list[str], schema) -> dict[str, Any]:
    """`--set name=value` pairs, cast to the type of each field's default."""
    names = [f.name for f in fields(schema)]
    settings: dict[str, Any] = {}
    for pair in pairs:
        name, sep, raw = pair.partition("=")
        if not sep or name not in names:
            raise InputError(f"--set {pair!r}: expected NAME=VALUE with NAME one of {', '.join(names)}")
        settings[name] = cast_setting(name, raw, schema)
    return settings


def user_settings(settings: Context | dict[str, Any] | None) -> dict[str, Any]:
    """What the user set: a dict as given (None values dropped), or a context's explicit settings."""
    if settings is None:
        return {}
    if isinstance(settings, Context):
        return settings.explicit
    if isinstance(settings, dict):
        return {name: value for name, value in settings.items() if value is not None}
    raise InputError(f"context must be a Context or a dict, not {type(settings).__name__}")


def method_schema(method: str) -> type[Context]:
    """The context class of `method` (InputError naming the choices for an unknown one)."""
    from graphs.registry import context_schema

    return context_schema(method)


def method_context(method: str, settings: Context | dict[str, Any] | None = None, *,
                   strict: bool | None = None) -> Context:
    """The context of `method`'s own class: its defaults, overridden by what the user set.

    `settings` is a dict (`strict` by default: a name the method does not have is an
    InputError) or another method's context (its explicit settings the method shares carry
    over, the rest is that method's business). The model setting is checked here, so a typo
    fails before any retrieval or model call."""
    from agent.llm.models import check_model_setting

    schema = method_schema(method)
    if type(settings) is schema:
        result = settings
    else:
        given = user_settings(settings)
        if strict is False or (strict is None and isinstance(settings, Context)):
            known = {f.name for f in fields(schema)}
            given = {name: value for name, value in given.items() if name in known}
        result = make_context(schema, {name: cast_setting(name, value, schema) for name, value in given.items()})
    check_model_setting(result.model)
    return result
