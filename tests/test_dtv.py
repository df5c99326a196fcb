import json

import pytest

import agent.steps.diversify
import graphs.diva
import graphs.dtv
from agent.app import api
from graphs.dtv import NOTHING_VERIFIED
from tests.diversify_script import IDENTIFY, INFER, READINGS, SYNTHESIZE, VERIFY, calls_with, script

ANSWER_ROUTE = ["infer_pseudo_interpretations", "retrieve_diversified", "verify_passages", "synthesize_answer"]


def context(index, **extra):
    """DtV with batched verification (its readings stay off); tests/test_profiles.py covers the paper mode."""
    return {"model": "scripted", "index_dir": index, "verify_calls": "batched", **extra}


def test_dtv_diversifies_without_the_ambiguity_step_and_verifies_post_hoc(scripted, demo_index):
    script(scripted, verdicts={READINGS[0]: "Yes", READINGS[1]: "Yes"})
    result = api.ask("What is HP?", "dtv", context(demo_index))
    assert result["route"] == ANSWER_ROUTE
    assert not calls_with(scripted, IDENTIFY)
    (infer_prompt,) = calls_with(scripted, INFER)
    assert "Why it is ambiguous" not in infer_prompt.split("Question: What is HP?")[-1]
    decision = result["decision"]
    assert decision["dtv"]["grade"] == "PartialUseful"
    assert [(v["question"], v["verdict"]) for v in decision["dtv"]["verdicts"]] == [
        (READINGS[0], "Yes"), (READINGS[1], "Yes"), (READINGS[2], "No")]
    # retrieval for the pseudo-interpretations only (not the question), then pruned to k
    assert result["usage"]["retriever_calls"] == len(READINGS)
    assert len(result["passages"]) == 5
    # the answer is guided by the verified interpretations only
    (synthesis_prompt,) = calls_with(scripted, SYNTHESIZE)
    assert READINGS[0] in synthesis_prompt and READINGS[1] in synthesis_prompt
    assert READINGS[2] not in synthesis_prompt
    assert result["usage"]["llm_calls"] == 1 + 1 + 1  # every reading verified in one call
    by_id = {p["id"]: f"{p['title']} {p['text']}".casefold() for p in result["passages"]}
    assert all(item["answer"].casefold() in by_id[c] for item in result["interpretations"] for c in item["citations"])


def test_dtv_abstains_when_nothing_is_verified(scripted, demo_index):
    script(scripted, verdicts={})
    result = api.ask("What is HP?", "dtv", context(demo_index))
    assert result["route"] == ["infer_pseudo_interpretations", "retrieve_diversified", "verify_passages", "abstain"]
    assert result["answer"] == NOTHING_VERIFIED and result["decision"]["abstained"] is True
    assert len(result["passages"]) == 5  # what was retrieved stays visible (and scored by the eval)
    assert result["cited"] == [] and result["interpretations"] == []
    assert not calls_with(scripted, SYNTHESIZE)


def test_dtv_retrieves_for_the_question_when_asked(scripted, demo_index):
    script(scripted, verdicts=dict.fromkeys(READINGS, "Yes"))
    result = api.ask("What is HP?", "dtv", context(demo_index, include_question=True, k=3))
    assert result["usage"]["retriever_calls"] == 1 + len(READINGS) and len(result["passages"]) == 3
    assert result["decision"]["dtv"]["grade"] == "Useful"


def test_dtv_empty_interpretations_verify_the_question_itself(scripted, demo_index):
    script(scripted, readings=[], verdicts={"What is HP?": "Yes"})
    result = api.ask("What is HP?", "dtv", context(demo_index))
    assert result["decision"]["dtv"]["verdicts"] == [{"question": "What is HP?", "verdict": "Yes", "parsed": True}]
    assert result["route"] == ANSWER_ROUTE and len(calls_with(scripted, VERIFY)) == 1


def test_dtv_garbage_verdict_counts_as_no(scripted, demo_index):
    script(scripted, garbage="{not json")
    result = api.ask("What is HP?", "dtv", context(demo_index))
    assert result["decision"]["dtv"]["unparsed_verdicts"] == 3 and result["decision"]["dtv"]["grade"] == "Useless"
    assert len(calls_with(scripted, VERIFY)) == 2 and result["route"][-1] == "abstain"


@pytest.mark.parametrize("name", ["infer_pseudo_interpretations", "retrieve_diversified", "verify_passages"])
def test_diva_and_dtv_share_one_implementation_of_each_step(name):
    shared = getattr(agent.steps.diversify, name)
    assert getattr(graphs.diva, name) is shared and getattr(graphs.dtv, name) is shared


def test_cli_ask_method_dtv(capsys, scripted, demo_index):
    from agent.app.cli import main

    script(scripted, verdicts=dict.fromkeys(READINGS, "Yes"))
    code = main(["ask", "What is HP?", "--method", "dtv", "--index", demo_index, "--model", "scripted", "--json"])
    result = json.loads(capsys.readouterr().out)
    assert code == 0 and result["route"] == ANSWER_ROUTE and result["decision"]["dtv"]["grade"] == "Useful"


def test_unverified_readings_do_not_reach_the_reported_interpretations(scripted, demo_index):
    """Only "the company" is verified; the synthesis also lists the unit, which is dropped."""
    script(scripted, verdicts={READINGS[0]: "Yes"})
    result = api.ask("What is HP?", "dtv", context(demo_index))
    assert [item["question"] for item in result["interpretations"]] == [READINGS[0]]
    assert result["interpretations"][0]["answer"] == "Hewlett-Packard"
    (synthesis_prompt,) = calls_with(scripted, SYNTHESIZE)
    assert READINGS[1] not in synthesis_prompt and READINGS[2] not in synthesis_prompt
