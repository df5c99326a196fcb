"""The rewrite graph over a scripted multi-turn conversation on a checkpointer thread."""

import json

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from agent.app import api
from agent.errors import InputError
from graphs.rewrite import earlier_turns, format_history

REWRITE_MARKER = "Latest message:"
SYNTHESIS_MARKER = "Passages:"
TURNS = ["What is a segment?", "How many do I have?", "How do I export the 'Churn Risk' segment to Amazon S3?"]
REWRITE = "How many segments do I have?"


def synthesis(messages) -> str:
    """A synthesis reply that echoes the question it was asked, so tests see what went downstream."""
    question = messages[-1].content.split("Question: ", 1)[1].split("\n", 1)[0]
    return json.dumps({"interpretations": [], "answer": f"Answer to: {question}"})


@pytest.fixture
def conversation(scripted, demo_index):
    scripted.rules.append((REWRITE_MARKER, json.dumps({"question": REWRITE})))
    scripted.rules.append((SYNTHESIS_MARKER, synthesis))
    saver = InMemorySaver()

    def say(question, thread="t1", **settings):
        context = {"model": "scripted", "index_dir": demo_index, "downstream": "vanilla", **settings}
        return api.ask(question, "rewrite", context, checkpointer=saver, thread_id=thread)

    say.saver = saver
    return say


def rewrite_calls(scripted):
    return [call for call in scripted.calls if REWRITE_MARKER in call["text"]]


def test_three_turns_rewrite_only_the_follow_up(conversation, scripted):
    first = conversation(TURNS[0])
    assert rewrite_calls(scripted) == []  # nothing earlier to resolve against
    assert first["decision"]["rewrite"]["rewritten"] is False and first["decision"]["rewrite"]["query"] == TURNS[0]

    second = conversation(TURNS[1])
    decision = second["decision"]
    assert decision["rewrite"]["original_query"] == TURNS[1]
    assert decision["rewrite"]["ambiguity"] == "ambiguous" and decision["rewrite"]["ambiguity_source"] == "classifier"
    assert decision["rewrite"]["rewrite"] == REWRITE and decision["rewrite"]["rewritten"] is True and decision["rewrite"]["query"] == REWRITE
    assert decision["rewrite"]["downstream"] == "vanilla" and decision["rewrite"]["downstream_route"] == ["retrieve", "synthesize_answer"]
    assert second["answer"] == f"Answer to: {REWRITE}"  # the rewrite, not the original, went downstream
    assert second["route"] == ["classify_ambiguity", "rewrite_query", "run_downstream", "retrieve", "synthesize_answer"]
    prompt = rewrite_calls(scripted)[0]["text"]
    assert f"User: {TURNS[0]}\nAssistant: Answer to: {TURNS[0]}" in prompt
    assert prompt.rstrip().splitlines()[-3] == f"{REWRITE_MARKER} {TURNS[1]}"

    calls_before = len(scripted.calls)
    third = conversation(TURNS[2])
    assert third["decision"]["rewrite"]["ambiguity"] == "clear"
    assert third["decision"]["rewrite"]["rewritten"] is False and third["decision"]["rewrite"]["rewrite"] is None
    assert third["answer"] == f"Answer to: {TURNS[2]}"  # passed through verbatim
    assert len(rewrite_calls(scripted)) == 1  # no rewrite call for the self-contained turn
    assert len(scripted.calls) == calls_before + 1  # only the downstream answer
    # per-turn outputs restart each turn instead of accumulating along the thread
    assert third["route"] == ["classify_ambiguity", "run_downstream", "retrieve", "synthesize_answer"]
    assert third["usage"]["llm_calls"] == 1 and set(third["usage"]["nodes"]) == {
        "classify_ambiguity", "run_downstream", "retrieve", "synthesize_answer"}

    state = api._graph("rewrite", conversation.saver).get_state({"configurable": {"thread_id": "t1"}}).values
    messages = state["messages"]
    assert [type(m) for m in messages] == [HumanMessage, AIMessage] * 3
    assert [m.content for m in messages[::2]] == TURNS  # the user's words, not the rewrites
    assert messages[3].content == f"Answer to: {REWRITE}"


def test_never_mode_passes_every_turn_through(conversation, scripted):
    conversation(TURNS[0], rewrite_mode="never")
    result = conversation(TURNS[1], rewrite_mode="never")
    assert rewrite_calls(scripted) == []
    assert result["decision"]["rewrite"]["ambiguity"] is None and result["answer"] == f"Answer to: {TURNS[1]}"


def test_always_mode_rewrites_clear_follow_ups_too(conversation, scripted):
    for turn in TURNS:
        result = conversation(turn, rewrite_mode="always")
    assert len(rewrite_calls(scripted)) == 2  # turns 2 and 3; turn 1 has no history
    assert result["decision"]["rewrite"]["rewrite"] == REWRITE  # the scripted rewriter is wrong on purpose
    assert result["decision"]["rewrite"]["ambiguity"] is None


