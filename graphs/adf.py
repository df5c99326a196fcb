"""ADF, the Agentic Disambiguation Framework: gate on the coherence of the retrieved passages, then decompose.

retrieve (2k) -> analyze_coherence -> classify_ambiguity ->
  Unambiguous (and Uncertain when `uncertain_fallback` is "direct"):
      keep_top_passages -> synthesize_answer
  Ambiguous (and Uncertain by default):
      decompose -> [write_hypothetical_document] -> retrieve_dual -> fuse_rankings -> synthesize_answer
Where the passages come from documents of two or more products (agent/retrieval/products.py),
the gate is Ambiguous and `decompose` groups them by product instead of by KMeans: which
product is the strongest sense there is. `decompose` clusters the passages; as published (`adf_calls=per_cluster`) a call per kept
cluster writes its sub-question, then `write_hypothetical_document` a call per sub-question its
HyDE passage; `batched` (the product's) writes both for every cluster in ONE call
(agent/steps/sub_questions.py). It falls back to keep_top_passages when its clusters cannot be
trusted (fewer than 4 passages, every cluster far from the question, or no sub-question
written) and says why.
`synthesize_answer` is the shared synthesis; with `readings=on` (the product's) extractive
readings from the fused and the detection passages are streamed before its call and stated
first, the model's new sentences after them (agent/steps/readings.py): the 1.5B writes one
reading per question, and ADF's decomposition had found the others.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from agent.steps.coherence import (
    MIN_DECOMPOSE_PASSAGES,
    PRESETS,
    Gate,
    adaptive_k,
    classify,
    cluster_passages,
    dispersion,
    product_clusters,
    pathway_overlap,
    separability,
)
from agent.context import ADFCalls, AnswerLength, Context, Readings, departure
from agent.retrieval.retriever import passage_vectors
from agent.errors import InputError, validate_question
from agent.llm.prompts import fragment
from agent.retrieval.pool import document_pool, user_turns
from agent.retrieval.products import product_names
from agent.retrieval.retriever import get_retriever, reciprocal_rank_fusion
from agent.steps.answer_modes import synthesize
from agent.steps.sub_questions import write_each_sub_question, write_hypothetical_documents, write_sub_questions
from agent.state import InputState, OutputState, Passage, RAGState, starts_turn
from agent.usage import emit, tracked


@dataclass(kw_only=True)
class ADFContext(Context):
    """ADF's knobs: the gate's thresholds (a dataset preset, or explicit values), what an
    Uncertain gate does, the HyDE style and the cluster relevance cut-off."""

    preset: Literal["ambignq", "asqa"] = field(
        default="ambignq",
        metadata={"description": "Gate thresholds and HyDE style: ambignq (tau_var 0.25, tau_sep 0.1, short) "
                                 "or asqa (0.15, 0.05, detailed)"},
    )
    tau_var: float | None = field(default=None, metadata={"description": "Variance threshold; overrides the preset"})
    tau_sep: float | None = field(
        default=None, metadata={"description": "Silhouette (separability) threshold; overrides the preset"}
    )
    uncertain_fallback: Literal["decompose", "direct"] = field(
        default="decompose", metadata={"description": "What an Uncertain gate does: decompose, or answer directly"}
    )
    hyde_style: Literal["preset", "short", "detailed"] = field(
        default="preset", metadata={"description": "Hypothetical documents: short/entity-dense, detailed, or the preset's"}
    )
    min_cluster_cosine: float = field(
        default=0.2, metadata={"description": "Drop clusters whose centroid has a lower cosine to the question"}
    )
    adf_calls: ADFCalls = departure("adf_calls", "paper")
    readings: Readings = departure("readings", "paper")
    answer_length: AnswerLength = departure("answer_length", "paper")

    def __post_init__(self) -> None:
        super().__post_init__()  # preset, uncertain_fallback and hyde_style are Literal settings
        for name in ("tau_var", "tau_sep"):  # `--set tau_var=0.3` arrives as text
            value = getattr(self, name)
            if value not in (None, ""):
                try:
                    setattr(self, name, float(value))
                except (TypeError, ValueError):
                    raise InputError(f"{name} must be a number, not {value!r}") from None
            else:
                setattr(self, name, None)

    def thresholds(self) -> tuple[float, float]:
        """(tau_var, tau_sep): explicit values win over the preset's."""
        preset = PRESETS[self.preset]
        return (preset.tau_var if self.tau_var is None else self.tau_var,
                preset.tau_sep if self.tau_sep is None else self.tau_sep)

    def style(self) -> str:
        return PRESETS[self.preset].hyde_style if self.hyde_style == "preset" else self.hyde_style


class ADFState(RAGState, total=False):
    """Working state; each list is written by one node, so none needs a reducer (the HyDE
    passages by decompose when batched, else by write_hypothetical_document)."""

    detection_passages: list[Passage]  # the 2k passages the gate looks at
    coherence: dict  # {variance, separability, passages}
    gate: Gate
    path: Literal["decompose", "direct"]
    sub_questions: list[dict]  # {subject, question, passage_ids, cosine}
    hypothetical_documents: list[str]  # aligned with sub_questions; "" when the model wrote none
    pathways: list[dict]  # per sub-question: {question, sparse: [ids], dense: [ids], shared, unique, overlap}
    candidates: dict[str, Passage]  # every passage a pathway found, by id


