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
    assert "number from 1 to 2, 0 for all of them" in str(error.value)


def test_request_and_focus_helpers():
    options = clarification_options(INTERPRETATIONS)
    request = clarification_request("What is Mercury?", options, error="bad")
    assert request["type"] == "clarification" and request["options"] == options and request["error"] == "bad"
    passages = [{"id": i} for i in ("e1", "p5", "p1", "z")]
    assert [p["id"] for p in focus_passages(options[0], passages)] == ["p5", "p1"]  # retrieval order kept
    assert focus_passages({"citations": ["gone"]}, passages) == passages


@pytest.mark.parametrize("reply, expected", [
    ({"decisions": [{"type": "edit", "edited_action": {"name": "choose_interpretation", "args": {"choice": "2"}}}]},
     "What is Mercury, the element?"),  # agent-chat-ui's HITL form, `choice` edited
    ({"decisions": [{"type": "reject", "message": "the planet one: What is Mercury, the planet?"}]}, "error"),
    ({"decisions": [{"type": "reject", "message": "1"}]}, "What is Mercury, the planet?"),
    ({"decisions": [{"type": "approve"}]}, None),  # accepting the offered choice: all of them
    ([{"type": "response", "args": "2"}], "What is Mercury, the element?"),  # the agent-inbox list
    ([{"type": "accept", "args": None}], None),
    ([{"type": "edit", "args": {"action": "choose_interpretation", "args": {"choice": 1}}}], "What is Mercury, the planet?"),
    ([{"type": "text", "text": "What is Mercury, the element?"}], "What is Mercury, the element?"),  # content blocks
    ({"choice": "all"}, None),
])
def test_every_client_resume_shape_resolves(reply, expected):
    options = clarification_options(INTERPRETATIONS)
    if expected == "error":
        with pytest.raises(InputError, match="is not one of the options"):
            resolve_choice(reply, options)
        return
    chosen = resolve_choice(reply, options)
    assert (chosen["question"] if chosen else None) == expected


def test_request_offers_the_hitl_shape_agent_chat_ui_renders():
    """agent-chat-ui shows a form only for non-empty action_requests (name, args) and review_configs
    (action_name, allowed_decisions); anything else is read-only JSON."""
    options = clarification_options(INTERPRETATIONS)
    request = clarification_request("What is Mercury?", options, error="option 7 does not exist")
    [action], [review] = request["action_requests"], request["review_configs"]
    assert action["name"] == review["action_name"] == "choose_interpretation" and action["args"] == {"choice": "all"}
    assert set(review["allowed_decisions"]) == {"approve", "edit", "reject"}
    assert action["description"].startswith("option 7 does not exist")
    assert "1. What is Mercury, the planet?: the smallest planet" in action["description"]  # no passage: its question names it


def test_an_options_quote_of_a_manuals_unit_keeps_its_code_marks():
    """Asked which product they mean, a person reads each product's row as the answer shows it."""
    from agent.steps.clarify import option_source

    passage = {"id": "curl.1#3", "title": "curl: OPTIONS", "document": "curl.1.gz",
               "text": "See also -e.\n\n-A, --user-agent <name> — Specify the User-Agent string. To encode blanks, quote it."}
    row = "`-A, --user-agent <name>` — Specify the User-Agent string."
    assert option_source(row, ["curl.1#3"], {"curl.1#3": passage})["quote"] == row
    prose = {"id": "hp", "title": "Hewlett-Packard", "text": "HP was founded in 1939. It is based in Palo Alto."}
    assert option_source("HP was founded in 1939 by two engineers.", ["hp"], {"hp": prose})["quote"] == "HP was founded in 1939."
