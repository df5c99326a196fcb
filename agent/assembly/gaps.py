"""Gap notes: senses the documents name but do not answer the question for.

A retrieved passage whose lead sentence defines the question's subject ("Horsepower,
abbreviated hp, is a unit of power ...") names a sense of it. When the answer states nothing
about that sense and the passage holds nothing of the kind asked (no place for "where", no date
for "when"), the answer says so in one short clause instead of filling the space with a fact
about it: "HP can also mean Horsepower; the documents give no place for it."
"""

from __future__ import annotations

import re

from agent.assembly.compose import sense_name
from agent.assembly.text import (
    answer_kind,
    answers_type,
    content_tokens,
    defined_subject,
    defines,
    passage_sentences,
    rarity,
    spells_out,
    stem,
    topic_words,
)
from agent.steps.coherence import cosine

MAX_NOTES = 2  # senses named in the note: a longer list of what is missing stops being an answer
SAME_SENSE = 0.6  # passage cosine at which a stated reading's passage speaks for the named sense


# the kinds of answer a gap note can say is missing, in plain words (agent/assembly/text.py answer_kind)
MISSING_THING = {"date": "date", "reason": "reason", "count": "number", "measure": "figure", "place": "place",
                 "name": "name"}


def asked_thing(question: str) -> str | None:
    """The kind of thing the question asks for, in plain words, or None when a note would not
    say anything useful (a question asking what X is: every defining passage is an answer)."""
    if defined_subject(question) is not None:
        return None
    return MISSING_THING.get(answer_kind(question))


def subject_words(question: str, pool: list[dict]) -> list[str]:
    """The question's words (as written) that most of the pool names: what it is about ("HP",
    "rental car"). None when they are not one run of words: "new ... Northwind's ... onboarding"
    names no subject a note could say has another meaning."""
    topic = topic_words(rarity(question, pool), pool)
    words = re.findall(r"[\w-]+", re.sub(r"'s\b", "", question))
    at = [i for i, word in enumerate(words) if stem(word.lower()) in topic]
    return [words[i] for i in at] if at and at[-1] - at[0] == len(at) - 1 else []


def names_a_sense(question: str, words: list[str], passage: dict) -> bool:
    """Whether the passage's lead sentence defines the question's subject: a sense of it."""
    lead = (passage_sentences(passage) or [""])[0]
    if not lead:
        return False
    return spells_out(question, lead) or any(defines(f"What is {word}?", lead, passage.get("title", ""))
                                             for word in words)


def a_kind_of(sense: str, subject: str) -> bool:
    """Whether the sense's name ends with the subject after other words ("Ball python" for
    python): a kind of it, not another meaning ("Delta Air Lines", "Phoenix, Arizona" open with it)."""
    named, asked = content_tokens(sense), content_tokens(subject)
    return bool(asked) and len(named) > len(asked) and named[-len(asked):] == asked


def covered(passage: dict, vector, stated: list[tuple[dict, str]], vectors: dict) -> bool:
    """Whether a stated sentence is about the passage's sense: it cites the passage, one close
    to it, or names the sense."""
    sense = set(content_tokens(sense_name(passage)))
    for cited, sentence in stated:
        if cited["id"] == passage["id"] or float(cosine(vector, vectors[cited["id"]])) >= SAME_SENSE:
            return True
        if sense and sense <= set(content_tokens(f"{cited.get('title', '')} {sentence}")):
            return True
    return False


def holds_kind(question: str, sense: str, passage: dict, pool: list[dict], answers=None) -> bool:
    """Whether the passage, or another pool passage naming the sense, holds the kind of thing
    asked: then the sense may well be answered, and silence is better than a wrong "no".
    `answers(passage, sentences)`, when given (the reader), judges instead whether one of the
    sentences answers the question: a date about something else is no answer."""
    words = set(content_tokens(sense))
    related = [p for p in pool if p is passage or (words and words <= set(content_tokens(f"{p.get('title', '')} {p['text']}")))]
    if answers is not None:
        return any(answers(p, passage_sentences(p)) for p in related)
    return any(answers_type(question, s, p.get("title", "")) for p in related for s in passage_sentences(p))


def with_sense(missing: list[tuple[str, object]], sense: str, vector) -> list[tuple[str, object]]:
    """`missing` with one more sense, unless a passage as close as SAME_SENSE already stands for
    it under another title ("Jaguar in Mesoamerican culture" and "Jaguar (animal)"): then the
    shorter of the two names it."""
    for index, (named, other) in enumerate(missing):
        if float(cosine(vector, other)) >= SAME_SENSE:
            shorter = sense if len(sense) < len(named) else named
            return [*missing[:index], (shorter, other), *missing[index + 1:]]
    return [*missing, (sense, vector)]


def gap_notes(question: str, pool: list[dict], vectors, stated: list[tuple[dict, str]], answers=None) -> list[str]:
    """At most one short sentence naming the senses pool passages define that nothing stated
    is about and no passage of theirs answers; `stated` pairs each answer sentence with a
    passage it cites (none stated: no note, an answer of notes alone says nothing),
    `vectors` are the pool's passage vectors (same order); `answers`: see `holds_kind`."""
    thing = asked_thing(question)
    words = subject_words(question, pool)
    if thing is None or not words or not pool or not stated:
        return []
    by_id = {p["id"]: v for p, v in zip(pool, vectors)}
    subject = " ".join(words)
    stated = [(p, s) for p, s in stated if p["id"] in by_id]  # the pool's vectors speak for these
    missing: list[tuple[str, object]] = []  # (sense, its passage's vector)
    named = {subject.casefold()}
    for passage, vector in zip(pool, vectors):
        sense = sense_name(passage)
        if (not sense or sense.casefold() in named or a_kind_of(sense, subject)
                or not names_a_sense(question, words, passage)):
            continue
        named.add(sense.casefold())
        if covered(passage, vector, stated, by_id) or holds_kind(question, sense, passage, pool, answers):
            continue
        missing = with_sense(missing, sense, vector)
    if not missing:
        return []
    senses = [sense for sense, _ in missing][:MAX_NOTES]
    listed = senses[0] if len(senses) == 1 else f"{', '.join(senses[:-1])} or {senses[-1]}"
    return [f"{subject[:1].upper()}{subject[1:]} can also mean {listed}; the documents give no {thing} for "
            f"{'it' if len(senses) == 1 else 'them'}."]
