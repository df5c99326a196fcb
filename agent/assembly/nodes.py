"""Answer assembly as graph nodes: select readings (no LLM, streamed at once) and compose the
answer; the model's draft over the top k and the checks of its sentences are
agent/assembly/draft.py's. Studio and the stream show each step; what a step dropped, and why,
is listed in `decision["assembly"]`.
"""

from __future__ import annotations

import math

from langgraph.runtime import Runtime

from agent.assembly.compose import compose, reading_text, repeats, sense_name
from agent.assembly.text import said_words
from agent.assembly.features import Candidate, candidates
from agent.assembly.gaps import gap_notes
from agent.assembly.judge import judged_scores
from agent.assembly.option_guess import guessed_names
from agent.assembly.product_gate import choose_products, one_product_answer, product_answers
from agent.assembly.selector import (choose, how_preference, load_mix, load_selector, reader_floor, restates, score_pool,
                                     under_floor, vetoed)
from agent.context import Context
from agent.documents.citation import location
from agent.llm.answers import cited_numbers
from agent.retrieval.products import asked_product_only, names_product
from agent.retrieval.retriever import get_retriever, passage_vectors
from agent.steps.interpretations import NOT_IN_DOCUMENTS
from agent.steps.nodes import answer_update
from agent.usage import emit, tracked


# when neither a reading nor a model sentence stood, the best sentence at this share of the
# threshold is stated rather than "the documents do not answer" while they may
FALLBACK_SHARE = 0.5


def selector_threshold(context: Context) -> float:
    """`reading_threshold`, else the shipped threshold of what scores readings (`reading_scorer`)."""
    if context.reading_threshold > 0:
        return context.reading_threshold
    return load_mix().threshold if context.reading_scorer == "reader" else load_selector().threshold


def _threshold(context: Context, ambiguous: bool) -> float:
    """The selector's threshold (a setting overrides the model's); a question judged clear
    gets a reading only when the selector is confident about it."""
    base = selector_threshold(context)
    return base if ambiguous else max(base, context.confident_threshold)


def rescored(pool: list[dict], probabilities: list[float] | None) -> list[tuple[Candidate, float]] | None:
    """The candidates of `pool` with probabilities an earlier node stored in state (plain floats)."""
    found = candidates(pool)
    return list(zip(found, probabilities)) if probabilities is not None and len(probabilities) == len(found) else None


def readings_for(question: str, pool: list[dict], context: Context, ambiguous: bool, top: list[dict],
                 skip_ids: set[str] = frozenset(), said: list[str] = (),
                 scored: list[tuple[Candidate, float]] | None = None,
                 limit: int | None = None, threshold: float | None = None,
                 verdicts: dict[int, float] | None = None, last_resort: bool = False,
                 guessed: tuple[str, ...] = (), answering: list[tuple[Candidate, float]] | None = None
                 ) -> tuple[list[dict], list[dict]]:
    """(readings, passages numbered for the answer: `top` then each reading's passage);
    `threshold` overrides the selector's (the fallback when nothing else stood; judged
    readings), `verdicts` are the model's judgments by id(candidate) (agent/assembly/judge.py),
    `guessed` the option names the model guessed the question asks for (option_guess.py),
    `answering` the products that answer when the caller has chosen them (`choose_products`).
    Under the reader no sentence it rejects is a reading (`vetoed`), except as the `last_resort`:
    the best sentence when nothing else stood beats "the documents do not answer" while they may."""
    limit = context.max_readings if limit is None else limit
    if not pool or limit <= 0:
        return [], list(top)
    chosen = product_readings(question, pool, context, ambiguous, limit, skip_ids, said, guessed, answering)
    by_product = chosen is not None
    if chosen is None:
        scored = scored if scored is not None else score_pool(question, pool, context)
        threshold = _threshold(context, ambiguous) if threshold is None else threshold
        if context.reading_scorer == "reader" and not last_resort:
            scored = vetoed(question, scored, reader_floor(context), threshold)
        chosen = choose(scored, threshold, limit, skip_ids,
                        said=[said_words(s) for s in said],
                        sense_of=sense_name if context.reading_scorer == "reader" else None,
                        prefer=how_preference(question))
        if not chosen and last_resort and asked_product_only(question, pool):
            # the question named the product: its best unit, as a clear question's, before "the documents do not answer"
            chosen = one_product_answer(question, pool, context) or []
    readings, passages = stated_readings(question, chosen, top, ambiguous, verdicts)
    # as the user reads them, with each sense named, two readings can say one fact again
    # ("For John Derek, he also appeared as Joshua in The Ten Commandments (1956)" after the
    # film's cast list): the later one goes. Two products' units that read alike are two answers
    # ("For gzip, `-k --keep` ..." and "For XZ, `-k, --keep` ..."): each product's is compared
    # with its own product's only.
    unrepeated, texts = [], {}
    for item, reading in zip(chosen, readings):
        own = texts.setdefault(reading["sense"] if by_product else "", [])
        if not repeats(reading["text"], own, question):
            unrepeated.append(item)
            own.append(reading["text"])
    if len(unrepeated) < len(chosen):
        readings, passages = stated_readings(question, unrepeated, top, ambiguous, verdicts)
    return readings, passages


