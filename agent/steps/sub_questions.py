"""ADF's sub-questions and hypothetical documents (the ADF paper, steps 4 and 5).

As published (`adf_calls=per_cluster`): one call per kept cluster writes the question asked about
that cluster's subject, then one call per sub-question writes its HyDE passage, each round in
parallel. Batched (the product's): ONE call writes every cluster's sub-question and passage:
per-cluster and per-sub-question calls repeat the instructions and the question each time
(1,580 + 665 tokens on ASQA, two sequential rounds), a batch writes the same fields once.
"""

from __future__ import annotations

import re

from pydantic import Field

from agent.context import Context
from agent.llm.calls import generate_structured
from agent.llm.prompts import CLOSE_DATA, OPEN_DATA, format_passage, fragment
from agent.llm.schemas import OrderedModel, grammar_cap
from agent.steps.coherence import MAX_CLUSTERS
from agent.usage import map_concurrent

SUB_QUESTION_PASSAGE_CHARS = 80  # the title and lead name a cluster's subject; the rest only costs tokens
HYDE_STYLES = {"short": 40, "detailed": 110}  # completion tokens per passage; the wording is prompts/hyde_style_*.md
HYDE_CHARS = 400  # a longer passage from another server still searches


class SubQuestion(OrderedModel):
    group: int = Field(description="the number of the group of passages")
    question: str = Field(max_length=160, description="the user's question asked about that subject only")
    passage: str = Field(default="", description="a passage that would answer that question",
                         json_schema_extra=grammar_cap(HYDE_CHARS))


class SubQuestions(OrderedModel):
    sub_questions: list[SubQuestion] = Field(max_length=MAX_CLUSTERS)


class ClusterQuestion(OrderedModel):
    question: str = Field(max_length=160, description="the user's question asked about that subject only")


class HypotheticalDocument(OrderedModel):
    passage: str = Field(description="a passage that would answer the question", json_schema_extra=grammar_cap(HYDE_CHARS))


def format_groups(groups: list[list[dict]]) -> str:
    """The clusters as numbered groups of passage leads, in one data section."""
    blocks = [f"Group {n}:\n" + "\n".join(format_passage(p, SUB_QUESTION_PASSAGE_CHARS) for p in group)
              for n, group in enumerate(groups, 1)]
    return f"{OPEN_DATA}\n" + "\n\n".join(blocks) + f"\n{CLOSE_DATA}"


def write_sub_questions(context: Context, style: str, question: str, groups: list[list[dict]]) -> list[dict | None]:
    """One call: per group, the question asked about the one subject its passages share and
    a HyDE passage answering it; aligned with `groups` (None where the model wrote nothing)."""
    reply = generate_structured(
        context, SubQuestions, "write_sub_questions", max_tokens=20 + (30 + HYDE_STYLES[style]) * len(groups),
        question=question, style=fragment(f"hyde_style_{style}"), groups=format_groups(groups),
    )
    written: list[dict | None] = [None] * len(groups)
    for item in reply.sub_questions if reply is not None else []:
        index = item.group - 1
        if 0 <= index < len(groups) and written[index] is None:
            written[index] = sub_question_from(item.question, item.passage, question, groups[index])
    return written


def write_each_sub_question(context: Context, question: str, groups: list[list[dict]]) -> list[dict | None]:
    """A call per group, in parallel: the question asked about its subject (no passage yet:
    `write_hypothetical_documents` writes them next); aligned with `groups`."""
    def write(group: list[dict]) -> dict | None:
        reply = generate_structured(context, ClusterQuestion, "write_sub_question", max_tokens=60, question=question,
                                    passages=f"{OPEN_DATA}\n" + "\n".join(format_passage(p, SUB_QUESTION_PASSAGE_CHARS)
                                                                         for p in group) + f"\n{CLOSE_DATA}")
        return None if reply is None else sub_question_from(reply.question, "", question, group)

    return map_concurrent(write, groups, max(1, context.concurrency))


def write_hypothetical_documents(context: Context, style: str, questions: list[str]) -> list[str]:
    """A HyDE passage per sub-question, a call each, in parallel ("" where the model failed)."""
    def write(question: str) -> str:
        reply = generate_structured(context, HypotheticalDocument, "write_hypothetical_document",
                                    max_tokens=10 + HYDE_STYLES[style], question=question,
                                    style=fragment(f"hyde_style_{style}"))
        return " ".join(reply.passage.split()) if reply is not None else ""

    return map_concurrent(write, questions, max(1, context.concurrency))


def sub_question_from(written: str, document: str, question: str, passages: list[dict]) -> dict | None:
    """A checked sub-question that names one reading; its subject is the title of the
    cluster's best-ranked passage (asking the model to name it cost 15 tokens per cluster
    and mostly copied that title)."""
    subject = " ".join((passages[0].get("title") or "").split())
    focused = focused_question(written, question, subject)
    return {"subject": subject, "question": focused, "document": " ".join(document.split())} if focused else None


def focused_question(written: str, question: str, subject: str) -> str:
    """One question that names the reading: small models often repeat the user's question
    first or loop ("What is HP? What is HP's ...?"); keep the first new sentence, else
    qualify the user's question with the subject."""
    asked, written = " ".join(question.split()).lower(), " ".join(written.split())
    for sentence in re.findall(r"[^?]*\?", written):  # no question mark: the model answered instead
        sentence = sentence.strip()
        if len(sentence) > 3 and sentence.lower() != asked:
            return sentence
    return f"{question.strip().rstrip('?')} ({subject})?" if subject else ""
