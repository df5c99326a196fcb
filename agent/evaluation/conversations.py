"""Whole conversations through the chat graph with a simulated user (`disambig eval --simulate-user`).

Each question starts a fresh thread of the chat graph (compiled with an InMemorySaver); every
clarification the graph asks is answered by `SimulatedUser`, until the graph answers or the
user gives up. The record keeps what a person lived through: the options shown at each ask
(and which labelled sense each names), the replies, the final answer, its model calls and
the time to it. `conversation_metrics` scores it: success, precision for the person, asks,
false asks on clear questions and option quality.
"""

from __future__ import annotations

import time

from agent.evaluation.simulated_user import SimulatedUser, matched_sense, option_senses
from agent.llm.answers import cited_numbers
from agent.steps.interpretations import sentences


def run_conversation(example, context, seed: int = 0) -> dict:
    """One simulated conversation on `example` with the chat context `context`, on a fresh
    thread of the chat graph compiled with an InMemorySaver (the product's ChatSession)."""
    from langgraph.checkpoint.memory import InMemorySaver

    from agent.app.conversation import ChatSession

    session = ChatSession(InMemorySaver(), f"simulated-{example.id}", context)
    user = SimulatedUser(example, seed)
    asks, first_line, gave_up, result = [], None, False, None
    started = time.perf_counter()
    events = session.send(example.question)
    while True:
        resumed, last = time.perf_counter(), {}
        for event in events:
            if first_line is None and asks and _cites(event):
                first_line = round(time.perf_counter() - resumed, 3)
            last = event
        if last.get("event") != "clarification":
            result = last["result"]
            break
        reply = user.reply(last)
        asks.append({"options": [{k: o.get(k) for k in ("option", "label", "question", "answer", "citations")}
                                 for o in last.get("options") or []],
                     "senses": option_senses(last.get("options") or [], user.senses, user.question),
                     "reply": reply})
        if reply is None:
            gave_up = True
            break
        events = session.choose(reply)
    seconds = round(time.perf_counter() - started, 3)
    if result is None:  # the user gave up: what the thread holds, with no answer given
        from agent.app.api import to_result

        result = {**to_result(session.graph.get_state(session.config).values, "chat"), "answer": ""}
    chat = (result.get("decision") or {}).get("chat") or {}
    return {"result": result, "conversation": {
        "intended": user.intended, "intended_question": user.sense.question,
        "answered": chat.get("query") or example.question,  # the restated question, after "none of these"
        "asks": asks, "gave_up": gave_up, "seconds": seconds, "first_line_after_choice_s": first_line,
        "clarify": chat.get("clarify")}}


def _cites(event: dict) -> bool:
    """Whether a stream event shows the person a cited line (a reading, or a cited token run)."""
    if event.get("event") == "readings":
        return bool(event.get("readings"))
    return event.get("event") == "token" and bool(cited_numbers(event.get("text") or ""))


def labelled_sense(citations: list[str], example) -> int | None:
    """The sense the cited passages are labelled with, where the corpus labels its passages
    (the fixtures): the first cited passage with a label decides; None when none has a label
    of this question's senses."""
    names = [pair.get("sense") for pair in example.qa_pairs if pair.get("short_answers")]
    for passage_id in citations:
        label = (example.passage_senses or {}).get(passage_id)
        if label is not None:
            return names.index(label) if label in names else None
    return None


def sentence_sense(sentence: str, passages: list[dict], senses, asked: str, example=None) -> int | None:
    """The labelled sense an answer sentence is about: by its cited passages' labels where the
    corpus has them, else by its own words, else by the words of the passages it cites."""
    if example is not None and example.passage_senses:
        ids = [passages[n - 1]["id"] for n in sorted(cited_numbers(sentence)) if 1 <= n <= len(passages)]
        return labelled_sense(ids, example)
    found = matched_sense(sentence, senses, asked)
    if found is None:
        cited = [passages[n - 1] for n in sorted(cited_numbers(sentence)) if 1 <= n <= len(passages)]
        found = matched_sense(" ".join(f"{p.get('title', '')} {p.get('text', '')}" for p in cited), senses, asked)
    return found


def conversation_metrics(example, record: dict) -> dict:
    """Per conversation: success (the final answer states the intended sense's short answer),
    precision (share of its sentences about the intended sense), asks, and per ask whether the
    options include the intended sense, name no labelled sense, or name one sense twice. Where
    the corpus labels its passages (the fixtures), an option or a sentence is about the sense its
    cited passage is labelled with; elsewhere it is judged by its words as the user judges it."""
    conversation, output = record["conversation"], record["output"]
    user = SimulatedUser(example)
    user.intended = conversation["intended"]
    parts = sentences(output.get("answer") or "")
    about = [sentence_sense(s, output.get("passages") or [], user.senses, example.question, example) for s in parts]
    asks = conversation["asks"]
    if example.passage_senses:  # the options' passages are labelled: judge them by their labels
        named = [[labelled_sense(o.get("citations") or [], example) for o in ask["options"]] for ask in asks]
    else:  # as the person read them
        named = [list(ask["senses"]) for ask in asks]
    return {
        "ambiguous": user.ambiguous,
        "success": float(user.states_intent(output.get("answer") or "")),
        "precision": (sum(n == user.intended for n in about) / len(about)) if about else 0.0,
        "asks": len(asks),
        "option_recall": [float(user.intended in n) for n in named],
        "unmatched_options": [float(any(s is None for s in n)) for n in named],
        "duplicate_options": [float(len([s for s in n if s is not None]) > len({s for s in n if s is not None}))
                              for n in named],
        "gave_up": conversation["gave_up"],
    }


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


