"""Streaming chat with human clarification: the conversational product on a checkpointer thread.

read_message -> classify_ambiguity -> [rewrite_query] -> run_method -> (several grounded senses
and `clarify_policy` says asking pays, agent/steps/clarify_policy.py) ask_clarification ->
answer_chosen (the method's cited sentences on the chosen sense, no model call; or with
`focus_answer=model`, synthesize_answer on its passages), deliver_answer for "all of them", or
run_method again on the person's own words when they reply "none of these" and restate what
they meant; otherwise the method's answer ends the turn. The decision to ask or not, and why,
is `decision.clarify`.

A thread waiting at a clarification is answered by `Command(resume=choice)`, or by a new
message (chat UIs such as agent-chat-ui send the reply as a fresh run): read_message then goes
straight to ask_clarification with the message as the reply, never starting a new question.

The thread remembers the product it is about (`product`: named, chosen, or the one the answer
cites), so a follow-up's "it" is that product; where the readings are products, the options are
the products (those the answer states, then those the product gate held back but may answer:
`decision.offered`), and the one chosen is the thread's from then on.

The rewrite steps are the rewrite graph's own nodes (graphs/rewrite.py); the method is any
registered one (`downstream`), run as a subgraph. `ask_clarification` makes no model call:
it re-runs when the thread is resumed with `Command(resume=choice)`.

Streaming: custom events only. Every node sends {"event": "stage"}; answer tokens arrive as
{"event": "token"}. Unless `clarify_policy` is never, the method's tokens are held back until it
is known whether the user will be asked (then they are dropped, and the focused answer streams).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Literal

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.runtime import Runtime
from langgraph.types import interrupt
from typing_extensions import NotRequired, TypedDict

from agent.steps.clarify import (
    MAX_OPTIONS,
    SENSE_MERGE,
    chosen_answer,
    clarification_request,
    clarification_text,
    focus_guidance,
    focus_passages,
    reply_value,
    resolve_choice,
    restated_intent,
    result_options,
)
from agent.steps.clarify_policy import ClarifyPolicy, decide, policy_signals
from agent.retrieval.products import names_product, product_key
from agent.steps.follow_up import product_after
from agent.errors import InputError
from agent.steps.nodes import synthesize_answer
from agent.state import OutputState, message_text, starts_turn
from agent.usage import emit, tracked
from graphs import compose
from graphs.registry import METHODS
from graphs.rewrite import (
    RewriteContext,
    RewriteState,
    classify_ambiguity,
    rewrite_query,
    route_after_classify_ambiguity,
)

ANSWERING_METHODS = tuple(name for name in METHODS if name != "rewrite")
MAX_ASKS = 3  # a reply that names no option is asked again at most this often, then all are answered


@dataclass(kw_only=True)
class ChatContext(RewriteContext):
    """The rewrite settings, the answering method, and when to ask the user to choose."""

    downstream: Literal[ANSWERING_METHODS] = field(  # type: ignore[valid-type]
        default="auto", metadata={"description": "Method that answers each (rewritten) message"},
    )
    budget: Literal["instant", "fast", "thorough"] = field(default="fast", metadata={
        "description": "What auto may spend when it answers: instant (cited sentences, no model call), fast (one "
                       "call) or thorough (see the auto graph)"})
    clarify_policy: ClarifyPolicy = field(
        default="gated",
        metadata={"description": "When to ask which meaning was intended: never (the answer covers every sense), "
                                 "always (whenever two or more grounded senses are found), gated (two or more senses "
                                 "and the gate's ambiguity probability >= clarify_threshold; chosen on the tune splits)"},
    )
    clarify_threshold: float = field(default=0.65, metadata={
        "description": "gated policy: the gate probability from which asking pays (0.65 chosen on the demo tune split, "
                       "bench/clarify_threshold.py: 0 to 0.65 tie, the fewest asks kept)"})
    confirm_threshold: float = field(default=0.65, metadata={
        "description": "gated policy: with one grounded sense, the gate probability from which the chat asks whether "
                       "it is the one meant (1: never; 0.65 chosen on the demo tune split, bench/clarify_threshold.py "
                       "--confirm: 0.45 to 0.65 tie, the fewest asks kept)"})
    max_clarifications: int = field(default=2, metadata={
        "description": "Clarifications asked at most in one turn (a reply of 'none of these' may lead to another)"})
    focus_answer: Literal["cited", "model"] = field(default="cited", metadata={
        "description": "After a choice: the method's cited sentences on the chosen sense, no model call (cited), "
                       "or a new answer written by the model from its passages (model)"})
    sense_merge: float = field(default=SENSE_MERGE, metadata={
        "description": "Cosine between two options' passages from which the later is a sub-topic of the earlier's "
                       "sense and folds into it (1: never; 0.5 chosen on the demo tune split with `disambig eval --simulate-user`)"})
    min_options: int = field(default=2, metadata={"description": "Grounded senses needed before asking"})
    max_options: int = field(default=MAX_OPTIONS, metadata={"description": "Senses offered at most, beside 'all of them'"})


class ChatInput(TypedDict):
    """A turn: `question`, or a new human message at the end of `messages` (Studio's chat)."""

    question: NotRequired[str]
    messages: NotRequired[Annotated[list[AnyMessage], add_messages]]


class ChatState(RewriteState, total=False):
    options: list[dict]  # grounded senses offered to the user; non-empty while waiting for a choice
    reply: str | None  # a new message that answers the waiting clarification
    asks: int  # clarifications asked in this turn
    chosen: dict | None  # the option the user chose


@tracked
def read_message(state: ChatState, runtime: Runtime[ChatContext]) -> dict:
    """Take the turn's question from `question`, or from a trailing human message (chat UIs send
    only messages, often as content blocks). On a thread `question` still holds the last turn's
    text, so it counts only when it differs from the message the previous turn answered. While a
    clarification waits, the new text is the reply to it."""
    messages = state.get("messages") or []
    question = state.get("question")
    original = (state.get("decision") or {}).get("original_query")
    fresh = bool(question) and question != original
    if messages and messages[-1].type == "human" and not fresh:
        text, said = message_text(messages[-1]), []
    elif question:
        text, said = question, [HumanMessage(question)]
    else:
        raise InputError("send a question, or a human message at the end of messages")
    if state.get("options"):  # the turn that asked goes on: keep what it decided
        return {"reply": text, "question": original, "messages": said, "decision": dict(state.get("decision") or {})}
    return {"asks": 0, "chosen": None, **({"question": text} if text != question else {})}


def route_after_read_message(state: ChatState) -> Literal["ask_clarification", "classify_ambiguity"]:
    return "ask_clarification" if state.get("options") and state.get("reply") else "classify_ambiguity"


def settled(product: str | None, options: list[dict], query: str = "") -> bool:
    """The one sense found is of the product the message named or the conversation gave, or the
    query names it (the person's own words after "none of these": "How do I make it quiet? (gzip)"):
    asking whether it is the one meant would ask what the person already said."""
    found = (options[0].get("product") or "") if len(options) == 1 else ""
    return bool(found) and (product_key(found) == product_key(product or "") or names_product(query, found))


def by_products(options: list[dict]) -> bool:
    """Two or more options, each a different product's."""
    keys = [product_key(o.get("product") or "") for o in options]
    return len(options) >= 2 and all(keys) and len(set(keys)) == len(keys)


@tracked
def run_method(state: ChatState, runtime: Runtime[ChatContext]) -> dict:
    """Answer the query with the configured method, relaying its events; offer options when asking."""
    context = runtime.context
    if context.downstream not in ANSWERING_METHODS:
        raise InputError(f"chat cannot answer with {context.downstream!r}; choose one of {', '.join(ANSWERING_METHODS)}")
    messages = list(state.get("messages") or [])
    holding = context.clarify_policy != "never"
    run = compose.run_method(context.downstream, state["query"], messages, context, hold_tokens=holding)
    interpretations = run.result.get("interpretations") or []
    options, passages = result_options(run.result, context.max_options, context, context.sense_merge)
    signals = policy_signals(options if len(options) >= context.min_options else options[:1],
                             run.result.get("decision"))
    turn_product = (state.get("decision") or {}).get("product")
    among = (state.get("decision") or {}).get("product_among")  # "it" after an answer for several products
    if among and by_products(options):
        signals["it_among"] = among
    verdict = decide(context.clarify_policy, signals, asked=state.get("asks") or 0,
                     max_asks=context.max_clarifications, threshold=context.clarify_threshold,
                     confirm_threshold=(1.0 if settled(turn_product, options, state["query"])
                                        else context.confirm_threshold))
    asking = verdict["ask"]
    emit({"event": "interpretations_found", "count": len(interpretations), "grounded": len(options),
          "questions": [item["question"] for item in interpretations], "asking": asking, "reason": verdict["reason"]})
    earlier = (state.get("decision") or {}).get("restated")
    update = compose.method_update(run, state["query"], messages, clarify=verdict,
                                   **({"restated": earlier} if earlier else {}))
    update["options"] = options if asking else []
    update["asks"] = (state.get("asks") or 0) + int(asking)
    if asking:
        update["passages"] = passages  # an offered product's passage, numbered for its answer when chosen
        update["messages"] = [AIMessage(clarification_text(options))]  # the answer comes after the choice
        update["product"] = turn_product  # undecided until the choice
    else:
        run.release()
        update["product"] = product_after(turn_product, run.result)
    return update


def route_after_run_method(state: ChatState) -> Literal["ask_clarification", "__end__"]:
    return "ask_clarification" if state.get("options") else END


@tracked
def ask_clarification(state: ChatState, runtime: Runtime[ChatContext]) -> dict:
    """Pause the thread with the options; the resume value (or a new message) picks one or all.
    No model call here: LangGraph runs this node again from the top when the thread resumes."""
    options = state["options"]
    pending = state.get("reply")  # the new message that answers, when the reply came as one
    error = None
    for _ in range(MAX_ASKS):
        recorded = pending is not None  # a reply sent as a message is in `messages` already
        reply = pending if recorded else interrupt(clarification_request(state["query"], options, error))
        pending = None
        restated = restated_intent(reply)
        if restated == "":
            error = "say in a few words what you meant, after 'none of these'"
            continue
        if restated:  # none of the options: answer the person's own words instead
            said = [] if recorded else [HumanMessage(str(reply_value(reply)))]
            return {"options": [], "reply": None, "messages": said, "query": restated,
                    "decision": {"choice": "none", "restated": restated}}
        try:
            chosen = resolve_choice(reply, options)
        except InputError as problem:
            error = str(problem)
            continue
        said = [] if recorded else [HumanMessage(chosen["label"] if chosen else "All of them")]
        done = {"options": [], "reply": None, "messages": said}
        if chosen is None:
            return {**done, "decision": {"choice": "all"}}
        emit({"event": "chosen", "option": chosen})
        product = {"product": chosen["product"]} if chosen.get("product") else {}  # the thread's from now on
        return {
            **done, "chosen": chosen, **product,
            "decision": {"choice": chosen["option"], "chosen_question": chosen["question"], "chosen_label": chosen["label"],
                         "focus_answer": runtime.context.focus_answer,
                         **({"chosen_product": chosen["product"]} if product else {})},
            "guidance": focus_guidance(chosen),
        }
    return {"options": [], "reply": None, "decision": {"choice": "all", "choice_error": error}}


def route_after_ask_clarification(
    state: ChatState,
) -> Literal["answer_chosen", "synthesize_answer", "deliver_answer", "run_method"]:
    choice = state["decision"].get("choice")
    if choice == "none":
        return "run_method"
    if choice == "all":
        return "deliver_answer"
    return "synthesize_answer" if state["decision"].get("focus_answer") == "model" else "answer_chosen"


@tracked
def answer_chosen(state: ChatState, runtime: Runtime[ChatContext]) -> dict:
    """The chosen sense's part of the method's answer: its cited sentences (or its cited passage
    sentence), streamed at once. No model call: the answer was written before asking."""
    chosen = state["chosen"]
    answer, interpretations = chosen_answer(chosen, state.get("answer") or "", state.get("interpretations") or [],
                                            state.get("passages") or [])
    emit({"event": "token", "text": answer})
    return {"answer": answer, "interpretations": interpretations, "messages": [AIMessage(answer)]}


@tracked
def focus_passages_on_choice(state: ChatState, runtime: Runtime[ChatContext]) -> dict:
    """`focus_answer=model`: the model answers from the chosen sense's passages only."""
    return {"passages": focus_passages(state["chosen"], state.get("passages") or [])}


@tracked
def deliver_answer(state: ChatState, runtime: Runtime[ChatContext]) -> dict:
    """The user wanted every interpretation: the method's held-back answer is the reply."""
    emit({"event": "token", "text": state["answer"]})
    return {"messages": [AIMessage(state["answer"])]}


builder = StateGraph(ChatState, context_schema=ChatContext, input_schema=ChatInput, output_schema=OutputState)
builder.add_node("read_message", starts_turn(read_message))
builder.add_node("classify_ambiguity", classify_ambiguity)
builder.add_node("rewrite_query", rewrite_query)
builder.add_node("run_method", run_method)
builder.add_node("ask_clarification", ask_clarification)
builder.add_node("answer_chosen", answer_chosen)
builder.add_node("focus_passages_on_choice", focus_passages_on_choice)
builder.add_node("synthesize_answer", synthesize_answer)
builder.add_node("deliver_answer", deliver_answer)
builder.add_edge(START, "read_message")
builder.add_conditional_edges("read_message", route_after_read_message)
builder.add_conditional_edges("classify_ambiguity", route_after_classify_ambiguity,
                              {"rewrite_query": "rewrite_query", "run_downstream": "run_method"})
builder.add_edge("rewrite_query", "run_method")
builder.add_conditional_edges("run_method", route_after_run_method)
builder.add_conditional_edges("ask_clarification", route_after_ask_clarification,
                              {"answer_chosen": "answer_chosen", "synthesize_answer": "focus_passages_on_choice",
                               "deliver_answer": "deliver_answer", "run_method": "run_method"})
builder.add_edge("focus_passages_on_choice", "synthesize_answer")
builder.add_edge("answer_chosen", END)
builder.add_edge("synthesize_answer", END)
builder.add_edge("deliver_answer", END)

graph = builder.compile(name="chat")
