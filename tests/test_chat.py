"""The chat graph: rewrite front door, a configurable method, interrupt/resume clarification,
token streaming without leaks, threads persisted in SQLite."""

import json

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from agent.app.conversation import ChatSession, chat_context, open_checkpointer
from agent.errors import InputError
from agent.app.settings import method_context
from graphs.chat import builder
from tests.chat_script import FOCUS_MARKER, FOCUSED, ONE_MEANING, REWRITE_MARKER, TWO_MEANINGS, chat_rules

HP_ANSWER = json.loads(TWO_MEANINGS)["answer"]
FOCUSED_ANSWER = json.loads(FOCUSED)["answer"]


@pytest.fixture
def settings(scripted, demo_index):
    scripted.rules.extend(chat_rules())
    # these tests are about the chat flow: vanilla answers (its route and replies are known), and
    # the model writes the answer after a choice; test_auto_is_the_default_downstream covers the
    # default method, tests/test_clarification_policy.py the default answer after a choice
    return {"model": "scripted", "index_dir": demo_index, "downstream": "vanilla", "focus_answer": "model"}


@pytest.fixture
def session(settings):
    return ChatSession(InMemorySaver(), "t1", settings)


def drain(events):
    events = list(events)
    tokens = "".join(e["text"] for e in events if e["event"] == "token")
    return events, tokens


def test_several_grounded_meanings_pause_with_json_options_and_resume_focuses(session, scripted):
    events, tokens = drain(session.send("What is HP?"))
    request = events[-1]
    assert request["event"] == "clarification" and request["question"] == "What is HP?"
    assert json.loads(json.dumps(request)) == request  # JSON-serializable as it crosses the interrupt
    assert [o["question"] for o in request["options"]] == ["What is HP, the company?", "What is hp, the unit?"]
    assert [o["option"] for o in request["options"]] == [1, 2]  # the ungrounded "games" reading is not offered
    assert all(o["citations"] for o in request["options"]) and request["options"][1]["answer"] == "horsepower"
    assert tokens == ""  # the all-meanings answer is held back while we ask
    found = next(e for e in events if e["event"] == "interpretations_found")
    # the method's grounding check already dropped the games reading (it cites nothing)
    assert found["count"] == 2 and found["grounded"] == 2 and found["asking"] is True
    assert [m.type for m in session.messages()] == ["human", "ai"]  # the question asked, no answer yet
    assert session.messages()[1].content.splitlines()[1:] == [f"1. {request['options'][0]['label']}: Hewlett-Packard",
                                                              "2. Horsepower: horsepower", "0. All of them"]
    assert session.pending() == {k: v for k, v in request.items() if k != "event"}

    calls_before = len(scripted.calls)
    events, tokens = drain(session.choose(1))
    result = events[-1]["result"]
    assert len(scripted.calls) == calls_before + 1  # only the focused answer; the asking node made none
    assert FOCUS_MARKER in scripted.calls[-1]["text"] and '"What is HP, the company?"' in scripted.calls[-1]["text"]
    assert result["answer"] == FOCUSED_ANSWER and tokens == FOCUSED_ANSWER
    chosen = request["options"][0]
    assert [p["id"] for p in result["passages"]] == chosen["citations"]  # the focused answer sees its evidence only
    assert result["decision"]["chat"]["choice"] == 1 and result["decision"]["chat"]["chosen_question"] == chosen["question"]
    assert result["route"] == ["read_message", "classify_ambiguity", "run_method", "retrieve", "synthesize_answer",
                               "ask_clarification", "focus_passages_on_choice", "synthesize_answer"]
    assert result["usage"]["llm_calls"] == 2 and "ask_clarification" in result["usage"]["nodes"]
    messages = session.messages()
    assert [type(m) for m in messages] == [HumanMessage, AIMessage, HumanMessage, AIMessage]
    assert messages[2].content == chosen["label"] and messages[3].content == FOCUSED_ANSWER
    assert session.pending() is None


def test_choosing_all_returns_the_methods_answer_without_another_call(session, scripted):
    drain(session.send("What is HP?"))
    calls_before = len(scripted.calls)
    events, tokens = drain(session.choose("all"))
    result = events[-1]["result"]
    assert len(scripted.calls) == calls_before
    assert result["answer"] == HP_ANSWER == tokens and len(result["interpretations"]) == 2
    assert result["decision"]["chat"]["choice"] == "all" and result["route"][-1] == "deliver_answer"
    assert session.messages()[-1].content == HP_ANSWER


def test_a_reply_naming_no_option_is_asked_again(session):
    drain(session.send("What is HP?"))
    events, _ = drain(session.choose(7))
    assert events[-1]["event"] == "clarification" and "option 7 does not exist" in events[-1]["error"]
    events, _ = drain(session.choose("What is hp, the unit?"))  # the option's text works too
    assert events[-1]["result"]["decision"]["chat"]["chosen_question"] == "What is hp, the unit?"


