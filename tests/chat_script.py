"""Scripted replies shared by the chat, tool, notebook and server tests."""

from __future__ import annotations

import json
import re

FOCUS_MARKER = "The user was asked what they meant"
SYNTHESIS_MARKER = "Passages:"
REWRITE_MARKER = "Latest message:"

HP_WORDS = {"company": "Hewlett-Packard", "unit": "horsepower"}


def number_of(prompt: str, word: str, default: int = 1) -> int:
    """The number of the first passage shown in the prompt that contains `word`: scripted
    replies cite the passage that really supports their answer (the grounding check drops the rest)."""
    for number, body in re.findall(r"^\[(\d+)\] (.*)$", prompt, re.MULTILINE):
        if word.casefold() in body.casefold():
            return int(number)
    return default


def two_meanings(company: int = 2, also: int = 3, unit: int = 5) -> str:
    """HP's company and unit readings citing the passages with their answers, and an ungrounded one."""
    return json.dumps({
        "interpretations": [
            {"question": "What is HP, the company?", "answer": "Hewlett-Packard", "citations": [company, also]},
            {"question": "What is hp, the unit?", "answer": "horsepower", "citations": [unit]},
            {"question": "What is HP in games?", "answer": "hit points", "citations": []},  # not grounded
        ],
        "answer": f"HP can mean the company Hewlett-Packard [{company}], whereas hp is also horsepower [{unit}].",
    })


def one_meaning(animal: int = 4) -> str:
    return json.dumps({
        "interpretations": [{"question": "What is a jaguar, the animal?", "answer": "a big cat", "citations": [animal]}],
        "answer": f"A jaguar is a big cat of the Americas [{animal}].",
    })


# the replies as vanilla's top 5 for "What is HP?" / "What is a jaguar?" over the demo corpus number them
TWO_MEANINGS = two_meanings()
ONE_MEANING = one_meaning()
FOCUSED = json.dumps({
    "interpretations": [{"question": "What is HP, the company?", "answer": "Hewlett-Packard", "citations": [1]}],
    "answer": "HP is Hewlett-Packard, an American technology company [1].",
})


def reply_for(prompt: str) -> str:
    """One reply per prompt kind, so a fake server or a scripted model can run the chat graph;
    citations follow the passages the prompt shows."""
    if FOCUS_MARKER in prompt:
        return FOCUSED
    if REWRITE_MARKER in prompt:
        return json.dumps({"question": "What is a jaguar, the car?"})
    if "jaguar" in prompt.split("Question:")[-1].split("\n")[0].lower():  # the question line, not the passages
        return one_meaning(number_of(prompt, "big cat"))
    company = number_of(prompt, "Hewlett-Packard")
    also = next((int(n) for n, body in re.findall(r"^\[(\d+)\] (.*)$", prompt, re.MULTILINE)
                 if "hewlett-packard" in body.casefold() and int(n) != company), company)
    return two_meanings(company, also, number_of(prompt, "horsepower"))


def chat_rules() -> list:
    """ScriptedChatModel rules: every prompt answered by `reply_for`."""
    return [("", lambda messages: reply_for("\n".join(str(m.content) for m in messages)))]


def fake_openai_reply(request: dict) -> str:
    """A FakeOpenAI reply function with the same script."""
    return reply_for("\n".join(str(m.get("content")) for m in request.get("messages", [])))
