"""Paper mode and product mode: DIVA, DtV and ADF run as published by default (a verification
call per pseudo-interpretation, a sub-question call per cluster and a HyDE call per
sub-question, no extractive readings); the product's departures are settings; `disambig eval
--profile` sets them all; auto runs DIVA as a subgraph with the product's settings."""

import json
import re
from dataclasses import fields

import pytest

from agent.app import api
from agent.context import DEPARTURES, PROFILES, profile_settings
from agent.errors import InputError
from agent.evaluation.runner import EvalConfig, _method_contexts
from graphs.registry import context_schema
from tests.diversify_script import READINGS, VERIFY, VERIFY_ONE, calls_with, script
from tests.scripted import SYNTHESIS_MARKER

SUB_ONE = "Ask the user's question again about that subject only"  # prompts/write_sub_question.md
HYDE_ONE = "You write the passage an encyclopedia would answer a question with"  # write_hypothetical_document.md
SUB_BATCH = "Each passage: "  # prompts/write_sub_questions.md
PRODUCT = {"readings": "on", "verify_calls": "batched", "adf_calls": "batched", "answer_length": "short"}
LONG_FORM = "a long-form answer of three to six sentences"  # prompts/synthesize_long_answer.md
SHORT_FORM = "per interpretation, a sentence that answers it"  # prompts/synthesize_answer.md


def context(index, **extra):
    return {"model": "scripted", "index_dir": index, **extra}


def test_one_table_names_every_departure_with_both_defaults():
    assert set(PROFILES["paper"]) == set(PROFILES["product"]) == set(DEPARTURES)
    for method, names in {"diva": {"readings", "verify_calls", "answer_length"},
                          "dtv": {"readings", "verify_calls", "answer_length"},
                          "adf": {"readings", "adf_calls", "answer_length"}}.items():
        schema = context_schema(method)
        assert profile_settings("paper", schema) == {n: PROFILES["paper"][n] for n in names}
        defaults = schema()
        assert {n: getattr(defaults, n) for n in names} == profile_settings("paper", schema)  # as published
        described = {f.name: f.metadata["description"] for f in fields(schema)}
        assert all("paper: " in described[n] and "product: " in described[n] for n in names)
    auto = context_schema("auto")()
    assert (auto.readings, auto.verify_calls, auto.answer_length) == ("on", "batched", "short")  # the product's
    vanilla = context_schema("vanilla")
    assert vanilla().answer_length == "short" and profile_settings("paper", vanilla) == {"answer_length": "long"}
    with pytest.raises(InputError, match="profile"):
        profile_settings("preprint", context_schema("diva"))


def test_diva_as_published_verifies_each_interpretation_and_states_no_readings(scripted, demo_index):
    script(scripted, verdicts={READINGS[0]: "Yes", READINGS[1]: "Yes"})
    result = api.ask("What is HP?", "diva", context(demo_index))
    detail = result["decision"]["diva"]
    assert detail["verify_calls"] == "per_interpretation" and detail["readings"] == "off"
    assert detail["answer_length"] == "long" and "extractive_readings" not in detail
    asked = calls_with(scripted, VERIFY_ONE)
    assert len(asked) == len(READINGS) and not calls_with(scripted, VERIFY)
    assert sorted(re.search(re.escape(VERIFY_ONE) + r" (.*)", text).group(1) for text in asked) == sorted(READINGS)
    assert [v["verdict"] for v in detail["verdicts"]] == ["Yes", "Yes", "No"] and detail["grade"] == "PartialUseful"
    usage = result["usage"]
    # ambiguity type, pseudo-interpretations, one per reading (side by side: one round), synthesis
    assert usage["llm_calls"] == 2 + len(READINGS) + 1 and usage["llm_rounds"] == 4
    assert usage["nodes"]["verify_passages"]["llm_calls"] == len(READINGS)
    # the answer is the synthesis alone: every interpretation cites a passage the synthesis saw
    assert result["answer"].startswith("HP is the company") and len(result["passages"]) == 5
    (synthesis,) = [call for call in scripted.calls if LONG_FORM in call["text"]]  # the papers' long-form answer
    assert SHORT_FORM not in synthesis["text"]


def synthesis_calls(scripted):
    return [call for call in scripted.calls if SYNTHESIS_MARKER in call["text"]]


@pytest.mark.parametrize("method", ["diva", "dtv", "adf", "vanilla", "auto"])
def test_answer_length_picks_the_long_form_prompt_and_its_token_cap(scripted, demo_index, method):
    script(scripted, verdicts=dict.fromkeys(READINGS, "Yes"))
    paper = method in ("diva", "dtv", "adf")
    api.ask("What is HP?", method, context(demo_index, max_tokens=640, max_answer_tokens=230))
    (default,) = synthesis_calls(scripted)[-1:]
    assert (LONG_FORM in default["text"], SHORT_FORM in default["text"]) == (paper, not paper)
    flipped = "short" if paper else "long"
    api.ask("What is HP?", method, context(demo_index, answer_length=flipped, max_tokens=640, max_answer_tokens=230))
    (other,) = synthesis_calls(scripted)[-1:]
    assert (LONG_FORM in other["text"]) == (flipped == "long")
    caps = {prompt["kwargs"].get("max_tokens") for prompt in (default, other)}
    assert caps == {640, 230}  # the long form may run to max_tokens, the short one stops at max_answer_tokens


