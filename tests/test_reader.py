"""The answer-sentence reader: it tells an answer from a mention, its ONNX build is the trained
model, the `reading_scorer` setting switches what scores readings, and a missing build says so."""

from __future__ import annotations

import json

import numpy as np
import pytest

from agent.assembly.features import Candidate
from agent.assembly.reader import DELTA_PATH, ReaderUnavailableError, reader_probabilities
from agent.context import Context
from agent.errors import InputError

# (question, a sentence answering it, a sentence about the same subject that does not)
ANSWER_AND_MENTION = [
    ("Who founded Hewlett-Packard?",
     "Hewlett-Packard was founded in 1939 by Bill Hewlett and David Packard.",
     "Hewlett-Packard is one of the best known technology companies in Silicon Valley."),
    ("When was the Eiffel Tower completed?",
     "The Eiffel Tower was completed in March 1889 for the World's Fair.",
     "The Eiffel Tower is the most visited paid monument in the world."),
    ("How long is the Amazon River?",
     "The Amazon River is about 6,400 kilometres long.",
     "The Amazon River flows through Brazil, Peru and Colombia."),
    ("Who approves travel expenses at Northwind?",
     "Travel expenses at Northwind are approved by the employee's line manager.",
     "Northwind staff travel to client sites several times a year."),
    ("What is the capital of Australia?",
     "Canberra is the capital city of Australia.",
     "Australia is the sixth-largest country in the world by area."),
]


def test_the_reader_ranks_an_answering_sentence_above_one_that_only_mentions_the_subject():
    pairs = [(q, s) for q, answer, mention in ANSWER_AND_MENTION for s in (answer, mention)]
    scores = reader_probabilities(pairs)
    assert all(0.0 <= p <= 1.0 for p in scores)
    for (question, _, _), answer, mention in zip(ANSWER_AND_MENTION, scores[::2], scores[1::2]):
        assert answer > mention, question


def test_the_onnx_build_gives_the_trained_torch_models_scores():
    """The delta keeps the scores the trained model (torch) gave a few pairs; the ONNX file the
    install built from the packaged weights and the delta must give them again."""
    with np.load(DELTA_PATH) as data:
        questions, texts, expected = list(data["check_questions"]), list(data["check_texts"]), data["check_scores"]
    assert len(expected) >= 8
    found = reader_probabilities(list(zip(questions, texts)))
    assert np.max(np.abs(np.asarray(found) - expected)) < 1e-3


def test_a_missing_reader_build_is_one_clear_error(tmp_path):
    with pytest.raises(ReaderUnavailableError, match="run `make install`"):
        reader_probabilities([("Who founded HP?", "Bill Hewlett and David Packard.")],
                             path=str(tmp_path / "missing.onnx"))


def test_the_reading_scorer_setting_switches_what_scores_the_sentences(monkeypatch):
    from agent.assembly import selector

    passage = {"id": "p1", "title": "Hewlett-Packard", "text": "x"}
    found = [Candidate(passage, 0, "HP was founded in 1939.", 0), Candidate(passage, 1, "HP is large.", 0)]
    asked = []
    monkeypatch.setattr(selector, "_logistic_pool", lambda *args, **kwargs: [(found[0], 0.3), (found[1], 0.3)])
    monkeypatch.setattr(selector, "reader_scores", lambda question, candidates: asked.append(question) or [0.95, 0.02])
    monkeypatch.setattr(selector, "load_mix", lambda: selector.ReaderMix(0.5, 1.0, 0.0, 0.5))
    _, unread = selector.scored_parts("Who founded HP?", [passage], Context(reading_scorer="logistic"))
    logistic = selector.score_pool("Who founded HP?", [passage], Context(reading_scorer="logistic"))
    assert unread is None and not asked and [p for _, p in logistic] == [0.3, 0.3]
    _, read = selector.scored_parts("Who founded HP?", [passage], Context(reading_scorer="reader"))
    mixed = selector.score_pool("Who founded HP?", [passage], Context(reading_scorer="reader"))
    assert read == [0.95, 0.02] and mixed[0][1] > 0.5 > mixed[1][1]
    _, only_best = selector.scored_parts("Who founded HP?", [passage], Context(reading_scorer="reader", reader_candidates=1))
    assert only_best[1] == selector.NOT_READ  # the reader reads the selector's best `reader_candidates`
    with pytest.raises(InputError, match="reading_scorer"):
        Context(reading_scorer="judge")


