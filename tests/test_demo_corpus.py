"""Sanity checks for the bundled demo corpus and its question fixture."""

import json
from collections import Counter, defaultdict
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[1] / "agent" / "data"
CORPUS = DATA / "demo_corpus.jsonl"
QUESTIONS = DATA / "demo_questions.json"


@pytest.fixture(scope="module")
def passages():
    with open(CORPUS, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


@pytest.fixture(scope="module")
def by_id(passages):
    return {p["id"]: p for p in passages}


@pytest.fixture(scope="module")
def fixture():
    with open(QUESTIONS, encoding="utf-8") as handle:
        return json.load(handle)


def test_corpus_size_and_unique_ids(passages):
    assert len(passages) >= 140
    ids = [p["id"] for p in passages]
    duplicates = [i for i, n in Counter(ids).items() if n > 1]
    assert not duplicates, duplicates


def test_passage_fields_and_length(passages):
    for p in passages:
        for key in ("id", "title", "text", "topic", "sense"):
            assert isinstance(p.get(key), str) and p[key].strip(), (p.get("id"), key)
        words = len(p["text"].split())
        assert 20 <= words <= 160, (p["id"], words)


def test_topics_have_several_senses(passages):
    senses = defaultdict(set)
    for p in passages:
        if p["topic"] != "distractor":
            senses[p["topic"]].add(p["sense"])
    rich = [t for t, s in senses.items() if len(s) >= 3]
    assert len(rich) >= 8, dict(senses)
    assert sum(p["topic"] == "distractor" for p in passages) >= 15


def test_topic_entries_match_corpus(passages, fixture):
    senses = defaultdict(set)
    for p in passages:
        senses[p["topic"]].add(p["sense"])
    for entry in fixture["topics"]:
        assert entry["sample_question"].strip()
        assert len(entry["senses"]) >= 2
        assert set(entry["senses"]) == senses[entry["topic"]], entry["topic"]


def test_question_counts_and_labels(fixture):
    questions = fixture["questions"]
    assert len(questions) >= 60
    assert len({q["id"] for q in questions}) == len(questions)
    labels = Counter(q["label"] for q in questions)
    assert set(labels) == {"ambiguous", "clear"}
    assert labels["ambiguous"] >= 25 and labels["clear"] >= 25, labels


def test_interpretation_counts(fixture):
    for q in fixture["questions"]:
        interpretations = q["interpretations"]
        if q["label"] == "ambiguous":
            assert len(interpretations) >= 2, q["id"]
        else:
            assert len(interpretations) == 1, q["id"]
        for interp in interpretations:
            for key in ("sense", "question", "answer"):
                assert isinstance(interp.get(key), str) and interp[key].strip(), (q["id"], key)


def test_answers_are_grounded_in_answer_passages(fixture, by_id):
    for q in fixture["questions"]:
        assert q["answer_passages"], q["id"]
        missing = [pid for pid in q["answer_passages"] if pid not in by_id]
        assert not missing, (q["id"], missing)
        texts = [by_id[pid]["text"].lower() for pid in q["answer_passages"]]
        for interp in q["interpretations"]:
            answer = interp["answer"].lower()
            assert any(answer in text for text in texts), (q["id"], interp["answer"])
