"""auto, the default method: decide per question whether it is clear or ambiguous from cheap
signals, then answer like vanilla or run an ambiguity method.

retrieve_for_gate (2k passages) -> assess_ambiguity (no LLM: query detector, focus of the
passages on the question, ADF coherence; agent/steps/ambiguity_signals.py) ->
  clear:                      keep_top_passages -> synthesize_answer (vanilla's shared node)
  ambiguous, budget "fast":   answer_each_sense: vanilla's synthesis over the top k (one
                              call, the same as vanilla's), plus an extractive, cited reading
                              for each sense group of the 2k passages no kept reading cites
  ambiguous, budget "thorough": the DIVA graph run whole (agent.app.handoff; several calls,
                              per-reading verification); its detail goes under `decision.diva`
Either way the shared synthesis keeps only grounded, distinct interpretations and states each.
`decision` = {ambiguous, branch, interpretations_source, abstained, auto: {signals, fired, thresholds,
method}} (+ `diva: {...}` when DIVA answered); the common part is auto's own choice;
the stream carries an `auto_decision` event as soon as the gate has decided.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Literal

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from agent.app import handoff
from agent.errors import InputError, validate_question
from agent.llm.answers import cited_numbers
from agent.llm.prompts import CITATION_MARKER
from agent.retrieval.retriever import get_retriever, passage_vectors
from agent.state import InputState, OutputState, Passage, RAGState, starts_turn
from agent.steps.ambiguity_signals import DEFAULT_THRESHOLDS, GateThresholds, detector_signal, is_ambiguous, passage_signals
from agent.steps.coherence import cosine
from agent.steps.grounding import STOPWORDS, answer_support, content_tokens, stem, tokens
from agent.steps.interpretations import NOT_IN_DOCUMENTS, marker, not_silent, sentences
from agent.steps.nodes import answer_update, synthesize_answer
from agent.usage import emit, tracked
from graphs.diva import DIVAContext

Budget = Literal["fast", "thorough"]
METHOD_FOR_BUDGET = {"fast": "synthesis + extractive readings", "thorough": "diva"}
EXTRA_READINGS = 3  # extractive readings added at most (4 on the ASQA sample: ROUGE-Lsum barely above vanilla's)
ANSWER_TYPE_BONUS = 0.3  # a sentence holding what the question asks for (a year for "when") over one that does not
MIN_MATCH = 0.4  # share of the question's (rarity-weighted) content words a reading's sentence must carry
CITED_SUPPORT = 0.67  # share of a model sentence's content words its citations must hold (0.5 and 0.67 scored alike on ASQA)
SAME_SENSE = 0.5  # cosine at which two passages count as one sense (packaged MiniLM encoder)


@dataclass(kw_only=True)
class AutoContext(DIVAContext):
    """auto's knobs: the gate's thresholds and what an ambiguous question may cost."""

    budget: Budget = field(
        default="fast",
        metadata={"description": "Ambiguous questions: fast (vanilla's one call, plus a cited extractive reading "
                                 "for each sense of the passages it missed) "
                                 "or thorough (DIVA: pseudo-interpretations, verification, several calls)"},
    )
    gate_detector: float = field(
        default=DEFAULT_THRESHOLDS.detector,
        metadata={"description": "Ambiguous when the query detector's probability is at least this"},
    )
    gate_focus: float = field(
        default=DEFAULT_THRESHOLDS.focus,
        metadata={"description": "Ambiguous when the best passage is closer to the question than the mean by less than this"},
    )

    def __post_init__(self) -> None:
        if self.budget not in METHOD_FOR_BUDGET:
            raise InputError(f"budget must be fast or thorough, not {self.budget!r}")


class AutoState(RAGState, total=False):
    detection_passages: list[Passage]  # the 2k passages the gate looks at
    ambiguous: bool


@tracked
def retrieve_for_gate(state: AutoState, runtime: Runtime[AutoContext]) -> dict:
    """2k passages for the question: the gate needs a wider view than the k an answer uses."""
    context = runtime.context
    question = validate_question(state["question"])
    return {"detection_passages": get_retriever(context).search(question, context.retrieval_mode, 2 * context.k),
            "guidance": ""}


@tracked
def assess_ambiguity(state: AutoState, runtime: Runtime[AutoContext]) -> dict:
    """The cheap signals and the gate's verdict; says in the stream which way it went."""
    context = runtime.context
    passages = state.get("detection_passages") or []
    retriever = get_retriever(context)
    vectors = passage_vectors(retriever, passages) if passages else []
    query_vector = retriever.embed_queries([state["question"]])[0]
    signals = {**passage_signals(query_vector, vectors, passages), **detector_signal(state["question"])}
    thresholds = GateThresholds(detector=context.gate_detector, focus=context.gate_focus)
    ambiguous, fired = is_ambiguous(signals, thresholds)
    method = METHOD_FOR_BUDGET[context.budget] if ambiguous else "vanilla"
    emit({"event": "auto_decision", "ambiguous": ambiguous, "method": method, "fired": fired})
    return {
        "ambiguous": ambiguous,
        "decision": {
            "ambiguous": ambiguous, "branch": "ambiguous" if ambiguous else "clear",
            "interpretations_source": "diva" if method == "diva" else "synthesis",
            "auto": {"gate": "ambiguous" if ambiguous else "clear", "signals": signals, "fired": fired,
                     "method": method, "budget": context.budget,
                     "thresholds": {"detector": thresholds.detector, "focus": thresholds.focus}},
        },
    }


