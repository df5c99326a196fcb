"""RAC baseline with the scripted model: relax, one top-20 retrieval, one long-context call."""

import json
import re

import httpx
import openai

import graphs.rac
import graphs.verdict
from agent.app import api
from agent.llm.answers import MAX_QUERY_CHARS, clean_query
from agent.steps import nodes, relax
from tests.scripted import SYNTHESIS_MARKER

RELAX = "Write one broader search query"
SYNTHESIZE = SYNTHESIS_MARKER


def numbered(messages) -> dict[int, str]:
    return {int(n): body for n, body in re.findall(r"^\[(\d+)\] (.*)$", str(messages[-1].content), re.MULTILINE)}


def SYNTHESIS(messages) -> str:
    """Two readings whose answers are in the passages they cite (the last one also cites a
    passage number that does not exist)."""
    shown = numbered(messages)
    first = [n for n, body in sorted(shown.items()) if "northwind" in body.casefold()][:2] or [1]
    last = max(shown)
    title = shown[last].split(":", 1)[0]
    return json.dumps({
        "interpretations": [
            {"question": "Who won the Northwind hackathon?", "answer": "Northwind", "citations": first},
            {"question": f"What is {title}?", "answer": title, "citations": [last, last + 1]},
        ],
        "answer": f"The Northwind hackathon is one reading [{first[0]}], whereas {title} is another [{last}].",
    })


def context(index, **extra):
    return {"model": "scripted", "index_dir": index, **extra}


def test_rac_reads_the_top_20_for_the_relaxed_query_in_one_call(scripted, demo_index):
    scripted.rules.extend([(RELAX, "Northwind hackathon"), (SYNTHESIZE, SYNTHESIS)])
    result = api.ask("Who won?", "rac", context(demo_index))
    assert result["route"] == ["relax_query", "retrieve", "synthesize_answer"]
    assert result["decision"]["rac"]["search_query"] == "Northwind hackathon"
    assert len(result["passages"]) == 20
    assert sum(p["id"].startswith("hack-") for p in result["passages"]) >= 5
    usage = result["usage"]
    assert usage["llm_calls"] == 2 and usage["retriever_calls"] == 1
    (prompt,) = [call["text"] for call in scripted.calls if SYNTHESIZE in call["text"]]
    for number, passage in enumerate(result["passages"], 1):
        assert f"[{number}] {passage['title']}" in prompt
    # 20 passages in one call: each is shown up to passage_chars (350) characters, not 900
    block = prompt.split("<documents>")[-1].split("</documents>")[0]
    lines = [line for line in block.splitlines() if line.startswith("[")]
    assert len(lines) == 20
    for line, passage in zip(lines, result["passages"]):
        assert len(line) <= len(f"[20] {passage['title']}: ") + 350
    assert any(len(passage["text"]) > 400 for passage in result["passages"])  # so the cap was needed
    ids = [p["id"] for p in result["passages"]]
    company, unit = result["interpretations"]
    # the passages whose lines in the prompt (compressed to the sentences bearing on the question) name Northwind
    northwind = [p["id"] for line, p in zip(lines, result["passages"]) if "northwind" in line.casefold()][:2]
    assert company["citations"] == northwind and len(northwind) == 2
    assert unit["citations"] == [ids[19]]  # passage 21 does not exist
    assert result["answer"].startswith("The Northwind hackathon")


def test_rac_without_relaxing_makes_one_call_and_searches_the_question(scripted, demo_index):
    scripted.rules.append((SYNTHESIZE, SYNTHESIS))
    result = api.ask("What is HP?", "rac", context(demo_index, relax_query=False, k=12))
    assert result["usage"]["llm_calls"] == 1 and len(result["passages"]) == 12
    assert result["decision"]["rac"]["search_query"] == "What is HP?" and result["decision"]["rac"]["relaxed"] is False
    assert not [call for call in scripted.calls if RELAX in call["text"]]


def test_an_empty_relaxation_falls_back_to_the_question(scripted, demo_index):
    scripted.rules.extend([(RELAX, '  ""  \n'), (SYNTHESIZE, SYNTHESIS)])
    result = api.ask("What is HP?", "rac", context(demo_index))
    assert result["decision"]["rac"]["search_query"] == "What is HP?" and result["usage"]["llm_calls"] == 2


def test_relax_failure_falls_back_to_the_question(scripted, demo_index):
    timeout = openai.APITimeoutError(request=httpx.Request("POST", "http://model/v1/chat/completions"))
    scripted.rules.extend([(RELAX, timeout), (SYNTHESIZE, SYNTHESIS)])
    result = api.ask("What is HP?", "rac", context(demo_index, max_retries=0))
    assert result["decision"]["rac"]["search_query"] == "What is HP?" and result["decision"]["rac"]["relaxed"] is False
    assert result["usage"]["timeouts"] == 1 and result["answer"].startswith("The Northwind hackathon")


def test_rac_and_verdict_share_relax_and_retrieve():
    assert graphs.rac.relax_query is relax.relax_query is graphs.verdict.relax_query
    assert graphs.rac.retrieve is nodes.retrieve is graphs.verdict.retrieve
    assert graphs.rac.synthesize_answer is nodes.synthesize_answer
    assert graphs.rac.builder.context_schema().k == 20


def test_clean_query_strips_labels_quotes_and_bullets():
    assert clean_query('Query: "HP meanings"') == "HP meanings"
    assert clean_query("\n- search query: hp uses\nsecond") == "hp uses"
    assert clean_query("   ") == "" and clean_query(None) == ""
    assert len(clean_query("x" * 1000)) == MAX_QUERY_CHARS


def test_cli_ask_method_rac(capsys, scripted, demo_index):
    from agent.app.cli import main

    scripted.rules.extend([(RELAX, "HP"), (SYNTHESIZE, SYNTHESIS)])
    assert main(["ask", "What is HP?", "--method", "rac", "--model", "scripted", "--index", demo_index]) == 0
    out = capsys.readouterr().out
    assert "Interpretations:" in out and "Who won the Northwind hackathon? -> Northwind" in out