def test_diva_with_the_product_settings_is_todays_diva(scripted, demo_index):
    script(scripted, verdicts={READINGS[0]: "Yes", READINGS[1]: "Yes"})
    result = api.ask("What is HP?", "diva", context(demo_index, readings="on", verify_calls="batched"))
    detail = result["decision"]["diva"]
    assert detail["verify_calls"] == "batched" and detail["readings"] == "on"
    assert len(calls_with(scripted, VERIFY)) == 1 and not calls_with(scripted, VERIFY_ONE)
    assert result["usage"]["llm_calls"] == 4 and result["usage"]["llm_rounds"] == 4


def test_the_cli_sets_departures_like_any_setting(capsys, scripted, demo_index):
    from agent.app.cli import main

    script(scripted, verdicts=dict.fromkeys(READINGS, "Yes"))
    base = ["ask", "What is HP?", "--method", "diva", "--index", demo_index, "--model", "scripted", "--json"]
    assert main(base) == 0
    paper = json.loads(capsys.readouterr().out)
    assert main(base + ["--set", "readings=on", "--set", "verify_calls=batched"]) == 0
    product = json.loads(capsys.readouterr().out)
    assert paper["usage"]["llm_calls"] == 2 + len(READINGS) + 1 and product["usage"]["llm_calls"] == 4
    assert (paper["decision"]["diva"]["readings"], product["decision"]["diva"]["readings"]) == ("off", "on")
    assert main(base + ["--set", "verify_calls=twice"]) == 1
    assert "verify_calls='twice' is not one of: per_interpretation, batched" in capsys.readouterr().err


@pytest.mark.parametrize("settings, verify_calls", [({}, len(READINGS)), ({"verify_calls": "batched"}, 1)])
def test_dtv_verifies_per_interpretation_as_published(scripted, demo_index, settings, verify_calls):
    script(scripted, verdicts={READINGS[0]: "Yes"})
    result = api.ask("What is HP?", "dtv", context(demo_index, **settings))
    assert result["usage"]["nodes"]["verify_passages"]["llm_calls"] == verify_calls
    assert result["usage"]["llm_calls"] == 1 + verify_calls + 1  # pseudo-interpretations, verification, synthesis
    assert result["decision"]["dtv"]["readings"] == "off"
    assert [i["question"] for i in result["interpretations"]] == [READINGS[0]]  # verified ones only, either way


def sub_question(messages) -> str:
    title = str(messages[-1].content).rsplit("<documents>\n", 1)[1].split(":", 1)[0]
    return json.dumps({"question": f"What is {title}?"})


def sub_questions(messages) -> str:
    text = str(messages[-1].content).rsplit("<documents>\n", 1)[1]
    groups = re.split(r"^Group \d+:\n", text, flags=re.M)[1:]
    return json.dumps({"sub_questions": [
        {"group": n, "question": f"What is {re.findall(r'^([^:]+):', g, re.M)[0]}?", "passage": "A passage."}
        for n, g in enumerate(groups, 1)]})


def script_adf(model):
    from tests.diversify_script import SYNTHESIS, SYNTHESIZE

    model.rules.extend([(SUB_ONE, sub_question), (SUB_BATCH, sub_questions),
                        (HYDE_ONE, json.dumps({"passage": "HP is a company that makes printers, founded in 1939."})),
                        (SYNTHESIZE, SYNTHESIS)])


def test_adf_as_published_calls_per_cluster_then_per_sub_question(scripted, demo_index):
    script_adf(scripted)
    result = api.ask("What is HP?", "adf", context(demo_index, tau_sep=-1.0))
    detail = result["decision"]["adf"]
    kept = [c for c in detail["clusters"] if c["kept"]]
    subs = detail["sub_questions"]
    assert detail["adf_calls"] == "per_cluster" and detail["readings"] == "off" and detail["hyde_failed"] == 0
    assert result["route"] == ["retrieve", "analyze_coherence", "classify_ambiguity", "decompose",
                               "write_hypothetical_document", "retrieve_dual", "fuse_rankings", "synthesize_answer"]
    nodes = result["usage"]["nodes"]
    assert nodes["decompose"]["llm_calls"] == len(calls_with(scripted, SUB_ONE)) == len(kept) >= 2
    assert nodes["write_hypothetical_document"]["llm_calls"] == len(calls_with(scripted, HYDE_ONE)) == len(subs)
    assert not calls_with(scripted, SUB_BATCH)
    # each HyDE call sees its own sub-question; the dense pathway searched with the passages written
    assert sorted(q for q in subs if any(f"Question: {q}" in text for text in calls_with(scripted, HYDE_ONE))) == \
        sorted(subs)
    assert result["usage"]["llm_calls"] == len(kept) + len(subs) + 1 and result["usage"]["llm_rounds"] == 3
    assert "extractive_readings" not in detail and len(result["passages"]) == 5


