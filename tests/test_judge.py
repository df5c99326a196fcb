"""The model as a judge of readings (`judge_readings`): its verdict moves which readings are stated."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage

from agent.app import api
from agent.assembly.judge import mixed, yes_probability
from agent.evaluation.llm_cache import CachedChatModel, ResponseStore, replay_scope
from agent.usage import emit

JUDGE_MARKER = "Does the sentence below give the answer to this question"


def judge_jobs(messages) -> str:
    """Yes to a sentence naming Apple's founders, no to every other."""
    sentence = str(messages[-1].content).split("Sentence (", 1)[1]
    return "yes 0.95" if "Wozniak" in sentence else "no 0.02"


def test_the_judgment_is_read_from_the_first_tokens_alternatives():
    reply = AIMessage("yes", response_metadata={"logprobs": {"content": [{"token": "yes", "logprob": -0.1, "top_logprobs": [
        {"token": "yes", "logprob": -0.1}, {"token": " Yes", "logprob": -3.0}, {"token": "no", "logprob": -2.5}]}]}})
    assert 0.91 < yes_probability(reply) < 0.93  # (e^-0.1 + e^-3) / (e^-0.1 + e^-3 + e^-2.5)
    assert yes_probability(AIMessage("yes")) is None  # no log-probabilities: no judgment
    assert yes_probability(None) is None  # the request failed
    assert mixed(0.5, 0.9, 0.7) > 0.8 and mixed(0.9, 0.02, 0.7) < 0.2  # mostly the judge's, at weight 0.7
    assert abs(mixed(0.3, 0.3, 0.5) - 0.3) < 1e-9


def test_judged_readings_state_what_the_model_says_answers_and_cost_a_request_each(scripted, demo_index):
    scripted.rules.append((JUDGE_MARKER, judge_jobs))
    plain = api.ask("Who founded Apple?", "auto", {"model": "scripted", "index_dir": demo_index, "budget": "instant"})
    assert not [c for c in scripted.calls if JUDGE_MARKER in c["text"]]  # off by default: no judge request
    every = {"model": "scripted", "index_dir": demo_index, "budget": "instant", "judge_readings": 4,
             "judge_min": 0.0, "judge_max": 1.0}
    result = api.ask("Who founded Apple?", "auto", every)
    asked = [c for c in scripted.calls if JUDGE_MARKER in c["text"]]
    assert len(asked) == 4 and all(c["kwargs"].get("logprobs") and c["kwargs"].get("max_tokens") == 1 for c in asked)
    readings = result["decision"]["auto"]["assembly"]["readings"]
    assert readings and all(r["judge"] == 0.95 for r in readings)  # only what the judge said yes to
    assert "Wozniak" in result["answer"] and result["usage"]["llm_calls"] == 4
    assert plain["answer"] != result["answer"]  # the selector alone states another reading beside it


def test_only_the_candidates_the_selector_is_unsure_of_are_judged(scripted, demo_index):
    scripted.rules.append((JUDGE_MARKER, judge_jobs))
    result = api.ask("Who founded Apple?", "auto", {"model": "scripted", "index_dir": demo_index, "budget": "instant",
                                                   "judge_readings": 4})  # judged from 0.1 to 0.6
    readings = result["decision"]["auto"]["assembly"]["readings"]
    sure = [r for r in readings if r["probability"] > 0.6]
    assert sure and all("judge" not in r for r in sure)  # the founders' reading keeps the selector's word
    assert 0 < result["usage"]["llm_calls"] < 4 and "Wozniak" in result["answer"]


def test_a_replayed_judgment_keeps_its_log_probabilities(scripted, tmp_path):
    scripted.rules.append((JUDGE_MARKER, "yes 0.8"))
    store = ResponseStore(tmp_path / "llm.sqlite")
    cached = CachedChatModel(inner=scripted, spec="scripted", store=store)
    ask = [HumanMessage(f"{JUDGE_MARKER}? Sentence (T): S.")]
    with replay_scope():
        live = cached.invoke(ask, logprobs=True, top_logprobs=10, max_tokens=1)
    with replay_scope():
        replayed = cached.invoke(ask, logprobs=True, top_logprobs=10, max_tokens=1)
    assert replayed.response_metadata.get("cached_reply") and store.model_calls == 1
    assert abs(yes_probability(live) - 0.8) < 1e-9 and abs(yes_probability(replayed) - 0.8) < 1e-9
    assert replayed.usage_metadata and "logprobs" not in replayed.usage_metadata