@tracked
def retrieve(state: ADFState, runtime: Runtime[ADFContext]) -> dict:
    """2k passages for the question: the gate needs a wider view than the k an answer uses.
    Also clears the previous turn's working state, so a thread's next question starts afresh."""
    context = runtime.context
    question = validate_question(state["question"])
    passages = document_pool(get_retriever(context), question, context.retrieval_mode, 2 * context.k, None,
                             context.document_quota, user_turns(state.get("messages"), question))
    return {"detection_passages": passages,
            "sub_questions": [], "hypothetical_documents": [], "pathways": [], "candidates": {}, "guidance": ""}


@tracked
def analyze_coherence(state: ADFState, runtime: Runtime[ADFContext]) -> dict:
    """Variance and 2-means silhouette over ALL the detection passages' index vectors."""
    passages = state.get("detection_passages") or []
    vectors = passage_vectors(get_retriever(runtime.context), passages) if passages else []
    stats = {"variance": round(dispersion(vectors), 6), "separability": round(separability(vectors), 6),
             "passages": len(passages)}
    return {"coherence": stats, "decision": stats}


@tracked
def classify_ambiguity(state: ADFState, runtime: Runtime[ADFContext]) -> dict:
    """The gate (equation 3); everything not Unambiguous decomposes unless configured otherwise."""
    context = runtime.context
    tau_var, tau_sep = context.thresholds()
    stats = state["coherence"]
    products = product_names(state.get("detection_passages") or [])
    gate = "Ambiguous" if len(products) >= 2 else classify(stats["variance"], stats["separability"], tau_var, tau_sep)
    decompose_it = gate == "Ambiguous" or (gate == "Uncertain" and context.uncertain_fallback == "decompose")
    path = "decompose" if decompose_it else "direct"
    emit({"event": "gate", "gate": gate, "path": path, **stats})
    return {"gate": gate, "path": path,
            "decision": {"ambiguous": decompose_it, "branch": path, "gate": gate, "path": path,
                         "preset": context.preset, "tau_var": tau_var, "tau_sep": tau_sep,
                         **({"products": products} if len(products) >= 2 else {})}}


def route_after_classify_ambiguity(state: ADFState) -> Literal["decompose", "keep_top_passages"]:
    return "decompose" if state.get("path") == "decompose" else "keep_top_passages"


def _fall_back(reason: str, **details) -> dict:
    return {"sub_questions": [], "path": "direct",
            "decision": {"branch": "direct", "path": "direct", "fallback": reason, **details}}


@tracked
def decompose(state: ADFState, runtime: Runtime[ADFContext]) -> dict:
    """KMeans (k = min(max(2, n//2), 4)) over all n detection passages, or one group per
    product where they document several (`product_clusters`); clusters far from
    the question are dropped; a call per kept cluster writes its sub-question (`per_cluster`),
    or one call every kept cluster's sub-question and hypothetical document (`batched`)."""
    context = runtime.context
    question, passages = state["question"], state.get("detection_passages") or []
    if len(passages) < MIN_DECOMPOSE_PASSAGES:
        return _fall_back(f"only {len(passages)} detection passages; clustering needs {MIN_DECOMPOSE_PASSAGES}")
    retriever = get_retriever(context)
    vectors, query_vector = passage_vectors(retriever, passages), retriever.embed_queries([question])[0]
    by_product = product_clusters(passages, vectors, query_vector, context.min_cluster_cosine)
    clusters = by_product or cluster_passages(vectors, query_vector, context.min_cluster_cosine)
    summary = [{"passage_ids": [passages[i]["id"] for i in c["members"]], "cosine": c["cosine"], "kept": c["kept"]}
               for c in clusters]
    details = {"k_clusters": len(clusters) if by_product else adaptive_k(len(passages)), "clusters": summary,
               "grouping": "product" if by_product else "kmeans"}
    kept = [c for c in summary if c["kept"]]
    if not kept:
        return _fall_back(f"no cluster has cosine >= {context.min_cluster_cosine} to the question", **details)
    by_id = {p["id"]: p for p in passages}
    groups = [[by_id[i] for i in c["passage_ids"]] for c in kept]
    if context.adf_calls == "per_cluster":
        written = write_each_sub_question(context, question, groups)
    else:
        written = write_sub_questions(context, context.style(), question, groups)
    sub_questions, seen = [], set()
    for cluster, sub in zip(kept, written):
        if sub is not None and sub["question"].lower() not in seen:
            seen.add(sub["question"].lower())
            sub_questions.append({**sub, "passage_ids": cluster["passage_ids"], "cosine": cluster["cosine"]})
    if not sub_questions:
        return _fall_back("the model wrote no usable sub-question", **details)
    emit({"event": "sub_questions", "questions": [s["question"] for s in sub_questions]})
    documents = [s.pop("document") for s in sub_questions]
    batched = context.adf_calls == "batched"
    return {"sub_questions": sub_questions, "hypothetical_documents": documents,
            "decision": {**details, "sub_questions": [s["question"] for s in sub_questions],
                         "subjects": [s["subject"] for s in sub_questions], "adf_calls": context.adf_calls,
                         "hyde_style": context.style(),
                         **({"hyde_failed": sum(not d for d in documents)} if batched else {})}}


