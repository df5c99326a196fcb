"""Iterative RAG with a scripted model: the iteration cap, the progress stop, the reformulation
exits, the accumulating pool, and the progress arithmetic."""

import json

import httpx
import numpy as np
import openai
import pytest
from langgraph.checkpoint.memory import InMemorySaver

from agent.app import api
from agent.context import Context
from agent.retrieval.retriever import passage_vectors
from agent.retrieval.retriever import get_retriever
from agent.llm.answers import clean_query
from graphs.iterative import novelty, progress_score
from tests.scripted import SYNTHESIS_MARKER

REFORMULATE_MARKER = "Searches so far"
SYNTH_MARKER = SYNTHESIS_MARKER
QUERIES = ["horsepower unit of power James Watt", "hit points in role-playing games", "Hewlett-Packard founders"]
ROUND = ["retrieve", "generate", "assess_progress"]
START = ["start_loop"]


def draft(number: int) -> str:
    return json.dumps({
        "interpretations": [{"question": f"Reading {number}?", "answer": f"answer {number}", "citations": [number]}],
        "answer": f"draft {number}",
    })


def context(index, **extra):
    return {"model": "scripted", "index_dir": index, **extra}


def test_loop_stops_at_the_iteration_cap(scripted, demo_index):
    scripted.rules.extend([(REFORMULATE_MARKER, list(QUERIES)), (SYNTH_MARKER, [draft(1), draft(2), draft(3)])])
    result = api.ask("What is HP?", "iterative", context(demo_index, progress_threshold=0.0))
    decision = result["decision"]
    assert result["route"] == START + ROUND + ["reformulate_query"] + ROUND + ["reformulate_query"] + ROUND + [
        "deliver_answer"]
    assert decision["iterative"]["iterations"] == 3 and decision["iterative"]["max_iterations"] == 3
    assert decision["iterative"]["stop_reason"] == "reached 3 iterations"
    assert decision["iterative"]["queries"] == ["What is HP?", *QUERIES[:2]]
    assert [p["iteration"] for p in decision["iterative"]["progress"]] == [1, 2, 3]
    assert result["answer"] == "draft 3"  # the last draft, written from the whole pool
    # "answer 3" is not in the passage it cites: dropped and counted, the draft itself stays
    assert result["interpretations"] == [] and result["usage"]["dropped_interpretations"] == 1
    usage = result["usage"]
    assert usage["llm_calls"] == 5 and usage["retriever_calls"] == 3
    assert usage["nodes"]["generate"]["calls"] == 3 and usage["nodes"]["reformulate_query"]["calls"] == 2


def test_pool_accumulates_and_every_draft_sees_it(scripted, demo_index):
    scripted.rules.extend([(REFORMULATE_MARKER, list(QUERIES)), (SYNTH_MARKER, draft(1))])
    result = api.ask("What is HP?", "iterative", context(demo_index, progress_threshold=0.0))
    retriever = get_retriever(Context(index_dir=demo_index))
    rounds = [retriever.search(q, "hybrid", 5) for q in result["decision"]["iterative"]["queries"]]
    expected = list(dict.fromkeys(p["id"] for found in rounds for p in found))
    assert [p["id"] for p in result["passages"]] == expected and len(expected) > 5
    drafts = [c["text"] for c in scripted.calls if SYNTH_MARKER in c["text"]]
    assert [text.count("\n[") for text in drafts[1:]] == sorted(text.count("\n[") for text in drafts[1:])
    assert f"[{len(expected)}] " in drafts[-1]
    seen_before = set(rounds[0][i]["id"] for i in range(5))
    second = [p["id"] for p in rounds[1]]
    assert result["decision"]["iterative"]["progress"][1]["novelty"] == pytest.approx(
        sum(i not in seen_before for i in second) / len(second), abs=1e-4)


def test_quality_is_the_mean_cosine_of_the_round_to_the_question(scripted, demo_index):
    scripted.rules.append((SYNTH_MARKER, draft(1)))
    result = api.ask("What is HP?", "iterative", context(demo_index, max_iterations=1))
    retriever = get_retriever(Context(index_dir=demo_index))
    found = retriever.search("What is HP?", "hybrid", 5)
    expected = float((passage_vectors(retriever, found) @ retriever.embed_queries(["What is HP?"])[0]).mean())
    first = result["decision"]["iterative"]["progress"][0]
    assert first["quality"] == pytest.approx(expected, abs=1e-4) and first["novelty"] == 1.0
    assert first["progress"] == pytest.approx(0.6 * expected + 0.4, abs=1e-3)


def test_low_progress_stops_the_loop(scripted, demo_index):
    scripted.rules.extend([(REFORMULATE_MARKER, list(QUERIES)), (SYNTH_MARKER, draft(1))])
    result = api.ask("What is HP?", "iterative", context(demo_index, progress_threshold=0.99))
    assert result["route"] == START + ROUND + ["deliver_answer"]
    assert result["decision"]["iterative"]["stop_reason"].startswith("progress ")
    assert result["usage"]["llm_calls"] == 1