def test_the_gate_counts_the_senses_the_reader_is_confident_about():
    from agent.assembly.gate import confident_senses

    company = {"id": "a", "title": "Hewlett-Packard: history", "text": ""}
    unit = {"id": "b", "title": "Horsepower", "text": ""}
    found = [(Candidate(company, 0, "HP is a company.", 0), 0.5), (Candidate(company, 1, "HP sells PCs.", 0), 0.5),
             (Candidate(unit, 0, "Horsepower is a unit of power.", 1), 0.5),
             (Candidate(unit, 1, "A cut sentence without an end", 1), 0.5)]
    assert confident_senses(found, [0.9, 0.8, 0.1, 0.9], 0.5) == 1  # the cut one is no reading
    assert confident_senses(found, [0.9, 0.1, 0.7, 0.1], 0.5) == 2


def test_a_sentence_the_reader_rejects_is_not_stated_however_sure_the_selector_is(monkeypatch):
    from agent.assembly import selector

    bass = {"id": "b1", "title": "Largemouth bass", "text": "x"}
    fender = {"id": "b2", "title": "Fender Precision Bass", "text": "x"}
    mention = Candidate(bass, 0, "The largemouth bass is the most popular game fish in the United States.", 0)
    answer = Candidate(fender, 0, "Leo Fender introduced the Precision Bass in 1951.", 1)
    low = Candidate(fender, 1, "It has four strings.", 1)
    read = []
    monkeypatch.setattr(selector, "reader_scores",
                        lambda question, found: read.extend(found) or [0.45 if c is mention else 0.9 for c in found])
    kept = selector.vetoed("Who made the bass popular?", [(mention, 0.9), (answer, 0.6), (low, 0.1)], 0.8, 0.25)
    assert [p for _, p in kept] == [0.0, 0.6, 0.1]  # the mention goes; a candidate under the threshold is not read
    assert all(c is not low for c in read)
    chosen = selector.choose(kept, 0.25, 4)
    assert [c for c, _ in chosen] == [answer]


def _pair(qid: str, title: str, label: int, sentence: str = "s") -> dict:
    return {"qid": qid, "query": f"q{qid}", "title": title, "sentence": sentence, "label": label}


def test_reader_training_batches_keep_a_passages_answer_beside_its_mentions():
    import random

    from bench.train_reader import group_batches
    pairs = [_pair(str(q), f"t{t}", int(i == 0), f"{q}{t}{i}") for q in range(6) for t in range(3) for i in range(3)]
    batches = group_batches(pairs, 8, random.Random(0))
    assert sorted(id(p) for batch in batches for p in batch) == sorted(id(p) for p in pairs)
    for batch in batches:  # a group is never split across two batches
        for pair in batch:
            assert all(other in batch for other in pairs if (other["qid"], other["title"]) == (pair["qid"], pair["title"]))


def test_the_within_passage_loss_falls_when_the_answer_outscores_its_mentions():
    torch = pytest.importorskip("torch")
    from bench.train_reader import ordered_share, within_passage_loss
    batch = [_pair("1", "A", 1), _pair("1", "A", 0), _pair("1", "B", 0), _pair("2", "A", 0)]
    right = within_passage_loss(torch.tensor([3.0, -1.0, 9.0, 9.0]), batch)
    wrong = within_passage_loss(torch.tensor([-1.0, 3.0, -9.0, -9.0]), batch)
    assert right < 0.1 < wrong  # only the answer and the mention of the same question and passage compete
    assert ordered_share(batch, np.array([0.9, 0.2, 0.99, 0.99])) == 1.0
    assert ordered_share(batch, np.array([0.2, 0.9, 0.0, 0.0])) == 0.0


