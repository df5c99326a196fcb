"""VERDICT graph with the scripted model over the demo index: abstain, noise, one and many
clusters, merged citations, grounding, call counts, bounded parallel extraction."""

import json
import re
import threading
import time

import pytest

from agent.app import api
from agent.errors import InputError
from graphs.verdict import NO_SUMMARY, NOTHING_GROUNDED, VERDICTContext

RELAX = "Write one broader search query"
EXTRACT = "Disambiguate from this one passage"
GROUND = "Does the passage alone support"
SYNTHESIZE = "Write the answer from these grounded interpretations"
ROUTE = ["relax_query", "retrieve", "extract_interpretation", "check_grounding", "consolidate", "synthesize_answer"]
ANSWER = json.dumps({"answer": "HP is the company Hewlett-Packard [1], whereas hp is also horsepower [2]."})

# title substring -> (interpretation, answer); the answers occur in every passage with that title
COMPANY = ("What is HP, the technology company?", "Hewlett-Packard")
UNIT = ("What is hp, the unit of power?", "horsepower")
GAMES = ("What does HP mean in role-playing games?", "HP in games")
SENSES = {"Hewlett-Packard": COMPANY, "orsepower": UNIT, "Hit points": GAMES, "Health points": GAMES,
          "HP in Japanese": GAMES, "Regenerating health": GAMES}
NULL = json.dumps({"interpretation": None, "answer": None})


def context(index, **extra):
    return {"model": "scripted", "index_dir": index, **extra}


def title_of(messages) -> str:
    """The passage title in an extraction prompt (the system message's examples have their own)."""
    return re.search(r"Passage:\n<documents>\n([^:\n]*):", str(messages[-1].content)).group(1)


def extractor(senses: dict, answer_for=None):
    """An extraction reply chosen by the passage title; null (abstain) for other passages."""
    def reply(messages):
        title = title_of(messages)
        for key, (question, answer) in senses.items():
            if key in title:
                return json.dumps({"interpretation": question, "answer": answer_for(title) if answer_for else answer})
        return NULL
    return reply


def script(scripted, extract, relax="HP", synthesis=ANSWER, ground=None):
    scripted.rules.extend([(RELAX, relax), (EXTRACT, extract), (SYNTHESIZE, synthesis)])
    if ground is not None:
        scripted.rules.append((GROUND, ground))


def calls_with(scripted, marker) -> list[str]:
    return [call["text"] for call in scripted.calls if marker in call["text"]]


def test_many_clusters_keep_one_medoid_each_with_the_citations_of_all_members(scripted, demo_index):
    script(scripted, extractor(SENSES))
    # grounding off: most horsepower passages never write "hp", and overlap would drop them
    result = api.ask("What is HP?", "verdict", context(demo_index, grounding="off"))
    assert result["route"] == ROUTE
    decision = result["decision"]
    assert decision["verdict"]["search_query"] == "HP" and len(decision["verdict"]["universe"]) == 20
    questions = {item["question"]: item for item in result["interpretations"]}
    assert set(questions) == {COMPANY[0], UNIT[0], GAMES[0]}
    for key in ("Hewlett-Packard", "orsepower", "Hit points"):
        (question, answer) = SENSES[key]
        expected = {p["passage_id"] for p in decision["verdict"]["pairs"] if p.get("question") == question}
        # the merged citations, less any passage that does not contain the answer (grounding check)
        assert len(expected) >= 3 and 3 <= len(set(questions[question]["citations"])) and set(
            questions[question]["citations"]) <= expected
        assert questions[question]["answer"] == answer
    consolidation = decision["verdict"]["consolidation"]
    assert consolidation["clusters"] == 3 and consolidation["noise"] == 0 and not consolidation["all_noise"]
    assert not consolidation["single_cluster_pass"]
    # `passages` stays the retrieved universe; `cited` lists the cited ones, and the related
    # questions number them as in `passages`
    ids = [p["id"] for p in result["passages"]]
    assert ids == decision["verdict"]["universe"] and len(ids) == 20
    cited = list(dict.fromkeys(i for item in result["interpretations"] for i in item["citations"]))
    assert result["cited"][:len(cited)] == cited
    first = result["interpretations"][0]
    numbers = " ".join(f"[{ids.index(c) + 1}]" for c in first["citations"])
    assert decision["verdict"]["related_questions"][0] == f"{first['question']} -> {first['answer']} {numbers}"
    assert result["answer"].startswith("HP is the company")
    assert result["usage"]["llm_calls"] == 1 + 20 + 1
    assert result["usage"]["nodes"]["extract_interpretation"]["llm_calls"] == 20
    (prompt,) = calls_with(scripted, SYNTHESIZE)
    assert COMPANY[0] in prompt and f"[{ids.index(first['citations'][0]) + 1}]" in prompt
    uncited = next(n for n, passage_id in enumerate(ids, 1) if passage_id not in cited)
    assert f"\n[{uncited}] " not in prompt  # the synthesis sees the cited passages only


