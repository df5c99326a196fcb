"""The state contract every graph shares: the same input, the same output.

Plain JSON-able data only (checkpoints must round-trip). Lists that several nodes add to
carry reducers; `usage` and `route` are filled by `agent.usage.tracked`, never by hand.
"""

from __future__ import annotations

import functools
from typing import Annotated, Any

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages
from langgraph.types import Overwrite
from typing_extensions import NotRequired, TypedDict  # Studio's input/output schemas need it on Python < 3.12

from agent.usage import append_route, merge_usage


class Decision(TypedDict, total=False):
    """The common part of `decision` every method fills (the eval scorer reads these); the
    method's own detail goes under its name in the result (`decision["diva"] = {...}`)."""

    ambiguous: bool | None  # the method's judgement; None when it does not judge (it just lists readings)
    branch: str  # which path ran, e.g. "passages" or "closed_book" (DIVA), "decompose" or "direct" (ADF)
    interpretations_source: str  # where the reported interpretations come from, e.g. "synthesis", "consolidation"
    abstained: bool  # the answer states nothing from the documents


COMMON_DECISION = tuple(Decision.__annotations__)


def merge_decision(left: dict | None, right: dict | None) -> dict:
    """Reducer for `decision`: later nodes add keys describing the branch they took."""
    return {**(left or {}), **(right or {})}


def message_text(message: AnyMessage) -> str:
    """A message's text, whether its content is a string or a list of content blocks
    (chat UIs such as agent-chat-ui send `[{"type": "text", "text": ...}]`)."""
    return message.text.strip()


class Passage(TypedDict):
    id: str
    title: str
    text: str
    score: float
    source: NotRequired[str]


class Interpretation(TypedDict):
    question: str
    answer: str
    citations: list[str]  # passage ids


class InputState(TypedDict):
    """What every graph accepts: a question and, optionally, the conversation so far."""

    question: str
    messages: NotRequired[Annotated[list[AnyMessage], add_messages]]


class OutputState(TypedDict, total=False):
    """What every graph returns."""

    answer: str
    interpretations: list[Interpretation]
    passages: list[Passage]
    route: Annotated[list[str], append_route]
    decision: Annotated[dict[str, Any], merge_decision]
    usage: Annotated[dict[str, Any], merge_usage]
    messages: Annotated[list[AnyMessage], add_messages]


class RAGState(InputState, OutputState, total=False):
    """The working state of a retrieve-then-answer graph; methods extend it."""

    guidance: str  # extra instructions a method hands to `synthesize_answer` (e.g. sub-questions)
    search_query: str  # what `retrieve` searches with instead of the question (e.g. VERDICT's relaxed query)
    verified_questions: list[str]  # the only readings synthesis may report (DtV's verified ones)


TURN_OUTPUTS = ("route", "usage", "decision")


def starts_turn(node, **decision: Any):
    """Wrap the first node of a graph so each turn starts with fresh `route`, `usage` and
    `decision`: on a checkpointer thread the previous turn's values are still in state and
    their reducers would add to them. Every graph wraps its entry node with this, passing the
    common decision (agent.state.Decision) it starts from; later nodes update it."""

    @functools.wraps(node)
    def wrapper(state, *args, **kwargs):
        update = dict(node(state, *args, **kwargs) or {})
        fresh = {"route": update.get("route") or [], "usage": update.get("usage") or {},
                 "decision": {**decision, **(update.get("decision") or {})}}
        return {**update, **{key: Overwrite(fresh[key]) for key in TURN_OUTPUTS}}

    wrapper.starts_turn = True
    return wrapper
