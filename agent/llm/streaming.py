"""What of a streaming answer reaches the user: whole sentences that stand, never a loop.

The model's text is held back until a sentence ends; the sentence is then checked and only
shown when it stands, so nothing on screen is later withdrawn. A sentence that repeats an
earlier one, or any run of `LOOP_NGRAM` words already written (citation markers aside, so
"... computers [2]" and "... computers [3]" count as the same), means the model is looping:
the stream stops there (the caller closes the request so the server stops generating) and
the text kept is the sentences before the repeat.
"""

from __future__ import annotations

import re
from typing import Callable

LOOP_NGRAM = 8  # words: a run this long written twice is a loop, not style (the loop repeats 12+)
MIN_REPEATED_SENTENCE = 3  # words: shorter sentences ("See [2].") may legitimately recur

_CITATIONS = re.compile(r"\[\s*\d+(?:\s*,\s*\d+)*\s*\]")
# a sentence ends after . ! ? (closing quotes/brackets and citation markers stay with it) when
# whitespace and the start of the next one follow; the next one's first character is required so
# that "[2]" arriving after "computers." is still counted to the sentence before
_BOUNDARY = re.compile(r"[.!?][\"'”’)]*(?:\s*\[\s*\d+(?:\s*,\s*\d+)*\s*\])*[.!?]?(?=\s+[^\s\[])")
# no sentence ends after an abbreviation or an initial ("Apple Inc. was", "J. R. R. Tolkien")
_ABBREVIATION = re.compile(r"\b(?:Inc|Corp|Co|Ltd|Jr|Sr|St|Dr|Mr|Mrs|Ms|Prof|Gen|Gov|Sen|Rep|No|vs|approx|"
                           r"e\.g|i\.e|U\.S|U\.K|[A-Z])\.$")
_COMPLETE = re.compile(r"[.!?][\"'”’)]*(?:\s*\[\s*\d+(?:\s*,\s*\d+)*\s*\])*[.!?]?\s*$")


def words(text: str) -> list[str]:
    """The words a loop is judged by: citation markers dropped, case folded."""
    return re.findall(r"\w+", _CITATIONS.sub(" ", text).casefold())


def split_sentences(text: str) -> list[str]:
    """The sentences of a finished text, split where the stream would release them."""
    found, start = [], 0
    for match in _BOUNDARY.finditer(text):
        if match.end() > start and not _ABBREVIATION.search(text[start:match.end()].strip()):
            found.append(text[start:match.end()].strip())
            start = match.end()
    return [s for s in found + [text[start:].strip()] if s]


def is_complete(sentence: str) -> bool:
    """The default `stands` check: the sentence ends as sentences do (not cut off mid-way by the
    token cap or the end of the stream)."""
    return bool(_COMPLETE.search(sentence.strip()))


