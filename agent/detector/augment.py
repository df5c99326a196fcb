"""Rule-based augmentation of clear queries into unclear ones (the query-rewrite paper, appendix C).

Real logs hold few ambiguous queries, so the paper synthesizes more from clear ones:
1. `omit_details`: cut "the X of ..." after "the X" ("What is the name of my dataset?" ->
   "What is the name?");
2. `insert_referential`: replace "the" by a referential word in short queries and in the
   outputs of rule 1 ("What is the name?" -> "What is that name?");
3. `vague_statement`: turn an imperative with a pronoun into a vague statement
   ("Tell me about 'ABC' dataset" -> "There is no such 'ABC' dataset");
4. `drop_entity_type`: remove the type word next to an identifier, leaving a lexical
   ambiguity ("the dataset 124abcde" -> "the 124abcde").
Every output is labelled ambiguous and keeps the id of the query it came from (`parent`), so a
held-out split never sees a variant of a training query.
"""

from __future__ import annotations

import random
import re

from agent.detector.features import (
    DEFAULT_ENTITY_TYPES, ENTITY, lexical_ambiguity, mark_entities, mask_entities, query_length, unmark,
)

OMIT = re.compile(r"\b(the \w+(?: \w+)?) of\b.*?([?.!]?)$", re.IGNORECASE)
THE = re.compile(r"\bthe\b", re.IGNORECASE)
# determiner-like forms of the paper's referential words, so the output stays a sentence
REFERENTIAL_DETERMINERS = ("this", "that", "those", "its", "some", "another", "the other", "the previous", "the above")
IMPERATIVE = re.compile(
    r"^(?:tell|show|give|send|find|get|describe|explain|list|help)\s+(?:me|us|them|it)\b(?:\s+about)?\s+",
    re.IGNORECASE,
)
VAGUE_PHRASES = (
    "there is", "there are", "there is no such", "there is no", "there are no such", "there are no",
    "there is not any", "it is", "it is not", "this is not", "this is", "that is", "that is not",
)
SHORT_QUERY_WORDS = 7
VARIANTS = 5


def omit_details(text: str) -> str | None:
    """Drop everything from "of" on after the first "the X of"; None when there is none."""
    match = OMIT.search(text)
    if not match:
        return None
    return (text[: match.start()] + match.group(1)).rstrip(" ,") + (match.group(2) or "")


def insert_referential(text: str, rng: random.Random) -> str | None:
    """Replace one "the" by a referential determiner; None when the query has no "the"."""
    spots = list(THE.finditer(text))
    if not spots:
        return None
    spot = rng.choice(spots)
    word = rng.choice(REFERENTIAL_DETERMINERS)
    if spot.group(0)[0].isupper():
        word = word[0].upper() + word[1:]
    return text[: spot.start()] + word + text[spot.end():]


def vague_statement(text: str, rng: random.Random) -> str | None:
    """"Tell me about X." -> "There is no such X."; None unless an imperative with a pronoun."""
    if "?" in text or not IMPERATIVE.match(text):
        return None
    phrase = rng.choice(VAGUE_PHRASES)
    rest = IMPERATIVE.sub("", text, count=1)
    if phrase.endswith(("such", "no", "any")):
        rest = re.sub(r"^(?:the|a|an|all)\s+", "", rest, flags=re.IGNORECASE)  # "no such the X" is not English
    return (phrase[0].upper() + phrase[1:] + " " + rest).strip()


def drop_entity_type(text: str, entity_types: tuple[str, ...] = DEFAULT_ENTITY_TYPES) -> str | None:
    """Remove the entity-type word right before or after an identifier ("the dataset
    124abcde" -> "the 124abcde"); None when nothing is removed or the result still says
    what the identifier is."""
    marked, entities = mark_entities(text)
    if not entities:
        return None
    kinds = "|".join(sorted({re.escape(k) + "s?" for k in entity_types}, key=len, reverse=True))
    dropped = re.sub(rf"\b(?:{kinds})\s+(?=\x00)", "", marked, flags=re.IGNORECASE)
    dropped = re.sub(rf"(\x00\d+\x00)\s+(?:{kinds})\b", r"\1", dropped, flags=re.IGNORECASE)
    candidate = unmark(dropped, entities)
    if candidate == text or not lexical_ambiguity(candidate, entity_types):
        return None
    return candidate


def augment(rows: list[dict], seed: int = 0, variants: int = VARIANTS) -> list[dict]:
    """Ambiguous variants of the clear rows, deduplicated against every given text."""
    rng = random.Random(seed)
    seen = {row["text"].strip().lower() for row in rows}
    out: list[dict] = []

    def add(text: str | None, parent: dict, origin: str) -> None:
        if text and text.strip().lower() not in seen:
            seen.add(text.strip().lower())
            out.append({"text": text, "label": "ambiguous", "domain": parent.get("domain", ""),
                        "kind": "follow_up", "origin": origin, "parent": parent["id"]})

    for row in (r for r in rows if r["label"] == "clear"):
        text = row["text"]
        shortened = omit_details(text)
        add(shortened, row, "omit_details")
        short = query_length(text) <= SHORT_QUERY_WORDS and ENTITY not in mask_entities(text)  # a name is specific
        bases = [b for b in (shortened, text if short else None) if b]
        for base in bases:
            for _ in range(variants):
                add(insert_referential(base, rng), row, "insert_referential")
        for _ in range(variants):
            add(vague_statement(text, rng), row, "vague_statement")
        add(drop_entity_type(text), row, "drop_entity_type")
    return out