def test_one_cluster_when_every_passage_gives_the_same_reading(scripted, demo_index):
    variants = iter(["Hewlett-Packard", "Hewlett-Packard, HP", "HP, Hewlett-Packard"])
    lock = threading.Lock()

    def answer_for(title):
        with lock:
            return next(variants, "Hewlett-Packard")

    script(scripted, extractor({"Hewlett-Packard": COMPANY}, answer_for))
    result = api.ask("What is HP?", "verdict", context(demo_index))
    (only,) = result["interpretations"]
    extracted = [p["passage_id"] for p in result["decision"]["verdict"]["pairs"] if p["status"] == "extracted"]
    assert len(extracted) >= 3 and set(only["citations"]) == set(extracted)
    consolidation = result["decision"]["verdict"]["consolidation"]
    # plain HDBSCAN finds only noise here; the single-cluster pass makes it one reading
    assert consolidation["clusters"] == 1 and consolidation["single_cluster_pass"] and consolidation["noise"] == 0


def test_all_noise_keeps_every_pair_with_its_own_citation(scripted, demo_index):
    readings = {"Hewlett-Packard products": COMPANY, "Horsepower": UNIT, "HP in Japanese": GAMES}
    script(scripted, extractor(readings))
    result = api.ask("What is HP?", "verdict", context(demo_index))
    consolidation = result["decision"]["verdict"]["consolidation"]
    assert consolidation["all_noise"] and consolidation["clusters"] == 0 and consolidation["noise"] == 3
    assert len(result["interpretations"]) == 3
    assert all(len(item["citations"]) == 1 for item in result["interpretations"])
    assert len({c for item in result["interpretations"] for c in item["citations"]}) == 3
    assert len(result["passages"]) == 20  # the retrieved universe, not the citations


def test_all_abstain_answers_without_a_synthesis_call(scripted, demo_index):
    script(scripted, NULL)
    result = api.ask("What is HP?", "verdict", context(demo_index))
    assert result["answer"] == NOTHING_GROUNDED and result["decision"]["abstained"] is True
    assert result["interpretations"] == [] and result["cited"] == [] and len(result["passages"]) == 20
    assert result["decision"]["verdict"]["extraction"] == {"extracted": 0, "abstained": 20, "failed": 0, "concurrency": 8}
    assert result["usage"]["llm_calls"] == 1 + 20
    assert not calls_with(scripted, SYNTHESIZE)


def test_rule_breaking_replies_count_as_abstentions(scripted, demo_index):
    def reply(messages):
        title = title_of(messages)
        if "Hewlett-Packard" in title:
            return json.dumps({"interpretation": "What is HP according to the passage?", "answer": "Hewlett-Packard"})
        if "orsepower" in title:
            return json.dumps({"interpretation": "What is hp?", "answer": "The passage does not mention it."})
        return json.dumps({"interpretation": "null", "answer": "N/A"})

    script(scripted, reply)
    result = api.ask("What is HP?", "verdict", context(demo_index))
    reasons = {p.get("reason") for p in result["decision"]["verdict"]["pairs"]}
    assert reasons == {"null", "interpretation refers to the passage", "answer says the passage does not tell"}
    assert result["interpretations"] == []


def test_overlap_grounding_drops_answers_and_passages_that_do_not_match(scripted, demo_index):
    senses = {**SENSES, "Hit points": ("What is HP in games?", "Harry Potter")}
    script(scripted, extractor(senses))
    result = api.ask("What is HP?", "verdict", context(demo_index))
    grounding = result["decision"]["verdict"]["grounding"]
    assert grounding["mode"] == "overlap"
    reasons = {line.split(": ")[0]: line.rsplit("(", 1)[1].rstrip(")") for line in grounding["dropped"]}
    assert reasons["hp-hit-points-01"] == "answer not in passage"  # "Harry Potter" is not in it
    # horsepower passages that never write "hp" do not show that HP can mean horsepower
    assert reasons["hp-horsepower-03"] == "passage does not mention the question"
    assert "hp-horsepower-01" not in reasons
    kept = {item["answer"] for item in result["interpretations"]}
    assert "Harry Potter" not in kept and "horsepower" not in kept  # one passage left: noise
    off = api.ask("What is HP?", "verdict", context(demo_index, grounding="off"))
    assert off["decision"]["verdict"]["grounding"]["dropped"] == []
    assert off["decision"]["verdict"]["grounding"]["kept"] == grounding["kept"] + len(grounding["dropped"])


