"""VERDICT, verified diversification with consolidation (the VERDICT paper, Algorithm 1).

relax_query (one call, switchable) -> retrieve ONCE, top-20 (relevance feedback) ->
extract_interpretation: one call per passage, in parallel, each returning an
{interpretation, answer} answerable from that passage alone or abstaining (execution
feedback) -> check_grounding (drops pairs the passage does not support) ->
consolidate (HDBSCAN over embedded pairs; medoid per cluster; merged citations) ->
synthesize_answer over the grounded interpretations, also listed as "related questions".
LLM calls: 1 relax + k extractions + 1 synthesis (+ one per pair with entailment grounding).
"""

import threading
from collections import Counter
from dataclasses import dataclass, field

from langchain_core.messages import AIMessage
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from agent.steps.consolidation import EmbeddingMode, PresetName, consolidate_pairs, pair_text, preset
from agent.context import _env_field
from agent.errors import InputError
from agent.steps.extraction import Extracted, extract_one, related_questions
from agent.steps.grounding import GroundingMode, entailed, overlap_problem
from agent.llm.calls import generate_structured
from agent.llm.models import PACKAGED
from agent.steps.interpretations import checked_interpretations
from agent.steps.nodes import answer_update, grounded_update, retrieve
from agent.llm.answers import cited_passage_ids
from agent.llm.prompts import format_passages
from agent.steps.relax import RelaxedRetrievalContext, relax_query
from agent.retrieval.retriever import get_retriever
from agent.llm.schemas import OrderedModel
from agent.state import InputState, OutputState, RAGState, starts_turn
from agent.usage import emit, map_concurrent, status, tracked
from pydantic import Field

NOTHING_GROUNDED = "No passage in the indexed documents answers any reading of this question."
NO_SUMMARY = "The model could not write a summary; the documents support these readings:"


@dataclass(kw_only=True)
class VERDICTContext(RelaxedRetrievalContext):
    """VERDICT's knobs, on top of relaxed retrieval (relax_query on/off, k=20)."""

    concurrency: int = _env_field("DISAMBIG_CONCURRENCY", 8, int, "Per-passage extraction calls in flight at most")
    grounding: GroundingMode = field(
        default="overlap",
        metadata={"description": "Check after extraction: overlap (answer words in the passage), "
                                 "entailment (one Yes/No call per pair) or off"},
    )
    grounding_threshold: float = field(
        default=0.5, metadata={"description": "overlap: share of the answer's content words the passage must contain"}
    )
    cluster_preset: PresetName = field(
        default="default", metadata={"description": "HDBSCAN preset: default, or conservative (fewer clusters)"}
    )
    embedding_mode: EmbeddingMode = field(
        default="question+answer", metadata={"description": "What is clustered: question+answer, or question only"}
    )
    synthesize: bool = field(
        default=True,
        metadata={"description": "Write a long-form answer; off returns the related questions only (no call)"},
    )

    def __post_init__(self) -> None:
        super().__post_init__()  # grounding, cluster_preset and embedding_mode are Literal settings
        if self.k < 1 or self.concurrency < 1:
            raise InputError("k and concurrency must be at least 1")


def llm_concurrency(context: VERDICTContext) -> int:
    """Calls in flight: the setting, but at most the embedded server's slots for a local model
    (more would only queue on the server while each client-side timeout runs)."""
    local = context.model in PACKAGED or context.model.startswith("gguf:")
    return min(context.concurrency, context.local_parallel) if local else context.concurrency


class VerdictState(RAGState, total=False):
    """Working state: the extracted pairs ({question, answer, passage_id, rank})."""

    pairs: list[dict]  # written by extract_interpretation, then filtered by check_grounding


class GroundedAnswer(OrderedModel):
    # the length cap becomes part of the grammar on llama.cpp, so small models cannot ramble on
    answer: str = Field(max_length=1500, description="the long-form answer citing passages like [2]")


@tracked
def extract_interpretation(state: VerdictState, runtime: Runtime[VERDICTContext]) -> dict:
    """One call per retrieved passage, `concurrency` at a time: a pair answerable from that
    passage alone, or an abstention (execution feedback)."""
    context = runtime.context
    passages = state.get("passages") or []
    done = Counter()
    lock = threading.Lock()

    def extract(item: tuple[int, dict]) -> Extracted:
        outcome = extract_one(context, state["question"], item[1], item[0])
        with lock:
            done["passages"] += 1
            status(f"extraction: {done['passages']} of {len(passages)} passages done")
        return outcome

    outcomes: list[Extracted] = map_concurrent(extract, list(enumerate(passages)), llm_concurrency(context))
    pairs = [outcome.pair() for outcome in outcomes if outcome.status == "extracted"]
    counts = {status: sum(o.status == status for o in outcomes) for status in ("extracted", "abstained", "failed")}
    return {
        "pairs": pairs,
        "decision": {
            "universe": [p["id"] for p in passages],
            "extraction": {**counts, "concurrency": llm_concurrency(context)},
            "pairs": [outcome.summary() for outcome in outcomes],
        },
    }


