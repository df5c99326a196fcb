"""Reading `.npz` files safely from several threads at once."""
from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Iterator

import numpy as np

# numpy parses each array's header with `ast.literal_eval`; CPython 3.11's AST builder keeps its
# recursion-depth check in state threads share, so two threads reading arrays at once can fail
# with "SystemError: AST constructor recursion depth mismatch". One lock serialises the reads.
_NPZ_LOCK = threading.Lock()


@contextmanager
def open_npz(path, **options) -> Iterator[np.lib.npyio.NpzFile]:
    """`np.load(path, **options)` held under a process-wide lock while its arrays are read."""
    with _NPZ_LOCK, np.load(path, **options) as data:
        yield data
