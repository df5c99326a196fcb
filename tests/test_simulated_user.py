"""agent/evaluation/simulated_user.py and conversations.py: the scripted person and the scores
`disambig eval --simulate-user` gives a conversation."""

import json

from agent.evaluation.conversations import conversation_metrics, summarize_conversations
from agent.evaluation.datasets import Example, load_fixture, load_manuals
from agent.evaluation.simulated_user import MAX_REPLIES, SimulatedUser, matched_sense, option_senses, senses_of

HP = Example(id="q-hp-1", question="What is HP?", ambiguous=True, qa_pairs=[
    {"question": "What is HP, the company Hewlett-Packard?", "short_answers": ["American technology company"]},
    {"question": "What is hp as a unit of measurement?", "short_answers": ["a unit of power"]},
    {"question": "What does HP mean in video and role-playing games?", "short_answers": ["Hit points"]},
])
CLEAR = Example(id="q-hp-4", question="What year was Hewlett-Packard founded?", ambiguous=False,
                qa_pairs=[{"question": "What year was Hewlett-Packard founded?", "short_answers": ["1939"]}])


def option(number, label, answer, quote=""):
    return {"option": number, "label": label, "question": f"What is HP ({label})?", "answer": answer,
            "source": {"quote": quote or answer}, "citations": [f"p{number}"]}


OPTIONS = [option(1, "Hewlett-Packard", "HP is an American technology company founded in 1939."),
           option(2, "Horsepower", "Horsepower is a unit of power devised by James Watt."),
           option(3, "Hit points", "Hit points measure how much damage a character can take.")]


def user_for(sense: int) -> SimulatedUser:
    user = SimulatedUser(HP)
    user.intended = sense
    return user


def test_the_intended_sense_is_drawn_with_the_seed_and_a_clear_question_has_its_one_sense():
    draws = {SimulatedUser(HP, seed).intended for seed in range(20)}
    assert draws == {0, 1, 2}  # every sense can be intended
    assert SimulatedUser(HP, 7).intended == SimulatedUser(HP, 7).intended  # and the same seed draws the same one
    clear = SimulatedUser(CLEAR, 3)
    assert not clear.ambiguous and clear.intended == 0 and clear.restatement() == CLEAR.question


def test_it_picks_the_option_naming_its_sense_by_short_answer_or_by_the_sub_questions_words():
    assert [user_for(sense).reply({"options": OPTIONS}) for sense in range(3)] == ["1", "2", "3"]
    reordered = [OPTIONS[2] | {"option": 1}, OPTIONS[0] | {"option": 2}]
    assert user_for(2).reply({"options": reordered}) == "1"
    # no short answer in the option: the sub-question's own words ("unit", "measurement") name it
    worded = [option(1, "Hewlett-Packard", "the company"), option(2, "Horsepower", "a unit of measurement")]
    assert user_for(1).reply({"options": worded}) == "2"


def test_over_manuals_it_picks_the_product_it_wants_whatever_line_the_option_shows(tmp_path):
    """A person who wants zstd's way picks "zstd", though the line under it is not the answer."""
    fixture = tmp_path / "manuals.json"
    fixture.write_text(json.dumps({"products": {"zstd": {"name": "zstd"}, "lz4": {"name": "LZ4"}}, "questions": [
        {"id": "q1", "split": "test", "ambiguous": True, "question": "How do I send the output to standard output?",
         "senses": [{"product": "lz4", "answers": ["-c"]}, {"product": "zstd", "answers": ["-c, --stdout"]}]}]}))
    example = load_manuals(fixture)[0]
    options = [{"option": 1, "label": "LZ4", "product": "LZ4", "answer": "-c --stdout Force write to standard output."},
               {"option": 2, "label": "mypy", "product": "mypy", "answer": "-O FORMAT Set a custom output format."},
               {"option": 3, "label": "zstd", "product": "zstd", "answer": "--output-dir-mirror DIR: keep the tree."}]
    assert option_senses(options, senses_of(example), example.question) == [0, None, 1]
    user = SimulatedUser(example)
    user.intended = 1
    assert user.reply({"options": options}) == "3"


def test_without_its_sense_it_says_none_of_these_in_its_own_words_and_gives_up_after_two_replies():
    user = user_for(2)
    first = user.reply({"options": OPTIONS[:2]})
    assert first == "None of these. What does HP mean in video and role-playing games?"
    assert user.reply({"options": OPTIONS[:2]}).startswith("None of these.")
    assert len(user.replies) == MAX_REPLIES and user.reply({"options": OPTIONS}) is None


def test_a_text_naming_no_sense_names_none():
    senses = senses_of(HP)
    assert matched_sense("the weather in Leeds", senses, HP.question) is None
    assert matched_sense("Hit points, in games", senses, HP.question) == 2


