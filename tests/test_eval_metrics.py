"""Each evaluation metric against values computed by hand from its reference definition."""

import math

import pytest

from agent.evaluation import metrics
from agent.evaluation.scoring import predicted_ambiguous


def test_normalization_drops_case_punctuation_articles_and_extra_space():
    assert metrics.normalize_answer("  The Eiffel-Tower, in   Paris!") == "eiffeltower in paris"
    assert metrics.normalize_answer("An apple a day") == "apple day"


def test_str_em_counts_qa_pairs_hit_by_any_short_answer_and_hit_needs_all():
    groups = [["Ali Daei", "Daei"], ["Josef Bican", "Bican"], ["Christine Sinclair"]]
    output = "Ali Daei holds the men's record; christine SINCLAIR holds the women's."
    em, hit = metrics.str_em_hit(groups, output)
    assert em == pytest.approx(2 / 3) and hit == 0.0
    assert metrics.str_em_hit(groups, output + " Bican scored 805.") == (1.0, 1.0)
    # substring after normalization: "the" is removed on both sides
    assert metrics.exact_presence(["The Beatles"], "It was beatles.")
    assert not metrics.exact_presence(["1999"], "in 1998")


def test_citations_are_removed_like_alce():
    assert metrics.remove_citations("Paris [1][2] is big [3].") == "Paris is big."


def test_sentence_split_keeps_abbreviations_initials_and_numbers_before_lowercase():
    text = "He won in 2003. the film was big. Mr. Smith left. He returned! J. K. Rowling wrote it? yes"
    assert metrics.split_sentences(text) == [
        "He won in 2003. the film was big.", "Mr. Smith left.", "He returned!", "J. K. Rowling wrote it?", "yes"]


def test_rouge_lsum_summary_level_lcs_by_hand():
    # reference sentences [the cat sat] [the dog ran], prediction [the cat ran]:
    # union-LCS hits: the, cat (sentence 1), ran (sentence 2; "the" already used up) = 3
    # recall 3/6, precision 3/3 -> F = 2/3
    assert metrics.rouge_lsum(["the cat sat. the dog ran."], "the cat ran.") == pytest.approx(2 / 3)
    # Porter stemming: dogs/dog and running/runs match
    assert metrics.rouge_lsum(["dogs running"], "dog runs") == pytest.approx(1.0)
    # best over the references
    assert metrics.rouge_lsum(["nothing alike here", "the cat sat. the dog ran."], "the cat ran.") == pytest.approx(2 / 3)
    with pytest.raises(ValueError):
        metrics.rouge_lsum(["  "], "x")


def test_answer_set_f1_matches_one_to_one_and_takes_the_best_annotation():
    annotations = [[["a", "A1"], ["b"]], [["c"]]]
    # annotation 1: one of two gold groups and one of two predictions matched -> F1 0.5
    assert metrics.answer_set_f1(annotations, ["A1", "x"]) == pytest.approx(0.5)
    assert metrics.answer_set_f1(annotations, ["C"]) == pytest.approx(1.0)
    # a prediction is used once: two identical gold groups, one prediction -> R 1/2, P 1 -> 2/3
    assert metrics.answer_set_f1([[["x"], ["x"]]], ["x"]) == pytest.approx(2 / 3)
    assert metrics.answer_set_f1(annotations, []) == 0.0


def test_ndcg_and_recall_at_5_by_hand():
    retrieved = ["a", "b", "c", "d", "e", "z"]
    gold = {"b", "z"}
    ideal = 1 + 1 / math.log2(3)
    assert metrics.ndcg_at_k(retrieved, gold, 5) == pytest.approx((1 / math.log2(3)) / ideal)
    assert metrics.recall_at_k(retrieved, gold, 5) == pytest.approx(0.5)
    assert metrics.recall_at_k(retrieved, gold, 6) == pytest.approx(1.0)
    # a gold title repeated by several passages earns gain once
    assert metrics.ndcg_at_k(["b", "b", "b"], {"b"}, 5) == pytest.approx(1.0)


def test_mrecall_needs_all_answers_or_at_least_k():
    passages = ["Ali Daei scored 109 goals.", "Josef Bican scored 805.", "A stadium."]
    groups = [["Daei"], ["Bican"], ["Sinclair"]]
    assert metrics.mrecall_at_k(passages, groups, k=5) == 0.0  # 2 of 3 answers, and 3 <= 5
    assert metrics.mrecall_at_k(passages, groups, k=2) == 1.0  # n = 3 > k = 2: two covered suffice
    assert metrics.mrecall_at_k(passages, groups[:2], k=5) == 1.0
    assert metrics.mrecall_at_k(passages[2:], groups[:2], k=1) == 0.0


def test_detection_precision_recall_f1_accuracy():
    pairs = [(True, True), (True, False), (False, True), (False, False), (True, True)]
    scores = metrics.detection_scores(pairs)
    assert (scores["tp"], scores["fp"], scores["fn"], scores["tn"]) == (2, 1, 1, 1)
    assert scores["precision"] == pytest.approx(2 / 3) and scores["recall"] == pytest.approx(2 / 3)
    assert scores["f1"] == pytest.approx(2 / 3) and scores["accuracy"] == pytest.approx(3 / 5)
    assert metrics.detection_scores([])["f1"] == 0.0


def test_percentiles_interpolate_like_numpy():
    assert metrics.percentile([4, 1, 3, 2], 50) == pytest.approx(2.5)
    assert metrics.percentile([1, 2, 3, 4], 95) == pytest.approx(3.85)
    assert metrics.percentile([1, 2, 3, 4], 99) == pytest.approx(3.97)
    assert metrics.percentile([7.0], 99) == 7.0


def test_token_f1_is_squad_f1():
    assert metrics.token_f1("the big cat", "a cat") == pytest.approx(2 / 3)
    assert metrics.token_f1("dog", "cat") == 0.0


def test_predicted_ambiguity_reads_the_common_decision():
    two = [{"question": "What is HP, the company?"}, {"question": "What is hp, the unit?"}]
    assert predicted_ambiguous({"interpretations": two}) is True
    assert predicted_ambiguous({"interpretations": two[:1]}) is False
    assert predicted_ambiguous({"decision": {"ambiguous": True}}) is True
    assert predicted_ambiguous({"decision": {"ambiguous": False}, "interpretations": two}) is False
    # a method that does not judge (None) is scored by the readings it reports
    assert predicted_ambiguous({"decision": {"ambiguous": None}, "interpretations": two}) is True
    # method detail is not guessed at any more: only the common field counts
    assert predicted_ambiguous({"decision": {"adf": {"gate": "Unambiguous"}}, "interpretations": two}) is True