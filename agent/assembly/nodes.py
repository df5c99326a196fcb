"""Answer assembly as graph nodes: select readings (no LLM, streamed at once), write the
model's draft over the top k, check its sentences, compose. Studio and the stream show each
step; what a step dropped, and why, is listed in `decision["assembly"]`.
"""

from __future__ import annotations

import math

from langgraph.runtime import Runtime

from agent.assembly.checks import (BARE_ANSWER, cite_holding_passage, in_full_unless_said, model_sentences, narrows,
                                   sentence_fault)
from agent.assembly.compose import compose, reading_text, repeats, sense_name, without_restated_clause
from agent.assembly.text import answer_units, said_words
from agent.assembly.features import Candidate, candidates
from agent.assembly.gaps import gap_notes
from agent.assembly.judge import judged_scores
from agent.assembly.product_gate import offered_products, one_product_answer, product_answers
from agent.assembly.selector import (choose, how_preference, load_mix, load_selector, reader_floor, restates, score_pool,
                                     under_floor, vetoed, written_probabilities)
from agent.context import Context
from agent.documents.citation import location
from agent.llm.answers import cited_numbers, may_stream
from agent.llm.prompts import CITATION_MARKER
from agent.steps.grounding import content_tokens
from agent.retrieval.products import asked_product_only, names_product
from agent.retrieval.retriever import get_retriever, passage_vectors
from agent.steps.coherence import cosine
from agent.steps.compression import SentenceRanker
from agent.steps.interpretations import NOT_IN_DOCUMENTS
from agent.steps.nodes import answer_update, synthesize_answer
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
                 guessed: tuple[str, ...] = ()) -> tuple[list[dict], list[dict]]:
    """(readings, passages numbered for the answer: `top` then each reading's passage);
    `threshold` overrides the selector's (the fallback when nothing else stood; judged
    readings), `verdicts` are the model's judgments by id(candidate) (agent/assembly/judge.py),
    `guessed` the option names the model guessed the question asks for (option_guess.py).
    Under the reader no sentence it rejects is a reading (`vetoed`), except as the `last_resort`:
    the best sentence when nothing else stood beats "the documents do not answer" while they may."""
    limit = context.max_readings if limit is None else limit
    if not pool or limit <= 0:
        return [], list(top)
    chosen = product_readings(question, pool, context, ambiguous, limit, skip_ids, said, guessed)
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
            chosen = one_product_answer(question, pool, context, guessed) or []
    readings, passages = stated_readings(question, chosen, top, ambiguous, verdicts)
    # as the user reads them, with each sense named, two readings can say one fact again
    # ("For John Derek, he also appeared as Joshua in The Ten Commandments (1956)" after the
    # film's cast list): the later one goes
    unrepeated, texts = [], []
    for item, reading in zip(chosen, readings):
        if not repeats(reading["text"], texts, question):
            unrepeated.append(item)
            texts.append(reading["text"])
    if len(unrepeated) < len(chosen):
        readings, passages = stated_readings(question, unrepeated, top, ambiguous, verdicts)
    return readings, passages


def product_readings(question: str, pool: list[dict], context: Context, ambiguous: bool, limit: int,
                     skip_ids: set[str] = frozenset(), said: list[str] = (),
                     guessed: tuple[str, ...] = ()) -> list[tuple[Candidate, float]] | None:
    """Over manuals (agent/assembly/product_gate.py): over several products', the answering
    products' best units, the surest first; a clear question over one product's, its best unit;
    less those already cited (`skip_ids`) or said. None otherwise (the selector's readings)."""
    answering = product_answers(question, pool, context, guessed=guessed)
    if answering is None and not ambiguous:
        answering = one_product_answer(question, pool, context, guessed)
    if answering is None:
        return None
    stated = [said_words(s) for s in said]
    chosen = []
    for candidate, p in answering:
        words = said_words(candidate.sentence)
        if candidate.passage["id"] in skip_ids or any(restates(words, earlier) for earlier in stated):
            continue
        chosen.append((candidate, p))
        stated.append(words)
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
    `decision.offered` (`offered_readings`)."""
    context = runtime.context
    pool = state.get("detection_passages") or state.get("passages") or []
    ambiguous = state.get("ambiguous") is not False
    scored = rescored(pool, state.get("reading_scores"))
    guessed = tuple(state.get("option_names") or ())
    if ambiguous and context.judge_readings > 0 and pool:
        readings, passages = judged_readings(state["question"], pool, context, scored, guessed)
    else:
        readings, passages = readings_for(state["question"], pool, context, ambiguous, pool[:context.k], scored=scored,
                                          guessed=guessed)
        announce(readings, passages)
    offered = offered_readings(state["question"], pool, context, guessed)
    return {"readings": readings, "passages": passages, **({"decision": {"offered": offered}} if offered else {})}


def offered_readings(question: str, pool: list[dict], context: Context, guessed: tuple[str, ...] = ()) -> list[dict]:
    """Over several products' manuals, the products the gate does not pass but may answer
    (`offered_products`), each as an interpretation with its passage: the chat offers them beside
    the stated readings when it asks which product was meant; the answer never states them."""
    offered = offered_products(question, pool, context, guessed=guessed)
    return [{**reading_of(question, c, p), "passage": c.passage} for c, p in offered]


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
                                          last_resort=True, guessed=tuple(state.get("option_names") or ()))
    notes = notes_for(state, readings, prose, passages, runtime.context) if ambiguous else []
    answer = compose([r["text"] for r in readings], prose, notes)
    interpretations = with_reading_interpretations(state.get("draft_interpretations") or [], readings)
    abstained = answer == NOT_IN_DOCUMENTS
    assembly = {"readings": [{k: r[k] for k in ("sense", "probability", "judge", "citations") if k in r}
                             for r in readings],
                "dropped": state.get("dropped_sentences") or [], "gap_notes": notes}
    return {**answer_update(answer, interpretations if not abstained else [], abstained=abstained,
                            extractive_readings=len(readings), assembly=assembly), "passages": passages}
