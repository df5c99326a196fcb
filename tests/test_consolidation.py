"""Consolidation on fixed vectors: HDBSCAN equivalence, medoids by hand, merged citations."""

import hdbscan
import numpy as np
import pytest

from agent.steps.consolidation import (
    PRESETS, ClusterPreset, cluster_labels, consolidate_pairs, cosine_distances, groups_from_labels, medoid, pair_text,
)
from agent.errors import InputError


def partition(labels) -> set[frozenset[int]]:
    """Clusters as sets of point indices (label numbers do not matter), noise left out."""
    return {frozenset(int(i) for i in np.flatnonzero(labels == label)) for label in set(labels.tolist()) - {-1}}


def blobs(seed: int, centers: int, per_center: int, outliers: int, spread: float = 0.15) -> np.ndarray:
    """Points around random directions, with random norms (cosine must ignore them)."""
    rng = np.random.default_rng(seed)
    directions = rng.normal(size=(centers, 24))
    points = [d + spread * np.linalg.norm(d) * rng.normal(size=(per_center, 24)) / np.sqrt(24) for d in directions]
    points.append(rng.normal(size=(outliers, 24)).reshape(outliers, 24))
    vectors = np.vstack(points)
    return vectors * rng.uniform(0.5, 3.0, size=(len(vectors), 1))


def reference_labels(vectors: np.ndarray, parameters) -> np.ndarray:
    """hdbscan.HDBSCAN on the raw vectors with metric="cosine": the same parameters, then the
    single-cluster parameters when the first pass finds only noise."""
    labels = hdbscan.HDBSCAN(metric="cosine", algorithm="generic", **parameters.hdbscan_parameters()).fit(vectors).labels_
    if np.all(labels == -1):
        labels = hdbscan.HDBSCAN(
            metric="cosine", algorithm="generic", **parameters.single_cluster_parameters()).fit(vectors).labels_
    return labels


@pytest.mark.parametrize("preset_name", sorted(PRESETS))
@pytest.mark.parametrize("seed,centers,per_center,outliers", [
    (0, 3, 4, 2), (1, 2, 6, 3), (2, 4, 3, 1), (3, 1, 7, 2), (4, 5, 2, 4), (5, 3, 5, 0), (6, 1, 5, 0), (7, 0, 0, 5),
])
def test_clusters_equal_hdbscan_with_the_same_parameters(preset_name, seed, centers, per_center, outliers):
    vectors = blobs(seed, centers, per_center, outliers)
    parameters = PRESETS[preset_name]
    expected = reference_labels(vectors, parameters)
    ours, _ = cluster_labels(vectors, parameters)
    assert partition(ours) == partition(expected)
    assert np.array_equal(ours == -1, expected == -1)


def test_first_pass_is_plain_hdbscan_and_the_second_runs_only_on_all_noise():
    several = blobs(0, 3, 4, 2)
    labels, single_pass = cluster_labels(several, PRESETS["default"])
    plain = hdbscan.HDBSCAN(min_cluster_size=2, min_samples=2, metric="cosine", algorithm="generic").fit(several)
    assert not single_pass and partition(labels) == partition(plain.labels_) and len(partition(labels)) == 3
    one = blobs(6, 1, 5, 0)
    assert np.all(hdbscan.HDBSCAN(min_cluster_size=2, min_samples=2, metric="cosine", algorithm="generic")
                  .fit(one).labels_ == -1)  # plain HDBSCAN cannot return one cluster
    labels, single_pass = cluster_labels(one, PRESETS["default"])
    assert single_pass and partition(labels) == {frozenset(range(5))}


def test_presets_fix_the_papers_minimums_and_conservative_merges_more():
    for parameters in PRESETS.values():
        assert parameters.min_cluster_size == 2 and parameters.min_samples == 2
    assert PRESETS["conservative"].cluster_selection_epsilon > PRESETS["default"].cluster_selection_epsilon
    assert PRESETS["conservative"].single_cluster_epsilon > PRESETS["default"].single_cluster_epsilon
    # two far-apart readings, each split into two sub-readings 0.235 apart in cosine distance:
    # four clusters by default, the sub-readings merged (two clusters) when conservative
    angles = [top + sub + jitter for top in (0.0, 1.6) for sub in (0.0, 0.7) for jitter in (-0.03, 0.0, 0.03)]
    vectors = np.array([[np.cos(a), np.sin(a)] for a in angles])
    sub_readings = {frozenset(range(i, i + 3)) for i in (0, 3, 6, 9)}
    assert partition(cluster_labels(vectors, PRESETS["default"])[0]) == sub_readings
    assert partition(cluster_labels(vectors, PRESETS["conservative"])[0]) == {frozenset(range(6)), frozenset(range(6, 12))}


def test_cosine_distances_are_symmetric_zero_diagonal_and_scale_free():
    vectors = np.array([[1.0, 0.0], [3.0, 0.0], [0.0, 2.0], [-1.0, 0.0]])
    distances = cosine_distances(vectors)
    assert np.allclose(distances, distances.T) and np.all(np.diag(distances) == 0)
    assert distances[0, 1] == pytest.approx(0.0) and distances[0, 2] == pytest.approx(1.0)
    assert distances[0, 3] == pytest.approx(2.0)


