"""Dataset loaders on small files in each benchmark's format (written here), selection, and
the fixed-universe retriever."""

import json

import pytest

from agent.context import Context
from agent.errors import IndexMissingError, InputError
from agent.evaluation.datasets import load_dataset, read_ids
from agent.retrieval.fixed_universe import fixed_universe
from agent.retrieval.retriever import get_retriever
from tests.conftest import shared_data


def write(path, data):
    path.write_text(json.dumps(data))
    return path


def test_asqa_loader_keeps_pairs_long_answers_and_titles(tmp_path):
    path = write(tmp_path / "asqa.json", [{
        "id": "1", "question": "Who won?",
        "qa_pairs": [{"question": "Who won in 2001?", "short_answers": ["Ann"], "wikipage": "Cup 2001"},
                     {"question": "Who won in 2002?", "short_answers": ["Bo", "Bob"], "wikipage": None}],
        "annotations": [{"long_answer": "Ann won in 2001; Bob in 2002.", "knowledge": [{"wikipage": "Bob"}]},
                        {"long_answer": "Two winners.", "knowledge": []}],
        "wikipages": [{"title": "Cup", "url": "x"}]}])
    (example,) = load_dataset("asqa", path)
    assert example.qa_pairs[1]["short_answers"] == ["Bo", "Bob"]
    assert example.long_answers == ["Ann won in 2001; Bob in 2002.", "Two winners."]
    assert example.answer_annotations == [[["Ann"], ["Bo", "Bob"]]]
    assert example.gold_titles == ["Cup", "Cup 2001", "Bob"]
    assert example.ambiguous is True and example.passages is None


def test_ambignq_loader_marks_multiple_qas_as_ambiguous(tmp_path):
    path = write(tmp_path / "ambignq.json", [
        {"id": "a", "question": "Who plays X?", "annotations": [{"type": "singleAnswer", "answer": ["Tom"]}]},
        {"id": "b", "question": "When did Y open?", "annotations": [
            {"type": "singleAnswer", "answer": ["1990"]},
            {"type": "multipleQAs", "qaPairs": [{"question": "Y park?", "answer": ["1990"]},
                                                {"question": "Y ride?", "answer": ["1995", "May 1995"]}]}]}])
    single, multi = load_dataset("ambignq", path)
    assert single.ambiguous is False and single.answer_annotations == [[["Tom"]]]
    assert multi.ambiguous is True
    assert multi.answer_annotations == [[["1990"]], [["1990"], ["1995", "May 1995"]]]
    assert [p["question"] for p in multi.qa_pairs] == ["Y park?", "Y ride?"]


def test_condambigqa_loader_gives_the_fixed_universe_and_cited_gold(tmp_path):
    ctxs = [{"title": f"T{n}", "text": f"text {n}", "score": 1.0} for n in range(1, 21)]
    path = write(tmp_path / "mcaqa.json", [{"id": "u1", "question": "How long?", "ctxs": ctxs, "properties": [
        {"condition": "casual", "groundtruth": "Four minutes.", "citations": [{"title": "2. T2"}, {"title": "5. T5"}]},
        {"condition": "ranked", "groundtruth": ["Three minutes."], "citations": [{"title": "2. T2"}]}]}])
    (example,) = load_dataset("condambigqa", path)
    assert len(example.passages) == 20 and example.passages[1] == {"id": "u1:2", "title": "T2", "text": "text 2"}
    assert example.gold_passage_ids == ["u1:2", "u1:5"]
    assert example.long_answers == ["Four minutes. Three minutes."]
    assert example.ambiguous is True and example.interpretations == ["casual", "ranked"]


