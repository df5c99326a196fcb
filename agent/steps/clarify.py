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

from agent.assembly.compose import sense_name
from agent.errors import InputError
from agent.llm.answers import cited_numbers, folded
from agent.llm.prompts import fragment
from agent.steps.follow_up import passage_product
from agent.steps.grounding import answer_support
from agent.steps.interpretations import marker, sentences

PROMPT = "Which of these did you mean?"
ALL_CHOICES = ("0", "all", "any", "*", "all of them", "all of these")
NONE_CHOICES = ("none of these", "none of them", "none", "neither", "something else")
MAX_OPTIONS = 4  # senses offered at most, beside "all of them"
SENSE_MERGE = 0.5  # passage cosine from which an option folds into an earlier one's sense (demo tune split)
ACTION = "choose_interpretation"  # the HITL action agent-chat-ui shows; its one argument is `choice`


def clarification_options(interpretations: list[dict] | None, limit: int = MAX_OPTIONS,
                          passages: list[dict] | None = None, same_sense=None) -> list[dict]:
    """Numbered options (1..n), one per sense the documents support: grounded interpretations,
    exact repeats dropped, and a reading whose passage `same_sense` finds about an earlier
    option's sense (a sub-topic, e.g. "The HP Way" beside Hewlett-Packard) folded into that
    option, its citations kept. Each option is named in plain words (`label`: its passage's
    title) and carries its cited passage (`source`: id, title, the sentence stating it).

    Small models sometimes repeat the question verbatim for every reading, so an option is
    told apart by its question and its answer together."""
    by_id = {p["id"]: p for p in passages or []}
    options: list[dict] = []
    seen: set[tuple[str, str]] = set()
    for item in interpretations or []:
        question = str(item.get("question") or "").strip()
        answer = str(item.get("answer") or "").strip()
        key = (folded(question), folded(answer))
        if not question or not item.get("citations") or key in seen:
            continue
        seen.add(key)
        citations = [str(passage_id) for passage_id in item["citations"]]
        option = {"question": question, "answer": answer, "citations": citations,
                  "source": option_source(answer, citations, by_id)}
        same = next((earlier for earlier in options if same_sense and same_sense(earlier, option)), None)
        if same is not None:  # a sub-topic of a sense already offered: its evidence, not another choice
            same["citations"] += [c for c in citations if c not in same["citations"]]
            same.setdefault("covers", []).append(question)
            continue
        if len(options) < limit:
            options.append(option)
    for number, option in enumerate(options, 1):
        option["option"] = number
    name_options(options)
    return [{"option": o["option"], **{k: v for k, v in o.items() if k != "option"}} for o in options]


def result_options(result: dict, limit: int, context, merge: float) -> tuple[list[dict], list[dict]]:
    """(options, the passages that number them) for a method's result: its interpretations, then
    the senses it offered but did not state (`offered_senses`), their passages after its own."""
    offered = offered_senses(result.get("decision"))
    passages = list(result.get("passages") or [])
    known = {p["id"] for p in passages}
    passages += [o["passage"] for o in offered if o["passage"]["id"] not in known]
    options = clarification_options([*(result.get("interpretations") or []), *offered], limit, passages,
                                    sense_matcher(context, passages, merge))
    return options, passages


def offered_senses(decision: dict | None) -> list[dict]:
    """The senses a method found but did not state (`offered`: products over several manuals the
    product gate held back, agent/assembly/nodes.py), wherever the method's decision keeps them:
    options when asking, after the stated ones."""
    found = []
    for detail in [decision or {}, *(decision or {}).values()]:
        if isinstance(detail, dict) and isinstance(detail.get("offered"), list):
            found += [item for item in detail["offered"] if isinstance(item, dict) and item.get("passage")]
    return found


def option_source(answer: str, citations: list[str], by_id: dict[str, dict]) -> dict:
    """The option's cited passage: its id, title, the sentence that best states the answer, and
    the product its document is about where it was read from a file (`product`)."""
    cited = [by_id[c] for c in citations if c in by_id]
    # the passage that states the answer best, its title first ("Hewlett-Packard" over "The HP Way")
    passage = max(cited, key=lambda p: (answer_support(answer, p.get("title", "")),
                                        answer_support(answer, p.get("text", ""))), default=None)
    if passage is None:
        return {"id": citations[0], "title": "", "quote": answer}
    text = passage.get("text") or ""
    if "`" in answer and " ".join(answer.replace("`", "").split()) in " ".join(text.split()):
        quote = answer  # a unit of the passage with its code marks, as the answer shows it: "`-k, --keep` — Keep ..."
    else:
        parts = sentences(text) or [text]
        quote = max(parts, key=lambda part: answer_support(answer, part))
    product = passage_product(passage)
    return {"id": passage["id"], "title": passage.get("title", ""), "quote": quote, **({"product": product} if product else {})}


