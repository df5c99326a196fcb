import json
from types import SimpleNamespace

import numpy as np
import pytest

from agent.app import api
from agent.steps.diversify import AmbiguityTypes, clean_interpretations, diversified_scores, diversify, grade
from agent.retrieval.embeddings import get_embedder
from agent.retrieval.retriever import get_retriever
from graphs.diva import UNSUPPORTED
from tests.diversify_script import (
    CLOSED_BOOK, INFER, READINGS, SYNTHESIZE, VERIFY, calls_with, script,
)

PASSAGE_ROUTE = ["identify_ambiguity_type", "infer_pseudo_interpretations", "retrieve_diversified",
                 "verify_passages", "synthesize_answer"]


def context(index, **extra):
    """DIVA as the product runs it (batched verification, readings); tests/test_profiles.py covers the paper mode."""
    return {"model": "scripted", "index_dir": index, "readings": "on", "verify_calls": "batched", **extra}


def test_useful_passages_take_the_passage_route(scripted, demo_index):
    script(scripted, verdicts=dict.fromkeys(READINGS, "Yes"))
    result = api.ask("What is HP?", "diva", context(demo_index))
    decision = result["decision"]
    assert result["route"] == PASSAGE_ROUTE
    assert decision["diva"]["grade"] == "Useful" and decision["branch"] == "passages"
    assert decision["diva"]["supported_by_corpus"] is True and decision["abstained"] is False
    assert decision["diva"]["ambiguity_types"] == ["AmbSub"]
    assert decision["diva"]["pseudo_interpretations"] == READINGS
    assert [v["question"] for v in decision["diva"]["verdicts"]] == READINGS
    assert all(v["verdict"] == "Yes" and v["parsed"] for v in decision["diva"]["verdicts"])
    ids = [p["id"] for p in result["passages"]]
    assert len(ids) == 5
    unit = next(n for n, p in enumerate(result["passages"]) if "horsepower" in p["text"].casefold())
    assert result["interpretations"][1]["citations"] == [ids[unit]]
    readings = result["decision"]["diva"]["extractive_readings"]
    assert readings and result["answer"].endswith("whereas hp is also horsepower [1].")  # readings, then the prose
    # one call per step: every pseudo-interpretation is verified in one call, one round each
    usage = result["usage"]
    assert usage["llm_calls"] == 4 and usage["llm_rounds"] == 4  # the passages are read twice: verify, synthesis
    assert usage["nodes"]["verify_passages"]["llm_calls"] == 1
    assert usage["retriever_calls"] == 1 + len(READINGS)  # the question and each reading, batched
    (verify_prompt,) = calls_with(scripted, VERIFY)
    assert all(f"{n}. {q}" in verify_prompt for n, q in enumerate(READINGS, 1))


def test_reason_reaches_the_interpretation_call_and_verified_readings_guide_synthesis(scripted, demo_index):
    script(scripted, verdicts={READINGS[0]: "Yes", READINGS[2]: "Yes"})
    api.ask("What is HP?", "diva", context(demo_index))
    (infer_prompt,) = calls_with(scripted, INFER)
    assert "Why it is ambiguous: HP names a company, a unit and a game statistic." in infer_prompt
    (verify_prompt,) = calls_with(scripted, VERIFY)
    assert "[1]" in verify_prompt and len(verify_prompt) < len(calls_with(scripted, SYNTHESIZE)[0])  # leads only
    (synthesis_prompt,) = calls_with(scripted, SYNTHESIZE)
    guidance = synthesis_prompt.split("the documents suggest these readings:")[1]
    assert f"- {READINGS[0]}" in guidance and f"- {READINGS[2]}" in guidance and READINGS[1] not in guidance
    assert "Report these readings only" not in synthesis_prompt  # that is DtV's filter, not DIVA's


def test_partially_useful_passages_still_answer_from_the_passages(scripted, demo_index):
    script(scripted, verdicts={READINGS[0]: "Yes", READINGS[1]: "yes"})
    result = api.ask("What is HP?", "diva", context(demo_index))
    assert result["decision"]["diva"]["grade"] == "PartialUseful"
    assert [v["verdict"] for v in result["decision"]["diva"]["verdicts"]] == ["Yes", "Yes", "No"]
    assert result["route"] == PASSAGE_ROUTE
    assert not calls_with(scripted, CLOSED_BOOK)


