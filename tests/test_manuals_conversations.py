"""The manuals conversations (bench/fixtures/manuals_conversations.json) keep the shape their
figures rely on: enough follow-ups of each kind on the test split, every turn labelled with a
product of its conversation's split and answers, and follow-ups that say what their kind says."""

import json
import re
from pathlib import Path

import pytest

from agent.retrieval.products import names_product

FIXTURES = Path(__file__).resolve().parents[1] / "bench" / "fixtures"
RESERVED = ("ripgrep", "fd", "bat", "jq", "fzf", "tmux", "htop", "curl", "wget", "rsync", "pandoc", "ffmpeg",
            "httpie", "xh")
KINDS = ("implicit", "switch", "clear")


@pytest.fixture(scope="module")
def conversations() -> list[dict]:
    return json.loads((FIXTURES / "manuals_conversations.json").read_text())["conversations"]


@pytest.fixture(scope="module")
def products() -> dict:
    return json.loads((FIXTURES / "manuals_questions.json").read_text())["products"]


def test_enough_conversations_of_each_kind_on_test(conversations):
    test = [c for c in conversations if c["split"] == "test"]
    counts = {kind: sum(c["kind"] == kind for c in test) for kind in KINDS}
    assert counts["implicit"] >= 40 and counts["switch"] >= 20 and counts["clear"] >= 20, counts
    assert len({c["id"] for c in conversations}) == len(conversations)
    assert all(2 <= len(c["turns"]) <= 3 for c in conversations)


def test_every_turn_is_labelled_with_a_product_of_its_split(conversations, products):
    for conversation in conversations:
        for turn in conversation["turns"]:
            assert turn["question"].strip() and turn["rewrite"].strip(), conversation["id"]
            assert products[turn["product"]]["split"] == conversation["split"], conversation["id"]
            assert turn["answers"] and all(answer.strip() for answer in turn["answers"]), conversation["id"]


def test_follow_ups_say_what_their_kind_says(conversations, products):
    for conversation in conversations:
        first, *follow_ups = conversation["turns"]
        assert first["kind"] == "first" and conversation["kind"] == follow_ups[0]["kind"], conversation["id"]
        for before, turn in zip(conversation["turns"], follow_ups):
            name = products[turn["product"]]["name"]
            assert turn["kind"] in KINDS, conversation["id"]
            if turn["kind"] == "implicit":  # the product is left to the conversation, and is the one before
                assert not names_product(turn["question"], name) and turn["product"] == before["product"]
            if turn["kind"] == "switch":  # another product, by name
                assert names_product(turn["question"], name) and turn["product"] != before["product"]
            if turn["kind"] == "clear":  # stands on its own: its rewrite is itself
                assert turn["rewrite"] == turn["question"], conversation["id"]
            assert names_product(turn["rewrite"], name) or turn["kind"] == "clear", conversation["id"]


def test_no_reserved_product(conversations, products):
    reserved = re.compile(r"\b(" + "|".join(RESERVED) + r")\b", re.I)
    for conversation in conversations:
        for turn in conversation["turns"]:
            texts = [turn["question"], turn["rewrite"], *turn["answers"]]
            assert not any(reserved.search(text) for text in texts), conversation["id"]