@tracked
def check_grounding(state: VerdictState, runtime: Runtime[VERDICTContext]) -> dict:
    """Drop pairs the passage does not support (small models rarely abstain)."""
    context = runtime.context
    by_id = {p["id"]: p for p in state.get("passages") or []}
    pairs = state.get("pairs") or []
    if context.grounding == "overlap":
        problems = [
            overlap_problem(state["question"], pair["answer"], by_id[pair["passage_id"]], context.grounding_threshold)
            for pair in pairs
        ]
    elif context.grounding == "entailment":
        verdicts = map_concurrent(
            lambda pair: entailed(context, pair, by_id[pair["passage_id"]]), pairs, llm_concurrency(context)
        )  # a failed check (None) keeps the pair: the extraction itself came from that passage
        problems = ["not entailed" if verdict is False else "" for verdict in verdicts]
    else:
        problems = [""] * len(pairs)
    dropped = [f"{pair['passage_id']}: {pair['question']} -> {pair['answer']} ({problem})"
               for pair, problem in zip(pairs, problems) if problem]
    report = {"mode": context.grounding, "kept": problems.count(""), "dropped": dropped}
    return {"pairs": [pair for pair, problem in zip(pairs, problems) if not problem], "decision": {"grounding": report}}


@tracked
def consolidate(state: VerdictState, runtime: Runtime[VERDICTContext]) -> dict:
    """Cluster the grounded pairs with the retriever's encoder; keep each cluster's medoid
    with the citations of all its pairs. `passages` stays the retrieved universe."""
    context = runtime.context
    pairs = state.get("pairs") or []
    texts = [pair_text(pair, context.embedding_mode) for pair in pairs]
    vectors = get_retriever(context).embed_queries(texts) if texts else None
    interpretations, report = consolidate_pairs(pairs, vectors, preset(context.cluster_preset))
    emit({"event": "interpretations", "interpretations": interpretations})
    report.update(preset=context.cluster_preset, embedding_mode=context.embedding_mode)
    return {
        "interpretations": interpretations,
        "decision": {"consolidation": report},
    }


@tracked
def synthesize_answer(state: VerdictState, runtime: Runtime[VERDICTContext]) -> dict:
    """A long-form answer over the grounded interpretations only; the interpretations are
    also listed as related questions with passage numbers, as an assistant shows them."""
    context = runtime.context
    passages = state.get("passages") or []
    checked = checked_interpretations(state["question"], state.get("interpretations") or [], passages)
    interpretations, direct, _ = checked  # the readings kept: the listing cites what they cite
    if not interpretations and direct is None:
        return answer_update(NOTHING_GROUNDED, [], abstained=True, branch="nothing_grounded", related_questions=[])
    listing = related_questions(interpretations, passages)  # numbered as in `passages`
    cited_ids = set(cited_passage_ids("", interpretations + ([direct] if direct else []), passages))
    shown = [(number, p) for number, p in enumerate(passages, 1) if p["id"] in cited_ids]
    emit({"event": "related_questions", "items": listing})
    block = "Related questions:\n" + "\n".join(f"- {line}" for line in listing)
    if not context.synthesize:
        return answer_update(block, interpretations, abstained=False, synthesized=False, related_questions=listing)
    reply = generate_structured(
        context, GroundedAnswer, "synthesize_grounded_answer", stream_field="answer",
        question=state["question"], interpretations="\n".join(f"{n}. {line}" for n, line in enumerate(listing, 1)),
        passages=format_passages([p for _, p in shown], numbers=[n for n, _ in shown]),
    )
    synthesized = reply is not None and bool(reply.answer.strip())
    if not synthesized:
        answer = NO_SUMMARY + "\n" + "\n".join(f"- {line}" for line in listing)
        return answer_update(answer, interpretations, abstained=False, synthesized=False, related_questions=listing)
    update = grounded_update(context, state["question"], interpretations, passages, reply.answer, checked=checked,
                             synthesized=True, related_questions=listing)
    update["messages"] = [AIMessage(f"{update['answer']}\n\n{block}")]
    return update


builder = StateGraph(VerdictState, context_schema=VERDICTContext, input_schema=InputState, output_schema=OutputState)
builder.add_node("relax_query", starts_turn(relax_query, ambiguous=None, branch="grounded", interpretations_source="consolidation"))
builder.add_node("retrieve", retrieve)
builder.add_node("extract_interpretation", extract_interpretation)
builder.add_node("check_grounding", check_grounding)
builder.add_node("consolidate", consolidate)
builder.add_node("synthesize_answer", synthesize_answer)
builder.add_edge(START, "relax_query")
builder.add_edge("relax_query", "retrieve")
builder.add_edge("retrieve", "extract_interpretation")
builder.add_edge("extract_interpretation", "check_grounding")
builder.add_edge("check_grounding", "consolidate")
builder.add_edge("consolidate", "synthesize_answer")
builder.add_edge("synthesize_answer", END)

graph = builder.compile(name="verdict")