def test_useless_passages_answer_closed_book_without_citations(scripted, demo_index):
    script(scripted, verdicts={})
    events = list(api.stream("What is HP?", "diva", context(demo_index)))
    result = events[-1]["result"]
    assert result["decision"]["diva"]["grade"] == "Useless"
    assert result["route"][-1] == "answer_closed_book" and "synthesize_answer" not in result["route"]
    assert result["decision"]["diva"]["supported_by_corpus"] is False and result["decision"]["branch"] == "closed_book"
    assert result["answer"] == f"{UNSUPPORTED} HP usually means the computer maker Hewlett-Packard."
    assert len(result["passages"]) == 5 and result["cited"] == []  # retrieved, judged Useless, not cited
    # the repeated interpretation is merged; nothing cites a passage, so none is kept as grounded
    assert result["interpretations"] == []
    assert result["decision"]["diva"]["ungrounded_readings"] == [
        {"question": "What is HP, the company?", "answer": "a computer maker", "citations": []}]
    assert result["usage"]["dropped_interpretations"] == 1
    streamed = "".join(e["text"] for e in events if e["event"] == "token")
    assert streamed == result["answer"]
    (closed_prompt,) = calls_with(scripted, CLOSED_BOOK)
    assert "[1]" not in closed_prompt  # no passages shown to the closed-book call


def test_adaptive_generation_off_keeps_useless_passages(scripted, demo_index):
    script(scripted, verdicts={})
    result = api.ask("What is HP?", "diva", context(demo_index, adaptive_generation=False))
    assert result["decision"]["diva"]["grade"] == "Useless" and result["route"] == PASSAGE_ROUTE


def test_empty_pseudo_interpretations_fall_back_to_the_question(scripted, demo_index):
    script(scripted, readings=[], verdicts={"What is HP?": "Yes"})
    result = api.ask("What is HP?", "diva", context(demo_index))
    decision = result["decision"]
    assert decision["diva"]["pseudo_interpretations"] == [] and decision["diva"]["interpretations_fallback"] is True
    assert decision["diva"]["verdicts"] == [{"question": "What is HP?", "verdict": "Yes", "parsed": True}]
    assert decision["diva"]["grade"] == "Useful"
    assert result["usage"]["retriever_calls"] == 1  # the question once, not twice
    assert len(result["passages"]) == 5


def test_garbage_verdict_is_retried_once_then_counts_as_no(scripted, demo_index):
    script(scripted, garbage="Perhaps, it depends.")
    result = api.ask("What is HP?", "diva", context(demo_index))
    verdicts = result["decision"]["diva"]["verdicts"]
    assert verdicts == [{"question": q, "verdict": "No", "parsed": False} for q in READINGS]
    assert result["decision"]["diva"]["unparsed_verdicts"] == 3 and result["decision"]["diva"]["grade"] == "Useless"
    assert len(calls_with(scripted, VERIFY)) == 2  # one retry, no more
    verify_usage = result["usage"]["nodes"]["verify_passages"]
    assert verify_usage["malformed"] == 2 and verify_usage["llm_calls"] == 2 and verify_usage["llm_rounds"] == 2


def test_failed_ambiguity_call_still_infers_interpretations(scripted, demo_index):
    script(scripted, identify="no idea", verdicts=dict.fromkeys(READINGS, "Yes"))
    result = api.ask("What is HP?", "diva", context(demo_index))
    assert result["decision"]["diva"]["ambiguity_types"] == [] and result["decision"]["diva"]["ambiguity_reason"] == ""
    (infer_prompt,) = calls_with(scripted, INFER)
    assert "Why it is ambiguous" not in infer_prompt.split("---")[-1].split("Question: What is HP?")[-1]
    assert result["decision"]["diva"]["grade"] == "Useful"


