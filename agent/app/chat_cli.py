"""`disambig chat`: a terminal chat on a SQLite thread, with stages, tokens and clarifications.

Stage lines go to stderr (prefixed "·"), the answer streams to stdout as tokens arrive, and
a clarification is shown as a numbered choice read from the same input as the messages.
"""

from __future__ import annotations

import sys
import uuid
from typing import Callable, TextIO

from agent.app.early_answer import ShownAnswer, dropped_reasons
from agent.steps.clarify import resolve_choice, restated_intent
from agent.app.settings import parse_settings
from agent.documents.citation import citation
from agent.errors import InputError

QUIT = ("/quit", "/exit", ":q")
STAGES = {
    "read_message": None,  # bookkeeping, not worth a line
    "classify_ambiguity": "classifying ambiguity",  # the rewrite gate, and ADF's gate
    "rewrite_query": "rewriting the message from the conversation",
    "run_method": "answering with {method}",
    "retrieve": "retrieving passages",
    "synthesize_answer": "writing the answer",
    "ask_clarification": None,
    "deliver_answer": None,
    "answer_chosen": None,  # the chosen sense's sentences, already written
    "focus_passages_on_choice": None,
}

PRODUCT_SOURCES = {"named": "named in the message", "thread": "the product this conversation is about",
                   "earlier turn": "named earlier in the conversation"}


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."


class Terminal:
    """Renders chat events; `read` is `input` (or a test's replacement)."""

    def __init__(self, read: Callable[[str], str] = input, out: TextIO | None = None, err: TextIO | None = None,
                 method: str = "auto"):
        self.read, self.method = read, method
        self.out, self.err = out or sys.stdout, err or sys.stderr
        self.streaming = False
        self.streamed = ""  # the answer text as it streamed, to compare with the final answer
        self.shown = ShownAnswer()

    def note(self, text: str) -> None:
        self._end_stream()
        print(f"  · {text}", file=self.err, flush=True)

    def _end_stream(self) -> None:
        if self.streaming:
            print(file=self.out, flush=True)
            self.streaming = False

    def show(self, events) -> dict:
        """Print a turn's events; return the last one (a clarification request or the result)."""
        last: dict = {}
        self.streamed = ""
        self.shown = ShownAnswer()
        for event in events:
            kind = event.get("event")
            if kind == "readings":  # the readings' cited lines, before the model's prose
                for line in self.shown.add_readings(event):
                    self._end_stream()
                    print(f"assistant> {line}", file=self.out, flush=True)
            elif kind == "token":
                self.streamed += event["text"]
                self.shown.add_token(event["text"])
                if not self.streaming:
                    print("assistant> ", end="", file=self.out)
                    self.streaming = True
                print(event["text"], end="", file=self.out, flush=True)
            elif kind in ("clarification", "result"):
                last = event
            else:
                self._describe(event)
        self._end_stream()
        return last

    def _describe(self, event: dict) -> None:
        kind = event.get("event")
        if kind == "stage":
            label = STAGES.get(event["node"], event["node"].replace("_", " "))
            if label:
                self.note(label.format(method=self.method))
        elif kind == "ambiguity" and event["label"]:
            verdict = ("rewriting it from the conversation" if event["rewrite"] else
                       f"asked of {event['product']}" if event.get("named_product") else
                       "nothing earlier to resolve it against" if event["skipped"] else "answered as written")
            self.note(f"message is {event['label']}: {verdict}")
        elif kind == "rewrite":
            self.note(f"rewritten: {event['question']}")
        elif kind == "product":  # the product the message is about, and the question that goes on
            self.note(f"about {event['product']} ({PRODUCT_SOURCES.get(event['source'], event['source'])}): "
                      f"{event['question']}")
        elif kind == "gate":
            self.note(f"gate: {event.get('gate')} -> {event.get('path')}")
        elif kind == "interpretations_found":
            note = f"interpretations found: {event['count']} ({event['grounded']} grounded senses)"
            self.note(note + (", asking which one you mean" if event["asking"] else "")
                      + (f" ({event['reason']})" if event.get("reason") else ""))
        elif kind == "chosen":
            option = event["option"]
            self.note(f"focusing on option {option['option']}: {option.get('label') or option['question']}")

    def choose(self, request: dict) -> str:
        """Show the options (each sense named, its cited sentence and source) and read a valid
        choice: a number, 0 for all of them, or "none of these" and what was meant."""
        print(f"\n{request['prompt']}", file=self.out)
        for option in request["options"]:
            source = option.get("source") or {}
            print(f"  {option['option']}. {option.get('label') or option['question']}", file=self.out)
            quote = _short(source.get("quote") or option["answer"], 110)
            print(f"     \"{quote}\"" + (f" (source: {source['title']})" if source.get("title") else ""), file=self.out)
        print("  0. all of them\n  or type: none of these, and what you meant", file=self.out, flush=True)
        while True:
            reply = self.read("choose> ").strip()
            try:
                if restated_intent(reply) is None:
                    resolve_choice(reply, request["options"])
                return reply
            except InputError as error:
                print(f"  {error}", file=self.out, flush=True)

    def finish(self, result: dict) -> None:
        """Sources and the turn's usage after the streamed answer; the answer itself when nothing
        streamed, else what the checked answer changed (agent/app/early_answer.py)."""
        answer = result["answer"].strip()
        if not answer:
            return
        if not self.shown.shown_anything:
            print(f"assistant> {answer}", file=self.out, flush=True)
        else:  # only what the check changed: nothing on screen is printed twice
            new, notes = self.shown.changes(answer, dropped_reasons(result))
            if new:
                print(f"assistant (checked against the passages)> {' '.join(new)}", file=self.out, flush=True)
            for note in notes:
                print(f"  {note}", file=self.out, flush=True)
        for number, passage in enumerate(result["passages"], 1):
            print(f"  [{number}] {citation(passage)} ({passage['id']})", file=self.err)
        usage = result["usage"]
        print(f"  usage: {usage.get('llm_calls', 0)} LLM calls, {usage.get('prompt_tokens', 0)}+"
              f"{usage.get('completion_tokens', 0)} tokens, {usage.get('retriever_calls', 0)} retrievals, "
              f"{usage.get('wall_s', 0):.1f}s | route: {' > '.join(result['route'])}", file=self.err, flush=True)


