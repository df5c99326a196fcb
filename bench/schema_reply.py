"""Replies for the fake OpenAI server that satisfy whatever the graph asks for.

The fault suite runs every method graph against `bench.fake_openai.FakeOpenAI`; instead of
canned answers per prompt (which break whenever a graph adds a call), `schema_reply` reads the
JSON schema sent in `response_format` and builds a small valid instance of it, so any
structured call parses, and plain-text calls get a short sentence. Faults are layered on top
by the server, so what a test measures is the graph's handling of failure, not of odd shapes.
"""

from __future__ import annotations

import json
from typing import Any

TEXT = "Fake reply about the topic [1]."


def _resolve(node: dict, root: dict) -> dict:
    while "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[-1]
        node = {**root.get("$defs", root.get("definitions", {}))[name], **{k: v for k, v in node.items() if k != "$ref"}}
    return node


def instance(node: dict, root: dict, depth: int = 0) -> Any:
    """A minimal value valid under JSON-schema `node` (objects fill every property)."""
    node = _resolve(node, root)
    if "const" in node:
        return node["const"]
    if "enum" in node:
        return node["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        if node.get(key):
            options = [o for o in node[key] if _resolve(o, root).get("type") != "null"] or node[key]
            return instance(options[0], root, depth)
    kind = node.get("type", "object" if "properties" in node else "string")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        return {name: instance(sub, root, depth + 1) for name, sub in node.get("properties", {}).items()}
    if kind == "array":
        count = max(node.get("minItems", 0), 0 if depth > 3 else 1)
        count = min(count, node.get("maxItems", count))
        return [instance(node.get("items", {}), root, depth + 1) for _ in range(count)]
    if kind == "string":
        text = TEXT[: node.get("maxLength", len(TEXT))]
        return text.ljust(node.get("minLength", 0), "x")
    if kind in ("integer", "number"):
        low = node.get("minimum", node.get("exclusiveMinimum", 0) + (1 if "exclusiveMinimum" in node else 0))
        return max(1, low) if node.get("maximum", 1) >= 1 else low
    if kind == "boolean":
        return True
    return None


def schema_reply(request: dict) -> str:
    """The reply text for one chat request: a valid JSON instance, or a sentence."""
    response_format = request.get("response_format") or {}
    schema = (response_format.get("json_schema") or {}).get("schema")
    if schema is None:
        return TEXT
    return json.dumps(instance(schema, schema))
