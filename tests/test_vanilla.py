import json

from langgraph.checkpoint.memory import InMemorySaver

from agent.app import api
from agent.steps.nodes import MODEL_FAILED

SYNTHESIS = json.dumps({
    "interpretations": [
        {"question": "What is HP, the company?", "answer": "Hewlett-Packard", "citations": [2, 3]},
        {"question": "What is hp, the unit?", "answer": "horsepower", "citations": [5, 99]},
    ],
    "answer": "HP can mean the company Hewlett-Packard [2], whereas hp is also horsepower [5].",
})


def context(index, **extra):
    return {"model": "scripted", "index_dir": index, **extra}


def test_vanilla_returns_the_output_contract(scripted, demo_index):
    scripted.rules.append(("Reply with JSON", SYNTHESIS))
    result = api.ask("What is HP?", "vanilla", context(demo_index))
    assert set(result) == {"answer", "interpretations", "passages", "cited", "route", "decision", "usage"}
    assert result["answer"].startswith("HP can mean")
    assert len(result["passages"]) == 5
    ids = [p["id"] for p in result["passages"]]
    first, second = result["interpretations"]
    assert first["citations"] == ids[1:3]
    assert second["citations"] == [ids[4]]  # out-of-range citation 99 dropped
    assert result["route"] == ["retrieve", "synthesize_answer"]
    usage = result["usage"]
    assert usage["llm_calls"] == 1 and usage["retriever_calls"] == 1
    assert usage["prompt_tokens"] > 0 and usage["completion_tokens"] > 0
    assert set(usage["nodes"]) == {"retrieve", "synthesize_answer"}
    assert usage["nodes"]["synthesize_answer"]["llm_calls"] == 1
    assert usage["wall_s"] >= usage["nodes"]["retrieve"]["seconds"]


def test_prompt_carries_the_numbered_passages(scripted, demo_index):
    scripted.rules.append(("Reply with JSON", SYNTHESIS))
    result = api.ask("What is HP?", "vanilla", context(demo_index, k=3))
    prompt = scripted.calls[0]["text"]
    for number, passage in enumerate(result["passages"], 1):
        assert f"[{number}] {passage['title']}" in prompt
    assert "response_format" in json.dumps(scripted.calls[0]["kwargs"])


def test_streaming_emits_stages_then_answer_tokens_then_the_result(scripted, demo_index):
    scripted.rules.append(("Reply with JSON", SYNTHESIS))
    events = list(api.stream("What is HP?", "vanilla", context(demo_index)))
    kinds = [e["event"] for e in events]
    assert kinds[0] == "stage" and kinds[-1] == "result"
    streamed = "".join(e["text"] for e in events if e["event"] == "token")
    assert streamed == events[-1]["result"]["answer"]
    assert kinds.index("token") > kinds.index("stage")


def test_malformed_output_is_retried_once_then_abstains(scripted, demo_index):
    scripted.rules.append(("Reply with JSON", "I think HP is a company."))
    result = api.ask("What is HP?", "vanilla", context(demo_index))
    assert result["answer"] == MODEL_FAILED
    assert result["decision"]["abstained"] is True
    assert result["usage"]["llm_calls"] == 2
    assert result["usage"]["malformed"] == 2 and result["usage"]["abstentions"] == 1


def test_second_attempt_recovers_after_one_malformed_reply(scripted, demo_index):
    scripted.rules.append(("Reply with JSON", ["not json", SYNTHESIS]))
    result = api.ask("What is HP?", "vanilla", context(demo_index))
    assert result["decision"]["abstained"] is False
    assert result["usage"]["retries"] == 1 and len(result["interpretations"]) == 2


def test_graph_runs_with_a_checkpointer_and_state_round_trips(scripted, demo_index):
    scripted.rules.append(("Reply with JSON", SYNTHESIS))
    saver = InMemorySaver()
    result = api.ask("What is HP?", "vanilla", context(demo_index), checkpointer=saver, thread_id="t1")
    graph = api._graph("vanilla", saver)
    snapshot = graph.get_state({"configurable": {"thread_id": "t1"}})
    assert snapshot.values["answer"] == result["answer"]
    assert snapshot.values["messages"][-1].content == result["answer"]


def test_interpretations_repeated_word_for_word_merge_their_citations(scripted, demo_index):
    repeated = {"question": "What is HP, the company?", "answer": "Hewlett-Packard", "citations": [2]}
    reply = {"interpretations": [repeated, {**repeated, "question": "what is HP,  the company?", "citations": [3, 2]},
                                 {"question": "What is hp, the unit?", "answer": "horsepower", "citations": [5]}],
             "answer": "HP is Hewlett-Packard [2], whereas hp is horsepower [5]."}
    scripted.rules.append(("Reply with JSON", json.dumps(reply)))
    result = api.ask("What is HP?", "vanilla", context(demo_index))
    ids = [p["id"] for p in result["passages"]]
    assert [(i["question"], i["citations"]) for i in result["interpretations"]] == [
        ("What is HP, the company?", ids[1:3]), ("What is hp, the unit?", [ids[4]])]


def test_a_looping_answer_is_stopped_at_the_first_repeat(scripted, demo_index):
    loop = "HP is a unit of power [5]. " * 4 + "HP is also hit points [4]. hp is a unit of power."
    scripted.rules.append(("Reply with JSON", json.dumps({"interpretations": [], "answer": loop})))
    result = api.ask("What is HP?", "vanilla", context(demo_index))
    assert result["answer"] == "HP is a unit of power [5]."  # what followed the loop was never read
    assert result["usage"]["loops_stopped"] == 1