def run_turn(session, terminal: Terminal, events) -> None:
    """Show a turn, asking for clarifications until the answer is complete."""
    last = terminal.show(events)
    while last.get("event") == "clarification":
        last = terminal.show(session.choose(terminal.choose(last)))
    if last.get("event") == "result":
        terminal.finish(last["result"])


def chat_settings(args) -> dict:
    """ChatContext overrides from `--set NAME=VALUE` and the named flags (flags win)."""

    from graphs.chat import ChatContext

    settings = parse_settings(args.set or [], ChatContext)
    from agent.app.index_flags import index_overrides

    flags = {**index_overrides(args, shared=True), "model": args.model, "retrieval_mode": args.mode,
             "k": args.k, "downstream": args.method, "clarify_policy": "never" if args.no_clarify else None}
    settings.update({name: value for name, value in flags.items() if value is not None})
    return settings


def thread_store(db: str | None, url: str | None) -> str:
    """Where the threads live, for the banner: the SQLite file, or the database host (no credentials)."""
    from agent.app.conversation import database_host, default_db_path

    return f"postgresql://{database_host(url).split('://')[-1]}" if url else str(db or default_db_path())


def chat_command(args, read: Callable[[str], str] = input) -> int:
    from agent.app.conversation import ChatSession, database_url, open_checkpointer

    thread = args.thread or uuid.uuid4().hex[:8]
    url = database_url(getattr(args, "database_url", None))
    with open_checkpointer(args.db, url) as saver:
        session = ChatSession(saver, thread, chat_settings(args))
        from agent.app.warm import warm_in_background

        warm_in_background(session.context)  # encoder, index and model load while the first question is typed
        terminal = Terminal(read, method=session.context.downstream)
        earlier = len(session.messages())
        print(f"disambig chat · thread {thread} ({earlier} earlier messages) · method {session.context.downstream} · "
              f"clarify {'off' if session.context.clarify_policy == 'never' else session.context.clarify_policy} · "
              f"{thread_store(args.db, url)}\n"
              f"Type a question; /quit to leave. Continue later with --thread {thread}.", file=terminal.err)
        try:
            if session.pending():
                run_turn(session, terminal, iter([{"event": "clarification", **session.pending()}]))
            while (text := read("you> ").strip()) not in QUIT:
                try:
                    if text:
                        run_turn(session, terminal, session.send(text))
                except InputError as error:  # e.g. an overlong message: say so, keep chatting
                    print(f"  {error}", file=terminal.err)
        except EOFError:  # end of input; a waiting question stays on the thread for next time
            print(file=terminal.out)
    return 0
