"""Keeping an index in step with its sources: ingest (add, update, leave unchanged), delete,
sync (delete what a root no longer has) and stats (sizes and a consistency check).

A document is compared with the index by its fingerprint (text, title, metadata and chunk
settings): an unchanged one costs a lookup, a changed one is re-chunked and replaces all its
old passages at once, re-embedding only the passages whose text is new.

`store` is an `agent.retrieval.index.IndexStore` (not imported: the index module re-exports
`ingest` for its older callers).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterable, Iterator

from agent.errors import InputError
from agent.retrieval.bm25 import BM25Index
from agent.retrieval.corpus import Document, chunk_document, chunk_text, content_id, longer_names

LOOKUP = 256  # documents compared with the index at once


@dataclass
class _Pending:
    """A document on its way in: passages are cut only if its fingerprint changed."""

    id: str
    fingerprint: str
    origin: str
    size: int
    cut: Callable[[], list[dict]]
    document: Document | None = None  # what it was read as, to be cut again under another name


def _pending(items: Iterable, chunking: tuple[int, int]) -> Iterator[_Pending]:
    """Documents, or already-cut passages (grouped by their `document`, else each alone)."""
    group: list[dict] = []

    def passages_group() -> _Pending:
        ready = list(group)
        hashes = "|".join(f"{p['id']}={content_id(p['title'], p['text'])}" for p in ready)
        return _Pending(ready[0].get("document") or ready[0]["id"], content_id("passages", hashes), "", 0,
                        lambda: ready)

    for item in items:
        if isinstance(item, Document):
            yield _Pending(item.id, item.fingerprint(chunking), item.origin, item.size,
                           lambda item=item: chunk_document(item, *chunking), item)
            continue
        key = item.get("document") or item["id"]
        if group and (group[0].get("document") or group[0]["id"]) != key:
            yield passages_group()
            group.clear()
        group.append(item)
    if group:
        yield passages_group()


def ingest(
    store, items: Iterable, progress: Callable[[int], None] | None = None,
    chunking: tuple[int, int] = (200, 40), sync: list[str] | None = None, keep: set[str] | None = None,
    embedded: Callable[[int], None] | None = None,
) -> dict:
    """Bring the index in line with the documents (or passages) given.

    `progress` is called with the input bytes (Documents) or passages handled. `sync` roots:
    afterwards, delete the documents read earlier from files at or below them that this run
    did not see, except those from files in `keep` (files with skipped parts). `embedded` is
    called with the passages embedded by each batch written, so a long write shows its progress."""
    chunk_text("probe", *chunking)  # refuse bad settings before touching the index
    counts: dict = dict.fromkeys(("documents_added", "documents_updated", "documents_unchanged", "documents_deleted",
                                  "embedded", "removed"), 0)
    counts["renamed"] = []  # documents given a longer name: their path named another file's document
    seen: set[str] = set()
    with store.writing():
        counts["repaired"] = store.repair()
        block: list[_Pending] = []
        for pending in _pending(items, chunking):
            if pending.id in seen:
                continue
            seen.add(pending.id)
            block.append(pending)
            if len(block) >= LOOKUP:
                _apply(store, block, counts, progress, embedded, seen, chunking)
        if block:
            _apply(store, block, counts, progress, embedded, seen, chunking)
        if sync:
            gone = sorted({doc_id for root in sync for doc_id in store.documents_under(str(Path(root).resolve()))}
                          - seen - _kept(store, keep or set()))
            counts["documents_deleted"] = len(gone)
            counts["removed"] += store.delete(gone) if gone else 0
    version = store.settings()
    counts.update(total=store.count(), documents_total=_documents_total(store), version=int(version.get("version", 0)))
    counts["added"] = counts["embedded"]  # the passage-level fields from before documents existed
    counts["already_present"] = max(0, counts["total"] - counts["embedded"])
    return counts


def _another_file(stored_origin: str, origin: str) -> bool:
    """Whether a stored document was read from another file that still exists (not this one moved)."""
    return bool(origin and stored_origin and stored_origin != origin and os.path.exists(stored_origin))


def _own_name(store, pending: _Pending, seen: set[str], chunking: tuple[int, int],
              known: dict[str, tuple[str, str]]) -> _Pending:
    """`pending` under the nearest longer name (corpus.longer_names) that neither this run nor
    another file's document holds, what the index holds under it put in `known`; as it was when
    it has no such name (a record's own id)."""
    if pending.document is None:
        return pending
    for name in (n for n in longer_names(pending.id, pending.origin) if n not in seen):
        stored = store.documents([name]).get(name)
        if stored is None or not _another_file(stored[1], pending.origin):
            seen.add(name)
            if stored is not None:  # this file's document from an earlier run: unchanged or updated
                known[name] = stored
            document = replace(pending.document, id=name)
            return replace(pending, id=name, document=document, cut=lambda: chunk_document(document, *chunking))
    return pending


def _kept(store, files: set[str]) -> set[str]:
    return {doc_id for path in files for doc_id in store.documents_under(path)}


def _apply(store, block: list[_Pending], counts: dict, progress, embedded, seen: set[str],
           chunking: tuple[int, int]) -> None:
    """Compare a block of documents with the index and write the changed ones in batches. A file
    whose name is the document of another file the index still reads from is added under a longer
    name (`_own_name`), never in its place."""
    known = store.documents([p.id for p in block])
    for index, pending in enumerate(block):
        if pending.id in known and _another_file(known[pending.id][1], pending.origin):
            block[index] = _own_name(store, pending, seen, chunking, known)
            if block[index].id != pending.id:
                seen.discard(pending.id)  # the name stays the other file's: --sync judges that one by itself
                counts["renamed"].append(block[index].id)
    moved, batch, batch_size = [], [], 0

    def flush() -> None:
        nonlocal batch_size
        if batch:
            result = store.replace(batch)
            counts["embedded"] += result["embedded"]
            counts["removed"] += result["removed"]
            for doc_id in result["changed"]:
                counts["documents_updated" if doc_id in known else "documents_added"] += 1
            counts["documents_unchanged"] += len(batch) - len(result["changed"])
            if embedded:
                embedded(result["embedded"])
            batch.clear()
            batch_size = 0

    for pending in block:
        stored = known.get(pending.id)
        if stored is not None and stored[0] == pending.fingerprint:
            counts["documents_unchanged"] += 1
            if stored[1] != pending.origin and pending.origin:
                moved.append((pending.id, pending.fingerprint, pending.origin))
            continue
        passages = pending.cut()
        batch.append((pending.id, pending.fingerprint, pending.origin, passages))
        batch_size += len(passages)
        if batch_size >= store.batch_size():
            flush()
    flush()
    if moved:
        store.touch(moved)
    total = sum(p.size for p in block) if any(p.size for p in block) else len(block)
    block.clear()
    if progress:
        progress(total)


def _documents_total(store) -> int:
    return store.documents_count()


def delete_documents(store, doc_ids: list[str], missing_ok: bool = False) -> dict[str, int]:
    """Remove documents by id; unknown ids are an error (nothing deleted) unless `missing_ok`."""
    wanted = list(dict.fromkeys(doc_ids))
    with store.writing():
        repaired = store.repair()
        known = store.documents(wanted)
        unknown = [doc_id for doc_id in wanted if doc_id not in known]
        if unknown and not missing_ok:
            shown = ", ".join(repr(i) for i in unknown[:5]) + (", ..." if len(unknown) > 5 else "")
            raise InputError(f"{len(unknown)} of {len(wanted)} document ids are not in the index: {shown}")
        present = [doc_id for doc_id in wanted if doc_id in known]
        removed = store.delete(present) if present else 0
    return {"documents_deleted": len(present), "removed": removed, "missing": len(unknown), "repaired": repaired,
            "total": store.count(), "documents_total": _documents_total(store), "version": store.version()}


def stats(store) -> dict:
    """Sizes, encoder, last update and whether SQLite, Chroma and BM25 hold the same passages."""
    if getattr(store, "backend", "embedded") != "embedded":
        return store.stats()  # PostgreSQL checks its tables in one snapshot (agent/retrieval/pg_search.py)
    settings = store.settings()
    passages = {row[0]: content_id(row[1], row[2]) for row in store.all_passages()}
    vectors = store.vector_hashes()
    sparse_ids: list[str] = []
    sparse_version = None
    if os.path.exists(store.bm25_path):
        sparse = BM25Index.load(store.bm25_path)
        sparse_ids, sparse_version = sparse.ids, sparse.version
    version = int(settings.get("version", 0))
    updated = float(settings.get("updated", 0) or 0)
    check = {
        "vectors_missing": sum(1 for i in passages if i not in vectors),
        "vectors_orphaned": sum(1 for i in vectors if i not in passages),
        "vectors_outdated": sum(1 for i, h in vectors.items() if h is not None and i in passages and passages[i] != h),
        "sparse_missing": len(set(passages) - set(sparse_ids)),
        "sparse_orphaned": len(set(sparse_ids) - set(passages)),
        "sparse_current": store.sparse_is_current(),
        "dense_current": int(settings.get("dense_version", -1)) == version,
    }
    check["consistent"] = (not any(v for k, v in check.items() if k.startswith(("vectors", "sparse_m", "sparse_o")))
                           and check["sparse_current"])
    return {
        "index": str(store.path), "backend": "embedded", "documents": _documents_total(store), "chunks": len(passages),
        "vectors": len(vectors), "sparse_passages": len(sparse_ids), "size_bytes": _size(store.path),
        "encoder": store.embedder_name, "chroma": store.chroma_url or "embedded",
        "version": version, "sparse_version": sparse_version,
        "last_update": datetime.fromtimestamp(updated, timezone.utc).isoformat(timespec="seconds") if updated else None,
        "check": check,
    }


def _size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