def test_threads_do_not_share_history(conversation, scripted):
    conversation(TURNS[0], thread="a")
    result = conversation(TURNS[1], thread="b")
    assert result["decision"]["rewrite"]["rewrite_skipped"] and rewrite_calls(scripted) == []


def test_failed_rewrite_falls_back_to_the_original_message(scripted, demo_index):
    scripted.rules.append((REWRITE_MARKER, "no JSON here"))
    scripted.rules.append((SYNTHESIS_MARKER, synthesis))
    history = [HumanMessage(TURNS[0]), AIMessage("A segment is a group of profiles.")]
    graph = api._graph("rewrite")
    state = graph.invoke({"question": TURNS[1], "messages": history},
                         context=api.method_context("rewrite", {"model": "scripted", "index_dir": demo_index,
                                                               "downstream": "vanilla"}))
    assert state["decision"]["rewrite_failed"] is True and state["decision"]["rewritten"] is False
    assert state["answer"] == f"Answer to: {TURNS[1]}"
    assert len(rewrite_calls(scripted)) == 2  # malformed, retried once


def test_streaming_relays_the_rewrite_and_the_downstream_events(conversation, scripted, demo_index):
    conversation(TURNS[0])
    events = list(api.stream(TURNS[1], "rewrite", {"model": "scripted", "index_dir": demo_index, "downstream": "vanilla"},
                             checkpointer=conversation.saver, thread_id="t1"))
    stages = [e["node"] for e in events if e["event"] == "stage"]
    assert stages == ["classify_ambiguity", "rewrite_query", "run_downstream", "retrieve", "synthesize_answer"]
    assert {"event": "rewrite", "question": REWRITE} in events
    assert "".join(e["text"] for e in events if e["event"] == "token") == f"Answer to: {REWRITE}"


def test_unknown_downstream_or_mode_is_an_input_error(conversation):
    with pytest.raises(InputError, match="downstream='rewrite' is not one of: auto, vanilla, adf, diva, verdict"):
        conversation(TURNS[0], downstream="rewrite")
    with pytest.raises(InputError, match="rewrite_mode='sometimes' is not one of: never, always, guided"):
        conversation(TURNS[0], rewrite_mode="sometimes")


def test_history_keeps_the_last_five_exchanges_before_the_current_message():
    messages = []
    for turn in range(7):
        messages += [HumanMessage(f"question {turn}"), AIMessage(f"answer {turn}")]
    messages.append(HumanMessage("current"))
    history = earlier_turns(messages, "current", 5)
    assert [m.content for m in history][:2] == ["question 2", "answer 2"]
    assert history[-1].content == "answer 6" and len(history) == 10
    assert earlier_turns(messages, "current", 0) == []
    assert earlier_turns([HumanMessage("current")], "current", 5) == []


def test_history_shortens_long_answers_but_not_the_users_words():
    long_answer = "word " * 400
    text = format_history([HumanMessage("the 'ABC Dataset (created on)' id?"), AIMessage(long_answer)])
    assert text.startswith("User: the 'ABC Dataset (created on)' id?\nAssistant: word")
    assert text.endswith(" ...") and len(text) < 600


def test_the_downstream_method_keeps_its_own_defaults_unless_the_user_set_them(conversation, demo_index):
    """RewriteContext's k defaults to 5; VERDICT/RAC behind rewrite still retrieve their own 20,
    and an explicit k (even one equal to rewrite's default) reaches them."""
    from agent.app.settings import method_context

    front = {"model": "scripted", "index_dir": demo_index, "downstream": "verdict"}
    assert method_context("verdict", method_context("rewrite", front)).k == 20
    assert method_context("verdict", method_context("rewrite", {**front, "k": 5})).k == 5
    assert method_context("verdict", method_context("rewrite", front).replace(k=7)).k == 7
    result = conversation(TURNS[0], rewrite_mode="never", downstream="verdict")
    assert result["decision"]["rewrite"]["downstream_route"][:2] == ["relax_query", "retrieve"]
    assert len(result["passages"]) == 20


def test_the_downstream_method_runs_as_a_nested_subgraph(scripted, demo_index):
    """Run inside `run_downstream`, the method is a subgraph of the rewrite run: streaming with
    subgraphs=True (what Studio does) shows its own steps under the calling node's namespace."""
    scripted.rules.append((SYNTHESIS_MARKER, synthesis))
    graph = api._graph("rewrite", InMemorySaver())
    context = api.method_context("rewrite", {"model": "scripted", "index_dir": demo_index, "rewrite_mode": "never",
                                                  "downstream": "vanilla"})
    inner = [(namespace, list(update)) for namespace, mode, update in graph.stream(
        {"question": TURNS[0]}, {"configurable": {"thread_id": "s"}}, context=context,
        stream_mode=["updates"], subgraphs=True) if namespace]
    assert [nodes for _, nodes in inner] == [["retrieve"], ["synthesize_answer"]]
    assert all(namespace[0].startswith("run_downstream:") for namespace, _ in inner)


def test_auto_the_default_method_answers_downstream_by_default():
    from graphs.rewrite import RewriteContext

    assert RewriteContext().downstream == "auto"