def route_after_assess_ambiguity(
    state: AutoState, runtime: Runtime[AutoContext]
) -> Literal["keep_top_passages", "answer_each_sense", "diva"]:
    if not state.get("ambiguous"):
        return "keep_top_passages"
    return "diva" if runtime.context.budget == "thorough" else "answer_each_sense"


@tracked
def keep_top_passages(state: AutoState, runtime: Runtime[AutoContext]) -> dict:
    """A clear question is answered like vanilla, from its own top k (already in hand)."""
    return {"passages": (state.get("detection_passages") or [])[:runtime.context.k]}


def names(passage: dict, question: str) -> set[str]:
    """Capitalized words of the title and first sentence that the question does not contain:
    what the passage is about (two passages naming Hewlett-Packard share a sense, whatever
    their cosine)."""
    found = sentences(passage["text"])
    text = f"{passage.get('title', '')} {found[0] if found else ''}"
    asked = set(tokens(question))
    return {w.casefold() for w in re.findall(r"\b[A-Z][A-Za-z]+", text)
            if len(w) > 2 and w.casefold() not in STOPWORDS and w.casefold() not in asked}


def sense_groups(vectors, passages: list[dict], question: str, threshold: float = SAME_SENSE) -> list[list[int]]:
    """Greedy grouping in rank order: a passage joins the first group holding a passage at least
    `threshold` similar to it or naming the same thing, else starts a group. The packaged
    encoder alone puts two passages of one sense at 0.3 and of two senses at 0.45."""
    groups: list[list[int]] = []
    named = [names(p, question) for p in passages]
    for i in range(len(vectors)):
        home = next((g for g in groups
                     if any(cosine(vectors[j], vectors[i]) >= threshold or named[j] & named[i] for j in g)), None)
        if home is None:
            groups.append([i])
        else:
            home.append(i)
    return groups