def test_cap_limits_interpretations_and_verified_questions(scripted, demo_index):
    many = [f"What is HP in sense {n}?" for n in range(7)] + ["what is hp in sense 0?"]
    script(scripted, readings=many, verdicts={})
    result = api.ask("What is HP?", "diva", context(demo_index, max_interpretations=3))
    assert result["decision"]["diva"]["pseudo_interpretations"] == many[:3]
    (verify_prompt,) = calls_with(scripted, VERIFY)
    assert "3. What is HP in sense 2?" in verify_prompt and "sense 3" not in verify_prompt


def test_retrieved_scores_are_mean_cosine_to_the_interpretations(scripted, demo_index):
    script(scripted, verdicts=dict.fromkeys(READINGS, "Yes"))
    result = api.ask("What is HP?", "diva", context(demo_index, retrieval_mode="dense"))
    embedder = get_embedder("minilm")
    readings = embedder.embed(READINGS)
    passages = result["passages"]
    stored = get_retriever(api.method_context("diva", context(demo_index))).store.get([p["id"] for p in passages])
    texts = [f"{stored[p['id']]['title']}: {stored[p['id']]['text']}" for p in passages]
    expected = (embedder.embed(texts) @ readings.T).mean(axis=1)
    assert np.allclose([p["score"] for p in passages], expected, atol=1e-4)
    assert [p["score"] for p in passages] == sorted((p["score"] for p in passages), reverse=True)


