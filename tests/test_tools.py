"""agent/app/tools.py: the compact result, the needs_clarification option, errors as data, and
`create_agent` calling the tool with a scripted tool-calling model."""

import json

import pytest
from langchain.agents import create_agent

from agent.app.tools import TOOL_METHODS, AskDocuments, ask_documents, make_ask_tool
from tests.agent_script import ToolCallingScript
from tests.chat_script import TWO_MEANINGS, chat_rules


@pytest.fixture
def tool(scripted, demo_index):
    scripted.rules.extend(chat_rules())
    return make_ask_tool({"model": "scripted", "index_dir": demo_index})


def test_answer_is_compact_with_interpretations_and_cited_sources(tool):
    result = tool.invoke({"question": "What is HP?", "method": "vanilla"})
    assert result["status"] == "answered" and result["answer"] == json.loads(TWO_MEANINGS)["answer"]
    assert [i["question"] for i in result["interpretations"]][:2] == ["What is HP, the company?", "What is hp, the unit?"]
    assert set(result["interpretations"][0]) == {"question", "answer", "citations"}
    cited = {pid for item in result["interpretations"] for pid in item["citations"]}
    assert {s["n"] for s in result["sources"]} == {2, 3, 5}  # [2] and [5] in the answer, 2, 3 and 5 cited
    assert cited <= {s["id"] for s in result["sources"]}
    assert "text" not in json.dumps(result["sources"]) and "usage" not in result


def test_ask_back_returns_the_options_instead_of_answering(tool):
    result = tool.invoke({"question": "What is HP?", "method": "vanilla", "ask_back": True})
    assert result["status"] == "needs_clarification" and result["question"] == "What is HP?"
    assert result["prompt"] == "Which of these did you mean?" and "none of these" in result["reply_with"]
    options = result["options"]
    assert [(o["option"], o["question"], o["answer"]) for o in options] == [
        (1, "What is HP, the company?", "Hewlett-Packard"), (2, "What is hp, the unit?", "horsepower")]
    assert options[1]["label"] == "Horsepower" == options[1]["source"]["title"]  # the sense named by its passage
    assert all(o["answer"].casefold() in o["source"]["quote"].casefold() for o in options)  # its cited sentence


def test_auto_is_the_default_and_offers_every_grounded_sense(tool):
    assert AskDocuments.model_fields["method"].default == "auto"
    result = tool.invoke({"question": "What is HP?", "ask_back": True})
    questions = [o["question"] for o in result["options"]]
    assert result["status"] == "needs_clarification" and 2 <= len(questions) <= 4  # at most four senses
    assert questions[:2] == ["What is HP, the company?", "What is hp, the unit?"]  # the model's grounded readings
    assert "What is HP in games?" not in questions  # cited nothing: dropped


def test_ask_back_still_answers_a_question_with_one_meaning(tool):
    # vanilla: the scripted model reads one meaning (auto would add the car passages' sense)
    result = tool.invoke({"question": "What is a jaguar?", "method": "vanilla", "ask_back": True})
    assert result["status"] == "answered" and len(result["interpretations"]) == 1


def test_method_argument_selects_the_graph_and_bad_input_comes_back_as_an_error(tool):
    assert "rewrite" not in TOOL_METHODS and {"vanilla", "verdict", "adf"} <= set(TOOL_METHODS)
    assert AskDocuments.model_json_schema()["properties"]["method"]["enum"] == list(TOOL_METHODS)
    assert tool.invoke({"question": "What is HP?", "method": "rac"})["status"] == "answered"
    assert tool.invoke({"question": "   "}) == {"status": "error", "error": "question is empty"}


def test_default_tool_is_built_without_clients_and_reports_a_missing_model(monkeypatch):
    monkeypatch.setenv("DISAMBIG_MODEL", "no-such-model")
    result = ask_documents.invoke({"question": "What is HP?"})
    assert result["status"] == "error" and "no-such-model" in result["error"]


def test_create_agent_calls_the_tool_and_answers_from_its_result(tool):
    model = ToolCallingScript(tool_args={"question": "What is HP?", "method": "vanilla"})
    agent = create_agent(model, [tool], system_prompt="Use ask_documents for questions about the documents.")
    state = agent.invoke({"messages": [{"role": "user", "content": "What is HP?"}]})
    assert model.bound_tools == ["ask_documents"]
    tool_message = next(m for m in state["messages"] if m.type == "tool")
    assert json.loads(tool_message.content)["status"] == "answered"
    final = state["messages"][-1].content
    assert final.startswith("HP can mean the company Hewlett-Packard") and "sources: " in final


def test_agent_can_ask_its_user_back(tool):
    model = ToolCallingScript(tool_args={"question": "What is HP?", "method": "vanilla", "ask_back": True})
    agent = create_agent(model, [tool])
    state = agent.invoke({"messages": [{"role": "user", "content": "What is HP?"}]})
    assert state["messages"][-1].content == "Which do you mean? 1) What is HP, the company?; 2) What is hp, the unit?"
