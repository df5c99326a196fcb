"""Semantic coherence of a retrieval set (the ADF paper, sections 4.2-4.3), as plain numpy/sklearn.

The ADF gate looks at the geometry of the passages retrieved for a question rather than at
the question's wording: passages about one topic sit close together, passages about two or
more readings of the question form separate groups. Everything here is deterministic (fixed
KMeans seed), so a question always gets the same gate decision on the same index.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from agent.retrieval.products import product_key

Gate = Literal["Ambiguous", "Uncertain", "Unambiguous"]
SEED = 0  # KMeans initialisation: the gate must not flip between two runs of one question
MIN_DECOMPOSE_PASSAGES = 4  # the paper finds KMeans unreliable below 4-5 passages (section 7.2)
MAX_CLUSTERS = 4


@dataclass(frozen=True)
class Preset:
    """Dataset-tuned thresholds and the HyDE style that suits the dataset's answers."""

    tau_var: float
    tau_sep: float
    hyde_style: Literal["short", "detailed"]


PRESETS = {
    "ambignq": Preset(tau_var=0.25, tau_sep=0.1, hyde_style="short"),  # short entity answers
    "asqa": Preset(tau_var=0.15, tau_sep=0.05, hyde_style="detailed"),  # long-form answers
}


def _matrix(vectors) -> np.ndarray:
    return np.asarray(vectors, dtype=np.float64).reshape(len(vectors), -1) if len(vectors) else np.zeros((0, 1))


def kmeans_labels(matrix: np.ndarray, k: int) -> np.ndarray:
    """KMeans labels with a fixed seed, single-threaded: on ten points, thread start-up costs
    fifteen times the clustering itself."""
    from sklearn.cluster import KMeans
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        return KMeans(n_clusters=k, n_init=10, random_state=SEED).fit_predict(matrix)


def dispersion(vectors) -> float:
    """sigma_var^2: mean squared Euclidean distance of the vectors to their centroid."""
    matrix = _matrix(vectors)
    if len(matrix) == 0:
        return 0.0
    return float(((matrix - matrix.mean(axis=0)) ** 2).sum(axis=1).mean())


EXACT_TWO_MEANS = 14  # points up to which every 2-split is tried (8,191 of them)


def best_split(matrix: np.ndarray) -> np.ndarray:
    """Labels of the 2-split with the least within-cluster sum of squares, found by trying every
    split: the exact 2-means, where KMeans' seeded restarts can stop in a local optimum (15 of
    160 demo pools, 85 of 300 ASQA pools), and ~1 ms on the gate's 10 passages with no
    scikit-learn import, which cost a fresh process ~1 s before its first cited line."""
    n = len(matrix)
    masks = ((np.arange(1, 2 ** (n - 1))[:, None] >> np.arange(n - 1)) & 1).astype(np.float64)
    masks = np.hstack([np.zeros((len(masks), 1)), masks])  # the first point stays in cluster 0: no mirror splits
    counts = masks.sum(axis=1)
    ones = masks @ matrix
    rest = matrix.sum(axis=0) - ones
    between = (ones ** 2).sum(axis=1) / counts + (rest ** 2).sum(axis=1) / (n - counts)
    return masks[int(np.argmax(between))].astype(int)  # the most explained is the least left within


def two_means(vectors) -> np.ndarray:
    """Labels of a 2-means clustering (all zeros when there are fewer than 2 distinct points)."""
    matrix = _matrix(vectors)
    if len(np.unique(matrix, axis=0)) < 2:
        return np.zeros(len(matrix), dtype=int)
    return best_split(matrix) if len(matrix) <= EXACT_TWO_MEANS else kmeans_labels(matrix, 2)