def record(answer, asks, passages=None, intended=1):
    return {"output": {"answer": answer, "passages": passages or []},
            "conversation": {"intended": intended, "asks": asks, "gave_up": False, "seconds": 1.0,
                             "first_line_after_choice_s": 0.01}}


def test_success_precision_and_option_quality_of_a_conversation():
    ask = {"options": OPTIONS[:2] + [option(3, "The HP Way", "The HP Way was a management style.")],
           "senses": [0, 1, None], "reply": "2"}
    focused = conversation_metrics(HP, record("Horsepower is a unit of power [1].", [ask]))
    assert focused == {"ambiguous": True, "success": 1.0, "precision": 1.0, "asks": 1, "option_recall": [1.0],
                       "unmatched_options": [1.0], "duplicate_options": [0.0], "gave_up": False}
    everything = conversation_metrics(HP, record(
        "HP is an American technology company [1]. Horsepower is a unit of power [2]. Hit points count damage [3].", []))
    assert everything["success"] == 1.0 and round(everything["precision"], 2) == 0.33 and everything["asks"] == 0
    twice = conversation_metrics(HP, record("Hit points.", [{"options": OPTIONS, "senses": [0, 0, 2], "reply": "3"}]))
    assert twice["success"] == 0.0 and twice["option_recall"] == [0.0] and twice["duplicate_options"] == [1.0]


def test_fixture_passages_are_judged_by_their_sense_labels():
    examples = {e.id: e for e in load_fixture("agent/data/demo_questions.json")}
    hp = examples["q-hp-1"]
    assert hp.passage_senses["hp-horsepower-01"] == "hp/unit" and hp.qa_pairs[1]["sense"] == "hp/unit"
    passages = [{"id": "hp-the-hp-way-01", "title": "The HP Way", "text": "..."},
                {"id": "hp-horsepower-01", "title": "Horsepower", "text": "..."}]
    way = next(pid for pid, label in hp.passage_senses.items() if label == "hp/company")
    ask = {"options": [{"option": 1, "citations": [way]}, {"option": 2, "citations": ["hp-horsepower-01"]}],
           "senses": [None, None], "reply": "2"}  # the words named nothing; the labels do
    metrics = conversation_metrics(hp, record("It is a unit of power [2]. Founded by two engineers [1].", [ask],
                                              [{"id": way, "title": "", "text": ""}, passages[1]]))
    assert metrics["option_recall"] == [1.0] and metrics["unmatched_options"] == [0.0]
    assert metrics["precision"] == 0.5  # the sentence citing the company's passage is not about the unit


def test_summary_reports_false_asks_on_clear_questions_and_asks_on_ambiguous_ones():
    def done(ambiguous, asks, success):
        return {"output": {}, "usage": {"llm_calls": 1}, "conversation": {"seconds": 2.0, "first_line_after_choice_s": None},
                "simulated": {"ambiguous": ambiguous, "success": success, "precision": 1.0, "asks": asks,
                              "option_recall": [1.0] * asks, "unmatched_options": [0.0] * asks,
                              "duplicate_options": [0.0] * asks, "gave_up": False}}
    summary = summarize_conversations([done(True, 1, 1.0), done(True, 0, 0.0), done(False, 1, 1.0), done(False, 0, 1.0)])
    assert summary["ambiguous"]["asks"] == 0.5 and summary["ambiguous"]["success"] == 0.5
    assert summary["clear"]["false_ask_rate"] == 0.5 and summary["ambiguous"]["false_ask_rate"] is None
    assert summary["all"]["n"] == 4 and summary["all"]["calls"] == 1.0


def test_an_answer_is_judged_against_the_question_it_was_written_for():
    from agent.evaluation.scoring import score
    example = Example(id="q-jaguar-4", question="Who owns Jaguar?", ambiguous=True, qa_pairs=[
        {"question": "Which company owns Jaguar, the car maker?", "short_answers": ["Tata Motors"]},
        {"question": "Who owns the Jacksonville Jaguars?", "short_answers": ["Shahid Khan"]}])
    passage = {"id": "jaguar-cars-01", "title": "Jaguar Cars",
               "text": "Jaguar is a British luxury car maker founded in 1922 in Blackpool, England."}
    output = {"answer": "Jaguar is a British luxury car maker founded in 1922 in Blackpool, England [1]. "
                        "Jaguar Cars owns Jaguar, the car maker [1].", "passages": [passage]}
    # against the first question its second sentence says nothing beyond the first and the question
    assert score(example, output)["broken_sentences"] == 1
    # the person restated the question: the same words are what was asked, not a repeat
    assert score(example, output, asked="Which company owns Jaguar, the car maker?")["broken_sentences"] == 0