def product_readings(question: str, pool: list[dict], context: Context, ambiguous: bool, limit: int,
                     skip_ids: set[str] = frozenset(), said: list[str] = (),
                     guessed: tuple[str, ...] = (), answering: list[tuple[Candidate, float]] | None = None
                     ) -> list[tuple[Candidate, float]] | None:
    """Over manuals (agent/assembly/product_gate.py): over several products', the answering
    products' best units, the surest first, ranked with the model's guessed option names
    (`guessed`); a clear question over one product's, its best unit, ranked without them (the
    guess picks among products' rows; over one product's manual it drew the ranker to a row the
    question did not ask for: docs/results/manuals.md), each checked by the model where
    `check_units` says (agent/assembly/unit_check.py); less those already cited
    (`skip_ids`) or said; `answering`: those products' units when the caller has chosen them. None
    otherwise (the selector's readings).
    A unit that reads like another product's is kept: tools that share a vocabulary often answer
    with the same option, and it is each product's answer."""
    if answering is None:
        answering = product_answers(question, pool, context, guessed=guessed, checked=context.check_units)
    if answering is None and not ambiguous:
        answering = one_product_answer(question, pool, context)
    if answering is None:
        return None
    stated = [said_words(s) for s in said]

    def said_before(candidate: Candidate) -> bool:
        words = said_words(candidate.sentence)
        return any(restates(words, earlier) for earlier in stated)

    chosen = [(candidate, p) for candidate, p in answering
              if candidate.passage["id"] not in skip_ids and not said_before(candidate)]
    return chosen[:limit]


def stated_readings(question: str, chosen: list[tuple[Candidate, float]], top: list[dict], ambiguous: bool,
                    verdicts: dict[int, float] | None) -> tuple[list[dict], list[dict]]:
    """(the chosen readings as stated, passages numbered for the answer: `top` then each
    reading's passage)."""
    passages = list(top) + [c.passage for c, _ in chosen if c.passage not in top]
    # a sense is named only where it tells readings apart: a clear question's one sense is the asked
    # one; a product's unit is named by its product unless the question names it, since the question
    # did not say whose answer it asked for ("For zstd, -k, --keep: ...")
    lead = not asked_product_only(question, [c.passage for c, _ in chosen]) and (
        ambiguous or len({sense_name(c.passage) for c, _ in chosen}) > 1
        or any(c.passage.get("product") and not names_product(question, c.passage["product"]) for c, _ in chosen))
    readings = [{**reading_of(question, c, p), "text": reading_text(c.sentence, c.passage, passages, lead)}
                for c, p in chosen]
    for reading, (candidate, _) in zip(readings, chosen):
        if verdicts and id(candidate) in verdicts:
            reading["judge"] = round(verdicts[id(candidate)], 3)
    return readings, passages


def reading_of(question: str, candidate: Candidate, probability: float) -> dict:
    """A reading's interpretation: the question asked of its sense, its sentence, its passage."""
    sense = sense_name(candidate.passage)
    return {"question": f"{question.strip().rstrip('?')} ({sense})?", "answer": candidate.sentence,
            "citations": [candidate.passage["id"]], "sense": sense, "probability": round(probability, 3)}


def announce(readings: list[dict], passages: list[dict]) -> None:
    """The `readings` stream event: the grounded lines the user can read before the model writes."""
    if readings:
        emit({"event": "readings",
              "readings": [{"sense": r["sense"], "text": r["text"], "citations": r["citations"]} for r in readings],
              "passages": [{"n": n, "id": p["id"], "title": p.get("title", ""), **location(p)}
                           for n, p in enumerate(passages, 1)]})


@tracked
def select_readings(state: dict, runtime: Runtime[Context]) -> dict:
    """Cited readings from the pool (`detection_passages`, else `passages`), chosen by the
    learned selector's probability, streamed at once; `passages` becomes the top k then the
    readings' passages, numbered as the answer will cite them. With `judge_readings`, an
    ambiguous question's unsure candidates are mixed with the model's judgment first
    (`judged_readings`). Products the gate does not pass but may answer go under
    `decision.offered`: the chat offers them beside the stated readings when it asks which
    product was meant; the answer never states them."""
    context = runtime.context
    pool = state.get("detection_passages") or state.get("passages") or []
    ambiguous = state.get("ambiguous") is not False
    scored = rescored(pool, state.get("reading_scores"))
    guessed = guessed_names(state)
    judged = ambiguous and context.judge_readings > 0 and bool(pool)
    # once per question: the products' units ranked (and, for the answer, checked) serve it and the options
    choice = choose_products(state["question"], pool, context, guessed=guessed,
                             checked=0 if judged else context.check_units) if pool else None
    if judged:
        readings, passages = judged_readings(state["question"], pool, context, scored, guessed)
    else:
        readings, passages = readings_for(state["question"], pool, context, ambiguous, pool[:context.k], scored=scored,
                                          guessed=guessed, answering=choice.answering if choice else None)
        announce(readings, passages)
    offered = [{**reading_of(state["question"], c, p), "passage": c.passage} for c, p in (choice.offered if choice else [])]
    return {"readings": readings, "passages": passages, **({"decision": {"offered": offered}} if offered else {})}


