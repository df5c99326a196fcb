"""auto: the gate's decision and its branches, with the scripted model over the demo index."""

import json
import re

import pytest

from agent.app import api
from graphs.registry import METHODS
from agent.errors import InputError
from agent.steps.ambiguity_signals import GateThresholds, is_ambiguous
from graphs.auto import AutoContext
from tests.diversify_script import script as script_diva
from tests.scripted import SYNTHESIS_MARKER, passage_number

SYNTH = SYNTHESIS_MARKER


def synthesis(messages) -> str:
    company, unit = passage_number(messages, "Hewlett-Packard"), passage_number(messages, "horsepower")
    return json.dumps({
        "interpretations": [
            {"question": "What is HP, the company?", "answer": "Hewlett-Packard", "citations": [company]},
            {"question": "What is hp, the unit?", "answer": "horsepower", "citations": [unit]},
        ],
        "answer": f"HP is the company Hewlett-Packard [{company}].",
    })


def context(index, **extra):
    return {"model": "scripted", "index_dir": index, **extra}


def test_gate_fires_on_the_detector_or_on_low_focus():
    thresholds = GateThresholds(detector=0.5, focus=0.1)
    assert is_ambiguous({"detector": 0.9, "focus": 0.3, "passages": 10}, thresholds)[0]
    assert is_ambiguous({"detector": 0.1, "focus": 0.05, "passages": 10}, thresholds)[0]
    clear, fired = is_ambiguous({"detector": 0.1, "focus": 0.3, "passages": 10}, thresholds)
    assert not clear and fired == []


def test_an_ambiguous_question_gets_vanillas_answer_and_a_reading_per_missed_sense(scripted, demo_index):
    scripted.rules.append((SYNTH, synthesis))
    events = list(api.stream("What is HP?", "auto", context(demo_index)))
    (decided,) = [e for e in events if e["event"] == "auto_decision"]
    result = events[-1]["result"]
    decision = result["decision"]
    assert decided["ambiguous"] is True and decided["method"] == "synthesis + extractive readings"
    assert decision["ambiguous"] is True and decision["branch"] == "ambiguous"
    assert decision["interpretations_source"] == "synthesis"
    assert {"detector", "focus", "separability", "variance"} <= set(decision["auto"]["signals"])
    assert decision["auto"]["fired"]
    assert result["route"] == ["retrieve_for_gate", "assess_ambiguity", "select_readings", "synthesize_answer",
                               "check_sentences", "compose_answer"]
    assert result["usage"]["llm_calls"] == 1
    (prompt,) = [c["text"] for c in scripted.calls if SYNTH in c["text"]]
    vanilla_prompt = api.ask("What is HP?", "vanilla", context(demo_index)) and scripted.calls[-1]["text"]
    # vanilla's call over the same passages; only which sentences the compression keeps may differ
    # (auto ranks them by its reading selector): with whole passages the two prompts are one
    assert prompt.split("<documents>")[0] == vanilla_prompt.split("<documents>")[0]
    assert re.findall(r"^\[(\d+)\] ", prompt, re.M) == re.findall(r"^\[(\d+)\] ", vanilla_prompt, re.M)
    whole = {"compress_passages": False}
    api.ask("What is HP?", "auto", context(demo_index, **whole))
    auto_whole = [c["text"] for c in scripted.calls if SYNTH in c["text"]][-1]
    assert auto_whole == (api.ask("What is HP?", "vanilla", context(demo_index, **whole)) and scripted.calls[-1]["text"])
    assert {"Hewlett-Packard", "horsepower"} <= {i["answer"] for i in result["interpretations"]}
    readings = result["decision"]["auto"]["assembly"]["readings"]
    assert len(readings) >= 2 and {r["citations"][0].split("-")[1] for r in readings} >= {"hit", "horsepower"}
    ids = [p["id"] for p in result["passages"]]
    for reading in readings:  # each reading is stated with its own passage's marker
        assert f"[{ids.index(reading['citations'][0]) + 1}]" in result["answer"]


def test_senses_no_reading_covers_get_an_extractive_reading(scripted, demo_index):
    scripted.rules.append((SYNTH, json.dumps({"interpretations": [], "answer": ""})))
    result = api.ask("What is HP?", "auto", context(demo_index))
    by_id = {p["id"]: p for p in result["passages"]}
    readings = result["interpretations"]
    assert len(readings) >= 2 and result["decision"]["auto"]["extractive_readings"] == len(readings)
    for number, item in enumerate(readings):
        (cited,) = item["citations"]
        assert item["answer"] in by_id[cited]["text"].replace('""', '"')
        assert f"[{list(by_id).index(cited) + 1}]" in result["answer"]
    assert "do not answer" not in result["answer"]


