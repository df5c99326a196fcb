"""The tune fixture's trained topics: the selector's and the gate's training commands read the
questions and passages of the 8 topics the shipped models learned from, so that their model cards'
commands reproduce the shipped files (bench/train_selector.py, bench/tune_fixture_corpus.py)."""

import json

from bench.train_selector import trained_topics, tune_fixture_questions
from bench.tune_fixture_corpus import main as write_corpus, trained_passages


def test_the_models_train_on_the_fixtures_first_eight_topics_and_only_their_questions():
    topics = trained_topics()
    every = tune_fixture_questions(all_topics=True)
    assert len(topics) == 8 and topics < {q["topic"] for q in every}
    trained = tune_fixture_questions()
    assert {q["topic"] for q in trained} == topics
    assert len(trained) == 76  # the shipped selector's card: 118 tune questions = 42 demo + 76 fixture
    assert len(every) > len(trained)


def test_the_trained_corpus_holds_every_passage_of_the_trained_topics_and_no_other(tmp_path):
    topics = trained_topics()
    every = [json.loads(line) for line in trained_passages(all_topics=True)]
    trained = [json.loads(line) for line in trained_passages()]
    assert trained == [p for p in every if p["topic"] in topics]
    assert len(trained) < len(every)
    out = tmp_path / "t.jsonl"
    assert write_corpus(["--out", str(out)]) == 0
    assert [json.loads(line) for line in out.read_text().splitlines()] == trained