def test_entailment_grounding_adds_one_call_per_pair_and_drops_the_noes(scripted, demo_index):
    def verdict(messages):
        return json.dumps({"supported": "no" if "horsepower" in str(messages[-1].content).split("Claimed answer:")[1]
                           else "Yes"})

    script(scripted, extractor(SENSES), ground=verdict)
    result = api.ask("What is HP?", "verdict", context(demo_index, grounding="entailment"))
    extracted = result["decision"]["verdict"]["extraction"]["extracted"]
    assert result["usage"]["llm_calls"] == 1 + 20 + extracted + 1
    assert len(calls_with(scripted, GROUND)) == extracted
    assert UNIT[0] not in {item["question"] for item in result["interpretations"]}
    assert {item["question"] for item in result["interpretations"]} == {COMPANY[0], GAMES[0]}


def test_relax_off_searches_with_the_question_and_saves_the_call(scripted, demo_index):
    script(scripted, extractor(SENSES))
    result = api.ask("What is HP?", "verdict", context(demo_index, relax_query=False, k=8))
    assert result["decision"]["verdict"]["search_query"] == "What is HP?" and result["decision"]["verdict"]["relaxed"] is False
    assert not calls_with(scripted, RELAX)
    assert result["usage"]["llm_calls"] == 8 + 1 and len(result["decision"]["verdict"]["universe"]) == 8


def test_relaxed_query_is_cleaned_and_used_for_the_one_retrieval(scripted, demo_index):
    script(scripted, NULL, relax='Query: "Northwind hackathon winners"\nextra words')
    result = api.ask("What is HP?", "verdict", context(demo_index))
    assert result["decision"]["verdict"]["search_query"] == "Northwind hackathon winners"
    assert result["usage"]["retriever_calls"] == 1
    assert sum(i.startswith("hack-") for i in result["decision"]["verdict"]["universe"]) >= 5


@pytest.mark.parametrize("limit", [1, 3])
def test_extraction_runs_in_parallel_bounded_by_concurrency(scripted, demo_index, limit):
    state = {"now": 0, "peak": 0}
    lock = threading.Lock()

    def reply(messages):
        with lock:
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
        time.sleep(0.03)
        with lock:
            state["now"] -= 1
        return NULL

    script(scripted, reply)
    api.ask("What is HP?", "verdict", context(demo_index, concurrency=limit, k=9))
    assert state["peak"] == limit  # 9 passages keep every worker busy at least once


def test_failed_extractions_degrade_to_abstentions(scripted, demo_index):
    def reply(messages):
        return "not json at all" if "orsepower" in title_of(messages) else extractor(SENSES)(messages)

    script(scripted, reply)
    result = api.ask("What is HP?", "verdict", context(demo_index, grounding="off"))
    counts = result["decision"]["verdict"]["extraction"]
    assert counts["failed"] >= 3 and result["usage"]["malformed"] == 2 * counts["failed"]
    assert {item["question"] for item in result["interpretations"]} == {COMPANY[0], GAMES[0]}


def test_synthesis_off_returns_the_related_questions_without_a_call(scripted, demo_index):
    script(scripted, extractor(SENSES))
    result = api.ask("What is HP?", "verdict", context(demo_index, synthesize=False))
    assert result["answer"].startswith("Related questions:\n- ")
    assert all(line in result["answer"] for line in result["decision"]["verdict"]["related_questions"])
    assert result["usage"]["llm_calls"] == 1 + 20 and not calls_with(scripted, SYNTHESIZE)


def test_synthesis_failure_falls_back_to_the_related_questions(scripted, demo_index):
    script(scripted, extractor(SENSES), synthesis="{broken")
    result = api.ask("What is HP?", "verdict", context(demo_index, grounding="off"))
    assert result["answer"].startswith(NO_SUMMARY) and result["decision"]["verdict"]["synthesized"] is False
    assert len(result["interpretations"]) == 3 and result["decision"]["abstained"] is False


def test_question_only_embedding_mode_embeds_the_interpretations_alone(scripted, demo_index, monkeypatch):
    from agent.retrieval.retriever import Retriever

    embedded: list[list[str]] = []
    original = Retriever.embed_queries
    monkeypatch.setattr(Retriever, "embed_queries", lambda self, texts: embedded.append(list(texts)) or original(self, texts))
    script(scripted, extractor(SENSES))
    api.ask("What is HP?", "verdict", context(demo_index, embedding_mode="question", relax_query=False))
    assert COMPANY[0] in embedded[-1] and f"{COMPANY[0]} {COMPANY[1]}" not in embedded[-1]
    api.ask("What is HP?", "verdict", context(demo_index, relax_query=False))
    assert f"{COMPANY[0]} {COMPANY[1]}" in embedded[-1]


