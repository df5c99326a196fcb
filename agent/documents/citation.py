"""Where a retrieved passage stands: the fields the index hands back with it and the one line a
citation shows ("manual.pdf, p. 12, Installation > Linux"). Every place that shows sources
(CLI, JSON, chat page, agent tool) formats them here."""

from __future__ import annotations

import json

LOCATION = ("document", "section", "page")


def located(passage: dict, metadata: str | dict | None, document: str | None) -> dict:
    """A stored passage with where it stands (`document`, `section`, `page`), what it is (`kind`:
    text, list, code or table; its answer units depend on it) and the folder that names its
    product (`folder`, where its id names none), for the passages read by structure; any other
    passage comes back as it was."""
    if isinstance(metadata, str):
        try:
            metadata = json.loads(metadata or "{}")
        except json.JSONDecodeError:
            metadata = {}
    metadata = metadata if isinstance(metadata, dict) else {}
    if "section" not in metadata and "page" not in metadata:
        return passage
    return {**passage, "document": document or passage["id"], "section": metadata.get("section") or "",
            "page": metadata.get("page"), **({"kind": metadata["kind"]} if metadata.get("kind") else {}),
            **({"folder": metadata["folder"]} if metadata.get("folder") else {})}


def field_of(passage: dict, key: str) -> str:
    """A passage's `kind` or `section` as the index hands it back (beside its text, `located`) or
    as a reader cut it (under `metadata`); "" when it has none."""
    return passage.get(key) or (passage.get("metadata") or {}).get(key) or ""


def citation(passage: dict) -> str:
    """Where a passage stands, as a reader cites it: "manual.pdf, p. 12, Installation > Linux";
    the title for a passage without a document location."""
    if not passage.get("document"):
        return passage.get("title") or passage.get("id", "")
    parts = [passage["document"]]
    if passage.get("page"):
        parts.append(f"p. {passage['page']}")
    if passage.get("section"):
        parts.append(passage["section"])
    return ", ".join(parts)


def location(passage: dict) -> dict:
    """The location fields a passage has, to copy into an answer's sources."""
    return {key: passage[key] for key in LOCATION if key in passage}