def test_max_iterations_one_never_reformulates(scripted, demo_index):
    scripted.rules.extend([(REFORMULATE_MARKER, list(QUERIES)), (SYNTH_MARKER, draft(1))])
    result = api.ask("What is HP?", "iterative", context(demo_index, max_iterations=1, progress_threshold=0.0))
    assert result["route"] == START + ROUND + ["deliver_answer"] and result["decision"]["iterative"]["iterations"] == 1


def test_a_repeated_query_ends_the_loop(scripted, demo_index):
    scripted.rules.extend([(REFORMULATE_MARKER, 'Query: "what is HP"'), (SYNTH_MARKER, draft(1))])
    result = api.ask("What is HP?", "iterative", context(demo_index, progress_threshold=0.0))
    assert result["route"] == START + ROUND + ["reformulate_query", "deliver_answer"]
    assert result["decision"]["iterative"]["stop_reason"] == "the new query repeats an earlier one"


def test_a_failed_reformulation_ends_the_loop(scripted, demo_index):
    timeout = openai.APITimeoutError(request=httpx.Request("POST", "http://scripted/v1/chat/completions"))
    scripted.rules.extend([(REFORMULATE_MARKER, timeout), (SYNTH_MARKER, draft(1))])
    result = api.ask("What is HP?", "iterative", context(demo_index, progress_threshold=0.0, max_retries=0))
    assert result["route"][-2:] == ["reformulate_query", "deliver_answer"]
    assert result["decision"]["iterative"]["stop_reason"] == "the model wrote no new query"
    assert result["answer"] == "draft 1" and result["decision"]["abstained"] is False


def test_a_failed_draft_abstains_without_reformulating(scripted, demo_index):
    scripted.rules.extend([(REFORMULATE_MARKER, list(QUERIES)), (SYNTH_MARKER, "not json")])
    result = api.ask("What is HP?", "iterative", context(demo_index, progress_threshold=0.0))
    assert result["route"] == START + ROUND + ["deliver_answer"]
    assert result["decision"]["abstained"] is True and result["decision"]["iterative"]["stop_reason"] == "no usable draft"


def test_the_bound_lives_in_state(scripted, demo_index):
    scripted.rules.extend([(REFORMULATE_MARKER, list(QUERIES)), (SYNTH_MARKER, draft(1))])
    saver = InMemorySaver()
    api.ask("What is HP?", "iterative", context(demo_index, progress_threshold=0.0, max_iterations=2),
            checkpointer=saver, thread_id="loop")
    values = api._graph("iterative", saver).get_state({"configurable": {"thread_id": "loop"}}).values
    assert values["iteration"] == 2 and values["max_iterations"] == 2
    assert values["messages"][-1].content == "draft 1"


def test_a_threads_next_question_starts_a_fresh_loop(scripted, demo_index):
    scripted.rules.extend([(REFORMULATE_MARKER, list(QUERIES) + ["jaguar car maker", "jaguar cat habitat"]),
                           (SYNTH_MARKER, draft(1))])
    saver = InMemorySaver()
    settings = context(demo_index, progress_threshold=0.0, max_iterations=2)
    api.ask("What is HP?", "iterative", settings, checkpointer=saver, thread_id="chat")
    second = api.ask("What is a Jaguar?", "iterative", settings, checkpointer=saver, thread_id="chat")
    assert second["decision"]["iterative"]["iterations"] == 2
    assert second["decision"]["iterative"]["queries"][0] == "What is a Jaguar?"
    jaguar_ids = {p["id"] for q in second["decision"]["iterative"]["queries"] for p in
                  get_retriever(Context(index_dir=demo_index)).search(q, "hybrid", 5)}
    assert {p["id"] for p in second["passages"]} == jaguar_ids  # no passage left over from the HP turn


def test_cli_ask_method_iterative(capsys, scripted, demo_index):
    from agent.app.cli import main

    scripted.rules.extend([(REFORMULATE_MARKER, list(QUERIES)), (SYNTH_MARKER, draft(1))])
    code = main(["ask", "What is HP?", "--method", "iterative", "--model", "scripted", "--index", demo_index,
                 "--set", "max_iterations=2", "--set", "progress_threshold=0", "--json"])
    result = json.loads(capsys.readouterr().out)
    assert code == 0 and result["decision"]["iterative"]["iterations"] == 2


def test_progress_arithmetic():
    assert progress_score(0.5, 1.0) == pytest.approx(0.7)
    assert progress_score(0.4, 0.0) == pytest.approx(0.24)  # below 0.3: an unproductive round stops
    assert novelty(["a", "b", "c", "d"], ["a", "c"]) == 0.5
    assert novelty([], ["a"]) == 0.0
    assert np.isclose(novelty(["a"], []), 1.0)


def test_clean_query():
    assert clean_query('Search query: "Hewlett-Packard founders"\nsecond line') == "Hewlett-Packard founders"
    assert clean_query("\n\n  horsepower  ") == "horsepower"
    assert clean_query(None) == "" and clean_query("''") == ""
