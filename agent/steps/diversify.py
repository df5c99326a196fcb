"""Diversify-then-verify steps that DIVA and the DtV baseline share (the DIVA paper; the VERDICT paper §3.2).

Pseudo-interpretations are inferred by the model alone; every one of them (plus, for DIVA,
the question) retrieves top-K candidates; candidates are re-scored by their mean cosine to
all pseudo-interpretations and the top-K kept; then verification says which
pseudo-interpretations the kept passages answer: one Yes/No call per interpretation, in parallel,
as published (`verify_calls=per_interpretation`), or one call over all of them (`batched`, the
product's: the passages are most of a prompt's tokens and are sent once). Each step exists here
once and both graphs import it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from langgraph.runtime import Runtime
from pydantic import BaseModel, Field, field_validator

from agent.context import Context, VerifyCalls, departure
from agent.errors import validate_question
from agent.llm.calls import generate_structured
from agent.llm.prompts import format_passages, fragment
from agent.llm.schemas import YesNo
from agent.retrieval.retriever import Retriever, get_retriever, passage_vectors
from agent.state import RAGState
from agent.usage import emit, map_concurrent, tracked

Grade = Literal["Useful", "PartialUseful", "Useless"]
AmbiguityType = Literal["AmbSub", "AmbObj", "AmbPred", "AmbTime", "AmbLoc", "none"]
MAX_INTERPRETATIONS = 8  # hard bound in the JSON schema; the run-time cap is a context knob


@dataclass(kw_only=True)
class DiversifySettings:
    """Knobs of the diversify and verify steps (DIVA's and DtV's contexts hold them)."""

    max_interpretations: int = field(
        default=5, metadata={"description": "Cap on pseudo-interpretations (and so on verification calls)"}
    )
    candidate_k: int = field(
        default=5,
        metadata={"description": "Passages retrieved per query (question and each pseudo-interpretation) before pruning"},
    )
    include_question: bool = field(
        default=True, metadata={"description": "Also retrieve candidates for the original question (DIVA yes, DtV no)"}
    )
    verified_only: bool = field(
        default=False,
        metadata={"description": "Report only the verified readings (DtV's post-hoc filter); off: they guide the synthesis"},
    )
    verify_calls: VerifyCalls = departure("verify_calls", "paper")


@dataclass(kw_only=True)
class DiversifyContext(Context, DiversifySettings):
    """The shared settings and the diversify and verify ones (DtV's base)."""


class DiversifyState(RAGState, total=False):
    """Working state: the pseudo-interpretations, one verdict per interpretation, the grade."""

    ambiguity_reason: str
    pseudo_interpretations: list[str]  # each list is written by one node, so no reducer
    verdicts: list[dict]  # {question, verdict: Yes|No, parsed: bool}
    grade: Grade


class AmbiguityTypes(BaseModel):
    # the reason first: it is what the next call conditions on, and it makes the model think before labelling
    reason: str = Field(max_length=400, description="the unclear word and the readings it allows")
    types: list[AmbiguityType] = Field(max_length=6)

    @field_validator("types", mode="before")
    @classmethod
    def _normalize(cls, value):
        """Accept `[AmbSub]`, `N/A` and similar spellings; drop labels that are not types."""
        if isinstance(value, str):
            value = value.replace(",", " ").split()
        names = {name.lower(): name for name in AmbiguityType.__args__}
        names.update({"n/a": "none", "na": "none", "": "none"})
        cleaned = [names.get(str(item).strip("[]'\" .").lower()) for item in value or []]
        return [name for name in cleaned if name][:6]


class PseudoInterpretations(BaseModel):
    questions: list[str] = Field(max_length=MAX_INTERPRETATIONS, description="disambiguated questions, one meaning each")

    @field_validator("questions", mode="before")
    @classmethod
    def _bound(cls, value):
        return value[:MAX_INTERPRETATIONS] if isinstance(value, list) else value


class PassageVerdict(BaseModel):
    contains_answer: YesNo


class Answered(BaseModel):
    answered: list[int] = Field(max_length=MAX_INTERPRETATIONS, description="numbers of the answered questions")

    @field_validator("answered", mode="before")
    @classmethod
    def _numbers(cls, value):
        """Accept "1, 3", ["1", "3"] and the like; drop what is not a number."""
        if isinstance(value, str):
            value = value.replace(",", " ").split()
        if not isinstance(value, list):
            return value
        return [int(str(item).strip("[]. ")) for item in value if str(item).strip("[]. ").isdigit()][:MAX_INTERPRETATIONS]


def clean_interpretations(questions: list[str], cap: int, original: str = "") -> list[str]:
    """Strip, drop empty and repeated (case-insensitive) questions and, when other readings
    remain, the original question copied back (it disambiguates nothing); keep at most `cap`."""
    kept: list[str] = []
    for question in questions:
        text = " ".join(str(question).split())
        if text and text.lower() not in {q.lower() for q in kept}:
            kept.append(text)
    distinct = [q for q in kept if q.lower() != " ".join(original.split()).lower()]
    return (distinct or kept)[:max(cap, 0)]


def identify_ambiguity(context: Context, question: str) -> tuple[list[str], str] | None:
    """(ambiguity types without "none", reason) from one call; None when the model failed."""
    reply = generate_structured(context, AmbiguityTypes, "identify_ambiguity_type", max_tokens=120, question=question)
    if reply is None:
        return None
    return [name for name in dict.fromkeys(reply.types) if name != "none"], reply.reason.strip()


def infer_interpretations(context: Context, question: str, reason: str, cap: int) -> list[str] | None:
    """Disambiguated questions from the model alone (None when the model failed)."""
    reply = generate_structured(
        context, PseudoInterpretations, "infer_pseudo_interpretations", max_tokens=40 + 30 * cap,
        question=question, reason=f"Why it is ambiguous: {reason}\n" if reason else "", cap=cap,
    )
    return None if reply is None else clean_interpretations(reply.questions, cap, question)


def targets(state: dict) -> list[str]:
    """What gets scored against and verified: the pseudo-interpretations, or the question
    itself when there are none (so an empty list degrades to plain retrieval, not a crash)."""
    return list(state.get("pseudo_interpretations") or []) or [state["question"]]


def diversified_scores(passage_vectors: np.ndarray, interpretation_vectors: np.ndarray) -> np.ndarray:
    """S(p) = mean over interpretations of cos(p, q): passages relevant to one noisy
    interpretation only score low, passages relevant to all score high (the DIVA paper, Eq. 5)."""
    passages = np.asarray(passage_vectors, dtype=np.float64)
    queries = np.asarray(interpretation_vectors, dtype=np.float64)
    passages = passages / np.maximum(np.linalg.norm(passages, axis=1, keepdims=True), 1e-12)
    queries = queries / np.maximum(np.linalg.norm(queries, axis=1, keepdims=True), 1e-12)
    return (passages @ queries.T).mean(axis=1)


def diversify(
    retriever: Retriever, question: str, interpretations: list[str], *, mode: str, candidate_k: int, k: int,
    include_question: bool = True,
) -> tuple[list[dict], int]:
    """(top-k passages by diversified score, number of distinct candidates): the union of
    top-`candidate_k` per query (batched), re-scored against all interpretations."""
    interpretations = interpretations or [question]
    queries = list(dict.fromkeys(([question] if include_question else []) + interpretations))
    candidates: dict[str, dict] = {}
    for ranking in retriever.search_batch(queries, mode, candidate_k):
        for passage in ranking:
            candidates.setdefault(passage["id"], passage)
    if not candidates:
        return [], 0
    pool = list(candidates.values())
    scores = diversified_scores(passage_vectors(retriever, pool), retriever.embed_queries(interpretations))
    order = np.argsort(-scores, kind="stable")[:k]
    return [{**pool[i], "score": round(float(scores[i]), 6)} for i in order], len(pool)


def grade(verdicts: list[dict]) -> Grade:
    """Useful when every interpretation is answered, Useless when none is, else PartialUseful."""
    yes = sum(v["verdict"] == "Yes" for v in verdicts)
    if verdicts and yes == len(verdicts):
        return "Useful"
    return "Useless" if yes == 0 else "PartialUseful"


VERIFY_PASSAGE_CHARS = 240  # the title and lead name what a passage answers; the synthesis reads it whole
VERIFY_MAX_TOKENS = 40


def verify_all(context: Context, questions: list[str], passages: list[dict]) -> list[dict]:
    """One call says which questions the passages answer (the passages are sent once, not
    once per question); a reply that stays malformed after the retry counts every one as No,
    marked unparsed."""
    numbered = "\n".join(f"{n}. {q}" for n, q in enumerate(questions, 1))
    reply = generate_structured(
        context, Answered, "verify_passages", max_tokens=VERIFY_MAX_TOKENS,
        questions=numbered, passages=format_passages(passages, VERIFY_PASSAGE_CHARS),
    )
    if reply is None:
        return [{"question": q, "verdict": "No", "parsed": False} for q in questions]
    return [{"question": q, "verdict": "Yes" if n in reply.answered else "No", "parsed": True}
            for n, q in enumerate(questions, 1)]


def verify_each(context: Context, questions: list[str], passages: list[dict]) -> list[dict]:
    """One Yes/No call per question ("do these passages contain its answer?"), in parallel
    at most `concurrency` at a time; a reply that stays malformed after the retry is a No,
    marked unparsed."""
    shown = format_passages(passages, VERIFY_PASSAGE_CHARS)

    def verify(question: str) -> dict:
        reply = generate_structured(context, PassageVerdict, "verify_interpretation", max_tokens=VERIFY_MAX_TOKENS,
                                    question=question, passages=shown)
        return {"question": question, "verdict": reply.contains_answer if reply else "No", "parsed": reply is not None}

    return map_concurrent(verify, questions, max(1, context.concurrency))


@tracked
def infer_pseudo_interpretations(state: DiversifyState, runtime: Runtime[DiversifyContext]) -> dict:
    """A second call turns the question (and the ambiguity reason, when known) into
    disambiguated questions; an empty or failed reply leaves the question itself to work with."""
    context = runtime.context
    question = validate_question(state["question"])
    reason = state.get("ambiguity_reason") or ""
    questions = infer_interpretations(context, question, reason, context.max_interpretations)
    questions = questions or []
    emit({"event": "pseudo_interpretations", "questions": questions})
    return {
        "pseudo_interpretations": questions,
        "decision": {"pseudo_interpretations": questions, "interpretations_fallback": not questions},
    }


@tracked
def retrieve_diversified(state: DiversifyState, runtime: Runtime[DiversifyContext]) -> dict:
    """Union of top-K per query, pruned to the top-K by mean cosine to the interpretations."""
    context = runtime.context
    passages, candidates = diversify(
        get_retriever(context), state["question"], targets(state), mode=context.retrieval_mode,
        candidate_k=context.candidate_k, k=context.k, include_question=context.include_question,
    )
    return {"passages": passages, "decision": {"candidates": candidates}}


@tracked
def verify_passages(state: DiversifyState, runtime: Runtime[DiversifyContext]) -> dict:
    """Which interpretations the kept passages answer: a call per interpretation, or one call
    over all of them (`verify_calls`); the grade follows from how many they answer."""
    passages = state.get("passages") or []
    questions = targets(state)
    if passages:
        verify = verify_each if runtime.context.verify_calls == "per_interpretation" else verify_all
        verdicts = verify(runtime.context, questions, passages)
    else:  # nothing retrieved: nothing can contain an answer, and no call is needed
        verdicts = [{"question": q, "verdict": "No", "parsed": True} for q in questions]
    result = grade(verdicts)
    verified = [v["question"] for v in verdicts if v["verdict"] == "Yes"]
    only = runtime.context.verified_only
    guidance = fragment("guidance_verified" if only else "guidance_readings", lines="\n".join(f"- {q}" for q in verified))
    return {
        "verdicts": verdicts,
        "grade": result,
        "guidance": guidance if verified else "",
        # DtV reports these readings only (unverified ones are dropped); DIVA lets them guide
        **({"verified_questions": verified} if only else {}),
        "decision": {
            "verdicts": verdicts, "grade": result, "verify_calls": runtime.context.verify_calls,
            "unparsed_verdicts": sum(not v["parsed"] for v in verdicts),
            # the answer comes from the passages unless none answers anything (DIVA then adapts)
            **({"branch": "passages", "supported_by_corpus": True} if result != "Useless" else {}),
        },
    }
