"""A scripted "chat" graph for the chat page's test: it streams what a method that states
readings streams (stages, the `readings` event, the prose sentence by sentence, slowly) and
ends with a checked answer that keeps one early reading and drops the other, without a model."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Annotated, TypedDict

from langchain_core.messages import AIMessage, AnyMessage
from langgraph.config import get_stream_writer
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages

PASSAGES = [
    {"id": "hp-hewlett-packard-01", "title": "Hewlett-Packard",
     "text": "Hewlett-Packard, usually shortened to HP, is an American technology company founded in 1939."},
    {"id": "hp-horsepower-01", "title": "Horsepower", "text": "Horsepower (hp) is a unit of measurement of power."},
]
READINGS = [
    {"sense": "As a company", "text": "As a company, HP is Hewlett-Packard, an American technology company [1].",
     "citations": ["hp-hewlett-packard-01"]},
    {"sense": "As a unit of power", "text": "As a unit of power, hp is a unit of measurement of power [2].",
     "citations": ["hp-horsepower-01"]},
]
PROSE = ["HP was founded in 1939 by Bill Hewlett and David Packard [1].", " It began in a garage in Palo Alto [1].",
         " The garage is called the birthplace of Silicon Valley [1]."]
ANSWER = " ".join([READINGS[0]["text"], *(s.strip() for s in PROSE)])
SENTENCE_DELAY_S = 1.5  # slow enough to look at the page while the prose is still being written


class State(TypedDict, total=False):
    messages: Annotated[list[AnyMessage], add_messages]
    answer: str
    passages: list[dict]
    interpretations: list[dict]
    decision: dict


@dataclass
class Context:
    downstream: str = "auto"


def answer(state: State) -> dict:
    write = get_stream_writer()
    write({"event": "stage", "node": "retrieve"})
    time.sleep(0.3)
    write({"event": "readings", "readings": READINGS,
           "passages": [{"n": n, "id": p["id"], "title": p["title"]} for n, p in enumerate(PASSAGES, 1)]})
    write({"event": "stage", "node": "synthesize_answer"})
    for sentence in PROSE:
        time.sleep(SENTENCE_DELAY_S)
        write({"event": "token", "text": sentence})
    time.sleep(0.5)
    interpretations = [{"question": "What is HP, the company?", "answer": "Hewlett-Packard",
                        "citations": ["hp-hewlett-packard-01"]}]
    return {"answer": ANSWER, "passages": PASSAGES, "interpretations": interpretations,
            "decision": {"dropped_readings": [{"sense": "As a unit of power", "reason": "not asked about in this chat"}]},
            "messages": [AIMessage(ANSWER)]}


builder = StateGraph(State, context_schema=Context)
builder.add_node("answer", answer)
builder.add_edge(START, "answer")
builder.add_edge("answer", END)
graph = builder.compile(name="chat")
