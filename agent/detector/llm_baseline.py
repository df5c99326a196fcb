"""The LLM-prompted baseline detector: a few-shot prompt answering CLEAR or VAGUE.

The query-rewrite paper reports that prompted LLMs call too many clear queries ambiguous; this baseline
exists to measure that against the trained classifier on the same held-out queries.
"""

from __future__ import annotations

import re

from agent.context import Context
from agent.detector.classifier import AMBIGUOUS, CLEAR
from agent.llm.calls import generate_text
from agent.usage import map_concurrent

VERDICT = re.compile(r"\b(CLEAR|VAGUE)\b", re.IGNORECASE)


def parse_verdict(reply: str | None) -> str | None:
    """"ambiguous"/"clear" from the model's reply (its first CLEAR/VAGUE); None if neither."""
    match = VERDICT.search(reply or "")
    if not match:
        return None
    return AMBIGUOUS if match.group(1).upper() == "VAGUE" else CLEAR


def llm_label(context: Context, text: str) -> str | None:
    """One prompted judgement; None when the model failed or answered something else."""
    return parse_verdict(generate_text(context.replace(max_tokens=8), "detect_ambiguity", question=text))


def llm_labels(context: Context, texts: list[str]) -> list[str | None]:
    """Judgements for many queries, at most `context.concurrency` calls in flight."""
    return map_concurrent(lambda text: llm_label(context, text), texts, context.concurrency)