def test_medoid_has_the_largest_summed_similarity_checked_by_hand():
    # unit vectors; pairwise cosines: a.b = 0.8, a.c = 0.6, b.c = 0.96, d far away
    a, b, c, d = [1.0, 0.0], [0.8, 0.6], [0.6, 0.8], [-1.0, 0.0]
    vectors = np.array([a, b, c, d])
    # summed similarity within {a, b, c}: a = 1 + 0.8 + 0.6 = 2.4, b = 0.8 + 1 + 0.96 = 2.76, c = 0.6 + 0.96 + 1 = 2.56
    assert medoid(vectors, [0, 1, 2]) == 1
    # within {a, c}: both sum to 1.6, the tie goes to the first member
    assert medoid(vectors, [2, 0]) == 2
    # norms do not matter (cosine, not dot product)
    assert medoid(vectors * np.array([[5.0], [1.0], [1.0], [1.0]]), [0, 1, 2]) == 1


def pair(question: str, passage_id: str, rank: int, answer: str = "x") -> dict:
    return {"question": question, "answer": answer, "passage_id": passage_id, "rank": rank}


def test_citations_of_every_pair_merge_into_the_cluster_medoid():
    # (with hdbscan's min_samples=2 a point needs two neighbours, so a cluster has 3+ members)
    vectors = np.array([[1.0, 0.0], [1.0, 0.03], [1.0, 0.06], [0.0, 1.0], [0.03, 1.0], [-1.0, -1.0], [0.06, 1.0]])
    pairs = [pair("company a", "p1", 0), pair("company b", "p2", 1), pair("company c", "p3", 2),
             pair("unit a", "p4", 3), pair("unit b", "p5", 4), pair("stray", "p6", 5), pair("unit c", "p7", 6)]
    labels = np.array([0, 0, 0, 1, 1, -1, 1])
    parameters = PRESETS["default"]
    assert partition(cluster_labels(vectors, parameters)[0]) == partition(labels)
    interpretations, report = consolidate_pairs(pairs, vectors, parameters)
    assert [item["question"] for item in interpretations] == ["company b", "unit b"]
    # medoid's own passage first, then the others by retrieval rank; the noise pair is dropped
    assert interpretations[0]["citations"] == ["p2", "p1", "p3"]
    assert interpretations[1]["citations"] == ["p5", "p4", "p7"]
    assert report["clusters"] == 2 and report["noise"] == 1 and report["cluster_sizes"] == [3, 3]
    assert not report["all_noise"] and not report["single_cluster_pass"]


def test_everything_noise_keeps_every_pair_with_its_own_citation():
    vectors = np.eye(4)
    pairs = [pair(f"q{i}", f"p{i}", i) for i in range(4)]
    interpretations, report = consolidate_pairs(pairs, vectors, PRESETS["default"])
    assert report["all_noise"] and report["clusters"] == 0 and report["noise"] == 4
    assert [(item["question"], item["citations"]) for item in interpretations] == [
        (f"q{i}", [f"p{i}"]) for i in range(4)]


def test_one_tight_group_is_one_cluster_and_far_points_are_noise():
    vectors = np.array([[1.0, 0.0, 0.0], [0.99, 0.1, 0.0], [0.98, 0.0, 0.1], [0.97, 0.1, 0.1], [0.0, 0.0, 1.0]])
    labels, single_pass = cluster_labels(vectors, PRESETS["default"])
    assert single_pass and partition(labels) == {frozenset({0, 1, 2, 3})} and labels[4] == -1


@pytest.mark.parametrize("count", [0, 1])
def test_fewer_than_two_pairs_are_noise_without_calling_hdbscan(count):
    labels, single_pass = cluster_labels(np.ones((count, 3)), PRESETS["default"])
    assert labels.tolist() == [-1] * count and not single_pass


def test_two_identical_pairs_form_one_cluster_two_different_stay_apart():
    assert partition(cluster_labels(np.array([[1.0, 0.0], [1.0, 0.0]]), PRESETS["default"])[0]) == {frozenset({0, 1})}
    assert partition(cluster_labels(np.array([[1.0, 0.0], [0.0, 1.0]]), PRESETS["default"])[0]) == set()


def test_groups_from_labels_and_pair_text_modes():
    assert groups_from_labels(np.array([1, -1, 1, 0])) == ([[3], [0, 2]], False)
    assert groups_from_labels(np.array([-1, -1])) == ([[0], [1]], True)
    item = {"question": "What is HP, the company?", "answer": "Hewlett-Packard"}
    assert pair_text(item) == "What is HP, the company? Hewlett-Packard"
    assert pair_text(item, "question") == "What is HP, the company?"


def test_unknown_preset_is_an_input_error():
    from agent.steps.consolidation import preset

    assert preset("conservative") is PRESETS["conservative"]
    with pytest.raises(InputError, match="conservative"):
        preset("aggressive")


def test_preset_parameters_are_the_ones_passed_to_hdbscan():
    parameters = ClusterPreset(cluster_selection_epsilon=0.1, single_cluster_epsilon=0.25)
    assert parameters.hdbscan_parameters() == {
        "min_cluster_size": 2, "min_samples": 2, "cluster_selection_method": "eom", "cluster_selection_epsilon": 0.1,
    }
    assert parameters.single_cluster_parameters() == {
        "min_cluster_size": 2, "min_samples": 2, "cluster_selection_method": "eom", "cluster_selection_epsilon": 0.25,
        "allow_single_cluster": True,
    }
