"""RAC, retrieval-augmented clarification (the baseline VERDICT compares against, its paper's
§5.1.4, Eq. 13): relax the question, retrieve the top-20 once, then ONE long-context call
over all of them that lists the interpretations with short answers and citations and writes
the long-form answer. Relevance feedback only: unlike VERDICT, no per-passage execution
feedback and no consolidation."""

from dataclasses import dataclass, field

from langgraph.graph import END, START, StateGraph

from agent.steps.nodes import retrieve, synthesize_answer
from agent.steps.relax import RelaxedRetrievalContext, relax_query
from agent.state import InputState, OutputState, RAGState, starts_turn



@dataclass(kw_only=True)
class RACContext(RelaxedRetrievalContext):
    """RAC reads 20 passages in one call: shown whole they cost 2.5x vanilla's tokens."""

    passage_chars: int = field(
        default=350, metadata={"description": "Characters of each passage shown to the answer call"}
    )


builder = StateGraph(
    RAGState, context_schema=RACContext, input_schema=InputState, output_schema=OutputState
)
builder.add_node("relax_query", starts_turn(relax_query, ambiguous=None, branch="answer", interpretations_source="synthesis"))
builder.add_node("retrieve", retrieve)
builder.add_node("synthesize_answer", synthesize_answer)
builder.add_edge(START, "relax_query")
builder.add_edge("relax_query", "retrieve")
builder.add_edge("retrieve", "synthesize_answer")
builder.add_edge("synthesize_answer", END)

graph = builder.compile(name="rac")
