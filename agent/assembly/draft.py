"""The model's draft under the readings: its sentences streamed only as the answer will keep
them (`stream_checks`), the one call over the top k (`draft_answer`), and the checks that decide
which of its sentences stand beside the readings (`check_sentences`). The readings themselves and
the composed answer are agent/assembly/nodes.py's.
"""

from __future__ import annotations

from langgraph.runtime import Runtime

from agent.assembly.checks import (BARE_ANSWER, cite_holding_passage, in_full_unless_said, model_sentences, narrows,
                                   sentence_fault)
from agent.assembly.compose import repeats, without_restated_clause
from agent.assembly.features import Candidate
from agent.assembly.selector import reader_floor, under_floor, written_probabilities
from agent.assembly.text import answer_units, said_words
from agent.context import Context
from agent.llm.answers import cited_numbers, may_stream
from agent.llm.prompts import CITATION_MARKER
from agent.retrieval.retriever import get_retriever, passage_vectors
from agent.steps.coherence import cosine
from agent.steps.compression import SentenceRanker
from agent.steps.grounding import content_tokens
from agent.steps.nodes import synthesize_answer
from agent.usage import tracked


def stream_checks(top: list[dict], question: str, readings: list[str], off_answer=None):
    """(stands, shows) for a synthesis streamed under `readings` already on screen
    (agent/llm/calls.py): a sentence is shown only if the answer will keep it, and as it will
    keep it. `off_answer(sentence)`: whether it falls under the prose floor (`below_floor`)."""
    said: set[str] = set()  # content words of the sentences shown so far
    judged: dict[str, str] = {}  # sentence -> the text `stands` judged, which `shows` then shows

    def stands(sentence: str) -> bool:
        """It may stream (`may_stream`: complete, it cites a passage), passes the checks and, as it
        will be shown (a bare answer in full), is over the prose floor when readings are on screen
        and does not repeat one of them."""
        if not may_stream(sentence) or sentence_fault(sentence, top, question, set()) is not None:
            return False
        judged[sentence] = without_restated_clause(in_full_unless_said(sentence, top, question, said), readings)
        if off_answer is not None and off_answer(cite_holding_passage(judged[sentence], top)):
            return False  # judged as `check_sentences` will judge it: cited, a bare answer in full
        return not repeats(judged[sentence], readings, question)

    def shows(sentence: str) -> str:
        """A bare answer is shown as the sentence the checked answer will hold (`in_full`)."""
        shown = judged.pop(sentence, sentence)
        said.update(said_words(shown))
        return shown

    return stands, shows


def draft_answer(state: dict, runtime: Runtime[Context]) -> dict:
    """The model's one call over the top k only (vanilla's prompt, so its cost is vanilla's);
    its answer is a draft until its sentences are checked. Tracked as `synthesize_answer`."""
    context = runtime.context
    top = (state.get("passages") or [])[:context.k]
    readings = [r["text"] for r in state.get("readings") or []]
    pool = state.get("detection_passages") or top

    def off_answer(sentence: str) -> bool:
        return bool(below_floor(state["question"], [sentence], top, pool, context))

    floored = readings or context.reading_scorer == "reader"
    stands, shows = stream_checks(top, state["question"], readings, off_answer if floored else None)
    update = synthesize_answer({**state, "passages": top}, runtime, stands=stands, shows=shows,
                               rank=selector_ranking(state["question"], pool, context))
    return {"draft": update["answer"], "draft_interpretations": update["interpretations"],
            "route": update.get("route", []), "usage": update.get("usage", {}),
            "decision": {key: value for key, value in update["decision"].items() if key != "abstained"}
            | {"draft_abstained": bool(update["decision"].get("abstained"))}}


def selector_ranking(question: str, pool: list[dict], context: Context) -> SentenceRanker:
    """The draft prompt's compression ranks a passage's sentences by the selector's probability
    that they state an answer, read as sentences of that passage beside the pool's own (as
    `below_floor` reads the model's). On the tune questions its compressed prompt held a
    sentence stating a gold answer for 82 of 84 questions judged clear (word overlap plus
    cosine: 78) and 106 of 113 judged ambiguous (97)."""
    def rank(passages: list[dict], split: list[list[str]]) -> list[list[float]]:
        written = [(sentence, passage) for passage, sentences in zip(passages, split) for sentence in sentences]
        probabilities = iter(written_probabilities(question, pool, context, written))
        return [[next(probabilities) for _ in sentences] for sentences in split]
    return rank


