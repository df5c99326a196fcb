"""Compose the answer a user reads: one short cited sentence per reading, introduced by its
sense in plain words, then the model's sentences that passed the checks and say something new.
"""

from __future__ import annotations

import re

from agent.assembly.selector import restates
from agent.assembly.text import SENTENCE_END, STOPWORDS, cited_sentence, content_tokens, said_words
from agent.steps.interpretations import NOT_IN_DOCUMENTS, marker

MAX_SENTENCE = 600  # characters of a reading's sentence before it is cut at a word and marked as an excerpt


def sense_name(passage: dict) -> str:
    """The sense a passage stands for, in plain words: its title less a parenthesized aside and
    less a section after a colon ("Saturn V: design and size" is about the Saturn V)."""
    title = re.sub(r"\s*\([^)]*\)", "", passage.get("title", "")).strip()
    head, colon, _ = title.partition(": ")
    return head.strip() if colon and head.strip() else title


def names_sense(sentence: str, sense: str) -> bool:
    """Whether the sentence already says which sense it is about (its words hold the sense's)."""
    wanted = set(content_tokens(sense))
    return bool(wanted) and wanted <= set(content_tokens(sentence))


def reading_text(sentence: str, passage: dict, passages: list[dict]) -> str:
    """The reading as the user reads it: "For <sense>, <sentence> [n]." when the sentence does
    not name its sense itself, else the sentence and its citation."""
    body = sentence.replace('""', '"').strip()
    if len(body) > MAX_SENTENCE:
        body = body[:MAX_SENTENCE].rsplit(" ", 1)[0].rstrip(" ,;:") + " ..."
    elif body[-1:] not in SENTENCE_END:  # the passage is cut mid-sentence: say it is an excerpt
        body = body.rstrip(" ,;:") + " ..."
    sense = sense_name(passage)
    if sense and not names_sense(body, sense):
        first, _, rest = body.partition(" ")
        if first in ("The", "A", "An", "It", "This", "These", "Its", "They") or first.lower() in STOPWORDS:
            first = first.lower()
        body = f"For {sense}, {first} {rest}".rstrip()
    return cited_sentence(body, marker([passage["id"]], passages))


def repeats(sentence: str, earlier: list[str]) -> bool:
    """Whether the sentence restates one earlier sentence (agent/assembly/selector.py `restates`)."""
    words = said_words(sentence)
    return any(restates(words, said_words(e)) for e in earlier)


def compose(first: list[str], then: list[str], gaps: list[str] = ()) -> str:
    """`first` as they are (auto: the readings, shown first), then the sentences of `then` that
    say something new, then gap notes."""
    parts = list(first)
    for sentence in then:
        if not repeats(sentence, parts):
            parts.append(sentence)
    parts += list(gaps)
    return " ".join(parts) if parts else NOT_IN_DOCUMENTS