def route_after_decompose(
    state: ADFState, runtime: Runtime[ADFContext]
) -> Literal["write_hypothetical_document", "retrieve_dual", "keep_top_passages"]:
    if not state.get("sub_questions"):
        return "keep_top_passages"
    return "write_hypothetical_document" if runtime.context.adf_calls == "per_cluster" else "retrieve_dual"


@tracked
def write_hypothetical_document(state: ADFState, runtime: Runtime[ADFContext]) -> dict:
    """HyDE as published: a call per sub-question, in parallel, writes the passage that would
    answer it; retrieve_dual searches with it densely (with the sub-question where it failed)."""
    context = runtime.context
    documents = write_hypothetical_documents(context, context.style(), [s["question"] for s in state["sub_questions"]])
    return {"hypothetical_documents": documents, "decision": {"hyde_failed": sum(not d for d in documents)}}


@tracked
def keep_top_passages(state: ADFState, runtime: Runtime[ADFContext]) -> dict:
    """The direct answer path: the question's own top k, already in hand from the 2k search."""
    return {"passages": (state.get("detection_passages") or [])[:runtime.context.k]}


@tracked
def retrieve_dual(state: ADFState, runtime: Runtime[ADFContext]) -> dict:
    """Per sub-question: sparse (BM25) with the sub-question, dense with its hypothetical
    document (the sub-question itself when HyDE failed); records how much they agree."""
    context = runtime.context
    retriever = get_retriever(context)
    questions = [s["question"] for s in state["sub_questions"]]
    documents = [d or q for d, q in zip(state.get("hypothetical_documents") or [], questions)] or questions
    sparse = retriever.search_batch(questions, "sparse", context.k)
    dense = retriever.search_batch(documents, "dense", context.k)
    pathways, candidates = [], {}
    for question, lexical, latent in zip(questions, sparse, dense):
        sparse_ids, dense_ids = [p["id"] for p in lexical], [p["id"] for p in latent]
        pathways.append({"question": question, "sparse": sparse_ids, "dense": dense_ids,
                         **pathway_overlap(sparse_ids, dense_ids)})
        for passage in [*lexical, *latent]:
            candidates.setdefault(passage["id"], passage)
    overall = pathway_overlap([i for p in pathways for i in p["sparse"]], [i for p in pathways for i in p["dense"]])
    return {"pathways": pathways, "candidates": candidates,
            "decision": {"pathway_overlap": overall["overlap"], "pathways": pathways}}


@tracked
def fuse_rankings(state: ADFState, runtime: Runtime[ADFContext]) -> dict:
    """RRF over every pathway's list, top k; the sub-questions become the synthesis guidance."""
    rankings = [ranking for p in state.get("pathways") or [] for ranking in (p["sparse"], p["dense"])]
    fused = reciprocal_rank_fusion(rankings)[:runtime.context.k]
    candidates = state.get("candidates") or {}
    lines = "\n".join(f"- {s['subject']}: {s['question']}" for s in state.get("sub_questions") or [])
    return {"passages": [{**candidates[i], "score": round(score, 6)} for i, score in fused],
            "guidance": fragment("guidance_readings", lines=lines)}


builder = StateGraph(ADFState, context_schema=ADFContext, input_schema=InputState, output_schema=OutputState)
builder.add_node("retrieve", starts_turn(retrieve, ambiguous=None, branch="direct", interpretations_source="synthesis"))
builder.add_node("analyze_coherence", analyze_coherence)
builder.add_node("classify_ambiguity", classify_ambiguity)
builder.add_node("decompose", decompose)
builder.add_node("keep_top_passages", keep_top_passages)
builder.add_node("write_hypothetical_document", write_hypothetical_document)
builder.add_node("retrieve_dual", retrieve_dual)
builder.add_node("fuse_rankings", fuse_rankings)
builder.add_node("synthesize_answer", synthesize)
builder.add_edge(START, "retrieve")
builder.add_edge("retrieve", "analyze_coherence")
builder.add_edge("analyze_coherence", "classify_ambiguity")
builder.add_conditional_edges("classify_ambiguity", route_after_classify_ambiguity)
builder.add_conditional_edges("decompose", route_after_decompose)
builder.add_edge("keep_top_passages", "synthesize_answer")
builder.add_edge("write_hypothetical_document", "retrieve_dual")
builder.add_edge("retrieve_dual", "fuse_rankings")
builder.add_edge("fuse_rankings", "synthesize_answer")
builder.add_edge("synthesize_answer", END)

graph = builder.compile(name="adf")