def test_the_thorough_budget_has_the_model_judge_the_readings_of_an_ambiguous_question(scripted, demo_index):
    """The thorough budget's extra calls go to the judge (six candidates, every one judged), not to
    DIVA; the fast budget's one call is unchanged, and an explicit judge_readings wins."""
    scripted.rules.append((JUDGE_MARKER, judge_jobs))
    thorough = api.ask("Who founded Apple?", "auto", {"model": "scripted", "index_dir": demo_index,
                                                      "budget": "thorough"})
    asked = [c for c in scripted.calls if JUDGE_MARKER in c["text"]]
    assert len(asked) == 6 and thorough["decision"]["auto"]["method"] == "synthesis + judged readings"
    readings = thorough["decision"]["auto"]["assembly"]["readings"]
    assert readings and all(r["judge"] == 0.95 for r in readings) and "Wozniak" in thorough["answer"]
    assert thorough["usage"]["llm_calls"] == 7 and "diva" not in thorough["decision"]  # six judgments, one draft
    scripted.calls.clear()
    api.ask("Who founded Apple?", "auto", {"model": "scripted", "index_dir": demo_index})
    assert not [c for c in scripted.calls if JUDGE_MARKER in c["text"]] and len(scripted.calls) == 1
    api.ask("Who founded Apple?", "auto", {"model": "scripted", "index_dir": demo_index, "budget": "thorough",
                                           "judge_readings": 2, "judge_min": 0.0, "judge_max": 1.0})
    assert len([c for c in scripted.calls if JUDGE_MARKER in c["text"]]) == 2
    scripted.calls.clear()  # judge_per_passage 2: the judge may read two sentences of one passage
    api.ask("Who founded Apple?", "auto", {"model": "scripted", "index_dir": demo_index, "budget": "thorough",
                                           "judge_readings": 8, "judge_min": 0.0, "judge_max": 1.0,
                                           "judge_per_passage": 2})
    titles = [c["text"].split("Sentence (", 1)[1].split("):", 1)[0] for c in scripted.calls if JUDGE_MARKER in c["text"]]
    assert len(titles) == 8 and max(titles.count(t) for t in titles) == 2


def test_fast_judge_spends_the_fast_budget_on_judging_and_shows_the_sure_readings_first(
        scripted, demo_index, monkeypatch):
    """fast=judge: an ambiguous question gets no draft; its unsure candidates are judged (one
    1-token request each), the readings the judge cannot change are streamed before the first
    request, and the judged ones are added under them. A clear question still gets the draft."""
    from agent.assembly import nodes

    announced = []  # the readings events, as the node emits them
    monkeypatch.setattr(nodes, "emit", lambda event: announced.append(event) or emit(event))
    shown_when_asked = []

    def say_yes(messages) -> str:
        shown_when_asked.append(len(announced))
        return "yes 0.95"

    scripted.rules.append((JUDGE_MARKER, say_yes))
    settings = {"model": "scripted", "index_dir": demo_index, "fast": "judge"}
    events = list(api.stream("Who founded Apple?", "auto", settings))
    result = next(e["result"] for e in events if e.get("event") == "result")
    shown = [[r["text"] for r in e["readings"]] for e in events if e.get("event") == "readings"]
    assert result["decision"]["auto"]["method"] == "judged readings"
    assert scripted.calls and all(JUDGE_MARKER in c["text"] for c in scripted.calls)  # no draft
    assert result["usage"]["llm_calls"] == len(scripted.calls) <= 6
    assert len(shown) == 2 and shown[1][:len(shown[0])] == shown[0] and len(shown[1]) > len(shown[0])
    assert shown_when_asked and set(shown_when_asked) == {1}  # the sure readings went out before any request
    readings = result["decision"]["auto"]["assembly"]["readings"]
    assert [r for r in readings if "judge" in r] and all(r["probability"] > 0.6 for r in readings if "judge" not in r)
    scripted.calls.clear()
    clear = api.ask("What year was Hewlett-Packard founded?", "auto", settings)
    assert clear["decision"]["ambiguous"] is False and len(scripted.calls) == 1
    assert JUDGE_MARKER not in scripted.calls[0]["text"]  # the draft


def test_a_judge_that_answers_garbage_leaves_the_selectors_word_and_the_answer_stands(scripted, demo_index):
    """No yes or no in the reply (a small model's garbage): no judgment, so an unsure candidate
    keeps the selector's probability and needs the judge's threshold on it alone; the sure
    readings are stated as they were streamed."""
    scripted.rules.append((JUDGE_MARKER, "Apple is a fruit and a company."))
    result = api.ask("Who founded Apple?", "auto", {"model": "scripted", "index_dir": demo_index, "fast": "judge"})
    readings = result["decision"]["auto"]["assembly"]["readings"]
    assert readings and not [r for r in readings if "judge" in r]
    assert all(r["probability"] >= 0.5 for r in readings) and "Wozniak" in result["answer"]
    assert result["usage"]["llm_calls"] >= 1 and not result["decision"].get("abstained")