def judged_readings(question: str, pool: list[dict], context: Context, scored: list[tuple[Candidate, float]] | None,
                    guessed: tuple[str, ...] = ()) -> tuple[list[dict], list[dict]]:
    """(readings, passages) of an ambiguous question whose unsure candidates the model judges
    (agent/assembly/judge.py). The readings no judgment can change (over `judge_max`) go on
    screen before the model is asked; the judged ones follow them, so what is shown stays."""
    scored = scored or score_pool(question, pool, context)
    sure, passages = readings_for(question, pool, context, True, pool[:context.k], scored=scored,
                                  threshold=max(math.nextafter(context.judge_max, 1.0), context.judge_threshold),
                                  guessed=guessed)
    announce(sure, passages)
    if len(sure) >= context.max_readings:
        return sure, passages  # no room for another reading: nothing to ask the model
    rescored_pool, verdicts = judged_scores(question, scored, context)
    judged, passages = readings_for(question, pool, context, True, passages, scored=rescored_pool,
                                    skip_ids={c for r in sure for c in r["citations"]},
                                    said=[r["answer"] for r in sure], limit=context.max_readings - len(sure),
                                    threshold=context.judge_threshold, verdicts=verdicts, guessed=guessed)
    if judged:
        announce(sure + judged, passages)  # every reading so far: a client may show the list anew
    return sure + judged, passages


def notes_for(state: dict, readings: list[dict], prose: list[str], passages: list[dict], context: Context) -> list[str]:
    """Gap notes (agent/assembly/gaps.py) for the senses the pool names and nothing stated answers."""
    pool = state.get("detection_passages") or passages
    if not pool:
        return []
    by_id = {p["id"]: p for p in [*pool, *passages]}
    stated = [(by_id[c], r["answer"]) for r in readings for c in r["citations"] if c in by_id]
    stated += [(passages[n - 1], s) for s in prose for n in cited_numbers(s) if 1 <= n <= len(passages)]
    answers = reader_answers(state["question"], context) if context.reading_scorer == "reader" else None
    return gap_notes(state["question"], pool, passage_vectors(get_retriever(context), pool), stated, answers)


def reader_answers(question: str, context: Context):
    """For the gap notes: whether one of a passage's sentences answers the question, by the reader."""
    floor = reader_floor(context)

    def answers(passage: dict, sentences: list[str]) -> bool:
        return None in under_floor(question, [Candidate(passage, i, s, 0) for i, s in enumerate(sentences)], floor)
    return answers


def with_reading_interpretations(kept: list[dict], readings: list[dict]) -> list[dict]:
    """The model's `kept` interpretations, then each reading whose passages none of them cites."""
    seen = {c for item in kept for c in item["citations"]}
    return list(kept) + [{"question": r["question"], "answer": r["answer"], "citations": r["citations"]}
                         for r in readings if not set(r["citations"]) <= seen]


@tracked
def compose_answer(state: dict, runtime: Runtime[Context]) -> dict:
    """The final answer: the readings shown first, then the model's checked sentences; the
    model's grounded interpretations and the readings are the interpretations."""
    readings = state.get("readings") or []
    prose = state.get("prose") or []
    passages = state.get("passages") or []
    ambiguous = state.get("ambiguous") is not False
    if not readings and not prose:  # nothing stood: the pool's best sentence, if the selector half believes it
        pool = state.get("detection_passages") or passages
        readings, passages = readings_for(state["question"], pool, runtime.context, ambiguous, passages,
                                          scored=rescored(pool, state.get("reading_scores")), limit=1,
                                          threshold=selector_threshold(runtime.context) * FALLBACK_SHARE,
                                          last_resort=True, guessed=guessed_names(state))
    notes = notes_for(state, readings, prose, passages, runtime.context) if ambiguous else []
    answer = compose([r["text"] for r in readings], prose, notes)
    interpretations = with_reading_interpretations(state.get("draft_interpretations") or [], readings)
    abstained = answer == NOT_IN_DOCUMENTS
    assembly = {"readings": [{k: r[k] for k in ("sense", "probability", "judge", "citations") if k in r}
                             for r in readings],
                "dropped": state.get("dropped_sentences") or [], "gap_notes": notes}
    return {**answer_update(answer, interpretations if not abstained else [], abstained=abstained,
                            extractive_readings=len(readings), assembly=assembly), "passages": passages}
