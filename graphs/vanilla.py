"""Vanilla RAG (baseline): retrieve top-k for the question, then one call that lists the
interpretations it finds with short answers and writes a long-form answer citing passages."""

from langgraph.graph import END, START, StateGraph

from agent.context import Context
from agent.steps.nodes import retrieve, synthesize_answer
from agent.state import InputState, OutputState, RAGState, starts_turn

builder = StateGraph(RAGState, context_schema=Context, input_schema=InputState, output_schema=OutputState)
builder.add_node("retrieve", starts_turn(retrieve, ambiguous=None, branch="answer", interpretations_source="synthesis"))
builder.add_node("synthesize_answer", synthesize_answer)
builder.add_edge(START, "retrieve")
builder.add_edge("retrieve", "synthesize_answer")
builder.add_edge("synthesize_answer", END)

graph = builder.compile(name="vanilla")
