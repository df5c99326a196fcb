"""auto: the gate's decision and its branches, with the scripted model over the demo index."""

import json

import pytest

from agent.app import api
from agent.app.methods import METHODS
from agent.errors import InputError
from agent.steps.ambiguity_signals import GateThresholds, is_ambiguous
from agent.steps.readings import (
    SentenceScorer,
    answers_type,
    extra_readings,
    extractive_reading,
    rarity,
    spells_out,
    supported_by_citation,
)
from graphs.auto import AutoContext
from tests.diversify_script import script as script_diva
from tests.scripted import SYNTHESIS_MARKER, passage_number

SYNTH = SYNTHESIS_MARKER


def synthesis(messages) -> str:
    company, unit = passage_number(messages, "Hewlett-Packard"), passage_number(messages, "horsepower")
    return json.dumps({
        "passage_meanings": [],
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


def test_an_extractive_reading_is_the_sentence_carrying_the_rare_words_of_the_question():
    question = "Who is Mrs Potts in Beauty and the Beast?"
    passages = [
        {"id": "a", "title": "Beauty and the Beast (2017 film)",
         "text": '"Beauty and the Beast (2017 film)" and the Beast. The film Beauty and the Beast was a success at the box '
                 'office. Emma Thompson plays Mrs Potts, the castle\'s head housekeeper, in the film.'},
        {"id": "b", "title": "Beast", "text": "The Beast is a character of a French fairy tale, cursed by an enchantress."},
    ]
    weights = rarity(question, passages)
    assert weights["pott"] > weights["beast"]  # in one passage against both
    reading = extractive_reading(question, passages[:1], SentenceScorer(question, passages))
    # not the quoted title, not the opening fragment, not the sentence with only the common words
    assert reading["answer"] == "Emma Thompson plays Mrs Potts, the castle's head housekeeper, in the film"
    assert reading["question"] == "Who is Mrs Potts in Beauty and the Beast (Beauty and the Beast (2017 film))?"
    assert reading["citations"] == ["a"]
    # an acronym of the question spelled out breaks a tie
    group = [{"id": "g", "title": "HP in games", "text": "Japanese role-playing games made HP a familiar number."},
             {"id": "h", "title": "Hit points", "text": "Hit points, abbreviated HP, measure the damage a hero takes."}]
    assert extractive_reading("What is HP?", group, SentenceScorer("What is HP?", group))["answer"].startswith("Hit points")
    # a group that says nothing about Mrs Potts gives no reading
    assert extractive_reading(question, passages[1:], SentenceScorer(question, passages)) is None


def test_readings_go_to_passages_unlike_those_already_stated_first():
    import numpy as np

    vectors = np.array([[1.0, 0.0], [0.98, 0.2], [0.0, 1.0], [0.7, 0.7]])
    text = "The widget was first sold in 1990 by the Acme company of Ohio."
    pool = [{"id": str(i), "title": f"T{i}", "text": text} for i in range(4)]
    # 0 is cited; 1 is a near copy of it, 2 is unlike it: 2 goes first although 1 ranks higher
    added = extra_readings("When was the widget first sold?", pool, vectors, cited={"0"}, limit=2)
    assert [passage["id"] for _, passage in added] == ["2", "3"]
    assert all(set(reading) == {"question", "answer", "citations"} for reading, _ in added)
    # the sentence is the reading, cited to its passage
    assert added[0][0] == {"question": "When was the widget first sold (T2)?", "answer": text.rstrip("."), "citations": ["2"]}


def test_a_sentence_can_match_the_question_by_meaning():
    question = "How big is the river?"
    passage = {"id": "r", "title": "Amazon River", "text": "The Amazon River is about 6,400 kilometres long, from the Andes to the sea."}
    assert extractive_reading(question, [passage], SentenceScorer(question, [passage])) is None  # no word of the question

    def embed(texts):  # an encoder that finds the sentence close to the question
        import numpy as np
        return np.array([[1.0, 0.0] if "big" in t or "long" in t else [0.0, 1.0] for t in texts])

    reading = extractive_reading(question, [passage], SentenceScorer(question, [passage], embed))
    assert reading["answer"].startswith("The Amazon River is about 6,400 kilometres long")


def test_a_sentence_holding_what_the_question_asks_for():
    assert answers_type("When did Florida stop using the electric chair?", "Florida switched to injection in 2000.")
    assert not answers_type("When did Florida stop using the electric chair?", "Florida used the electric chair.")
    assert answers_type("How many medals did Australia win?", "Australia won 58 medals.")
    assert answers_type("Who played Tony in the film?", "Tony was played by Nicholas Lyndhurst.")
    assert not answers_type("Who played Tony Soprano?", "Tony Soprano was a character.")  # only the asked name


def test_a_model_sentence_must_be_held_by_the_passages_it_cites():
    passages = [{"text": "Hit points, abbreviated HP, measure damage."}, {"text": "The HP Way was a management philosophy."}]
    assert not supported_by_citation("The HP Way [1].", passages)
    assert supported_by_citation("The HP Way [2].", passages)
    assert supported_by_citation("HP has several meanings.", passages)  # cites nothing: the model's own


def test_spelled_out_acronyms():
    assert spells_out("What is HP?", "Hewlett-Packard sold the HP 200A.")
    assert spells_out("What is HP?", "Hit points measure damage.")
    assert not spells_out("What is HP?", "Japanese role-playing games made HP a familiar number.")
    assert not spells_out("what is hp?", "Hit points measure damage.")  # no acronym asked about


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
    assert result["route"] == ["retrieve_for_gate", "assess_ambiguity", "answer_each_sense", "synthesize_answer"]
    assert result["usage"]["llm_calls"] == 1
    (prompt,) = [c["text"] for c in scripted.calls if SYNTH in c["text"]]
    vanilla_prompt = api.ask("What is HP?", "vanilla", context(demo_index)) and scripted.calls[-1]["text"]
    assert prompt == vanilla_prompt  # the same call as vanilla: its answer is never lost
    assert {"Hewlett-Packard", "horsepower"} <= {i["answer"] for i in result["interpretations"]}
    assert result["answer"].startswith("HP is the company Hewlett-Packard")
    assert "horsepower" in result["answer"].casefold()  # the reading the prose missed is stated too
    # the games sense, in the passages but in no reading of the model's, is stated first, from its passage
    added = result["interpretations"][2:]
    assert added and added[0]["citations"][0].startswith("hp-hit-points")
    model_cited = {c for i in result["interpretations"][:2] for c in i["citations"]}
    assert not model_cited & {i["citations"][0] for i in added}  # never a passage the model already cited
    assert all(f"[{[p['id'] for p in result['passages']].index(i['citations'][0]) + 1}]" in result["answer"]
               for i in added)


def test_senses_no_reading_covers_get_an_extractive_reading(scripted, demo_index):
    scripted.rules.append((SYNTH, json.dumps({"passage_meanings": [], "interpretations": [], "answer": ""})))
    result = api.ask("What is HP?", "auto", context(demo_index))
    by_id = {p["id"]: p for p in result["passages"]}
    readings = result["interpretations"]
    assert len(readings) >= 2 and result["decision"]["auto"]["extractive_readings"] == len(readings)
    for number, item in enumerate(readings):
        (cited,) = item["citations"]
        assert item["answer"] in by_id[cited]["text"] and by_id[cited]["title"] in item["question"]
        assert f"[{list(by_id).index(cited) + 1}]" in result["answer"]
    assert "do not answer" not in result["answer"]


def test_a_clear_question_is_answered_like_vanilla(scripted, demo_index):
    scripted.rules.append((SYNTH, synthesis))
    result = api.ask("How many watts is one mechanical horsepower?", "auto",
                     context(demo_index, gate_detector=1.1, gate_focus=-1.0))
    assert result["decision"]["ambiguous"] is False and result["decision"]["auto"]["method"] == "vanilla"
    assert result["route"] == ["retrieve_for_gate", "assess_ambiguity", "keep_top_passages", "synthesize_answer"]


def test_the_thorough_budget_runs_diva_as_a_subgraph(scripted, demo_index):
    script_diva(scripted, verdicts={"What is HP, the company?": "Yes"})
    result = api.ask("What is HP?", "auto", context(demo_index, budget="thorough"))
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


def test_a_model_sentence_citing_nothing_gets_the_passage_that_holds_it():
    from agent.steps.readings import cite_holding_passage

    passages = [{"text": "Jaguar Cars was founded in 1922."},
                {"text": "Ford sold the Jaguar car company to Tata Motors in 2008."}]
    assert cite_holding_passage("Ford sold Jaguar to Tata Motors in 2008.", passages) == \
        "Ford sold Jaguar to Tata Motors in 2008 [2]."
    assert cite_holding_passage("Jaguar owns Jaguar.", passages) == "Jaguar owns Jaguar."  # "own" is in neither
    assert cite_holding_passage("Jaguar Cars was founded", passages) == "Jaguar Cars was founded [1]"  # the one passage holding it
    assert cite_holding_passage("HP has several meanings.", passages) == "HP has several meanings."  # no passage holds it
    assert cite_holding_passage("Founded in 1922 [1].", passages) == "Founded in 1922 [1]."  # already cites


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