def name_options(options: list[dict]) -> None:
    """Each option's `label`: the sense its passage stands for, in plain words (the product its
    document is about, as the document names it; else the passage title, less a section after a
    colon); where two senses would share a name, its answer too. An option read from one
    product's documents carries that `product`: choosing it decides the thread's product."""
    names = [sense_name(o["source"]) if o["source"].get("title") or o["source"].get("product") else ""
             for o in options]
    for option, name in zip(options, names):
        short = option["answer"] if len(option["answer"]) <= 60 else option["answer"][:57].rsplit(" ", 1)[0] + "..."
        option["label"] = (f"{name}: {short}" if names.count(name) > 1 else name) if name else option["question"]
        if option["source"].get("product"):
            option["product"] = option["source"]["product"]


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


def shortened(text: str, limit: int = 90) -> str:
    return text if len(text) <= limit else text[:limit - 3].rsplit(" ", 1)[0] + "..."


def option_line(option: dict) -> str:
    """An option in one line: its sense in plain words, then what the documents say of it."""
    label = option.get("label") or option["question"]
    return f"{option['option']}. {label}: {shortened(option['answer'])}"


def clarification_text(options: list[dict]) -> str:
    """The question as a chat message, for transcripts and UIs that show only messages."""
    lines = [PROMPT, *(option_line(o) for o in options), "0. All of them"]
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
    for option in options:
        if option.get("label") and folded(option["label"]) == folded(text):
            return option
    raise InputError(f"{text!r} is not one of the options; {_expected(options)}")


def _expected(options: list[dict]) -> str:
    return (f"answer with a number from 1 to {len(options)}, 0 for all of them, or 'none of these' and what "
            "you meant")


def restated_intent(reply: Any) -> str | None:
    """A reply of "none of these" with the person's own words: those words (the new question);
    "" when it names none and says nothing more; None for any other reply."""
    text = reply_value(reply)
    if not isinstance(text, str):
        return None
    stripped = text.strip()
    for opener in NONE_CHOICES:
        if stripped.casefold().startswith(opener):
            rest = stripped[len(opener):]
            if rest[:1].isalnum():  # "nonetheless ...", "neithers": not the word itself
                return None
            return rest.lstrip(" .,:;!-—").strip()
    return None


def sense_matcher(context, passages: list[dict], threshold: float):
    """`same_sense(earlier, option)` for `clarification_options`: the later option's passage is
    about the earlier one's sense when their indexed vectors' cosine reaches `threshold`, unless
    their titles state different numbers (the 2018 and the 2019 edition are two senses).
    None (no folding) for a threshold of 1 or more, or without passages."""
    if threshold >= 1 or not passages:
        return None
    import numpy as np

    from agent.retrieval.retriever import get_retriever, passage_vectors
    from agent.steps.grounding import number_words, said_words

    by_id = {p["id"]: p for p in passages}

    def same_sense(earlier: dict, option: dict) -> bool:
        first, second = by_id.get(earlier["source"]["id"]), by_id.get(option["source"]["id"])
        if first is None or second is None:
            return False
        if passage_product(first) != passage_product(second):  # two products' manuals are two senses, however alike
            return False
        numbers = [number_words(said_words(p.get("title", ""))) for p in (first, second)]
        if all(numbers) and numbers[0] != numbers[1]:
            return False
        vectors = np.asarray(passage_vectors(get_retriever(context), [first, second]), dtype=float)
        norms = np.linalg.norm(vectors, axis=1)
        return bool(norms.all() and float(vectors[0] @ vectors[1]) / float(norms[0] * norms[1]) >= threshold)

    return same_sense


def chosen_answer(option: dict, answer: str, interpretations: list[dict], passages: list[dict]) -> tuple[str, list[dict]]:
    """(answer, interpretations) for the chosen sense, from what the method already wrote: its
    sentences citing only the option's passages (else the option's cited passage sentence: a
    sentence contrasting two senses is not about the chosen one), and the option as the one
    interpretation (the readings it folded in merged, their citations kept)."""
    numbers = {n for n, p in enumerate(passages, 1) if p["id"] in option["citations"]}
    kept = [s for s in sentences(answer) if cited_numbers(s) and cited_numbers(s) <= numbers]  # about this sense only
    if not kept:
        quote = option["source"]["quote"].strip().rstrip(".")
        kept = [f"{quote}{marker(option['citations'], passages)}."]
    about = [item for item in interpretations if set(item.get("citations") or []) & set(option["citations"])]
    if not about:  # a sense offered but not stated (a product the gate held back): the option is its interpretation
        about = [{"question": option["question"], "answer": option["answer"], "citations": option["citations"]}]
    if len(about) > 1:  # sub-topics folded into the option are one sense: one interpretation, not one block each
        citations = list(dict.fromkeys(c for item in about for c in item.get("citations") or []))
        about = [{**about[0], "question": option["question"], "answer": option["answer"], "citations": citations}]
    return " ".join(kept), about


def focus_passages(option: dict, passages: list[dict]) -> list[dict]:
    """The chosen interpretation's evidence: the passages it cites, in retrieval order."""
    cited = [passage for passage in passages if passage["id"] in option["citations"]]
    return cited or passages


def focus_guidance(option: dict) -> str:
    """Instructions for the answer after the person chose one interpretation."""
    return fragment("guidance_chosen", question=option["question"], answer=option["answer"])