def below_floor(question: str, sentences: list[str], top: list[dict], pool: list[dict],
                context: Context) -> dict[str, float]:
    """{sentence: probability} for the model's sentences that the selector, reading each as a
    sentence of the passage it cites first, gives under `prose_floor`: they do not state an
    answer ("Saturn is the sixth planet from the Sun [2]." for "How big is Saturn?"). A bare
    answer is judged by its form (`in_full`), an uncited sentence by `held_by_a_passage`. With
    `reading_scorer=reader`, the reader judges instead, against `reader_floor`: a sentence stands
    only if the reader accepts it for the question."""
    written = []
    for sentence in sentences:
        numbers = [n for n in cited_numbers(sentence) if 1 <= n <= len(top)]
        if numbers and len(content_tokens(CITATION_MARKER.sub(" ", sentence))) >= BARE_ANSWER:
            written.append((sentence, top[numbers[0] - 1]))
    if written and context.reading_scorer == "reader":
        rejected = under_floor(question, [Candidate(p, 0, CITATION_MARKER.sub(" ", s).strip(), 0) for s, p in written],
                               reader_floor(context))
        return {sentence: p for (sentence, _), p in zip(written, rejected) if p is not None}
    if not written or context.prose_floor <= 0:
        return {}
    read = written_probabilities(question, pool, context,
                                 [(CITATION_MARKER.sub(" ", s).strip(), p) for s, p in written])
    return {sentence: p for (sentence, _), p in zip(written, read) if p < context.prose_floor}


MIXED_SENSES = 0.35  # cosine under which two passages one sentence cites are about different things


def mixes_senses(sentence: str, passages: list[dict], vectors) -> bool:
    """Whether one claim cites passages of different senses ("HP moved between Palo Alto [1]
    and Spring [3]", citing two companies): their passages are far apart."""
    numbers = sorted({n for n in cited_numbers(sentence) if 1 <= n <= len(passages)})
    return any(float(cosine(vectors[a - 1], vectors[b - 1])) < MIXED_SENSES
               for i, a in enumerate(numbers) for b in numbers[i + 1:])


@tracked
def check_sentences(state: dict, runtime: Runtime[Context]) -> dict:
    """The draft's sentences that can stand (agent/assembly/checks.py), less, beside readings,
    those the selector reads as no answer (`below_floor`), those citing two senses for one claim
    and those repeating a reading (a last clause repeating one goes alone: `without_restated_clause`);
    every drop is listed with its reason."""
    context = runtime.context
    top = (state.get("passages") or [])[:context.k]
    draft = state.get("draft") or ""
    if state.get("decision", {}).get("draft_abstained") or not top:
        return {"prose": [], "dropped_sentences": []}
    retriever = get_retriever(context)
    dropped: list[dict] = []
    question = state["question"]
    ambiguous = state.get("ambiguous") is not False  # a clear question has one reading: no other question's pair
    kept = model_sentences(draft, top, question, retriever.embed_queries, dropped,
                           refines=lambda asked: ambiguous and narrows(asked, question))
    vectors = passage_vectors(retriever, top)
    prose = []
    readings = [r["text"] for r in state.get("readings") or []]
    trimmed = [without_restated_clause(sentence, readings) for sentence in kept]  # as `stream_checks` showed them
    dropped += [{"sentence": whole, "reason": "its last clause repeats a reading (the rest is kept)"}
                for whole, part in zip(kept, trimmed) if part != whole]
    kept = trimmed
    # under readings only: alone, the model's sentences are the answer, and the fallback sentence
    # that would replace them is no better (tune replays: clear precision 0.911 -> 0.875)
    floored = readings or context.reading_scorer == "reader"  # the reader judges a sentence alone too
    low = below_floor(question, kept, top, state.get("detection_passages") or top, context) if floored else {}
    for unit in answer_units(kept):  # a question the model wrote stands or goes with its answer
        sentence, whole = unit[-1], " ".join(unit)
        if sentence in low:
            scorer, floor = (("reader", reader_floor(context)) if context.reading_scorer == "reader"
                             else ("selector", context.prose_floor))
            dropped.append({"sentence": whole, "reason": "does not answer the question "
                            f"({scorer} {low[sentence]:.2f} < {floor:.2f})"})
        elif mixes_senses(sentence, top, vectors):
            dropped.append({"sentence": whole, "reason": "cites two senses for one claim"})
        elif repeats(sentence, readings + prose, question):
            dropped.append({"sentence": whole, "reason": "repeats a reading"})
        else:
            prose += unit
    return {"prose": prose, "dropped_sentences": dropped}
