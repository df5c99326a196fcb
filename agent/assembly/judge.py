"""The model as a judge of readings (`judge_readings` > 0, ambiguous questions only; auto's
thorough budget judges 6, every one, the fast budget none unless `fast=judge`: then the unsure
of 6).

The selector reads words and vectors; the model reads the sentence. Each of the best
`judge_readings` candidates (the best sentence of a passage, or its best `judge_per_passage`,
near-repeats skipped, as `choose` takes them) gets one short request, prompts/judge_reading.md,
with one completion token: P(yes) is read from that token's log-probabilities. The judgment is mixed with the selector's
probability in logit space (`judge_weight`); on the tune questions the two err on different
sentences (bench/relevance_ceiling.py: ROC-AUC 0.900 judge, 0.905 selector, 0.930 mixed). A
judgment that fails or holds no yes/no leaves the selector's probability as it was. Only the
candidates the selector is unsure of are judged (`judge_min` to `judge_max`): on tune, judging
those of the best 8 between 0.1 and 0.6 gave the same answers as judging all 8, with 3.5
requests instead of 7.6.
"""

from __future__ import annotations

import math

from agent.assembly.features import Candidate
from agent.assembly.selector import choose, logit
from agent.context import Context
from agent.llm.calls import call_model
from agent.llm.prompts import render

TOP_LOGPROBS = 10  # alternatives read for the reply's one token: "yes", " Yes", "no", "No" ...


def yes_probability(reply) -> float | None:
    """P(yes) / (P(yes) + P(no)) over the first reply token's alternatives, or None when the
    reply carries no log-probabilities or neither word."""
    if reply is None:
        return None
    tokens = ((reply.response_metadata or {}).get("logprobs") or {}).get("content") or []
    mass: dict[str, float] = {}
    for top in (tokens[0].get("top_logprobs") or []) if tokens else []:
        word = str(top.get("token", "")).strip().lower()
        mass[word] = mass.get(word, 0.0) + math.exp(top.get("logprob", -math.inf))
    yes, no = mass.get("yes", 0.0), mass.get("no", 0.0)
    return yes / (yes + no) if yes + no else None


def mixed(selector: float, judge: float, weight: float) -> float:
    """The two probabilities mixed in logit space."""
    return 1.0 / (1.0 + math.exp(-((1 - weight) * float(logit(selector)) + weight * float(logit(judge)))))


def judge(question: str, candidate: Candidate, context: Context) -> float | None:
    """The model's P(yes) that the candidate sentence answers the question (None: no judgment)."""
    messages = render("judge_reading", question=question.strip(), title=candidate.passage.get("title", ""),
                      sentence=candidate.sentence)
    reply = call_model(context, messages, bind={"logprobs": True, "top_logprobs": TOP_LOGPROBS}, max_tokens=1)
    return yes_probability(reply)


def judged_scores(question: str, scored: list[tuple[Candidate, float]], context: Context
           ) -> tuple[list[tuple[Candidate, float]], dict[int, float]]:
    """(`scored` with the best candidates' probabilities mixed with the model's judgment,
    {id(candidate): the judgment}) for the candidates that got one: of the best
    `judge_readings`, those the selector is unsure of (`judge_min` to `judge_max`)."""
    if context.judge_readings <= 0:
        return scored, {}
    verdicts = {}
    for candidate, p in choose(scored, 0.0, context.judge_readings, per_passage=context.judge_per_passage):
        if not context.judge_min <= p <= context.judge_max:
            continue  # the selector is sure enough either way: a judgment would not change the reading
        verdict = judge(question, candidate, context)
        if verdict is not None:
            verdicts[id(candidate)] = verdict
    rescored = [(c, mixed(p, verdicts[id(c)], context.judge_weight) if id(c) in verdicts else p) for c, p in scored]
    return rescored, verdicts
