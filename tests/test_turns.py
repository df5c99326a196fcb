"""Every registered method on a checkpointer thread: each turn starts with fresh per-turn
outputs (`route`, `usage`, `decision`), so turn 2 reports its own work, not turns 1 + 2."""

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from agent.app import api
from graphs.registry import METHODS, load_method
from agent.state import starts_turn

QUESTION = "What is the boiling point of water at sea level?"


@pytest.mark.parametrize("method", sorted(METHODS))
def test_second_turn_on_a_thread_does_not_accumulate_the_first(method, scripted, demo_index):
    saver = InMemorySaver()
    context = {"model": "scripted", "index_dir": demo_index}
    first = api.ask(QUESTION, method, context, checkpointer=saver, thread_id="t")
    calls_after_first = len(scripted.calls)
    second = api.ask(QUESTION, method, context, checkpointer=saver, thread_id="t")
    assert first["usage"]["llm_calls"] == calls_after_first > 0
    assert second["usage"]["llm_calls"] == len(scripted.calls) - calls_after_first  # turn 2's calls only
    if method != "rewrite":  # same input, same work (rewrite may rewrite the repeat, having history now)
        assert second["route"] == first["route"]
        assert second["usage"]["nodes"].keys() == first["usage"]["nodes"].keys()
        assert all(f["calls"] == first["usage"]["nodes"][n]["calls"] for n, f in second["usage"]["nodes"].items())
        assert second["decision"].keys() == first["decision"].keys()
    assert second["route"].count(second["route"][0]) == 1
    common = second["decision"]
    assert common["ambiguous"] in (True, False, None) and isinstance(common["branch"], str) and common["branch"]
    assert isinstance(common["interpretations_source"], str) and common["interpretations_source"]
    assert isinstance(common["abstained"], bool)
    detail = "auto" if method == "rewrite" else method  # rewrite shows its downstream's (auto's) detail too
    assert isinstance(common[method], dict) and isinstance(common[detail], dict)

def test_every_graph_starts_each_turn_at_a_resetting_node():
    for method in METHODS:
        builder = load_method(method).builder
        (entry,) = [end for start, end in builder.edges if start == "__start__"]
        assert getattr(builder.nodes[entry].runnable.func, "starts_turn", False), method


def test_starts_turn_overwrites_the_per_turn_outputs():
    node = starts_turn(lambda state: {"answer": "x", "route": ["a"]})
    update = node({})
    assert update["answer"] == "x"
    assert [update[key].value for key in ("route", "usage", "decision")] == [["a"], {}, {}]
