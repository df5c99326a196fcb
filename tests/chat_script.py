"""Scripted replies shared by the chat, tool, notebook and server tests."""

from __future__ import annotations

import json

FOCUS_MARKER = "The user was asked what they meant"
SYNTHESIS_MARKER = "Passages:"
REWRITE_MARKER = "Latest message:"

TWO_MEANINGS = json.dumps({
    "passage_meanings": [],
    "interpretations": [
        {"question": "What is HP, the company?", "answer": "Hewlett-Packard", "citations": [1, 2]},
        {"question": "What is hp, the unit?", "answer": "horsepower", "citations": [3]},
        {"question": "What is HP in games?", "answer": "hit points", "citations": []},  # not grounded
    ],
    "answer": "HP can mean the company Hewlett-Packard [1], whereas hp is also horsepower [3].",
})
ONE_MEANING = json.dumps({
    "passage_meanings": [],
    "interpretations": [{"question": "What is a jaguar, the animal?", "answer": "a big cat", "citations": [1]}],
    "answer": "A jaguar is a big cat of the Americas [1].",
})
FOCUSED = json.dumps({
    "passage_meanings": [],
    "interpretations": [{"question": "What is HP, the company?", "answer": "Hewlett-Packard", "citations": [1]}],
    "answer": "HP is Hewlett-Packard, an American technology company [1].",
})


def reply_for(prompt: str) -> str:
    """One reply per prompt kind, so a fake server or a scripted model can run the chat graph."""
    if FOCUS_MARKER in prompt:
        return FOCUSED
    if REWRITE_MARKER in prompt:
        return json.dumps({"question": "What is a jaguar, the car?"})
    if "jaguar" in prompt.split("Question:")[-1].split("\n")[0].lower():  # the question line, not the passages
        return ONE_MEANING
    return TWO_MEANINGS


def chat_rules() -> list:
    """ScriptedChatModel rules: every prompt answered by `reply_for`."""
    return [("", lambda messages: reply_for("\n".join(str(m.content) for m in messages)))]


def fake_openai_reply(request: dict) -> str:
    """A FakeOpenAI reply function with the same script."""
    return reply_for("\n".join(str(m.get("content")) for m in request.get("messages", [])))