def test_msmarco_loader_uses_answerable_intents_and_selected_passages(tmp_path):
    path = write(tmp_path / "ms.json", [{
        "query": "what hp", "query_id": 7, "item_id": "x", "is_ambiguous": True,
        "intents": ["what is horsepower", "what is hp laptop"], "answers": ["A unit of power.", ""],
        "is_answerable": [1, -1], "wellFormedAnswers": ["Horsepower is a unit of power.", ""],
        "passages": [{"passage_text": "hp is horsepower", "is_selected": 1, "url": "u1"},
                     {"passage_text": "laptops", "is_selected": 0, "url": "u2"}]}])
    (example,) = load_dataset("msmarco", path)
    assert example.id == "7" and example.interpretations == ["what is horsepower"]
    assert example.gold_passage_ids == ["7:1"] and len(example.passages) == 2


def test_selection_by_ids_then_seeded_sample_then_limit(tmp_path):
    rows = [{"id": f"q{n}", "question": f"Question {n}?", "answers": ["x"]} for n in range(10)]
    path = tmp_path / "g.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    ids = tmp_path / "ids.txt"
    ids.write_text("# dev\nq3\nq1\n\nq7\nq9\nq0\n")
    chosen = load_dataset("jsonl", path, ids=read_ids(ids))
    assert [e.id for e in chosen] == ["q3", "q1", "q7", "q9", "q0"]
    first = load_dataset("jsonl", path, ids=read_ids(ids), sample=3, seed=5)
    assert [e.id for e in first] == [e.id for e in load_dataset("jsonl", path, ids=read_ids(ids), sample=3, seed=5)]
    assert len(first) == 3 and {e.id for e in first} <= {"q3", "q1", "q7", "q9", "q0"}
    assert len(load_dataset("jsonl", path, limit=4)) == 4
    with pytest.raises(InputError, match="1 of the 1 listed ids are not in"):
        load_dataset("jsonl", path, ids=["nope"])
    # one unknown id among known ones is an error too, naming how many and the first few
    with pytest.raises(InputError, match=r"7 of the 9 listed ids are not in .*: x0, x1, x2, x3, x4, \.\.\.$"):
        load_dataset("jsonl", path, ids=["q1", *[f"x{n}" for n in range(7)], "q2"])
    with pytest.raises(InputError, match="unknown dataset"):
        load_dataset("nq", path)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "no id"}\n')
    with pytest.raises(InputError, match="line 1"):
        load_dataset("jsonl", bad)


def test_fixed_universe_serves_only_the_given_passages_in_every_mode():
    passages = [{"id": "a", "title": "HP Inc.", "text": "HP Inc. sells printers."},
                {"id": "b", "title": "Horsepower", "text": "Horsepower is a unit of power."},
                {"id": "c", "title": "Hit points", "text": "Hit points measure health in games."}]
    with fixed_universe(passages) as name:
        retriever = get_retriever(Context(index_dir=name))
        for mode in ("dense", "sparse", "hybrid"):
            found = retriever.search("unit of power", mode, 5)
            assert found[0]["id"] == "b" and {p["id"] for p in found} <= {"a", "b", "c"}
        assert len(retriever.search("printers", "dense", 20)) == 3
        assert retriever.store.collection.get(ids=["c", "zz"], include=["embeddings"])["ids"] == ["c"]
    with pytest.raises(IndexMissingError):  # unregistered once the block ends
        get_retriever(Context(index_dir=name)).search("unit", "sparse", 1)


def test_real_datasets_load_when_present():
    asqa = shared_data("asqa", "asqa_dev.json")
    pool = read_ids(shared_data("asqa", "pool_dev_ids.txt"))
    examples = load_dataset("asqa", asqa, ids=pool, sample=20, seed=0)
    assert len(examples) == 20 and all(e.qa_pairs and e.long_answers for e in examples)
    cond = load_dataset("condambigqa", shared_data("condambigqa", "mcaqa.json"),
                        ids=read_ids(shared_data("condambigqa", "dev_ids.txt")), limit=5)
    assert all(len(e.passages) == 20 and e.gold_passage_ids for e in cond)
