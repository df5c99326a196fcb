"""The change plan of `replace`, shared by the embedded (SQLite + Chroma) and the PostgreSQL
index: which documents changed, which passages need embedding and which go. Each backend then
writes the plan in its own transaction."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Iterable

from agent.retrieval.corpus import content_id


def passage_row(passage: dict) -> tuple:
    """(title, text, source, metadata JSON): what both backends store of a passage."""
    return passage["title"], passage["text"], passage["source"], json.dumps(passage.get("metadata") or {})


def document_of(passage: dict) -> str:
    return passage.get("document") or passage["id"]


@dataclass
class ChangePlan:
    """What `replace` must do, worked out once for both backends: the documents that already
    hold these passages (`same`: only their fingerprint is recorded), the `changed` ones, their
    new passages, the passages to embed (new text) and those that go."""

    same: list
    changed: list
    old_hashes: dict[str, str]
    new: list[dict]

    @property
    def doc_ids(self) -> list[str]:
        return [doc_id for doc_id, *_ in self.changed]

    @property
    def to_embed(self) -> list[dict]:
        return [p for p in self.new if self.old_hashes.get(p["id"]) != content_id(p["title"], p["text"])]

    def gone(self, also: Iterable[str] = ()) -> list[str]:
        return sorted((set(self.old_hashes) | set(also)) - {p["id"] for p in self.new})


def change_plan(documents: list[tuple[str, str, str, list[dict]]], old: dict[str, dict[str, tuple]]) -> ChangePlan:
    """The plan for (id, fingerprint, origin, passages) documents against `old`, the stored
    rows of those documents ({document id: {passage id: passage_row}})."""
    changed, same = [], []
    for document in documents:
        rows = {p["id"]: passage_row(p) for p in document[3]}
        (same if rows == old.get(document[0], {}) else changed).append(document)
    old_hashes = {i: content_id(row[0], row[1]) for doc_id, *_ in changed for i, row in old.get(doc_id, {}).items()}
    return ChangePlan(same=same, changed=changed, old_hashes=old_hashes,
                      new=[p for *_, passages in changed for p in passages])
