"""Grounding check after VERDICT's extraction: does the passage support the extracted answer?

Small local models rarely abstain, so a pair extracted from a passage that does not answer
the question slips through. Two checks, chosen by a setting:
- `overlap`: the passage must mention at least one content word of the user's question, and
  contain at least `threshold` of the answer's content words (normalized, lightly stemmed);
  free, and catches pairs from off-topic passages and answers from the model's own knowledge.
- `entailment`: one Yes/No call per pair to the same model ("does this passage alone give
  this answer to this question?"); costs a call per pair, catches wrong-question answers.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Literal

from agent.context import Context
from agent.llm.calls import generate_structured
from agent.llm.prompts import CITATION_MARKER, format_single_passage
from agent.llm.schemas import Supported

GroundingMode = Literal["overlap", "entailment", "off"]

STOPWORDS = frozenset(
    "a an the of in on at to for by with and or nor but is are was were be been being am it its this that these "
    "those as from into onto over under than then there here which who whom whose what when where why how "
    "not no yes do does did has have had will would can could should may might must also such so very about "
    "after before during between their they them he she his her him we our you your i me my "
    "whereas however while although though meanwhile both either neither".split()  # contrasts the prompt asks for
)
_SUFFIXES = ("ing", "ed", "es", "s")


def stem(token: str) -> str:
    """Strip one common English suffix so "founded"/"founding"/"founds" match."""
    for suffix in _SUFFIXES:
        if len(token) > len(suffix) + 2 and token.endswith(suffix):
            return token[: -len(suffix)]
    return token


def tokens(text: str) -> list[str]:
    """Lower-cased ASCII word tokens; thousands separators in numbers are removed."""
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    folded = re.sub(r"'s\b", "", folded)
    folded = re.sub(r"(?<=\d)[,.](?=\d{3}\b)", "", folded)
    return re.findall(r"[a-z0-9]+", folded)


def content_tokens(text: str) -> list[str]:
    """Stemmed tokens without stopwords; all tokens when the text is nothing but stopwords."""
    words = tokens(text)
    kept = [w for w in words if w not in STOPWORDS] or words
    return [stem(w) for w in kept]


def said_words(text: str) -> set[str]:
    """The content words a sentence says, less its citation markers: what repeat checks compare."""
    return set(content_tokens(CITATION_MARKER.sub(" ", text)))


def number_words(words: set[str]) -> set[str]:
    """The words that state a number (a year, an amount, a count): a sentence that states another
    one states another fact, whatever else it repeats."""
    return {word for word in words if any(ch.isdigit() for ch in word)}


def answer_support(answer: str, passage_text: str) -> float:
    """Share of the answer's distinct content tokens found in the passage (0.0 for an empty answer)."""
    wanted = set(content_tokens(answer))
    if not wanted:
        return 0.0
    present = {stem(w) for w in tokens(passage_text)}
    return len(wanted & present) / len(wanted)


def passage_words(passage: dict) -> str:
    return f"{passage.get('title', '')} {passage['text']}"


def overlap_problem(question: str, answer: str, passage: dict, threshold: float) -> str:
    """Why the overlap check rejects a pair ('' when it passes)."""
    text = passage_words(passage)
    if answer_support(question, text) == 0.0:
        return "passage does not mention the question"
    if answer_support(answer, text) < threshold:
        return "answer not in passage"
    return ""


def entailed(context: Context, pair: dict, passage: dict) -> bool | None:
    """The model's Yes/No on whether the passage alone answers the pair; None on failure."""
    reply = generate_structured(
        context, Supported, "check_grounding", max_tokens=20,
        question=pair["question"], answer=pair["answer"], passage=format_single_passage(passage),
    )
    return None if reply is None else reply.supported == "Yes"
