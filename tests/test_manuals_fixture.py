"""The manuals benchmark's questions (bench/fixtures/manuals_questions.json) keep the shape that
makes its tune/test split mean something: products on one side only, ambiguous questions whose
senses are different products of the question's own split, enough of each, and the documents
bench/manuals.py lays out."""

import json
import re
from pathlib import Path

import pytest

from bench.documents_questions import load_questions
from bench.manuals import DOCUMENTS, FIXTURE, FORMATS

# kept out of every benchmark here so that independent checks can use them
RESERVED = ("ripgrep", "fd", "bat", "jq", "fzf", "tmux", "htop", "curl", "wget", "rsync", "pandoc", "ffmpeg",
            "httpie", "xh")
SENSE_KEYS = {"name", "product", "documents", "section", "answers"}


@pytest.fixture(scope="module")
def fixture() -> dict:
    return json.loads(FIXTURE.read_text())


def test_sizes_products_and_splits(fixture):
    products, questions = fixture["products"], fixture["questions"]
    assert len(products) >= 12
    assert {entry["split"] for entry in products.values()} == {"tune", "test"}
    assert sum(entry["split"] == "test" for entry in products.values()) >= 6
    assert len(questions) >= 80 and sum(q["ambiguous"] for q in questions) >= 35
    test = [q for q in questions if q["split"] == "test"]
    assert len(test) >= 40 and sum(q["ambiguous"] for q in test) >= 18
    assert len({q["id"] for q in questions}) == len(questions)
    assert len({q["question"] for q in questions}) == len(questions)


def test_no_reserved_product_anywhere(fixture):
    reserved = re.compile(r"\b(" + "|".join(RESERVED) + r")\b", re.I)
    for name, entry in fixture["products"].items():
        assert not reserved.search(name) and not reserved.search(entry["name"]) and not reserved.search(entry["source"])
    for question in fixture["questions"]:
        texts = [question["question"]] + [a for s in question["senses"] for a in s["answers"]]
        assert not any(reserved.search(text) for text in texts), question["id"]


def test_every_sense_is_a_product_of_its_questions_split(fixture):
    products = fixture["products"]
    for question in fixture["questions"]:
        assert question["split"] in ("tune", "test") and question["senses"]
        for sense in question["senses"]:
            assert set(sense) == SENSE_KEYS and sense["answers"], question["id"]
            assert products[sense["product"]]["split"] == question["split"], question["id"]
            assert set(sense["documents"]) <= set(products[sense["product"]]["documents"]), question["id"]


def test_ambiguous_questions_span_products_and_clear_ones_one(fixture):
    for question in fixture["questions"]:
        products = {sense["product"] for sense in question["senses"]}
        if question["ambiguous"]:
            assert len(question["senses"]) >= 2 and len(products) == len(question["senses"]), question["id"]
        else:
            assert len(products) == 1, question["id"]


def test_the_index_holds_both_splits_in_all_four_formats(fixture):
    laid = {product: {kind for kind, *_ in documents} for product, documents in DOCUMENTS.items()}
    assert set(laid) == set(fixture["products"])
    for split in ("tune", "test"):
        kinds = set().union(*(laid[p] for p, entry in fixture["products"].items() if entry["split"] == split))
        assert kinds == set(FORMATS), split
    for product, documents in DOCUMENTS.items():
        named = {f"{product}/{name}" for _, name, *_ in documents}
        assert named == set(fixture["products"][product]["documents"]), product


def test_the_scorer_reads_one_split():
    test = load_questions(FIXTURE, "test")
    assert test and {q["split"] for q in test} == {"test"}
    assert len(load_questions(FIXTURE)) > len(test)
    with pytest.raises(SystemExit):
        load_questions(Path(FIXTURE).parent / "documents_questions.json", "test")


def test_the_budget_is_autos_alone():
    from argparse import Namespace

    from bench.documents_questions import settings

    asked = Namespace(model="local", index="idx", method="auto", budget=None, set=[])
    assert settings(asked) == {"model": "local", "index_dir": "idx", "budget": "fast"}
    assert settings(Namespace(**{**vars(asked), "method": "vanilla"})) == {"model": "local", "index_dir": "idx"}
    with pytest.raises(SystemExit):
        settings(Namespace(**{**vars(asked), "method": "vanilla", "budget": "instant"}))
    assert settings(Namespace(**{**vars(asked), "set": ["check_units=0"]}))["check_units"] == "0"
    with pytest.raises(SystemExit):
        settings(Namespace(**{**vars(asked), "set": ["check_units"]}))  # no value: said, not ignored
