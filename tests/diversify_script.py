"""Scripted replies for the DIVA and DtV graph tests: one rule per prompt, by its instruction line."""

from __future__ import annotations

import json
import re

from tests.scripted import passage_number

IDENTIFY = "Classify the ambiguity"
INFER = "Disambiguated questions, at most"
VERIFY = "Does the evidence contain the answer?"
EXTRACT = "Extract the interpretations"
CLOSED_BOOK = "Answer from your own knowledge."
SYNTHESIZE = "passage_meanings"

READINGS = ["What is HP, the company?", "What is hp, the unit of power?", "What does HP mean in games?"]
AMBIGUITY = json.dumps({"reason": "HP names a company, a unit and a game statistic.", "types": ["[AmbSub]"]})
EXTRACTION = json.dumps({"interpretations": [
    {"question": "What is HP, the company?", "answer": "Hewlett-Packard", "citations": [1]},
    {"question": "What is hp, the unit?", "answer": "horsepower", "citations": [2, 42]},
]})


def SYNTHESIS(messages) -> str:
    """Two readings, each citing the first shown passage that contains its answer."""
    company, unit = passage_number(messages, "Hewlett-Packard"), passage_number(messages, "horsepower")
    return json.dumps({
        "passage_meanings": ["company", "unit"],
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


def verifier(answers: dict[str, str], default: str = "No"):
    """A verify reply per asked question: "Yes", "No" or any raw text (garbage)."""

    def reply(messages) -> str:
        answer = answers.get(asked_question(messages), default)
        return json.dumps({"contains_answer": answer}) if answer in ("Yes", "No", "yes") else answer

    return reply


def script(model, *, readings=READINGS, verdicts=None, identify=AMBIGUITY) -> None:
    """Install the rules for a full run; `verdicts` maps a reading to its verifier reply."""
    model.rules.extend([
        (IDENTIFY, identify),
        (INFER, json.dumps({"questions": readings})),
        (VERIFY, verifier(verdicts or {})),
        (EXTRACT, EXTRACTION),
        (CLOSED_BOOK, CLOSED),
        (SYNTHESIZE, SYNTHESIS),
    ])


def calls_with(model, marker: str) -> list[str]:
    return [call["text"] for call in model.calls if marker in call["text"]]
