"""VERDICT's per-passage extraction (the VERDICT paper, Eq. 8): one passage, one call, one
{interpretation, answer} pair or an abstention.

Besides an explicit null, replies that break the prompt's rules count as abstentions: an
answer that says the passage does not tell ("not mentioned", "unknown"), or an
interpretation that refers to the text itself ("according to the passage").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from pydantic import Field

from agent.context import Context
from agent.llm.calls import generate_structured
from agent.llm.prompts import format_single_passage
from agent.llm.schemas import OrderedModel

MAX_PASSAGE_CHARS = 1200
EXTRACTION_MAX_TOKENS = 110  # sense, interpretation and a short answer; a looping reply stops here
Status = Literal["extracted", "abstained", "failed"]

_EMPTY = {"", "null", "none", "n/a", "na", "unknown", "not applicable", "no answer", "nothing", "abstain"}
_NO_ANSWER = re.compile(
    r"\b(?:not|never)\s+(?:mentioned|stated|specified|provided|given|available|found)\b"
    r"|\bdoes(?:n't| not)\s+(?:mention|say|state|specify|provide|contain|answer)\b|\bno information\b",
    re.IGNORECASE,
)
_SELF_REFERENCE = re.compile(
    r"\b(?:the|this|given|provided)\s+(?:passage|context|text|document|excerpt|article)\b", re.IGNORECASE
)


class Extraction(OrderedModel):
    # the sense first: a small model that has named it then asks about it instead of echoing the question
    sense: str | None = Field(
        default=None, max_length=150, description="which thing or sense the question is about in this passage"
    )
    interpretation: str | None = Field(
        default=None, max_length=300, description="the question made precise, answerable from the passage; null to abstain"
    )
    # capped in the grammar on llama.cpp: small models otherwise copy whole sentences
    answer: str | None = Field(default=None, max_length=120, description="a short answer from the passage; null to abstain")


@dataclass
class Extracted:
    """The outcome for one passage (converted to plain dicts before it enters the state)."""

    status: Status
    passage_id: str
    rank: int
    question: str = ""
    answer: str = ""
    reason: str = ""
    sense: str = ""

    def pair(self) -> dict:
        return {"question": self.question, "answer": self.answer, "passage_id": self.passage_id, "rank": self.rank}

    def summary(self) -> dict:
        summary = {"passage_id": self.passage_id, "status": self.status}
        if self.status == "extracted":
            summary.update(question=self.question, answer=self.answer, sense=self.sense)
        elif self.reason:
            summary["reason"] = self.reason
        return summary


def _clean(text: str | None) -> str:
    return " ".join(str(text or "").split()).strip()


def abstention_reason(question: str, answer: str) -> str:
    """Why a reply counts as an abstention ('' when it is a usable pair)."""
    if question.lower().strip(".?! ") in _EMPTY or answer.lower().strip(".?! ") in _EMPTY:
        return "null"
    if _NO_ANSWER.search(answer):
        return "answer says the passage does not tell"
    if _SELF_REFERENCE.search(question):
        return "interpretation refers to the passage"
    return ""


def passage_block(passage: dict) -> str:
    return format_single_passage(passage, MAX_PASSAGE_CHARS)


def extract_one(context: Context, question: str, passage: dict, rank: int) -> Extracted:
    """One extraction call for one passage; a failed call abstains (status "failed")."""
    reply = generate_structured(
        context, Extraction, "extract_interpretation", max_tokens=EXTRACTION_MAX_TOKENS,
        question=question, passage=passage_block(passage),
    )
    if reply is None:
        return Extracted("failed", passage["id"], rank, reason="model failed")
    interpretation, answer, sense = _clean(reply.interpretation), _clean(reply.answer), _clean(reply.sense)
    reason = abstention_reason(interpretation, answer)
    if reason:
        return Extracted("abstained", passage["id"], rank, reason=reason)
    return Extracted("extracted", passage["id"], rank, name_sense(interpretation, question, sense), answer, sense=sense)


def _words(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


def name_sense(interpretation: str, question: str, sense: str) -> str:
    """The interpretation, or, when the model only echoed the question, the question with the
    sense it named in brackets (small models often skip the rewrite but name the sense)."""
    if _words(interpretation) != _words(question) or not sense or sense.lower() in _EMPTY:
        return interpretation
    if _words(sense) in _words(question):
        return interpretation
    return f"{question.rstrip(' ?.!')} ({sense})?"


def related_questions(interpretations: list[dict], passages: list[dict]) -> list[str]:
    """Display lines "question -> answer [1] [3]", numbered like the passages shown."""
    numbers = {passage["id"]: number for number, passage in enumerate(passages, 1)}
    lines = []
    for item in interpretations:
        cited = " ".join(f"[{numbers[i]}]" for i in item["citations"] if i in numbers)
        lines.append(f"{item['question']} -> {item['answer']} {cited}".rstrip())
    return lines
