"""Consolidating feedback (the VERDICT paper, §4.2): cluster the extracted (interpretation, answer)
pairs, keep one medoid per cluster, and merge the citations of every pair in its cluster.

Pairs agreed on by several passages form dense clusters; a pair that no other passage
supports is noise and is dropped, unless everything is noise (then there is no consensus to
prefer, and every pair is kept). Clustering is HDBSCAN from the `hdbscan` package on a
precomputed cosine-distance matrix; tests check it against `hdbscan.HDBSCAN` with
`metric="cosine"` on the raw vectors.

Plain HDBSCAN never returns exactly one cluster (the root is not eligible), so a question
with one reading, where every passage agrees, comes out as all noise. Only then a second
pass allows a single cluster, limited to points within `single_cluster_epsilon` of each
other, so that agreeing pairs become one interpretation while unrelated ones stay noise.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Literal

import numpy as np

EmbeddingMode = Literal["question+answer", "question"]
PresetName = Literal["default", "conservative"]
NOISE = -1


@dataclass(frozen=True)
class ClusterPreset:
    """HDBSCAN parameters (cosine distances). The conservative preset merges clusters that
    split below `cluster_selection_epsilon` and accepts a looser lone cluster: fewer readings."""

    min_cluster_size: int = 2
    min_samples: int = 2
    cluster_selection_method: str = "eom"
    cluster_selection_epsilon: float = 0.0
    single_cluster_epsilon: float = 0.2  # second pass, only when the first finds nothing but noise

    def hdbscan_parameters(self) -> dict:
        return {
            "min_cluster_size": self.min_cluster_size, "min_samples": self.min_samples,
            "cluster_selection_method": self.cluster_selection_method,
            "cluster_selection_epsilon": self.cluster_selection_epsilon,
        }

    def single_cluster_parameters(self) -> dict:
        return {**self.hdbscan_parameters(), "allow_single_cluster": True,
                "cluster_selection_epsilon": self.single_cluster_epsilon}


PRESETS: dict[str, ClusterPreset] = {
    "default": ClusterPreset(),
    "conservative": ClusterPreset(cluster_selection_epsilon=0.3, single_cluster_epsilon=0.3),
}


def preset(name: str) -> ClusterPreset:
    from agent.errors import InputError

    if name not in PRESETS:
        raise InputError(f"unknown cluster preset {name!r}; choose {' or '.join(PRESETS)}")
    return PRESETS[name]


def pair_text(pair: dict, mode: EmbeddingMode = "question+answer") -> str:
    """What gets embedded: f(q; y) by default, or the interpretation alone."""
    if mode == "question":
        return pair["question"]
    return f"{pair['question']} {pair['answer']}"


def cosine_distances(vectors: np.ndarray) -> np.ndarray:
    """1 - cosine similarity in float64, symmetric, zero on the diagonal, never negative."""
    matrix = np.asarray(vectors, dtype=np.float64)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    unit = matrix / np.maximum(norms, 1e-12)
    distances = np.clip(1.0 - unit @ unit.T, 0.0, 2.0)
    distances = (distances + distances.T) / 2.0
    np.fill_diagonal(distances, 0.0)
    return distances


def _hdbscan(distances: np.ndarray, parameters: dict) -> np.ndarray:
    import hdbscan

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # tiny inputs make hdbscan warn about min_samples
        clusterer = hdbscan.HDBSCAN(metric="precomputed", **parameters)
        return np.asarray(clusterer.fit(distances).labels_, dtype=int)


def cluster_labels(vectors: np.ndarray, parameters: ClusterPreset) -> tuple[np.ndarray, bool]:
    """(HDBSCAN labels per vector with -1 = noise, whether the single-cluster pass decided).
    Fewer than two points cannot form a cluster."""
    count = len(vectors)
    if count < max(2, parameters.min_cluster_size):
        return np.full(count, NOISE, dtype=int), False
    distances = cosine_distances(vectors)
    labels = _hdbscan(distances, parameters.hdbscan_parameters())
    if np.all(labels == NOISE):
        return _hdbscan(distances, parameters.single_cluster_parameters()), True
    return labels, False


def medoid(vectors: np.ndarray, members: list[int]) -> int:
    """The member with the largest summed cosine similarity to its cluster (ties: first)."""
    unit = np.asarray(vectors, dtype=np.float64)[members]
    unit = unit / np.maximum(np.linalg.norm(unit, axis=1, keepdims=True), 1e-12)
    return members[int(np.argmax((unit @ unit.T).sum(axis=1)))]


def groups_from_labels(labels: np.ndarray) -> tuple[list[list[int]], bool]:
    """(member lists, all_noise): one list per cluster, or one per point when all is noise."""
    clusters = sorted({int(label) for label in labels if label != NOISE})
    if not clusters:
        return [[index] for index in range(len(labels))], True
    return [[i for i, label in enumerate(labels) if label == cluster] for cluster in clusters], False


def consolidate_pairs(pairs: list[dict], vectors: np.ndarray, parameters: ClusterPreset) -> tuple[list[dict], dict]:
    """(interpretations, report). Each interpretation is a cluster's medoid pair with the
    citations of all its members (the medoid's passage first, then by retrieval rank); the
    biggest clusters come first. Pairs carry `question`, `answer`, `passage_id`, `rank`."""
    if not pairs:
        return [], {"clusters": 0, "noise": 0, "all_noise": False, "single_cluster_pass": False, "cluster_sizes": []}
    labels, single_pass = cluster_labels(vectors, parameters)
    groups, all_noise = groups_from_labels(labels)
    groups.sort(key=lambda members: (-len(members), min(pairs[i]["rank"] for i in members)))
    interpretations = []
    for members in groups:
        center = medoid(vectors, members)
        others = sorted((i for i in members if i != center), key=lambda i: pairs[i]["rank"])
        citations = list(dict.fromkeys(pairs[i]["passage_id"] for i in [center, *others]))
        interpretations.append(
            {"question": pairs[center]["question"], "answer": pairs[center]["answer"], "citations": citations}
        )
    report = {
        "clusters": 0 if all_noise else len(groups),
        "noise": int(np.sum(labels == NOISE)),
        "all_noise": all_noise,
        "single_cluster_pass": single_pass,
        "cluster_sizes": [len(members) for members in groups],
        "labels": [int(label) for label in labels],
    }
    return interpretations, report