def test_adf_with_the_product_settings_writes_everything_in_one_call(scripted, demo_index):
    script_adf(scripted)
    result = api.ask("What is HP?", "adf", context(demo_index, tau_sep=-1.0, adf_calls="batched", readings="on"))
    assert "write_hypothetical_document" not in result["route"]
    assert len(calls_with(scripted, SUB_BATCH)) == 1 and not calls_with(scripted, SUB_ONE + HYDE_ONE)
    assert result["usage"]["llm_calls"] == 2 and result["decision"]["adf"]["readings"] == "on"


def test_eval_profile_sets_the_departures_each_method_has_and_set_wins(tmp_path):
    def contexts(profile, settings=None):
        config = EvalConfig(dataset="jsonl", data="x", methods=["diva", "dtv", "adf", "vanilla"], out=str(tmp_path),
                            profile=profile, settings=settings or {})
        return _method_contexts(config, "scripted")

    paper, product = contexts("paper"), contexts("product")
    for method, names in {"diva": ("readings", "verify_calls", "answer_length"),
                          "dtv": ("readings", "verify_calls", "answer_length"),
                          "adf": ("readings", "adf_calls", "answer_length")}.items():
        assert {n: getattr(paper[method], n) for n in names} == {n: PROFILES["paper"][n] for n in names}
        assert {n: getattr(product[method], n) for n in names} == {n: PRODUCT[n] for n in names}
    assert not hasattr(product["vanilla"], "readings")
    assert (paper["vanilla"].answer_length, product["vanilla"].answer_length) == ("long", "short")  # the baseline too
    mixed = contexts("product", {"readings": "off"})
    assert mixed["diva"].readings == "off" and mixed["diva"].verify_calls == "batched"


def test_auto_runs_diva_as_a_subgraph_seen_in_the_drawing_and_the_stream(scripted, demo_index):
    from agent.app.settings import method_context
    from graphs.auto import graph

    drawn = graph.get_graph(xray=True).nodes
    assert {"diva:identify_ambiguity_type", "diva:verify_passages", "diva:synthesize_answer"} <= set(drawn)
    script(scripted, verdicts={READINGS[0]: "Yes"})
    seen = set()
    for namespace, update in graph.stream({"question": "What is HP?"}, subgraphs=True, stream_mode="updates",
                                          context=method_context("auto", context(demo_index, budget="thorough",
                                                                                         thorough="diva"))):
        if namespace and namespace[0].startswith("diva:"):
            seen.update(update)
    assert {"identify_ambiguity_type", "verify_passages", "synthesize_answer"} <= seen
    # auto's DIVA runs with the product's settings: one verify call
    assert len(calls_with(scripted, VERIFY)) == 1 and not calls_with(scripted, VERIFY_ONE)


def test_rewrite_runs_its_downstream_method_nested_with_its_own_context(scripted, demo_index):
    """The downstream method runs inside `run_downstream`: its nodes stream under that node's
    namespace, and it gets its own context class (DIVA's paper defaults: a call per reading)."""
    from agent.app.settings import method_context
    from graphs.rewrite import graph

    script(scripted, verdicts={READINGS[0]: "Yes"})
    seen: dict[tuple, list] = {}
    for namespace, update in graph.stream({"question": "What is HP?"}, subgraphs=True, stream_mode="updates",
                                          context=method_context("rewrite", context(demo_index, downstream="diva"))):
        seen.setdefault(namespace[:1] and namespace[0].split(":")[0], []).extend(update)
    assert seen[()] == ["classify_ambiguity", "run_downstream"]
    assert seen["run_downstream"] == ["identify_ambiguity_type", "infer_pseudo_interpretations",
                                      "retrieve_diversified", "verify_passages", "synthesize_answer"]
    assert len(calls_with(scripted, VERIFY_ONE)) == len(READINGS)


@pytest.mark.parametrize("name", ["synthesize_answer", "synthesize_long_answer"])
def test_the_answer_prompts_show_the_reply_shape_with_placeholders_only(name):
    """A worked example in the shape ("Tower Bridge ... opened on 30 June 1894") was copied into
    about one reply in twenty by the 1.5B, and vanilla shows the model's answer as it comes."""
    from agent.llm.prompts import load_prompt

    _, template = load_prompt(name)
    shape = template.template[template.template.index("Shape"):]
    values = re.findall(r'":\s*"([^"]*)"', shape)
    assert values and all(value.startswith("<") and value.endswith(">") for value in values)
    assert not re.search(r"\[\s*\d", shape)  # citations are a placeholder too
