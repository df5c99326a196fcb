"""Turning what a user typed (`--set NAME=VALUE`, flags) into a method's settings."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from agent.errors import InputError


def parse_settings(pairs: list[str], schema) -> dict[str, Any]:
    """`--set name=value` pairs, cast to the type of each field's default."""
    defaults = {f.name: f for f in fields(schema)}
    settings: dict[str, Any] = {}
    for pair in pairs:
        name, sep, raw = pair.partition("=")
        if not sep or name not in defaults:
            raise InputError(f"--set {pair!r}: expected NAME=VALUE with NAME one of {', '.join(defaults)}")
        current = getattr(schema(), name)
        if isinstance(current, bool):
            settings[name] = raw.lower() in ("1", "true", "yes", "on")
        elif isinstance(current, (int, float)):
            try:
                settings[name] = type(current)(raw)
            except ValueError:
                raise InputError(f"--set {name}: {raw!r} is not a {type(current).__name__}") from None
        else:
            settings[name] = raw
    return settings
