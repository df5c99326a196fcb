"""agent/steps/clarify.py: which interpretations become options, and how a reply picks one."""

import pytest

from agent.steps.clarify import (
    clarification_options,
    clarification_request,
    focus_guidance,
    focus_passages,
    needs_clarification,
    resolve_choice,
)
from agent.errors import InputError

INTERPRETATIONS = [
    {"question": "What is Mercury, the planet?", "answer": "the smallest planet", "citations": ["p1", "p5"]},
    {"question": "What is Mercury, the element?", "answer": "element Hg", "citations": ["e1"]},
    {"question": "what is  mercury, the planet?", "answer": "The smallest planet", "citations": ["p2"]},  # a repeat
    {"question": "Who was Mercury, the singer?", "answer": "Freddie Mercury", "citations": []},  # ungrounded
    {"question": "", "answer": "nothing", "citations": ["x"]},
]


def test_only_grounded_distinct_readings_become_numbered_options():
    options = clarification_options(INTERPRETATIONS)
    assert [(o["option"], o["question"], o["citations"]) for o in options] == [
        (1, "What is Mercury, the planet?", ["p1", "p5"]), (2, "What is Mercury, the element?", ["e1"])]
    assert clarification_options(INTERPRETATIONS, limit=1)[0]["option"] == 1
    assert clarification_options(None) == []


def test_a_question_repeated_verbatim_is_told_apart_by_its_answer():
    repeated = [{"question": "What is Mercury?", "answer": "a planet", "citations": ["p1"]},
                {"question": "What is Mercury?", "answer": "an element", "citations": ["e1"]}]
    options = clarification_options(repeated)
    assert [o["answer"] for o in options] == ["a planet", "an element"]
    assert '"an element"' in focus_guidance(options[1])


def test_asking_needs_at_least_two_options():
    options = clarification_options(INTERPRETATIONS)
    assert needs_clarification(options) and not needs_clarification(options[:1], minimum=1)
    assert not needs_clarification(options, minimum=3)


@pytest.mark.parametrize("reply, expected", [
    (2, "What is Mercury, the element?"), ("1", "What is Mercury, the planet?"), (" 2 ", "What is Mercury, the element?"),
    ("what is mercury, the ELEMENT?", "What is Mercury, the element?"), ({"option": 1}, "What is Mercury, the planet?"),
    ({"question": "What is Mercury, the element?"}, "What is Mercury, the element?"),
])
def test_replies_resolve_to_an_option(reply, expected):
    assert resolve_choice(reply, clarification_options(INTERPRETATIONS))["question"] == expected


@pytest.mark.parametrize("reply", [0, "0", "all", "ALL", "*"])
def test_all_means_every_interpretation(reply):
    assert resolve_choice(reply, clarification_options(INTERPRETATIONS)) is None


@pytest.mark.parametrize("reply, message", [(3, "option 3 does not exist"), ("Venus", "'Venus' is not one of"),
                                            (None, "no choice given"), (True, "no choice given")])
def test_other_replies_are_input_errors_saying_what_to_send(reply, message):
    with pytest.raises(InputError, match=message) as error:
        resolve_choice(reply, clarification_options(INTERPRETATIONS))
    assert "number from 1 to 2, or 0 for all" in str(error.value)


def test_request_and_focus_helpers():
    options = clarification_options(INTERPRETATIONS)
    request = clarification_request("What is Mercury?", options, error="bad")
    assert request["type"] == "clarification" and request["options"] == options and request["error"] == "bad"
    passages = [{"id": i} for i in ("e1", "p5", "p1", "z")]
    assert [p["id"] for p in focus_passages(options[0], passages)] == ["p5", "p1"]  # retrieval order kept
    assert focus_passages({"citations": ["gone"]}, passages) == passages