def summarize_conversations(records: list[dict]) -> dict:
    """The summary fields of `--simulate-user`, over ambiguous and clear questions apart and together.

    `option_recall`: share of asks whose options include the intended sense; `unmatched_options`:
    share of asks with an option no labelled sense matches; `duplicate_options`: share of asks
    with two options naming one sense; `false_ask_rate`: share of clear questions asked about."""
    done = [r for r in records if r.get("output") is not None and r.get("simulated")]
    groups = {"all": done, "ambiguous": [r for r in done if r["simulated"]["ambiguous"]],
              "clear": [r for r in done if not r["simulated"]["ambiguous"]]}
    summary = {}
    for name, group in groups.items():
        metrics = [r["simulated"] for r in group]
        per_ask = lambda key: [v for m in metrics for v in m[key]]  # noqa: E731
        timed = [r["conversation"]["seconds"] for r in group if not (r.get("usage") or {}).get("cached_replies")]
        after = [r["conversation"]["first_line_after_choice_s"] for r in group
                 if r["conversation"].get("first_line_after_choice_s") is not None]
        summary[name] = {
            "n": len(group),
            "success": _mean([m["success"] for m in metrics]),
            "precision": _mean([m["precision"] for m in metrics]),
            "asks": _mean([m["asks"] for m in metrics]),
            "calls": _mean([(r.get("usage") or {}).get("llm_calls", 0) for r in group]),
            "false_ask_rate": _mean([float(m["asks"] > 0) for m in metrics]) if name == "clear" else None,
            "option_recall": _mean(per_ask("option_recall")),
            "unmatched_options": _mean(per_ask("unmatched_options")),
            "duplicate_options": _mean(per_ask("duplicate_options")),
            "gave_up": sum(m["gave_up"] for m in metrics),
            "seconds_to_answer": _mean(timed), "timed": len(timed),
            "first_line_after_choice_s": _mean(after),
        }
    return summary


def transcript(record: dict) -> str:
    """One simulated conversation as a person would read it: the question, each clarification
    with its options (and the labelled sense each names), the replies, the final answer and its
    scores."""
    conversation, metrics = record["conversation"], record.get("simulated") or {}
    lines = [f"[{record['id']}] user (wants: {conversation['intended_question']}): {record['question']}"]
    for ask in conversation["asks"]:
        lines.append("  assistant: Which of these did you mean?")
        for option, sense in zip(ask["options"], ask["senses"]):
            named = "names no labelled sense" if sense is None else f"names sense {sense + 1}"
            lines.append(f"    {option['option']}. {option.get('label') or option['question']}  ({named})")
        lines.append("    0. All of them")
        lines.append(f"  user: {ask['reply'] if ask['reply'] is not None else '(gives up)'}")
    answer = (record.get("output") or {}).get("answer") or "(no answer)"
    lines.append(f"  assistant: {answer}")
    reason = (conversation.get("clarify") or {}).get("reason")
    lines.append(f"  -> success {metrics.get('success')}, precision {round(metrics.get('precision', 0), 2)}, "
                 f"asks {metrics.get('asks')}, model calls {(record.get('usage') or {}).get('llm_calls')}"
                 + (f"; last decision: {reason}" if reason else ""))
    return "\n".join(lines)


COLUMNS = [("success", "success"), ("precision", "precision"), ("asks", "asks"), ("calls", "calls"),
           ("false_ask_rate", "false_ask_rate"), ("option_recall", "option_recall"),
           ("unmatched_options", "unmatched_options"), ("duplicate_options", "duplicate_options"),
           ("seconds_to_answer", "s to answer"), ("first_line_after_choice_s", "s to cited line after choice")]


def conversation_table(summary: dict) -> str:
    """One row per method and question kind (ambiguous, clear, all) of the simulated conversations."""
    head = ["Method", "questions", "n", *[label for _, label in COLUMNS], "gave up"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for method, groups in (summary.get("conversations") or {}).items():
        for kind in ("ambiguous", "clear", "all"):
            row = groups[kind]
            cells = ["–" if row.get(key) is None else (f"{row[key]:.2f}" if isinstance(row[key], float) else str(row[key]))
                     for key, _ in COLUMNS]
            lines.append("| " + " | ".join([method, kind, str(row["n"]), *cells, str(row["gave_up"])]) + " |")
    return "\n".join(lines) + "\n"