class SentenceGate:
    """Releases a growing text sentence by sentence.

    `feed(text)` takes the whole text so far and returns the sentences that became complete and
    stand, each with the whitespace before it; `finish()` does the same for the last sentence
    when the stream ends. `looped` turns True when the text repeats itself; `kept` is then the
    text up to the end of the last sentence before the repeat (else all the text fed).

    `stands(sentence) -> bool` is the check a complete, non-repeated sentence must pass to be
    shown (default `is_complete`); a sentence that fails it is withheld, the stream goes on.
    Repeats are never shown and end the stream whatever `stands` says; a short sentence said
    again ("Yes. Yes.") is no loop and is withheld, as the checked answer drops it.
    """

    def __init__(self, stands: Callable[[str], bool] | None = None, ngram: int = LOOP_NGRAM):
        self.stands = stands or is_complete
        self.ngram = ngram
        self.text = ""
        self.done = 0  # characters of `text` already split into sentences
        self.looped = False
        self.loop_at = -1  # character offset in `text` where the repeat was seen
        self._kept_end = 0  # end of the last complete sentence before any repeat
        self._sentences: set[str] = set()
        self._grams: set[tuple[str, ...]] = set()

    @property
    def kept(self) -> str:
        return (self.text[:self._kept_end] if self.looped else self.text).strip()

    def feed(self, text: str) -> list[str]:
        """New text (the whole field so far): the sentences it completes that stand."""
        if self.looped or not text.startswith(self.text):
            return []
        self.text = text
        released = []
        while not self.looped:
            sentence_end = self._next_end()
            if sentence_end is None:
                self._check_tail()
                break
            released += self._complete(sentence_end)
        return released

    def finish(self) -> list[str]:
        """The stream ended: its last sentence, if it is not a repeat and stands."""
        if self.looped or not self.text[self.done:].strip():
            return []
        return self._complete(len(self.text))

    def _next_end(self) -> int | None:
        start = self.done
        for match in _BOUNDARY.finditer(self.text, start):
            if not _ABBREVIATION.search(self.text[start:match.end()].strip()):
                return match.end()
        return None

    def _complete(self, end: int) -> list[str]:
        piece = self.text[self.done:end]
        sentence = piece.strip()
        said = words(sentence)
        key = " ".join(said)
        repeat = (len(said) >= MIN_REPEATED_SENTENCE and key in self._sentences) or self._repeats_ngram(said)
        if repeat:
            self._stop(self.done)
            return []
        again = key in self._sentences  # a short sentence said before: no loop, but the answer drops it
        self._sentences.add(key)
        self._grams.update(self._ngrams(said))
        self.done = self._kept_end = end
        return [piece] if sentence and not again and self.stands(sentence) else []

    def _check_tail(self) -> None:
        """Stop as soon as the unfinished sentence repeats a long run, not at its end."""
        if self._repeats_ngram(words(self.text[self.done:])[:-1]):  # the last word may still grow
            self._stop(self.done)

    def _ngrams(self, said: list[str]) -> list[tuple[str, ...]]:
        return [tuple(said[i:i + self.ngram]) for i in range(len(said) - self.ngram + 1)]

    def _repeats_ngram(self, said: list[str]) -> bool:
        grams = self._ngrams(said)
        return any(g in self._grams for g in grams) or len(set(grams)) < len(grams)

    def _stop(self, offset: int) -> None:
        self.looped, self.loop_at = True, offset


class ShownSentences:
    """The sentences one answer has shown, across the retries of its call: a retry that writes
    the same sentence again does not show it twice."""

    def __init__(self, stands: Callable[[str], bool] | None = None, shows: Callable[[str], str] | None = None):
        self.stands = stands
        self.shows = shows  # the sentence as the answer will hold it (a bare answer in full), else as written
        self.keys: set[str] = set()

    def show(self, pieces: list[str]) -> None:
        from agent.usage import emit

        for piece in pieces:
            if self.shows is not None and piece.strip():
                piece = piece[:len(piece) - len(piece.lstrip())] + self.shows(piece.strip())
            key = " ".join(words(piece))
            if key not in self.keys:
                self.keys.add(key)
                emit({"event": "token", "text": piece})


def stream_sentences(model, messages: list, field: str, shown: ShownSentences, config: dict, partial_object):
    """Stream a JSON reply, showing its `field` (a string) sentence by sentence as it stands.
    On a loop the request is closed at once (the server stops generating) and the reply's
    content becomes the JSON parsed so far with `field` cut back to the sentences before the
    repeat. Returns (the accumulated message chunk or None, its content, looped)."""
    import json

    gate = SentenceGate(shown.stands)
    reply, looped = None, False
    stream = model.stream(messages, config=config)
    try:
        for chunk in stream:
            reply = chunk if reply is None else reply + chunk
            partial = partial_object(str(reply.content))
            value = partial.get(field) if isinstance(partial, dict) else None
            if isinstance(value, str):
                shown.show(gate.feed(value))
            if gate.looped:
                looped = True
                break
        else:
            shown.show(gate.finish())
    finally:
        stream.close()  # closes the HTTP response: the server sees the connection drop and stops
    if reply is None or not looped:
        return reply, "" if reply is None else str(reply.content), False
    partial = partial_object(str(reply.content))
    partial = partial if isinstance(partial, dict) else {}
    return reply, json.dumps({**partial, field: gate.kept}, ensure_ascii=False), True