def test_streaming_shows_interpretations_related_questions_and_answer_tokens(scripted, demo_index):
    script(scripted, extractor(SENSES))
    events = list(api.stream("What is HP?", "verdict", context(demo_index)))
    kinds = [event["event"] for event in events]
    assert kinds.index("interpretations") < kinds.index("related_questions") < kinds.index("token")
    streamed = "".join(event["text"] for event in events if event["event"] == "token")
    # the final answer is the streamed one plus a sentence for each reading it did not state
    final = events[-1]["result"]
    assert final["answer"].startswith(streamed) and GAMES[1] in final["answer"]
    # the per-passage extraction is not silent: one status line per finished passage
    k = len(final["decision"]["verdict"]["universe"])
    progress = [event["text"] for event in events if event["event"] == "status"]
    assert progress == [f"extraction: {n} of {k} passages done" for n in range(1, k + 1)]


@pytest.mark.parametrize("setting", [{"grounding": "maybe"}, {"cluster_preset": "loose"},
                                     {"embedding_mode": "answer"}, {"concurrency": 0}])
def test_bad_settings_are_input_errors(setting):
    with pytest.raises(InputError):
        VERDICTContext(**setting)


def test_defaults_follow_the_paper():
    defaults = VERDICTContext()
    assert (defaults.k, defaults.relax_query, defaults.cluster_preset) == (20, True, "default")
    assert defaults.embedding_mode == "question+answer" and defaults.grounding == "overlap"


def test_cli_ask_method_verdict(capsys, scripted, demo_index):
    from agent.app.cli import main

    script(scripted, extractor(SENSES))
    assert main(["ask", "What is HP?", "--method", "verdict", "--model", "scripted", "--index", demo_index,
                 "--set", "cluster_preset=conservative", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["decision"]["verdict"]["consolidation"]["preset"] == "conservative"
    assert result["route"] == ROUTE


@pytest.mark.integration
def test_verdict_with_the_real_small_model_makes_the_counted_calls(demo_index):
    """The real 0.5B model through the CLI: k=4 keeps it small (1 relax + 4 extractions + 1)."""
    import os
    import subprocess
    import sys

    asked = subprocess.run(
        [sys.executable, "-m", "agent.app.cli", "ask", "What is HP?", "--method", "verdict", "--index", demo_index,
         "--model", "local-small", "--k", "4", "--json"],
        capture_output=True, text=True, timeout=1800,
        env={**os.environ, "DISAMBIG_LLM_THREADS": "2", "DISAMBIG_TIMEOUT": "600"},
    )
    assert asked.returncode == 0, asked.stderr
    result = json.loads(asked.stdout)
    decision = result["decision"]
    assert result["route"] == ROUTE and len(decision["verdict"]["universe"]) == 4
    extraction = decision["verdict"]["extraction"]
    assert extraction["extracted"] + extraction["abstained"] + extraction["failed"] == 4
    usage = result["usage"]
    if not usage["timeouts"] and not usage["malformed"]:  # retried calls would add to the count
        assert usage["llm_calls"] == 1 + 4 + (1 if result["interpretations"] else 0)
    cited = {c for item in result["interpretations"] for c in item["citations"]}
    assert cited <= set(decision["verdict"]["universe"]) and cited <= set(result["cited"])
    assert [p["id"] for p in result["passages"]] == decision["verdict"]["universe"]
    assert result["answer"].strip()


def test_related_questions_number_only_the_passages_the_grounding_check_kept():
    from langgraph.runtime import Runtime

    from graphs.verdict import VERDICTContext
    from graphs.verdict import synthesize_answer as verdict_synthesis

    passages = [{"id": "a", "title": "Hit points", "text": "Hit points measure a character's health."},
                {"id": "b", "title": "Hewlett-Packard", "text": "Hewlett-Packard is a technology company."},
                {"id": "c", "title": "Horsepower", "text": "Horsepower is a unit of power."}]
    state = {"question": "What is HP?", "passages": passages, "interpretations": [
        # cites a and b, but only b contains the answer: the listing must say [2], not [1] [2]
        {"question": "What is HP, the company?", "answer": "Hewlett-Packard", "citations": ["a", "b"]},
        {"question": "What is HP in games?", "answer": "a medieval sword", "citations": ["a"]},  # not grounded
    ]}
    update = verdict_synthesis(state, Runtime(context=VERDICTContext(synthesize=False)))
    assert update["interpretations"] == [
        {"question": "What is HP, the company?", "answer": "Hewlett-Packard", "citations": ["b"]}]
    assert update["decision"]["related_questions"] == ["What is HP, the company? -> Hewlett-Packard [2]"]
    assert update["answer"] == "Related questions:\n- What is HP, the company? -> Hewlett-Packard [2]"
