"""Okapi BM25 served from a persisted sparse matrix.

Scores equal `rank_bm25.BM25Okapi` on the same tokens (same idf with its epsilon floor for
negative idf, same term-frequency saturation, query terms counted with repetition), but a
query touches only the matrix columns of its terms instead of scanning every document.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter

import numpy as np
from scipy import sparse

from agent.retrieval.arrays import open_npz

_TOKEN = re.compile(r"\w+", re.UNICODE)


def tokenize(text: str) -> list[str]:
    """Lower-cased word tokens; the same function builds the index and reads queries."""
    return _TOKEN.findall(text.lower())


class BM25Index:
    """Document-by-term matrix of precomputed BM25 term weights (CSC: fast column reads)."""

    def __init__(self, ids: list[str], vocabulary: dict[str, int], weights: sparse.csc_matrix, params: dict):
        self.ids = ids
        self.vocabulary = vocabulary
        self.weights = weights
        self.params = params
        self.version: int | None = None  # the passage table version it was built from (None: unknown)
        self.hashes: list[str] | None = None  # content hash of each passage, row by row

    @classmethod
    def build(
        cls, ids: list[str], documents: list[list[str]], k1: float = 1.5, b: float = 0.75, epsilon: float = 0.25
    ) -> "BM25Index":
        vocabulary: dict[str, int] = {}
        rows, cols, counts = [], [], []
        lengths = np.zeros(len(documents), dtype=np.float64)
        for row, tokens in enumerate(documents):
            lengths[row] = len(tokens)
            for term, count in Counter(tokens).items():
                rows.append(row)
                cols.append(vocabulary.setdefault(term, len(vocabulary)))
                counts.append(count)
        shape = (len(documents), len(vocabulary))
        tf = sparse.csr_matrix((np.array(counts, dtype=np.float64), (rows, cols)), shape=shape)
        n_docs = max(len(documents), 1)
        average_length = float(lengths.sum() / n_docs) or 1.0
        doc_freq = np.bincount(np.asarray(cols, dtype=np.int64), minlength=len(vocabulary)).astype(np.float64)
        idf = np.log(n_docs - doc_freq + 0.5) - np.log(doc_freq + 0.5)
        if len(idf):
            idf[idf < 0] = epsilon * idf.mean()  # rank_bm25's floor for very common terms
        norm = k1 * (1 - b + b * lengths / average_length)
        row_of_entry = np.repeat(np.arange(shape[0]), np.diff(tf.indptr))
        data = tf.data
        tf.data = idf[tf.indices] * data * (k1 + 1) / (data + norm[row_of_entry])
        params = {"k1": k1, "b": b, "epsilon": epsilon, "average_length": average_length}
        return cls(list(ids), vocabulary, tf.tocsc(), params)

    def row_of(self) -> dict[str, int]:
        """{passage id: matrix row}, built once per matrix."""
        if getattr(self, "_row_of", None) is None:
            self._row_of = {passage_id: row for row, passage_id in enumerate(self.ids)}
        return self._row_of

    def __len__(self) -> int:
        return len(self.ids)

    def scores(self, query_tokens: list[str]) -> np.ndarray:
        """BM25 score of every document for the query (zeros for unknown terms)."""
        counts = Counter(t for t in query_tokens if t in self.vocabulary)
        if not counts:
            return np.zeros(len(self.ids))
        # read each query term's column straight from the CSC arrays: no sparse slicing copies
        matrix, rows, values = self.weights, [], []
        for term, count in counts.items():
            column = self.vocabulary[term]
            start, end = matrix.indptr[column], matrix.indptr[column + 1]
            rows.append(matrix.indices[start:end])
            values.append(matrix.data[start:end] * count)
        return np.bincount(np.concatenate(rows), weights=np.concatenate(values), minlength=len(self.ids))

    def search(self, query: str, k: int) -> list[tuple[str, float]]:
        """Top-k (id, score) for a query, best first, equal scores in passage order (also at the
        cut); documents with no query term excluded."""
        scores = self.scores(tokenize(query))
        matched = np.flatnonzero(scores)
        if not len(matched) or k <= 0:
            return []
        if len(matched) > k:  # keep every passage tied with the k-th, so the earlier one wins the cut too
            kth = -np.partition(-scores[matched], k - 1)[k - 1]
            matched = matched[scores[matched] >= kth]
        ranked = matched[np.lexsort((matched, -scores[matched]))][:k]
        return [(self.ids[i], float(scores[i])) for i in ranked]

    def save(self, path: str) -> None:
        """Write atomically: readers see the old file or the new one, never half of one."""
        meta = json.dumps({"ids": self.ids, "vocabulary": list(self.vocabulary), "params": self.params,
                           "hashes": self.hashes})
        tmp_path = f"{path}.{os.getpid()}.tmp"
        with open(tmp_path, "wb") as handle:
            np.savez(
                handle,
                data=self.weights.data, indices=self.weights.indices, indptr=self.weights.indptr,
                shape=np.array(self.weights.shape), meta=np.frombuffer(meta.encode(), dtype=np.uint8),
                version=np.array(-1 if self.version is None else self.version),
            )
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_path, path)

    @classmethod
    def load(cls, path: str) -> "BM25Index":
        with open_npz(path, allow_pickle=False) as stored:
            meta = json.loads(stored["meta"].tobytes().decode())
            weights = sparse.csc_matrix(
                (stored["data"], stored["indices"], stored["indptr"]), shape=tuple(stored["shape"])
            )
            version = int(stored["version"]) if "version" in stored.files else -1
        vocabulary = {term: column for column, term in enumerate(meta["vocabulary"])}
        index = cls(meta["ids"], vocabulary, weights, meta["params"])
        index.version, index.hashes = (None if version < 0 else version), meta.get("hashes")
        return index

    @staticmethod
    def stored_version(path: str) -> int | None:
        """The version a saved matrix was built from, read without loading it (None: unknown)."""
        try:
            with open_npz(path, allow_pickle=False) as stored:
                version = int(stored["version"]) if "version" in stored.files else -1
        except (OSError, ValueError):
            return None
        return None if version < 0 else version