def silhouette(matrix: np.ndarray, labels: np.ndarray) -> float:
    """Mean Euclidean silhouette, as scikit-learn's silhouette_score: a point alone in its
    cluster scores 0."""
    distances = np.sqrt(np.maximum(((matrix[:, None, :] - matrix[None, :, :]) ** 2).sum(axis=2), 0.0))
    scores = np.zeros(len(matrix))
    for i, label in enumerate(labels):
        same = labels == label
        if same.sum() < 2:
            continue
        inside = distances[i, same].sum() / (same.sum() - 1)
        outside = min(distances[i, labels == other].mean() for other in set(labels.tolist()) - {label})
        scores[i] = (outside - inside) / max(inside, outside) if max(inside, outside) > 0 else 0.0
    return float(scores.mean())


def separability(vectors) -> float:
    """sigma_sep: mean silhouette of a 2-means clustering; 0 when it is undefined
    (fewer than 3 passages, or all of them identical), which reads as "no structure"."""
    matrix = _matrix(vectors)
    if len(matrix) < 3:
        return 0.0
    labels = two_means(matrix)
    if len(set(labels.tolist())) < 2:
        return 0.0
    return silhouette(matrix, labels)


def classify(variance: float, separation: float, tau_var: float, tau_sep: float) -> Gate:
    """Equation 3: separable groups mean Ambiguous; spread without groups means Uncertain."""
    if separation >= tau_sep:
        return "Ambiguous"
    if variance >= tau_var:
        return "Uncertain"
    return "Unambiguous"


def adaptive_k(passage_count: int) -> int:
    """Equation 4: k = min(max(2, floor(n / 2)), 4); with the 10 detection passages, 4."""
    return min(max(2, passage_count // 2), MAX_CLUSTERS)


def cosine(a, b) -> float:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    norm = np.linalg.norm(a) * np.linalg.norm(b)
    return float(a @ b / norm) if norm > 0 else 0.0


def cluster_passages(vectors, query_vector, min_cosine: float = 0.2) -> list[dict]:
    """KMeans over ALL the passage vectors with the adaptive k; each cluster as
    {"members": passage indices, "cosine": cos(query, centroid), "kept": cosine >= min_cosine},
    ordered by cosine, best first (clusters far from the query are noise, equation 5)."""
    matrix = _matrix(vectors)
    k = min(adaptive_k(len(matrix)), len(np.unique(matrix, axis=0)))
    labels = kmeans_labels(matrix, k) if k >= 2 else np.zeros(len(matrix), dtype=int)
    clusters = []
    for label in sorted(set(labels.tolist())):
        members = [int(i) for i in np.flatnonzero(labels == label)]
        similarity = cosine(query_vector, matrix[members].mean(axis=0))
        clusters.append({"members": members, "cosine": round(similarity, 6), "kept": similarity >= min_cosine})
    return sorted(clusters, key=lambda c: -c["cosine"])


def product_clusters(passages: list[dict], vectors, query_vector, min_cosine: float = 0.2) -> list[dict]:
    """One cluster per product the passages document (`product`, agent/retrieval/pool.py), the
    best-ranked MAX_CLUSTERS, shaped as `cluster_passages`'s and ordered by cosine; [] when
    they document fewer than two: then the vectors' geometry (KMeans) groups them."""
    groups: dict[str, list[int]] = {}
    for index, passage in enumerate(passages):
        if passage.get("product"):
            groups.setdefault(product_key(passage["product"]), []).append(index)
    if len(groups) < 2:
        return []
    matrix = _matrix(vectors)
    clusters = []
    for members in list(groups.values())[:MAX_CLUSTERS]:  # first seen = best ranked
        similarity = cosine(query_vector, matrix[members].mean(axis=0))
        clusters.append({"members": members, "cosine": round(similarity, 6), "kept": similarity >= min_cosine})
    return sorted(clusters, key=lambda c: -c["cosine"])


def pathway_overlap(sparse_ids: list[str], dense_ids: list[str]) -> dict:
    """How much the lexical and the HyDE pathway agree: shared / union of their passages
    (the paper reports 83%; the rest is what the second pathway adds)."""
    sparse, dense = set(sparse_ids), set(dense_ids)
    union = sparse | dense
    shared = len(sparse & dense)
    return {"shared": shared, "unique": len(union) - shared,
            "overlap": round(shared / len(union), 4) if union else 0.0}

