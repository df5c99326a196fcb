"""A scripted simulated user: it answers clarification questions the way a person with one
intent would, with no model of its own, so `disambig eval --simulate-user` can measure
whether asking helps.

For an ambiguous question with labelled senses (the fixture's interpretations, ASQA's
sub-questions) it holds one intended sense, drawn with a seed. Shown options, it picks the one
that names its sense, judged by the sense's labelled sub-question and short answers; when none
does, it replies "none of these" and restates its intent in the sense's own words (its
sub-question). For a clear question its one sense is the question itself. It answers at most
`MAX_REPLIES` clarifications, then gives up.

The same text matcher (`matched_sense`) tells which labelled sense an option or an answer
sentence is about, so option quality and precision are judged as the user judges them.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from agent.evaluation.metrics import normalize_answer, remove_citations
from agent.retrieval.products import product_key
from agent.steps.grounding import content_tokens

MAX_REPLIES = 2  # clarifications a person answers before giving up
NONE_OF_THESE = "None of these."
ANSWER_WEIGHT = 2.0  # stating a sense's short answer names it more surely than sharing its words
MATCH_AT = 0.34  # score an option needs to name a sense: a third of its own words, or its short answer


@dataclass(frozen=True)
class Sense:
    """One labelled meaning: its sub-question and the short answers that state it."""

    question: str
    answers: tuple[str, ...]
    product: str = ""  # over manuals, the product the sense is about: a person picks the option named so


def senses_of(example) -> list[Sense]:
    """The labelled senses of an evaluation example (its QA pairs; one for a clear question)."""
    pairs = [p for p in example.qa_pairs if p.get("short_answers")]
    return [Sense(str(p.get("question") or example.question), tuple(p["short_answers"]), str(p.get("product") or ""))
            for p in pairs]


def _distinctive(sense: Sense, asked: str) -> set[str]:
    """The words that tell this sense apart from the question asked: the sub-question's and the
    answers' content words, less the asked question's own."""
    words = set(content_tokens(sense.question)) | {w for a in sense.answers for w in content_tokens(a)}
    return words - set(content_tokens(asked))


def _states_answer(sense: Sense, text: str) -> bool:
    context = normalize_answer(text)
    return any(len(normalize_answer(a)) > 1 and normalize_answer(a) in context for a in sense.answers)


def sense_scores(text: str, senses: list[Sense], asked: str) -> list[float]:
    """How surely `text` names each sense: ANSWER_WEIGHT when it states the sense's short
    answer, plus the share of the sense's distinctive words it holds."""
    words = set(content_tokens(remove_citations(text)))
    scores = []
    for sense in senses:
        wanted = _distinctive(sense, asked)
        share = len(wanted & words) / len(wanted) if wanted else 0.0
        scores.append(ANSWER_WEIGHT * _states_answer(sense, text) + share)
    return scores


def matched_sense(text: str, senses: list[Sense], asked: str) -> int | None:
    """The index of the sense `text` names best, or None when it names none (a tie between
    senses names none of them)."""
    if not senses or not text.strip():
        return None
    scores = sense_scores(text, senses, asked)
    best = max(scores)
    if best < MATCH_AT or scores.count(best) > 1:
        return None
    return scores.index(best)


def option_text(option: dict) -> str:
    """What a person reads of an option: its name, its reading and answer, its cited line."""
    source = option.get("source") or {}
    return " ".join(str(part) for part in (option.get("label"), option.get("question"), option.get("answer"),
                                          source.get("quote")) if part)


def option_senses(options: list[dict], senses: list[Sense], asked: str) -> list[int | None]:
    """The labelled sense each option names (None: it names no labelled sense)."""
    return [option_sense(option, senses, asked) for option in options]


def option_sense(option: dict, senses: list[Sense], asked: str) -> int | None:
    """The labelled sense an option names. An option that stands for a product, where the senses
    are products, names the sense of that product whatever line it shows: a person who wants
    zstd's way picks "zstd" (the line under it is what the answer will say, right or not).
    Otherwise the option's words decide (`matched_sense`)."""
    product = product_key(str(option.get("product") or ""))
    if product and any(sense.product for sense in senses):
        named = [i for i, sense in enumerate(senses) if sense.product and product_key(sense.product) == product]
        return named[0] if len(named) == 1 else None
    return matched_sense(option_text(option), senses, asked)


class SimulatedUser:
    """One person with one intent, replying to the chat graph's clarification requests."""

    def __init__(self, example, seed: int = 0):
        self.question = example.question
        self.senses = senses_of(example) or [Sense(example.question, ())]
        self.ambiguous = bool(example.ambiguous) and len(self.senses) > 1
        rng = random.Random(f"{seed}:{example.id}")
        self.intended = rng.randrange(len(self.senses)) if self.ambiguous else 0
        self.replies: list[str] = []

    @property
    def sense(self) -> Sense:
        return self.senses[self.intended]

    def reply(self, request: dict) -> str | None:
        """The reply to one clarification request: the number of the option naming the intended
        sense, else "none of these" with the intent restated; None once it has answered
        MAX_REPLIES clarifications (it gives up)."""
        if len(self.replies) >= MAX_REPLIES:
            return None
        options = request.get("options") or []
        named = option_senses(options, self.senses, self.question)
        if self.intended in named:
            scores = [sense_scores(option_text(o), self.senses, self.question)[self.intended] if n == self.intended
                      else -1.0 for o, n in zip(options, named)]
            text = str(options[scores.index(max(scores))]["option"])
        else:
            text = f"{NONE_OF_THESE} {self.restatement()}"
        self.replies.append(text)
        return text

    def restatement(self) -> str:
        """The intent in the sense's own words: its sub-question (a clear question's is itself)."""
        return re.sub(r"\s+", " ", self.sense.question).strip()

    def states_intent(self, answer: str) -> bool:
        """Success: the final answer states one of the intended sense's short answers."""
        return bool(self.sense.answers) and _states_answer(self.sense, remove_citations(answer))
