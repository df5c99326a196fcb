"""Token windows over prose: what a plain text file is cut into, and what a paragraph too long
for one passage is cut into inside its section."""

from __future__ import annotations

from agent.errors import InputError
from agent.retrieval.tokens import encoding


def chunk_text(text: str, chunk_tokens: int = 200, overlap_tokens: int = 40) -> list[str]:
    """Split text into windows of about `chunk_tokens` tokens, consecutive windows sharing
    about `overlap_tokens`; windows end on word boundaries so no word is cut."""
    if chunk_tokens <= 0 or not 0 <= overlap_tokens < chunk_tokens:
        raise InputError("chunk size must be positive and overlap smaller than the chunk size")
    words = text.split()
    if not words:
        return []
    costs = [len(encoding().encode(" " + word, disallowed_special=())) for word in words]
    if sum(costs) <= chunk_tokens:
        return [" ".join(words)]
    chunks, start = [], 0
    while start < len(words):
        end, used = start, 0
        while end < len(words) and (used + costs[end] <= chunk_tokens or end == start):
            used += costs[end]
            end += 1
        chunks.append(" ".join(words[start:end]))
        if end >= len(words):
            break
        back, kept = end, 0
        while back - 1 > start and kept + costs[back - 1] <= overlap_tokens:
            back -= 1
            kept += costs[back]
        start = back
    return chunks
