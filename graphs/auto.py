"""auto, the default method: decide per question whether it is clear or ambiguous from cheap
signals, then answer like vanilla or run an ambiguity method.

retrieve_for_gate (2k passages) -> assess_ambiguity (no LLM: query detector, focus of the
passages on the question, ADF coherence; agent/steps/ambiguity_signals.py) ->
  clear:                      keep_top_passages -> synthesize_answer (vanilla's shared node)
  ambiguous, budget "fast":   spread_over_senses (maximal marginal relevance over the 2k) ->
                              answer_each_sense: the shared synthesis guided by the sense groups
                              (one call, like vanilla), plus an extractive reading for each
                              group no kept reading cites
  ambiguous, budget "thorough": the DIVA graph run whole (agent.app.handoff; several calls,
                              per-reading verification); its detail goes under `decision.diva`
Either way the shared synthesis keeps only grounded, distinct interpretations and states each.
`decision` = {ambiguous, branch, interpretations_source, abstained, auto: {signals, fired, thresholds,
method}} (+ `diva: {...}` when DIVA answered); the common part is auto's own choice;
the stream carries an `auto_decision` event as soon as the gate has decided.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from agent.app import handoff
from agent.errors import InputError, validate_question
from agent.retrieval.retriever import get_retriever, passage_vectors
from agent.state import InputState, OutputState, Passage, RAGState, starts_turn
from agent.steps.ambiguity_signals import DEFAULT_THRESHOLDS, GateThresholds, detector_signal, is_ambiguous, passage_signals
from agent.steps.coherence import cosine
from agent.steps.grounding import STOPWORDS, content_tokens, tokens
from agent.steps.interpretations import NOT_IN_DOCUMENTS, sentences, stated, usable_sentences
from agent.steps.nodes import answer_update, synthesize_answer
from agent.usage import emit, tracked
from graphs.diva import DIVAContext

Budget = Literal["fast", "thorough"]
METHOD_FOR_BUDGET = {"fast": "sense-spread synthesis", "thorough": "diva"}
MMR_WEIGHT = 0.5  # relevance against redundancy when spreading the passages over the senses
SAME_SENSE = 0.5  # cosine at which two passages count as one sense (packaged MiniLM encoder)


@dataclass(kw_only=True)
class AutoContext(DIVAContext):
    """auto's knobs: the gate's thresholds and what an ambiguous question may cost."""

    budget: Budget = field(
        default="fast",
        metadata={"description": "Ambiguous questions: fast (passages spread over the senses, one call) "
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
) -> Literal["keep_top_passages", "spread_over_senses", "diva"]:
    if not state.get("ambiguous"):
        return "keep_top_passages"
    return "diva" if runtime.context.budget == "thorough" else "spread_over_senses"


@tracked
def keep_top_passages(state: AutoState, runtime: Runtime[AutoContext]) -> dict:
    """A clear question is answered like vanilla, from its own top k (already in hand)."""
    return {"passages": (state.get("detection_passages") or [])[:runtime.context.k]}


@tracked
def spread_over_senses(state: AutoState, runtime: Runtime[AutoContext]) -> dict:
    """k of the 2k passages by maximal marginal relevance (near the question, far from the ones
    already chosen), so each sense gets a passage; grouped by similarity, each group's title
    guides the synthesis."""
    context = runtime.context
    passages = state.get("detection_passages") or []
    if len(passages) < 3:
        return {"passages": passages[:context.k]}
    retriever = get_retriever(context)
    vectors = passage_vectors(retriever, passages)
    chosen = sorted(diverse_order(vectors, retriever.embed_queries([state["question"]])[0], context.k))
    groups = sense_groups(vectors[chosen], [passages[i] for i in chosen], state["question"])
    subjects = [(passages[chosen[group[0]]]["title"], [i + 1 for i in group]) for group in groups]
    guidance = ("This question may mean different things. The passages fall into these groups: "
                + "; ".join(f"{title} (passages {', '.join(map(str, numbers))})" for title, numbers in subjects)
                + ". Give one interpretation for each group the passages answer, with a question that names "
                "that group's meaning.") if len(subjects) > 1 else ""
    return {"passages": [passages[i] for i in chosen], "guidance": guidance,
            "decision": {"auto_subjects": [title for title, _ in subjects]}}


def diverse_order(vectors, query_vector, limit: int, weight: float = MMR_WEIGHT) -> list[int]:
    """Maximal marginal relevance: indices chosen one at a time by
    weight * cos(question, p) - (1 - weight) * max cos(p, chosen)."""
    relevance = [cosine(query_vector, v) for v in vectors]
    chosen: list[int] = []
    while len(chosen) < min(limit, len(vectors)):
        def gain(i: int) -> float:
            redundancy = max((cosine(vectors[i], vectors[j]) for j in chosen), default=0.0)
            return weight * relevance[i] - (1 - weight) * redundancy
        chosen.append(max((i for i in range(len(vectors)) if i not in chosen), key=gain))
    return chosen


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
    """Greedy grouping in rank order: a passage joins the first group whose first passage is at
    least `threshold` similar to it or names the same thing, else starts a group. The packaged
    encoder alone puts two passages of one sense at 0.3 and of two senses at 0.45."""
    groups: list[list[int]] = []
    named = [names(p, question) for p in passages]
    for i in range(len(vectors)):
        home = next((g for g in groups
                     if cosine(vectors[g[0]], vectors[i]) >= threshold or named[g[0]] & named[i]), None)
        if home is None:
            groups.append([i])
        else:
            home.append(i)
    return groups


@tracked
def answer_each_sense(state: AutoState, runtime: Runtime[AutoContext]) -> dict:
    """The shared synthesis, then, for each sense group of the passages that no kept reading
    cites, an extractive reading: the group's first passage's first sentence that mentions the
    question (grounded by construction, cited). Small models often write one reading only."""
    update = synthesize_answer(state, runtime)
    if update["decision"].get("abstained") and update["answer"] != NOT_IN_DOCUMENTS:
        return update  # the model failed: nothing to add to
    passages = state.get("passages") or []
    vectors = passage_vectors(get_retriever(runtime.context), passages) if passages else []
    cited = {c for item in update["interpretations"] for c in item["citations"]}
    added = []
    for group in sense_groups(vectors, passages, state["question"]):
        if not any(passages[i]["id"] in cited for i in group):  # no kept reading covers this sense
            added.append(extractive_reading(state["question"], passages[group[0]]))
    if not added:
        return update
    interpretations = update["interpretations"] + added
    lead = usable_sentences(update["answer"])  # cited, complete, not claiming silence
    answer = " ".join(lead + [stated(item, passages) for item in added])
    decision = {**update["decision"], "abstained": False, "extractive_readings": len(added)}
    return {**update, **answer_update(answer, interpretations, **decision)}


def extractive_reading(question: str, passage: dict) -> dict:
    """A reading named after the passage's title, answered by its sentence about the question."""
    wanted = set(content_tokens(question))
    found = sentences(passage["text"])
    at = next((n for n, s in enumerate(found) if wanted & set(content_tokens(s))), 0)
    sentence = " ".join(found[at:at + 2]) if len(found[at]) < 40 else found[at]  # "HP Inc." is no sentence
    if len(sentence) > 240:
        sentence = sentence[:240].rsplit(" ", 1)[0] + " ..."
    return {"question": f"{question.strip().rstrip('?')} ({passage['title']})?", "answer": sentence.rstrip("."),
            "citations": [passage["id"]]}


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
builder.add_node("spread_over_senses", spread_over_senses)
builder.add_node("synthesize_answer", synthesize_answer)
builder.add_node("answer_each_sense", answer_each_sense)
builder.add_node("diva", diva)
builder.add_edge(START, "retrieve_for_gate")
builder.add_edge("retrieve_for_gate", "assess_ambiguity")
builder.add_conditional_edges("assess_ambiguity", route_after_assess_ambiguity)
builder.add_edge("keep_top_passages", "synthesize_answer")
builder.add_edge("spread_over_senses", "answer_each_sense")
builder.add_edge("answer_each_sense", END)
builder.add_edge("synthesize_answer", END)
builder.add_edge("diva", END)

graph = builder.compile(name="auto")
