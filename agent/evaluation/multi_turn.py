"""Labelled multi-turn conversations through the chat graph (`disambig eval --dataset conversations`).

Each conversation of a file such as bench/fixtures/manuals_conversations.json runs turn by turn
on a fresh thread of the chat graph (the product's ChatSession on an InMemorySaver). A turn is
labelled with the product it is about, its short answers and the question it should become;
when the chat asks which one was meant, a scripted person picks the option of the turn's
product (else says "none of these" and asks the labelled question). Scored per follow-up: was
it resolved to its product (implicit and switching follow-ups), was a clear one left as it was,
and does the answer state a labelled short answer.
"""

from __future__ import annotations

import time

from agent.evaluation.datasets import Example
from agent.evaluation.metrics import normalize_answer, remove_citations, percentile
from agent.retrieval.products import names_product, product_key

FOLLOW_UP_KINDS = ("implicit", "switch", "clear")


def same_product(name: str | None, label: str) -> bool:
    """A product as the documents name it is the labelled one, its language suffix aside
    ("Coverage.py" is coverage)."""
    found, wanted = product_key(name or ""), product_key(label)
    return bool(found) and (found == wanted or found.startswith(wanted) or wanted.startswith(found))


def choose_product(request: dict, turn: dict) -> str:
    """The scripted person's reply: the option of the turn's product, else its labelled question."""
    for option in request.get("options") or []:
        if same_product(option.get("product") or option.get("label"), turn["product"]):
            return str(option["option"])
    return f"None of these. {turn.get('rewrite') or turn['question']}"


def run_turns(example: Example, context) -> dict:
    """The conversation on a fresh chat thread: {"result": the last turn's, "conversation":
    {"turns": what each turn became (query, product, asks, answer, calls, seconds)}}."""
    from langgraph.checkpoint.memory import InMemorySaver

    from agent.app.conversation import ChatSession

    session = ChatSession(InMemorySaver(), f"conversation-{example.id}", context)
    turns, result = [], {}
    for turn in example.turns or []:
        started, asks = time.perf_counter(), []
        events = session.send(turn["question"])
        while True:
            last = {}
            for event in events:
                last = event
            if last.get("event") != "clarification":
                result = last.get("result") or {}
                break
            reply = choose_product(last, turn) if len(asks) < 2 else "all"
            asks.append({"options": [o.get("label") for o in last.get("options") or []], "reply": reply})
            events = session.choose(reply)
        chat = (result.get("decision") or {}).get("chat") or {}
        turns.append({
            "kind": turn.get("kind"), "question": turn["question"], "label": turn["product"],
            "query": chat.get("query") or turn["question"], "product": chat.get("product"),
            "product_source": chat.get("product_source"), "product_seconds": chat.get("product_seconds"),
            "chosen_product": chat.get("chosen_product"),
            "ambiguity": chat.get("ambiguity"), "model_rewrite": "rewrite_query" in (result.get("route") or []),
            "asks": asks, "answer": result.get("answer") or "", "llm_calls": (result.get("usage") or {}).get("llm_calls", 0),
            "seconds": round(time.perf_counter() - started, 3),
        })
    return {"result": result, "conversation": {"turns": turns, "answered": turns[-1]["query"] if turns else ""}}


def states_answer(answers: list[str], text: str) -> bool:
    """A labelled short answer, normalized, inside the answer (citations removed)."""
    said = normalize_answer(remove_citations(text))
    return any(normalize_answer(a) and normalize_answer(a) in said for a in answers)


def resolved_to(turn: dict) -> bool:
    """The follow-up went downstream about its labelled product: the product the chat resolved,
    else the one its (model-)rewritten query names."""
    if turn["product"]:
        return same_product(turn["product"], turn["label"])
    return names_product(turn["query"], turn["label"])


def resolved_by_asking(turn: dict) -> bool:
    """Nothing resolved the follow-up, and the person chose its labelled product when asked."""
    return not turn["product"] and same_product(turn.get("chosen_product"), turn["label"])


