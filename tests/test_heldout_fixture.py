"""The held-out, test-only fixture and the tune fixture: their labels must be
checkable against their own documents, and each must stay disjoint from the demo fixture and
from each other (the tune fixture trains the selector; the held-out one tests beyond it)."""

import json
from collections import Counter, defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "agent" / "data"
TUNE = ROOT / "bench" / "fixtures"
# name -> (corpus, questions, passage id prefix, what its note must say)
FIXTURES = {"heldout": (DATA / "heldout_corpus.jsonl", DATA / "heldout_questions.json", "h2-", "never"),
            "tune": (TUNE / "tune_corpus.jsonl", TUNE / "tune_questions.json", "t3-", "tune only")}
WH_WORDS = {"what", "which", "who", "whom", "whose", "when", "where", "why", "how"}


def load_jsonl(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


@pytest.fixture(scope="module", params=sorted(FIXTURES))
def name(request):
    return request.param


@pytest.fixture(scope="module")
def passages(name):
    return load_jsonl(FIXTURES[name][0])


@pytest.fixture(scope="module")
def by_id(passages):
    return {p["id"]: p for p in passages}


@pytest.fixture(scope="module")
def fixture(name):
    return json.loads(FIXTURES[name][1].read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def demo():
    return json.loads((DATA / "demo_questions.json").read_text(encoding="utf-8"))


def test_says_what_it_may_be_used_for(fixture, name):
    assert FIXTURES[name][3] in fixture["note"].lower() and "tun" in fixture["note"].lower()


def test_passage_ids_are_unique_and_shaped(passages, name):
    ids = [p["id"] for p in passages]
    assert not [i for i, n in Counter(ids).items() if n > 1]
    for p in passages:
        for key in ("id", "title", "text", "topic", "sense"):
            assert isinstance(p.get(key), str) and p[key].strip(), (p.get("id"), key)
        assert p["id"].startswith(f"{FIXTURES[name][2]}{p['topic']}-{p['sense']}-"), p["id"]
        assert 50 <= len(p["text"].split()) <= 130, (p["id"], len(p["text"].split()))


def test_no_passage_id_collides_with_the_demo_corpus_or_the_other_fixture(passages, name):
    others = [DATA / "demo_corpus.jsonl"] + [corpus for other, (corpus, *_) in FIXTURES.items() if other != name]
    assert not {p["id"] for path in others for p in load_jsonl(path)} & {p["id"] for p in passages}


def test_topics_are_new_and_have_several_senses(passages, fixture, demo, name):
    senses = defaultdict(set)
    for p in passages:
        senses[p["topic"]].add(p["sense"])
    topics = {t["topic"] for t in fixture["topics"]}
    assert len(topics) >= 8
    assert topics == set(senses)
    assert not topics & {t["topic"] for t in demo["topics"]}
    for other, (_, questions, *_) in FIXTURES.items():
        if other != name:
            assert not topics & {t["topic"] for t in json.loads(questions.read_text(encoding="utf-8"))["topics"]}
    for entry in fixture["topics"]:
        assert set(entry["senses"]) == senses[entry["topic"]], entry["topic"]
        assert len(entry["senses"]) >= 2 and entry["sample_question"].strip()
    per_sense = Counter((p["topic"], p["sense"]) for p in passages)
    assert min(per_sense.values()) >= 3, per_sense


def test_question_counts_labels_and_forms(fixture):
    questions = fixture["questions"]
    assert len(questions) >= 60
    assert len({q["id"] for q in questions}) == len(questions)
    labels = Counter(q["label"] for q in questions)
    assert set(labels) == {"ambiguous", "clear"}
    assert 0.5 <= labels["ambiguous"] / len(questions) <= 0.7, labels
    leading = Counter(next(w for w in q["question"].lower().split() if w in WH_WORDS) for q in questions)
    assert len(set(leading) & WH_WORDS) >= 4, leading
    for topic in {q["topic"] for q in questions}:  # several forms per topic, not only "What is X?"
        forms = {q["question"].split()[0].lower() for q in questions if q["topic"] == topic}
        assert len(forms) >= 3, (topic, forms)


def test_interpretations_match_labels_and_senses(fixture):
    senses = {t["topic"]: set(t["senses"]) for t in fixture["topics"]}
    for q in fixture["questions"]:
        named = [i["sense"] for i in q["interpretations"]]
        assert len(named) == len(set(named)), q["id"]
        assert len(named) >= 2 if q["label"] == "ambiguous" else len(named) == 1, q["id"]
        unanswered = q.get("unanswered_senses", [])
        assert set(named) | set(unanswered) <= senses[q["topic"]], q["id"]
        assert not set(named) & set(unanswered), q["id"]
        for interp in q["interpretations"]:
            for key in ("sense", "question", "answer"):
                assert isinstance(interp.get(key), str) and interp[key].strip(), (q["id"], key)
            assert len(interp["answer"].split()) <= 6, (q["id"], interp["answer"])


def test_short_answers_occur_in_their_sense_passages(fixture, by_id):
    for q in fixture["questions"]:
        missing = [pid for pid in q["answer_passages"] if pid not in by_id]
        assert q["answer_passages"] and not missing, (q["id"], missing)
        assert len(set(q["answer_passages"])) == len(q["answer_passages"]), q["id"]
        for interp in q["interpretations"]:
            holders = [pid for pid in q["answer_passages"]
                       if interp["answer"].lower() in by_id[pid]["text"].lower()
                       and (by_id[pid]["topic"], by_id[pid]["sense"]) == (q["topic"], interp["sense"])]
            assert holders, (q["id"], interp["sense"], interp["answer"])


def test_every_answer_passage_holds_some_short_answer(fixture, by_id):
    for q in fixture["questions"]:
        answers = [i["answer"].lower() for i in q["interpretations"]]
        for pid in q["answer_passages"]:
            assert any(a in by_id[pid]["text"].lower() for a in answers), (q["id"], pid)


def test_unanswered_senses_have_passages_without_the_asked_answer(fixture, passages):
    """A sense marked unanswered is in the documents (named there) but none of its passages is
    cited as holding an answer."""
    flagged = [q for q in fixture["questions"] if q.get("unanswered_senses")]
    assert len(flagged) >= 3
    for q in flagged:
        for sense in q["unanswered_senses"]:
            own = {p["id"] for p in passages if (p["topic"], p["sense"]) == (q["topic"], sense)}
            assert own and not own & set(q["answer_passages"]), (q["id"], sense)


def test_ingest_demo_reads_both_corpora():
    from agent.app.ingest_command import demo_corpus_paths

    paths = [Path(p) for p in demo_corpus_paths()]
    assert [p.name for p in paths] == ["demo_corpus.jsonl", "heldout_corpus.jsonl"]
    assert all(p.is_file() for p in paths)
