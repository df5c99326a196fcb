"""Optional metrics that need another model; computed only when that model is given.

- With a judge model: VERDICT's grounded precision, grounded recall and G-F1 (the VERDICT paper,
  appendix A), the judge deciding support (prompt `judge_grounding`) and coverage of reference
  readings (prompt `judge_match`).
- With a SQuAD-2 extractive QA model directory: ASQA's Disambig-F1 and DR.
Nothing here is ever estimated without its model.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Callable

from pydantic import BaseModel, Field

from agent.context import Context
from agent.errors import InputError
from agent.evaluation.datasets import Example
from agent.evaluation.metrics import remove_citations, token_f1
from agent.llm.calls import generate_structured
from agent.llm.prompts import format_passages
from agent.llm.schemas import Supported, YesNo
from agent.usage import map_concurrent

JUDGE_CONCURRENCY = 4


class Coverage(BaseModel):
    covered: list[YesNo] = Field(default_factory=list, max_length=30)


def _supported(judge: Context, question: str, answer: str, passages: list[dict]) -> bool:
    """V(q, p): do these passages support this answer to this question? (No when none.)"""
    if not passages:
        return False
    verdict = generate_structured(judge, Supported, "judge_grounding", question=question,
                                  answer=answer or "(none)", passages=format_passages(passages))
    return verdict is not None and verdict.supported == "Yes"


def _covered(judge: Context, question: str, references: list[str], produced: list[str]) -> list[bool]:
    if not references or not produced:
        return [False] * len(references)
    verdict = generate_structured(
        judge, Coverage, "judge_match", question=question,
        references="\n".join(f"{n}. {q}" for n, q in enumerate(references, 1)),
        produced="\n".join(f"- {q}" for q in produced),
    )
    flags = list(verdict.covered) if verdict is not None else []
    return [index < len(flags) and flags[index] == "Yes" for index in range(len(references))]


def grounded_scores(judge: Context, example: Example, output: dict) -> dict:
    """G-Precision = share of produced interpretations whose cited passages (else the
    retrieved ones) support them. Grounded gold = verified produced interpretations plus the
    reference interpretations the retrieved passages support; G-Recall = share of grounded
    gold covered by verified produced interpretations (a covered reference and the produced
    one covering it count once)."""
    passages = output.get("passages") or []
    by_id = {p["id"]: p for p in passages}
    produced = [i for i in output.get("interpretations") or [] if i.get("question")]

    def verify(item: dict) -> bool:
        cited = [by_id[c] for c in item.get("citations") or [] if c in by_id]
        return _supported(judge, item["question"], item.get("answer", ""), cited or passages)

    verified_flags = map_concurrent(verify, produced, JUDGE_CONCURRENCY)
    verified = [item["question"] for item, ok in zip(produced, verified_flags) if ok]
    answers = {p["question"]: " / ".join(p["short_answers"][:3]) for p in example.qa_pairs}
    references = map_concurrent(lambda q: _supported(judge, q, answers.get(q, ""), passages),
                                example.interpretations, JUDGE_CONCURRENCY)
    grounded_references = [q for q, ok in zip(example.interpretations, references) if ok]
    covered = _covered(judge, example.question, grounded_references, verified)
    scores: dict = {}
    if produced:
        scores["g_precision"] = len(verified) / len(produced)
    grounded_gold = len(verified) + sum(not c for c in covered)
    if grounded_gold:
        scores["g_recall"] = len(verified) / grounded_gold
    if "g_precision" in scores and "g_recall" in scores:
        p, r = scores["g_precision"], scores["g_recall"]
        scores["g_f1"] = 2 * p * r / (p + r) if p + r else 0.0
    return scores


QA = Callable[[str, str], str]  # (question, context) -> extracted answer ("" when none)


def load_qa_model(path: str) -> QA:
    """An extractive SQuAD-2 model from a local directory (transformers), never downloaded."""
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from transformers import pipeline

    try:
        reader = pipeline("question-answering", model=path, tokenizer=path, device=-1)
    except Exception as error:  # transformers raises many kinds for an unusable directory
        raise InputError(f"--qa-model {path}: cannot load a question-answering model ({error})") from None
    return lambda question, context: reader(question=question, context=context or " ",
                                            handle_impossible_answer=True)["answer"]


def disambig_f1(qa: QA, qa_pairs: list[dict], answer: str) -> float:
    """ASQA Disambig-F1: the QA model answers each disambiguated question from the long answer;
    token F1 against the best-matching short answer, averaged over the questions."""
    scores = [max(token_f1(qa(pair["question"], answer), gold) for gold in pair["short_answers"])
              for pair in qa_pairs if pair.get("short_answers")]
    return sum(scores) / len(scores) if scores else 0.0


class ExtraMetrics:
    """Adds judge and QA-model metrics to scored records when those models are configured."""

    def __init__(self, judge_model: str | None, qa_model: str | None):
        if judge_model:
            from agent.llm.models import check_model_setting

            check_model_setting(judge_model)
        if qa_model and not (Path(qa_model).expanduser() / "config.json").is_file():
            raise InputError(f"--qa-model {qa_model}: not a local model directory (no config.json); Disambig-F1 "
                             "and DR need a SQuAD-2 extractive QA model saved on disk")
        self.judge_model, self.qa_model = judge_model, qa_model

    def add(self, records: list[dict], examples: dict[str, Example], responses, qa: QA | None = None) -> None:
        scored = [r for r in records if r.get("output") is not None]
        if self.judge_model:
            from agent.evaluation.llm_cache import register_cached_model

            judge = Context(model=register_cached_model(self.judge_model, responses), temperature=0.0, max_tokens=300)
            for record in scored:
                record["metrics"].update(grounded_scores(judge, examples[record["id"]], record["output"]))
        if self.qa_model or qa is not None:
            qa = qa or load_qa_model(str(Path(self.qa_model).expanduser()))
            for record in scored:
                example = examples[record["id"]]
                if example.qa_pairs:
                    value = disambig_f1(qa, example.qa_pairs, remove_citations(record["output"]["answer"]))
                    record["metrics"]["disambig_f1"] = value
                    if "rouge_lsum" in record["metrics"]:
                        record["metrics"]["dr"] = math.sqrt(value * record["metrics"]["rouge_lsum"])