@tracked
def answer_each_sense(state: AutoState, runtime: Runtime[AutoContext]) -> dict:
    """vanilla's synthesis over the top k (the same call, so the model's answer is vanilla's),
    then up to EXTRA_READINGS extractive readings from the 2k passages no kept reading cites,
    senses the model missed first (`reading_order`): each passage's sentence that best matches
    the question, stated after its title and cited (grounded by construction). Small models
    write one reading; the others sit in the passages."""
    context = runtime.context
    pool = state.get("detection_passages") or []
    top = pool[:context.k]
    update = synthesize_answer({**state, "passages": top}, runtime)
    if update["decision"].get("abstained") and update["answer"] != NOT_IN_DOCUMENTS:
        return {**update, "passages": top}  # the model failed: nothing to add to
    cited = {c for item in update["interpretations"] for c in item["citations"]}
    vectors = passage_vectors(get_retriever(context), pool) if pool else []
    weights = rarity(state["question"], pool)
    shown, added = list(top), []
    by_id = {p["id"]: p for p in pool}
    for candidates in reading_order(vectors, pool, state["question"], cited):
        if len(added) == EXTRA_READINGS:
            break
        reading = extractive_reading(state["question"], [pool[i] for i in candidates], weights)
        if reading is not None:
            passage = by_id[reading["citations"][0]]
            added.append((reading, passage))
            shown += [passage] if passage not in shown else []
    if not added:
        return {**update, "passages": top}
    interpretations = update["interpretations"] + [reading for reading, _ in added]
    lead = [sentence for sentence in not_silent(update["answer"])  # vanilla's answer, less silence claims and fragments
            if supported_by_citation(sentence, top)]
    answer = " ".join(lead + [f"{passage['title']}: {reading['answer']}{marker(reading['citations'], shown)}."
                              for reading, passage in added])
    decision = {**update["decision"], "abstained": False, "extractive_readings": len(added)}
    return {**update, **answer_update(answer, interpretations, **decision), "passages": shown}


def supported_by_citation(sentence: str, passages: list[dict]) -> bool:
    """A sentence citing passages must have most of its content words in them ("The HP Way [4]"
    citing the hit-points passage does not); a sentence citing nothing is the model's own and stays."""
    cited = [passages[n - 1]["text"] for n in cited_numbers(sentence) if 1 <= n <= len(passages)]
    if not cited:
        return True
    return answer_support(CITATION_MARKER.sub(" ", sentence), " ".join(cited)) >= CITED_SUPPORT


def reading_order(vectors, pool: list[dict], question: str, cited: set[str]) -> list[list[int]]:
    """Candidates for the extractive readings, in the order they are tried: first each sense
    group no kept reading covers (a sense the model missed; its best sentence wins), then the
    other uncited passages one by one, by rank (ASQA's readings often differ inside one
    subject: dates, roles, seasons)."""
    new = [group for group in sense_groups(vectors, pool, question)
           if not any(pool[i]["id"] in cited for i in group)]
    grouped = {i for group in new for i in group}
    return new + [[i] for i in range(len(pool)) if i not in grouped and pool[i]["id"] not in cited]


def rarity(question: str, passages: list[dict]) -> dict[str, float]:
    """Weight of each content word of the question: rarer among the passages weighs more
    ("potts" tells more than "beast" when every passage is about Beauty and the Beast)."""
    asked = {stem(w) for w in tokens(question) if w not in STOPWORDS}  # "How many do I have?": none
    texts = [set(content_tokens(p["text"])) for p in passages]
    return {w: math.log(1 + (len(texts) + 1) / (1 + sum(w in t for t in texts))) for w in asked}


def extractive_reading(question: str, group: list[dict], weights: dict[str, float]) -> dict | None:
    """The group's sentence carrying most of the question's weight, as a reading named after
    its passage's title; None when no sentence carries MIN_MATCH of it (an off-topic group).
    Ties go to the sentence naming its passage's subject, and to one spelling out an acronym of
    the question ("Hit points, abbreviated HP, ..." for "What is HP?")."""
    if not weights:
        return None  # a question of stopwords only: no sentence can be about it
    total = sum(weights.values())
    best, best_score = None, 0.0
    for passage in group:
        subject = set(content_tokens(passage["title"])) - set(weights)
        for sentence in passage_sentences(passage):
            words = set(content_tokens(sentence))
            match = sum(weight for word, weight in weights.items() if word in words) / total
            score = (match + 0.1 * len(subject & words) / max(len(subject), 1) + 0.1 * spells_out(question, sentence)
                     + ANSWER_TYPE_BONUS * answers_type(question, sentence))
            if match >= MIN_MATCH and score > best_score:
                best, best_score = (passage, sentence), score
    if best is None:
        return None
    passage, sentence = best
    sentence = sentence.replace('""', '"')  # the corpus's CSV-doubled quotes
    if len(sentence) > 240:
        sentence = sentence[:240].rsplit(" ", 1)[0] + " ..."
    return {"question": f"{question.strip().rstrip('?')} ({passage['title']})?", "answer": sentence.rstrip("."),
            "citations": [passage["id"]]}