def follow_up_metrics(example: Example, record: dict) -> list[dict]:
    """Per follow-up turn: its kind, resolved (implicit, switch), left alone (clear), answered,
    whether the model rewrote it, its calls and the resolver's seconds."""
    labelled = (example.turns or [])[1:]
    rows = []
    for turn, label in zip(record["conversation"]["turns"][1:], labelled):
        kind = label.get("kind")
        rows.append({
            "kind": kind,
            "resolved": resolved_to(turn) if kind != "clear" else None,
            "resolved_by_asking": resolved_by_asking(turn) if kind != "clear" else None,
            "left_alone": turn["query"] == turn["question"] if kind == "clear" else None,
            "answered": states_answer(label["answers"], turn["answer"]),
            "model_rewrite": turn["model_rewrite"], "asks": len(turn["asks"]), "llm_calls": turn["llm_calls"],
            "product_seconds": turn.get("product_seconds"),
        })
    return rows


def _mean(values: list) -> float | None:
    values = [float(v) for v in values if v is not None]
    return round(sum(values) / len(values), 4) if values else None


def summarize_follow_ups(records: list[dict]) -> dict:
    """Per follow-up kind and over all follow-ups: n, resolved, left_alone, answered, model
    rewrites, asks and calls per follow-up, and the resolver's seconds (p50, p95, max)."""
    rows = [row for r in records if r.get("follow_ups") for row in r["follow_ups"]]
    groups = {kind: [row for row in rows if row["kind"] == kind] for kind in FOLLOW_UP_KINDS}
    summary = {}
    for name, group in {**groups, "all": rows}.items():
        timed = [row["product_seconds"] for row in group if row.get("product_seconds") is not None]
        summary[name] = {
            "n": len(group), "resolved": _mean([row["resolved"] for row in group]),
            "resolved_by_asking": _mean([row.get("resolved_by_asking") for row in group]),
            "left_alone": _mean([row["left_alone"] for row in group]),
            "answered": _mean([row["answered"] for row in group]),
            "model_rewrites": sum(row["model_rewrite"] for row in group), "asks": _mean([row["asks"] for row in group]),
            "llm_calls": _mean([row["llm_calls"] for row in group]),
            "product_s_p50": round(percentile(timed, 50), 4) if timed else None,
            "product_s_p95": round(percentile(timed, 95), 4) if timed else None,
            "product_s_max": round(max(timed), 4) if timed else None,
        }
    return summary


COLUMNS = ("n", "resolved", "resolved_by_asking", "left_alone", "answered", "model_rewrites", "asks", "llm_calls", "product_s_p50",
           "product_s_p95", "product_s_max")


def follow_up_table(summary: dict) -> str:
    """One row per method and follow-up kind."""
    lines = ["| Method | follow-ups | " + " | ".join(COLUMNS) + " |", "|" + "---|" * (len(COLUMNS) + 2)]
    for method, groups in (summary.get("follow_ups") or {}).items():
        for kind, row in groups.items():
            cells = ["–" if row[key] is None else (f"{row[key]:.2f}" if isinstance(row[key], float) else str(row[key]))
                     for key in COLUMNS]
            lines.append(f"| {method} | {kind} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def transcript(record: dict) -> str:
    """A conversation as a person reads it: each turn, what it became, the options asked, the answer."""
    lines = [f"[{record['id']}]"]
    for turn in (record.get("conversation") or {}).get("turns") or []:
        lines.append(f"  user ({turn['kind']}, about {turn['label']}): {turn['question']}")
        if turn["query"] != turn["question"]:
            lines.append(f"    -> {turn['query']}  (product {turn['product']}, from {turn['product_source']}"
                         f"{', model rewrite' if turn['model_rewrite'] else ''})")
        for ask in turn["asks"]:
            lines.append(f"  assistant: Which of these did you mean? {' / '.join(map(str, ask['options']))}")
            lines.append(f"  user: {ask['reply']}")
        lines.append(f"  assistant: {' '.join(turn['answer'].split())}")
    return "\n".join(lines)