def test_a_clear_question_is_answered_like_vanilla(scripted, demo_index):
    scripted.rules.append((SYNTH, synthesis))
    result = api.ask("How many watts is one mechanical horsepower?", "auto",
                     context(demo_index, gate="rules", gate_detector=1.1, gate_focus=-1.0))
    assert result["decision"]["ambiguous"] is False and result["decision"]["auto"]["method"] == "vanilla"
    assert result["route"] == ["retrieve_for_gate", "assess_ambiguity", "select_readings", "synthesize_answer",
                               "check_sentences", "compose_answer"]
    # a clear question gets a reading only when the selector is confident about it
    assert all(r["probability"] >= 0.8 for r in result["decision"]["auto"]["assembly"]["readings"])


def test_a_clear_question_whose_answer_fails_every_check_gets_the_passages_best_sentence(scripted, demo_index):
    def off_topic(messages) -> str:  # a sentence its citation does not hold
        return json.dumps({"interpretations": [], "answer": "Horsepower was devised by Hewlett and Packard [1]."})

    scripted.rules.append((SYNTH, off_topic))
    result = api.ask("How many watts is one mechanical horsepower?", "auto",
                     context(demo_index, gate="rules", gate_detector=1.1, gate_focus=-1.0, confident_threshold=1.0))
    assert result["decision"]["ambiguous"] is False and result["decision"]["auto"]["extractive_readings"] == 1
    assert result["decision"]["auto"]["assembly"]["dropped"][0]["reason"] == "citation does not hold it"
    assert "Hewlett" not in result["answer"] and "745.7 watts" in result["answer"]
    assert [c for item in result["interpretations"] for c in item["citations"]] == result["cited"]


def test_the_thorough_budget_runs_diva_as_a_subgraph_when_asked(scripted, demo_index):
    script_diva(scripted, verdicts={"What is HP, the company?": "Yes"})
    result = api.ask("What is HP?", "auto", context(demo_index, budget="thorough", thorough="diva"))
    decision = result["decision"]
    assert decision["auto"]["method"] == "diva" and decision["interpretations_source"] == "diva"
    # the common decision is auto's own choice; DIVA's detail, with the branch it took, is under `diva`
    assert decision["ambiguous"] is True and decision["branch"] == "ambiguous"
    assert decision["diva"]["grade"] == "PartialUseful" and decision["diva"]["branch"] == "passages"
    assert "grade" not in decision["auto"] and decision["abstained"] is False
    assert result["route"][:2] == ["retrieve_for_gate", "assess_ambiguity"]
    assert "synthesize_answer" in result["route"] and "verify_passages" in result["route"]


def test_auto_is_registered_and_checks_its_budget():
    assert next(iter(METHODS)) == "auto"
    with pytest.raises(InputError):
        AutoContext(budget="huge")


def test_the_instant_budget_checks_no_unit_in_any_node():
    """The model's unit check is read from the context by the selection and by the answer's last
    resort alike: on the instant budget the context itself checks none, wherever a node reads it."""
    assert AutoContext(budget="instant").check_units == 0 and AutoContext(budget="instant").guess_options is False
    assert AutoContext(budget="instant", check_units=6).check_units == 0
    assert AutoContext(budget="fast").check_units == 4 and AutoContext(budget="fast", check_units=6).check_units == 6


def test_the_gate_fires_when_the_top_titles_name_several_years_the_question_leaves_open():
    from agent.steps.ambiguity_signals import edition_signal

    top = [{"title": "NorthHack 2021"}, {"title": "NorthHack 2022 theme"}, {"title": "NorthHack 2023"}]
    assert edition_signal("Who won the hackathon?", top) == {"editions": 3}
    assert edition_signal("Who won the hackathon in 2022?", top) == {"editions": 0}  # the question picks one
    assert edition_signal("Who won the hackathon?", [{"title": "Hackathon"}]) == {"editions": 0}
    thresholds = GateThresholds(detector=0.5, focus=0.1)
    ambiguous, fired = is_ambiguous({"detector": 0.1, "focus": 0.3, "passages": 10, "editions": 3}, thresholds)
    assert ambiguous and fired == ["editions 3 >= 2"]
    assert not is_ambiguous({"detector": 0.1, "focus": 0.3, "passages": 10, "editions": 1}, thresholds)[0]
