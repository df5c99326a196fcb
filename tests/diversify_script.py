"""Scripted replies for the DIVA and DtV graph tests: one rule per prompt, by its instruction line."""

from __future__ import annotations

import json
import re

from tests.scripted import passage_number
from tests.scripted import SYNTHESIS_MARKER

IDENTIFY = "the types that apply"
INFER = "disambiguated questions, one per distinct reading"
VERIFY = "Which of these questions do the passages answer?"  # batched: one call for every reading
VERIFY_ONE = "Do these passages contain the answer to this question?"  # as published: one call per reading
CLOSED_BOOK = "Answer from your own knowledge."
SYNTHESIZE = SYNTHESIS_MARKER

READINGS = ["What is HP, the company?", "What is hp, the unit of power?", "What does HP mean in games?"]
AMBIGUITY = json.dumps({"reason": "HP names a company, a unit and a game statistic.", "types": ["[AmbSub]"]})
def SYNTHESIS(messages) -> str:
    """Two readings, each citing the first shown passage that contains its answer."""
    company, unit = passage_number(messages, "Hewlett-Packard"), passage_number(messages, "horsepower")
    return json.dumps({
        "interpretations": [
            {"question": "What is HP, the company?", "answer": "Hewlett-Packard", "citations": [company]},
            {"question": "What is hp, the unit?", "answer": "horsepower", "citations": [unit]},
        ],
        "answer": f"HP is the company Hewlett-Packard [{company}], whereas hp is also horsepower [{unit}].",
    })
CLOSED = json.dumps({
    "interpretations": [{"question": "What is HP, the company?", "answer": "a computer maker"},
                        {"question": "what is HP, the company? ", "answer": "A computer maker"}],  # a loop
    "answer": "HP usually means the computer maker Hewlett-Packard.",
})


def asked_question(messages) -> str:
    """The question of the user message (the system message's example has its own)."""
    return re.search(r"Question: (.*)", str(messages[-1].content)).group(1).strip()


def verified_questions(messages) -> list[str]:
    """The numbered questions one verify call asks about, in order."""
    block = str(messages[-1].content).split("Questions:\n", 1)[1].split("\n\n", 1)[0]
    return [line.split(". ", 1)[1] for line in block.splitlines()]


def verifier(answers: dict[str, str], garbage: str | None = None):
    """The verify reply: the numbers of the questions `answers` marks "Yes"; `garbage`, when
    given, is the raw reply instead."""

    def reply(messages) -> str:
        if garbage is not None:
            return garbage
        asked = verified_questions(messages)
        return json.dumps({"answered": [n for n, q in enumerate(asked, 1) if answers.get(q) in ("Yes", "yes")]})

    return reply


def one_verifier(answers: dict[str, str], garbage: str | None = None):
    """The reply to a one-question verify call: "Yes" when `answers` marks its question so."""

    def reply(messages) -> str:
        if garbage is not None:
            return garbage
        asked = str(messages[-1].content).split(VERIFY_ONE, 1)[1].splitlines()[0].strip()
        return json.dumps({"contains_answer": "Yes" if answers.get(asked) in ("Yes", "yes") else "No"})

    return reply


def script(model, *, readings=READINGS, verdicts=None, identify=AMBIGUITY, garbage=None) -> None:
    """Install the rules for a full run; `verdicts` maps a reading to "Yes" when the passages answer it."""
    model.rules.extend([
        (IDENTIFY, identify),
        (INFER, json.dumps({"questions": readings})),
        (VERIFY, verifier(verdicts or {}, garbage)),
        (VERIFY_ONE, one_verifier(verdicts or {}, garbage)),
        (CLOSED_BOOK, CLOSED),
        (SYNTHESIZE, SYNTHESIS),
    ])


def calls_with(model, marker: str) -> list[str]:
    return [call["text"] for call in model.calls if marker in call["text"]]