def test_diversified_scores_on_fixed_vectors():
    passages = np.array([[1.0, 0.0, 0.0], [0.0, 2.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    readings = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    scores = diversified_scores(passages, readings)
    # a passage relevant to both readings beats one relevant to a single reading; unnormalized input is normalized
    assert np.allclose(scores, [0.5, 0.5, np.sqrt(0.5), 0.0])


class StubRetriever:
    """Rankings and vectors fixed by hand, so the union and pruning can be checked exactly."""

    vectors = {"q": [1, 1, 0], "r1": [1, 0, 0], "r2": [0, 1, 0],
               "a": [1, 0, 0], "b": [0, 1, 0], "c": [1, 1, 0], "d": [0, 0, 1]}
    rankings = {"q": ["d", "c"], "r1": ["a", "c"], "r2": ["b", "d"]}

    def __init__(self):
        self.queries = []
        self.store = SimpleNamespace(collection=SimpleNamespace(get=self._get))

    def _get(self, ids, include):
        return {"ids": ids, "embeddings": [self.vectors[i] for i in ids]}

    def search_batch(self, queries, mode, k):
        self.queries.append(list(queries))
        return [[{"id": i, "title": i, "text": i, "score": 1.0} for i in self.rankings[q][:k]] for q in queries]

    def embed_queries(self, texts):
        return np.array([self.vectors[t] for t in texts], dtype=float)


def test_diversify_unions_candidates_and_keeps_the_best_by_mean_cosine():
    retriever = StubRetriever()
    kept, candidates = diversify(retriever, "q", ["r1", "r2"], mode="dense", candidate_k=2, k=2)
    assert retriever.queries == [["q", "r1", "r2"]]  # one batched call
    assert candidates == 4
    assert [p["id"] for p in kept] == ["c", "a"]  # c covers both readings; a, b tie and a came first
    assert kept[0]["score"] == pytest.approx(np.sqrt(0.5))
    without_question, count = diversify(StubRetriever(), "q", ["r1", "r2"], mode="dense", candidate_k=1, k=5,
                                        include_question=False)
    assert count == 2 and [p["id"] for p in without_question] == ["a", "b"]


@pytest.mark.parametrize("verdicts, expected", [
    (["Yes", "Yes"], "Useful"), (["Yes", "No"], "PartialUseful"), (["No", "No"], "Useless"), ([], "Useless"),
])
def test_grade(verdicts, expected):
    assert grade([{"question": str(n), "verdict": v, "parsed": True} for n, v in enumerate(verdicts)]) == expected


def test_ambiguity_labels_are_normalized_and_interpretations_cleaned():
    parsed = AmbiguityTypes.model_validate({"reason": "r", "types": ["[AmbTime]", "ambloc", "N/A", "Other"]})
    assert parsed.types == ["AmbTime", "AmbLoc", "none"]
    assert clean_interpretations(["  A  b?", "a B?", "", "C?"], 5) == ["A b?", "C?"]
    assert clean_interpretations(["A?", "B?", "C?"], 2) == ["A?", "B?"]
    assert clean_interpretations(["What is HP?", "What is HP, the company?"], 5, "what is  HP?") == [
        "What is HP, the company?"]
    assert clean_interpretations(["What is HP?"], 5, "What is HP?") == ["What is HP?"]


def test_cli_ask_method_diva(capsys, scripted, demo_index):
    from agent.app.cli import main

    script(scripted, verdicts=dict.fromkeys(READINGS, "Yes"))
    code = main(["ask", "What is HP?", "--method", "diva", "--index", demo_index, "--model", "scripted", "--json"])
    result = json.loads(capsys.readouterr().out)
    assert code == 0 and result["decision"]["diva"]["grade"] == "Useful" and result["route"] == PASSAGE_ROUTE


def test_interpretations_come_from_the_synthesis_and_are_not_limited_to_verified_ones(scripted, demo_index):
    script(scripted, verdicts={READINGS[0]: "Yes"})  # the unit was not verified, but a passage answers it
    result = api.ask("What is HP?", "diva", context(demo_index))
    assert result["decision"]["diva"]["grade"] == "PartialUseful" and result["route"] == PASSAGE_ROUTE
    synthesized = result["interpretations"][:2]
    assert [(i["question"], i["answer"]) for i in synthesized] == [
        ("What is HP, the company?", "Hewlett-Packard"), ("What is hp, the unit?", "horsepower")]
    assert all(i["citations"] for i in synthesized)
    # then the extractive readings of passages neither synthesized reading cites
    readings = result["interpretations"][2:]
    assert 0 < len(readings) <= result["decision"]["diva"]["extractive_readings"]
    assert not {c for i in synthesized for c in i["citations"]} & {c for i in readings for c in i["citations"]}
    assert "Hewlett-Packard [" in result["answer"] and "horsepower [" in result["answer"].casefold()


def test_readings_stream_before_the_synthesis_call_and_stand_in_the_answer(scripted, demo_index):
    script(scripted, verdicts=dict.fromkeys(READINGS, "Yes"))
    events, calls_when_shown = [], None
    for event in api.stream("What is HP?", "diva", context(demo_index)):
        events.append(event)
        if event["event"] == "readings":
            calls_when_shown = len(calls_with(scripted, SYNTHESIZE))
    (shown,) = [e for e in events if e["event"] == "readings"]
    assert calls_when_shown == 0 and len(shown["readings"]) >= 2  # on screen before the synthesis call
    result = events[-1]["result"]
    texts = [r["text"] for r in shown["readings"]]
    assert result["answer"].startswith(" ".join(texts))  # shown first, kept first
    assert {p["n"]: p["id"] for p in shown["passages"]} == {n: p["id"] for n, p in enumerate(result["passages"], 1)}
    assert result["usage"]["llm_calls"] == 4  # the readings cost no call


def test_with_readings_off_nothing_streams_before_the_synthesis(scripted, demo_index):
    script(scripted, verdicts=dict.fromkeys(READINGS, "Yes"))
    events = list(api.stream("What is HP?", "diva", context(demo_index, readings="off")))
    assert not [e for e in events if e["event"] == "readings"]
    assert events[-1]["result"]["answer"].startswith("HP is the company")


def test_a_failed_synthesis_keeps_the_readings_already_on_screen(scripted, demo_index):
    script(scripted, verdicts=dict.fromkeys(READINGS, "Yes"))
    scripted.rules.insert(0, (SYNTHESIZE, "no JSON here"))  # malformed on the call and its retry
    events = list(api.stream("What is HP?", "diva", context(demo_index)))
    (shown,) = [e for e in events if e["event"] == "readings"]
    result = events[-1]["result"]
    assert result["answer"] == " ".join(r["text"] for r in shown["readings"])  # what was shown stands, alone
    assert result["decision"]["abstained"] is False and len(calls_with(scripted, SYNTHESIZE)) >= 2
    assert [i["citations"] for i in result["interpretations"]] == [r["citations"] for r in shown["readings"]]