def test_the_mention_weight_makes_a_mention_read_as_an_answer_cost_more():
    torch = pytest.importorskip("torch")
    from bench.train_reader import batch_loss
    answer, mention, other = _pair("1", "A", 1), _pair("1", "A", 0) | {"why": "mentions"}, _pair("2", "B", 0) | {"why": "random"}
    logits = torch.tensor([2.0, 2.0, 2.0])  # each negative read as an answer
    plain = batch_loss(logits, [answer, mention, other], torch.tensor(3.0))
    assert torch.isclose(plain, torch.nn.BCEWithLogitsLoss(pos_weight=torch.tensor(3.0))(logits, torch.tensor([1.0, 0.0, 0.0])))
    heavier = batch_loss(logits, [answer, mention, other], torch.tensor(3.0), mention_weight=3.0)
    each = torch.nn.functional.binary_cross_entropy_with_logits(torch.tensor(2.0), torch.tensor(0.0))
    assert torch.isclose(heavier - plain, 2 * each / 3)  # only the mention's term grew, threefold
    assert batch_loss(logits, [answer, other, other], torch.tensor(3.0), mention_weight=3.0) == \
        batch_loss(logits, [answer, other, other], torch.tensor(3.0))  # no mention in the batch: unchanged


def test_reader_folds_hold_each_tune_topic_out_exactly_once(tmp_path):
    from bench.reader_folds import fold_groups
    rows = [{"source": "demo", "group": f"demo:topic{n}"} for n in range(10) for _ in range(2)]
    rows += [{"source": "asqa", "group": "asqa:1"}]  # public pairs are never held out: no fold sees a tune topic there
    path = tmp_path / "pairs.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    folds = fold_groups(path, 3, 13)
    held = [group for fold in folds for group in fold]
    assert sorted(held) == sorted(f"demo:topic{n}" for n in range(10))  # every topic once, none twice
    assert sorted(len(fold) for fold in folds) == [3, 3, 4]
    assert fold_groups(path, 3, 13) == folds and fold_groups(path, 3, 14) != folds  # seeded


def test_answer_choice_reads_the_first_passage_and_learns_which_of_its_sentences_answer():
    from agent.assembly.features import FEATURES, Candidate
    from bench.answer_choice import features, first_passage, pairwise_model

    def question(topic: str, answer_first: bool) -> dict:
        right, other = {"id": f"{topic}-1", "title": "Right"}, {"id": f"{topic}-2", "title": "Other"}
        found = [Candidate(right, 0, "It opens the passage.", 0), Candidate(right, 1, "It answers.", 0),
                 Candidate(right, 2, "It is cut off", 0), Candidate(other, 0, "It is elsewhere.", 1)]
        rows = np.zeros((4, len(FEATURES)))
        rows[1, FEATURES.index("word_match")] = 1.0  # the feature that tells the answer apart
        return {"topic": topic, "candidates": found, "labels": [False, True, False, False], "rows": rows,
                "reader_read": [0.9, 0.8 if answer_first else 0.95, 0.9, 0.5], "selector": [0.6, 0.3, 0.7, 0.1],
                "mix": [0.6, 0.3, 0.9, 0.4]}

    q = question("a", True)
    # the mix's best whole sentence chooses the passage (the cut-off one cannot), in passage order
    assert first_passage(q) == [0, 1]
    weights = pairwise_model([question(t, t != "b") for t in "abcd"])
    assert weights[2 + FEATURES.index("word_match")] > 0  # after the reader's and the selector's logits
    opening, answer = features(q)[first_passage(q)] @ weights
    assert answer > opening  # though the reader gives the opening sentence more
