"""Turning a method's interpretations into a choice a person or a calling agent can make.

The chat graph (graphs/chat.py) and the agent tool (agent/app/tools.py) both ask "which did you
mean?" from the same options, so the rules live here once: only grounded interpretations
(with at least one cited passage) are offered, duplicates are dropped, and a reply is
resolved to one option or to "all of them". Everything here is plain JSON-able data, since
the options travel through `interrupt()` and checkpoints.

The request also carries the human-in-the-loop shape LangChain's agent-chat-ui renders as an
interactive form (`action_requests` + `review_configs`), and a reply may come back in any of
the shapes LangGraph clients send: a bare number or text, the agent-inbox list
`[{"type": "response", "args": ...}]`, the HITL dict `{"decisions": [...]}`, or message
content blocks `[{"type": "text", "text": ...}]`.
"""

from __future__ import annotations

from typing import Any

from agent.errors import InputError
from agent.llm.answers import folded
from agent.llm.prompts import fragment

PROMPT = "Which of these did you mean?"
ALL_CHOICES = ("0", "all", "any", "*", "all of them")
ACTION = "choose_interpretation"  # the HITL action agent-chat-ui shows; its one argument is `choice`


def clarification_options(interpretations: list[dict] | None, limit: int = 6) -> list[dict]:
    """Numbered options (1..n) from the grounded interpretations, exact repeats dropped.

    Small models sometimes repeat the question verbatim for every reading, so an option is
    told apart by its question and its answer together."""
    options: list[dict] = []
    seen: set[tuple[str, str]] = set()
    for item in interpretations or []:
        question = str(item.get("question") or "").strip()
        answer = str(item.get("answer") or "").strip()
        key = (folded(question), folded(answer))
        if not question or not item.get("citations") or key in seen:
            continue
        seen.add(key)
        options.append({
            "option": len(options) + 1,
            "question": question,
            "answer": answer,
            "citations": [str(passage_id) for passage_id in item["citations"]],
        })
        if len(options) >= limit:
            break
    return options


def needs_clarification(options: list[dict], minimum: int = 2) -> bool:
    """Asking only helps when there is more than one grounded meaning to choose from."""
    return len(options) >= max(2, minimum)


def clarification_request(question: str, options: list[dict], error: str | None = None) -> dict:
    """The payload shown to the person: the question, the options, and how to answer."""
    request = {
        "type": "clarification",
        "question": question,
        "prompt": PROMPT,
        "options": options,
        "reply_with": "an option number, the option's question, or 0 / \"all\" for every interpretation",
    }
    if error:
        request["error"] = error
    how = (f"Edit `choice` to a number from 1 to {len(options)} (0: all of them), accept to answer all of them, "
           "or respond with your choice in words.")
    description = "\n\n".join([*([error] if error else []), clarification_text(options), how])
    request["action_requests"] = [{"name": ACTION, "args": {"choice": "all"}, "description": description}]
    request["review_configs"] = [{"action_name": ACTION, "allowed_decisions": ["approve", "edit", "reject"]}]
    return request


def clarification_text(options: list[dict]) -> str:
    """The question as a chat message, for transcripts and UIs that show only messages."""
    lines = [PROMPT, *(f"{o['option']}. {o['question']} ({o['answer']})" for o in options), "0. All of them"]
    return "\n".join(lines)


def reply_value(reply: Any) -> Any:
    """The choice inside whatever a client sent back to resume the thread.

    HITL decisions: approve = the offered `choice` ("all"), edit = the edited `choice`, reject =
    its message as a reply in words. Agent-inbox responses: accept/ignore = all, response = its
    text, edit = the edited `choice`. Content blocks are joined into their text."""
    if isinstance(reply, dict) and isinstance(reply.get("decisions"), list):
        reply = reply["decisions"][0] if reply["decisions"] else None
    if isinstance(reply, list):
        if reply and all(isinstance(block, dict) and block.get("type") == "text" for block in reply):
            return " ".join(str(block.get("text") or "") for block in reply)
        reply = reply[0] if reply else None
    if not isinstance(reply, dict) or "type" not in reply:
        return reply
    kind = reply["type"]
    if kind in ("approve", "accept", "ignore"):
        return "all"
    if kind == "reject":
        return reply.get("message")
    if kind == "response":
        return reply_value(reply.get("args"))
    if kind == "edit":
        action = reply.get("edited_action") or reply.get("args") or {}
        arguments = action.get("args") if isinstance(action, dict) else None
        return arguments.get("choice") if isinstance(arguments, dict) else None
    if kind == "text":
        return reply.get("text")
    return reply


def resolve_choice(choice: Any, options: list[dict]) -> dict | None:
    """The chosen option, or None for "all of them"; InputError for anything else.

    Accepts an option number (int or digits), the option's question text, a dict with
    "option", "question" or "choice" (what a UI might send back), 0 / "all", or any of the
    client shapes `reply_value` unwraps."""
    choice = reply_value(choice)
    if isinstance(choice, dict):
        choice = choice.get("option", choice.get("question", choice.get("choice")))
    if isinstance(choice, bool) or choice is None:
        raise InputError(f"no choice given; {_expected(options)}")
    text = str(choice).strip()
    if text.casefold() in ALL_CHOICES:
        return None
    if text.isdigit():
        number = int(text)
        if 1 <= number <= len(options):
            return options[number - 1]
        raise InputError(f"option {number} does not exist; {_expected(options)}")
    for option in options:
        if folded(option["question"]) == folded(text):
            return option  # the first option with that question, when a small model repeated it
    raise InputError(f"{text!r} is not one of the options; {_expected(options)}")


def _expected(options: list[dict]) -> str:
    return f"answer with a number from 1 to {len(options)}, or 0 for all of them"


def focus_passages(option: dict, passages: list[dict]) -> list[dict]:
    """The chosen interpretation's evidence: the passages it cites, in retrieval order."""
    cited = [passage for passage in passages if passage["id"] in option["citations"]]
    return cited or passages


def focus_guidance(option: dict) -> str:
    """Instructions for the answer after the person chose one interpretation."""
    return fragment("guidance_chosen", question=option["question"], answer=option["answer"])