def test_a_new_message_while_a_question_waits_answers_it(session, scripted):
    """Chat UIs send the reply as a new run: it picks the option, it never starts a question that asks again."""
    drain(session.send("What is HP?"))
    calls_before = len(scripted.calls)
    events, tokens = drain(session.send("2"))
    assert events[-1]["event"] == "result" and tokens == FOCUSED_ANSWER
    assert len(scripted.calls) == calls_before + 1 and '"What is hp, the unit?"' in scripted.calls[-1]["text"]
    assert events[-1]["result"]["decision"]["chat"]["original_query"] == "What is HP?"
    assert session.pending() is None
    assert [m.content for m in session.messages()][2:] == ["2", FOCUSED_ANSWER]
    events, tokens = drain(session.send("What is a jaguar?"))  # the next message is a new question again
    # (rewritten from the history, so its passages and citation numbers differ from ONE_MEANING's)
    assert events[-1]["event"] == "result" and tokens == events[-1]["result"]["answer"]
    assert tokens.startswith("A jaguar is a big cat of the Americas [")
    assert events[-1]["result"]["decision"]["chat"]["original_query"] == "What is a jaguar?"


def test_a_new_message_naming_no_option_asks_again_with_the_error(session):
    drain(session.send("What is HP?"))
    events, tokens = drain(session.send("What is a jaguar?"))
    assert events[-1]["event"] == "clarification" and tokens == ""
    assert "'What is a jaguar?' is not one of the options" in events[-1]["error"]
    events, _ = drain(session.choose("all"))
    assert events[-1]["result"]["decision"]["chat"]["choice"] == "all"


@pytest.mark.parametrize("content", ["1", [{"type": "text", "text": "What is HP, the company?"}]])
def test_a_human_message_with_string_or_block_content_answers_the_waiting_question(settings, content):
    """What agent-chat-ui sends: {"messages": [{"type": "human", "content": [{"type": "text", ...}]}]}."""
    graph = builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    context = chat_context(settings)
    graph.invoke({"messages": [{"type": "human", "content": [{"type": "text", "text": "What is HP?"}]}]}, config,
                 context=context)
    state = graph.get_state(config)
    assert state.values["question"] == "What is HP?" and state.interrupts
    graph.invoke({"messages": [{"type": "human", "content": content}]}, config, context=context)
    state = graph.get_state(config)
    assert not state.interrupts and state.values["answer"] == FOCUSED_ANSWER
    assert state.values["decision"]["chosen_question"] == "What is HP, the company?"


def test_clarify_off_streams_the_answer_covering_every_meaning(settings, scripted):
    session = ChatSession(InMemorySaver(), "t1", {**settings, "clarify_policy": "never"})
    events, tokens = drain(session.send("What is HP?"))
    result = events[-1]["result"]
    assert events[-1]["event"] == "result" and result["answer"] == HP_ANSWER == tokens
    assert len(result["interpretations"]) == 2 and result["decision"]["chat"]["clarify"]["ask"] is False
    assert result["decision"]["chat"]["clarify"]["reason"].startswith("clarify_policy=never")
    assert next(e for e in events if e["event"] == "interpretations_found")["asking"] is False
    assert [e["event"] for e in events].index("token") < [e["event"] for e in events].index("interpretations_found")


def test_one_meaning_answers_directly_even_with_clarify_on(session):
    events, tokens = drain(session.send("What is a jaguar?"))
    assert events[-1]["event"] == "result" and tokens == json.loads(ONE_MEANING)["answer"]
    assert session.pending() is None


def test_internal_calls_never_reach_the_token_or_messages_streams(settings):
    graph = builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    context = chat_context({**settings, "clarify_policy": "never"})
    tokens, streamed_messages = [], []
    for turn in ("What is a jaguar?", "What about the car?"):  # the second turn calls the rewriter
        for mode, chunk in graph.stream({"question": turn}, config, context=context,
                                        stream_mode=["custom", "messages", "updates"]):
            if mode == "custom" and chunk["event"] == "token":
                tokens.append(chunk["text"])
            elif mode == "messages":
                streamed_messages.append(chunk[0])
    state = graph.get_state(config).values
    assert state["decision"]["rewrite"] == "What is a jaguar, the car?"  # an internal call did run
    answers = [m.content for m in state["messages"] if m.type == "ai"]
    assert "".join(tokens) == "".join(answers)
    assert all("{" not in str(m.content) for m in streamed_messages)  # no JSON from internal calls
    assert {str(m.content) for m in streamed_messages if m.type == "ai"} <= set(answers)