_YEAR = re.compile(r"\b(1[0-9]{3}|20[0-9]{2})\b|\b(January|February|March|April|May|June|July|August|September|"
                   r"October|November|December)\b")
_NUMBER = re.compile(r"\b\d[\d,.]*\b|\b(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|dozen|"
                     r"hundred|thousand|million|billion)\b", re.IGNORECASE)
_NAME = re.compile(r"\b[A-Z][a-z]+(?:[ -][A-Z][a-z]+)+\b")


def answers_type(question: str, sentence: str) -> bool:
    """Whether the sentence holds the kind of thing the question asks for and the question does
    not already say: a year or month for when, a number for how many/much, a name for who/where."""
    asked = question.casefold()
    fresh = sentence
    for word in set(re.findall(r"\w+", question)):
        if len(word) > 2:
            fresh = re.sub(rf"\b{re.escape(word)}\b", " ", fresh, flags=re.IGNORECASE)
    if asked.startswith(("when", "what year", "what date", "in what year", "which year")):
        return bool(_YEAR.search(fresh))
    if asked.startswith(("how many", "how much", "how long", "how old", "how far")):
        return bool(_NUMBER.search(fresh))
    if asked.startswith(("who", "whom", "whose", "where", "which")):
        return bool(_NAME.search(fresh))
    return False


def spells_out(question: str, sentence: str) -> bool:
    """Whether the sentence has capitalized consecutive words whose initials spell an acronym of
    the question ("Hit points" or "Hewlett-Packard" for HP)."""
    words = re.findall(r"[A-Za-z]+", sentence)
    for acronym in re.findall(r"\b[A-Z]{2,5}\b", question):
        n = len(acronym)
        for i in range(len(words) - n + 1):
            run = words[i:i + n]
            if run[0][:1].isupper() and run[0] != acronym and "".join(w[0] for w in run).upper() == acronym:
                return True
    return False


def passage_sentences(passage: dict) -> list[str]:
    """Whole sentences of the passage: not the quoted title a chunk starts with, not a chunk's
    opening fragment (lower-case start), not a heading too short to say anything."""
    text = re.sub(r'^\s*"[^"]{1,200}"\s+', "", passage["text"])
    return [s for s in sentences(text) if len(s) >= 40 and not s[:1].islower()]


@tracked
def diva(state: AutoState, runtime: Runtime[AutoContext]) -> dict:
    """The DIVA graph run whole on the question. Its outputs become auto's; the common decision
    stays auto's own (ambiguous, branch "ambiguous") except `abstained`; DIVA's detail, with
    the branch it took, goes under `diva`."""
    messages = list(state.get("messages") or [])
    run = handoff.run_method("diva", state["question"], messages, runtime.context)
    update = handoff.method_update(run, state["question"], messages)
    inner = update["decision"]
    update["decision"] = {"abstained": inner.get("abstained"),
                          "diva": {"branch": inner.get("branch"), **(inner.get("diva") or {})}}
    return update


builder = StateGraph(AutoState, context_schema=AutoContext, input_schema=InputState, output_schema=OutputState)
builder.add_node("retrieve_for_gate", starts_turn(retrieve_for_gate, ambiguous=None, branch="clear",
                                                  interpretations_source="synthesis"))
builder.add_node("assess_ambiguity", assess_ambiguity)
builder.add_node("keep_top_passages", keep_top_passages)
builder.add_node("synthesize_answer", synthesize_answer)
builder.add_node("answer_each_sense", answer_each_sense)
builder.add_node("diva", diva)
builder.add_edge(START, "retrieve_for_gate")
builder.add_edge("retrieve_for_gate", "assess_ambiguity")
builder.add_conditional_edges("assess_ambiguity", route_after_assess_ambiguity)
builder.add_edge("keep_top_passages", "synthesize_answer")
builder.add_edge("answer_each_sense", END)
builder.add_edge("synthesize_answer", END)
builder.add_edge("diva", END)

graph = builder.compile(name="auto")
