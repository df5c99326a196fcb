"""An answer shown in three parts on a terminal: early readings, the model's prose, the checked answer.

A method that states readings sends them as a `readings` event before its model call
(`{"event": "readings", "readings": [{"sense", "text", "citations"}], "passages": [{"n", "id",
"title"}]}`): each reading's cited line is printed at once. The prose streams after them, a
sentence at a time. The checked final answer is then compared with what is on screen, sentence
by sentence: only its new sentences are printed, and a line shown earlier that it no longer
holds gets a short "dropped: ..." note, so nothing is printed twice.
"""

from __future__ import annotations

from agent.assembly.units import split_code
from agent.llm.streaming import split_sentences, words


def _key(sentence: str) -> str:
    return " ".join(words(sentence))


def pieces(text: str) -> list[str]:
    """The sentences of an answer as it is compared with what is on screen; a reading's lead-in
    with its code block is one piece (its code is never split at a period)."""
    found: list[str] = []
    for part in text.strip().split("\n\n"):
        prose, code = split_code(part)
        if not code:
            found += split_sentences(part)
            continue
        heads = split_sentences(prose) or [""]
        found += [*heads[:-1], f"{heads[-1]}\n{code}".strip()]
    return [piece for piece in found if piece]


def one_line(answer: str) -> str:
    """A short answer on one line (an interpretation's): a code block's lines in backticks."""
    prose, code = split_code(answer)
    lines = [line.strip() for line in code.split("\n")[1:-1] if line.strip()]
    return f"{prose.strip()} " + " ".join(f"`{line}`" for line in lines) if code else answer


class ShownAnswer:
    """What of one answer is already on screen: reading lines and streamed prose."""

    def __init__(self) -> None:
        self.readings: list[dict] = []
        self.streamed = ""

    def add_readings(self, event: dict) -> list[str]:
        """The lines to print for a readings event (its readings' cited lines, new ones only)."""
        known = {_key(r["text"]) for r in self.readings}
        fresh = [r for r in event.get("readings") or [] if r.get("text") and _key(r["text"]) not in known]
        self.readings += fresh
        return [r["text"].strip() for r in fresh]

    def add_token(self, text: str) -> None:
        self.streamed += text

    @property
    def shown_anything(self) -> bool:
        return bool(self.readings or self.streamed.strip())

    def changes(self, answer: str, dropped_reasons: dict | None = None) -> tuple[list[str], list[str]]:
        """(sentences of the final answer not on screen yet, "dropped: ..." notes for the lines on
        screen it no longer holds); `dropped_reasons` maps a reading's sense to why it went."""
        final = pieces(answer)
        final_keys = {_key(s) for s in final}
        shown = [(r.get("sense") or "", r["text"]) for r in self.readings]
        shown += [("", s) for s in pieces(self.streamed)]
        shown_keys = {_key(text) for _, text in shown}
        shown_keys |= {_key(s) for _, text in shown for s in pieces(text)}
        new = [s for s in final if _key(s) and _key(s) not in shown_keys]
        notes = []
        for sense, text in shown:
            if all(_key(s) in final_keys for s in pieces(text)):
                continue
            label = f'the reading "{sense}"' if sense else f'"{_short(text, 60)}"'
            reason = (dropped_reasons or {}).get(sense)
            notes.append(f"dropped: {label}" + (f" ({reason})" if reason else ""))
        return new, notes


def _short(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[:limit - 3] + "..."


def dropped_reasons(result: dict) -> dict:
    """{sense: why} from the result's decision, when the method says why it dropped a reading
    (`decision["dropped_readings"]`: a list of {"sense", "reason"})."""
    items = (result.get("decision") or {}).get("dropped_readings") or []
    return {item.get("sense"): item.get("reason") for item in items if isinstance(item, dict)}