def test_follow_up_is_rewritten_before_the_method_and_history_is_kept(session, scripted):
    drain(session.send("What is a jaguar?"))
    events, _ = drain(session.send("And the car?"))
    result = events[-1]["result"]
    assert {"event": "rewrite", "question": "What is a jaguar, the car?"} in events
    assert {"event": "ambiguity", "label": "ambiguous", "rewrite": True, "skipped": None, "product": None,
            "named_product": False} in events  # a follow-up about no product's documents
    assert result["decision"]["chat"]["original_query"] == "And the car?"
    assert result["decision"]["chat"]["query"] == "What is a jaguar, the car?"
    rewrite_prompt = next(c["text"] for c in scripted.calls if REWRITE_MARKER in c["text"])
    assert "User: What is a jaguar?" in rewrite_prompt
    assert [m.content for m in session.messages() if m.type == "human"] == ["What is a jaguar?", "And the car?"]


def test_studio_chat_input_of_messages_only(settings):
    graph = builder.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    context = chat_context({**settings, "clarify_policy": "never", "rewrite_mode": "never"})
    graph.invoke({"messages": [HumanMessage("What is a jaguar?")]}, config, context=context)
    state = graph.invoke({"messages": [HumanMessage("What is HP?")]}, config, context=context)
    assert state["decision"]["original_query"] == "What is HP?" and state["answer"] == HP_ANSWER
    assert [m.type for m in state["messages"]] == ["human", "ai", "human", "ai"]
    with pytest.raises(InputError, match="send a question"):
        builder.compile().invoke({"messages": []}, context=context)


def test_downstream_method_is_configurable_and_keeps_its_own_defaults(settings, scripted):
    session = ChatSession(InMemorySaver(), "t1", {**settings, "downstream": "rac", "clarify_policy": "never"})
    events, _ = drain(session.send("What is HP?"))
    result = events[-1]["result"]
    assert result["decision"]["chat"]["downstream_route"] == ["relax_query", "retrieve", "synthesize_answer"]
    assert len(result["passages"]) > 5  # RAC's own k=20 universe, not the chat's k=5
    assert method_context("rac", chat_context({**settings, "k": 8})).k == 8
    with pytest.raises(InputError, match="downstream='nope' is not one of: auto, vanilla, diva"):
        chat_context({**settings, "downstream": "nope"})


def test_thread_survives_a_restart_in_sqlite_with_its_pending_question(settings, tmp_path):
    db = tmp_path / "chat.sqlite"
    with open_checkpointer(db) as saver:
        events, _ = drain(ChatSession(saver, "kept", settings).send("What is HP?"))
        assert events[-1]["event"] == "clarification"
    with open_checkpointer(db) as saver:  # a new process would see the same
        session = ChatSession(saver, "kept", settings)
        assert session.pending()["options"][0]["question"] == "What is HP, the company?"
        events, _ = drain(session.choose(2))
        assert events[-1]["result"]["decision"]["chat"]["choice"] == 2
    with open_checkpointer(db) as saver:
        assert [m.type for m in ChatSession(saver, "kept", settings).messages()] == ["human", "ai", "human", "ai"]
        assert ChatSession(saver, "other", settings).messages() == []
        with pytest.raises(InputError, match="no clarification question"):
            ChatSession(saver, "other", settings).choose(1)


def test_graph_is_exported_without_a_checkpointer():
    from graphs.chat import graph

    assert graph.checkpointer is None and graph.name == "chat"


def test_an_explicit_k_reaches_the_method_even_when_it_equals_the_chat_default(settings, scripted):
    """`--k 5` is the chat's default value, but the user set it: RAC retrieves 5, not its own 20."""
    session = ChatSession(InMemorySaver(), "t1", {**settings, "downstream": "rac", "clarify_policy": "never", "k": 5})
    events, _ = drain(session.send("What is HP?"))
    assert len(events[-1]["result"]["passages"]) == 5
    assert method_context("verdict", chat_context({**settings, "k": 5})).k == 5
    assert method_context("verdict", chat_context(settings)).k == 20


def test_auto_is_the_default_downstream_and_offers_only_grounded_senses(scripted, demo_index):
    scripted.rules.extend(chat_rules())
    settings = {"model": "scripted", "index_dir": demo_index}
    assert chat_context(settings).downstream == "auto"
    session = ChatSession(InMemorySaver(), "t1", settings)
    events, tokens = drain(session.send("What is HP?"))
    request = events[-1]
    assert request["event"] == "clarification" and tokens == ""
    questions = [o["question"] for o in request["options"]]
    assert questions[:2] == ["What is HP, the company?", "What is hp, the unit?"]
    assert "What is HP in games?" not in questions  # cites nothing: not offered
    state = session.graph.get_state(session.config).values
    assert state["decision"]["auto"]["gate"] == "ambiguous"
    passages = {p["id"]: f"{p['title']} {p['text']}".casefold() for p in state["passages"]}
    for option in request["options"]:  # every offered sense is in the passage it cites
        assert option["citations"] and all(option["answer"].casefold()[:20] in passages[c] for c in option["citations"])
