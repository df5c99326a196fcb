"""When the chat asks (clarify_policy), the options it offers (one per sense, named, cited), what a
reply of "none of these" does, and a whole simulated conversation through the chat graph."""

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from agent.app.conversation import ChatSession, chat_context
from agent.errors import InputError
from agent.evaluation.conversations import run_conversation
from agent.evaluation.datasets import Example
from agent.steps.clarify import chosen_answer, clarification_options, restated_intent
from agent.steps.clarify_policy import decide
from tests.chat_script import chat_rules

PASSAGES = [{"id": f"p{n}", "title": title, "text": text} for n, (title, text) in enumerate([
    ("Hewlett-Packard", "Hewlett-Packard is an American technology company. It was founded in 1939."),
    ("The HP Way", "The HP Way was the management style of Hewlett-Packard's founders."),
    ("Horsepower", "Horsepower is a unit of power. James Watt devised it."),
    ("Mercury: the planet", "Mercury is the smallest planet."),
    ("Mercury: the element", "Mercury is a chemical element."),
    ("Hit points", "Hit points measure damage in games."),
], 1)]
READINGS = [{"question": f"What is HP ({p['title']})?", "answer": p["text"].split(". ")[0], "citations": [p["id"]]}
            for p in PASSAGES]


def test_the_policies_ask_as_their_names_say_and_say_why():
    signals = {"senses": 3, "gate_probability": 0.3}
    assert decide("never", signals, asked=0, max_asks=2, threshold=0.2)["ask"] is False
    assert decide("always", signals, asked=0, max_asks=2, threshold=0.9)["ask"] is True
    assert decide("gated", signals, asked=0, max_asks=2, threshold=0.2)["ask"] is True
    held = decide("gated", signals, asked=0, max_asks=2, threshold=0.5)
    assert held["ask"] is False and held["reason"] == "gate probability 0.30 < 0.50: one reading likely covers it"
    assert decide("always", {"senses": 1}, asked=0, max_asks=2, threshold=0)["ask"] is False  # nothing to choose
    assert decide("always", signals, asked=2, max_asks=2, threshold=0)["ask"] is False  # asked enough this turn
    one = {"senses": 1, "gate_probability": 0.8}  # one reading found where the gate expects several
    confirm = decide("gated", one, asked=0, max_asks=2, threshold=0.2, confirm_threshold=0.5)
    assert confirm["ask"] is True and "asking whether it is the one meant" in confirm["reason"]
    assert decide("gated", one, asked=0, max_asks=2, threshold=0.2, confirm_threshold=0.9)["ask"] is False
    assert decide("always", one, asked=0, max_asks=2, threshold=0.2, confirm_threshold=0.5)["ask"] is False


def test_it_after_an_answer_for_several_products_asks_which_once():
    signals = {"senses": 2, "gate_probability": 0.1, "it_among": ["zstd", "LZ4"]}
    asked = decide("gated", signals, asked=0, max_asks=2, threshold=0.5)
    assert asked["ask"] is True and asked["reason"].startswith("'it' may be any of zstd, LZ4")
    assert decide("gated", signals, asked=1, max_asks=2, threshold=0.5)["ask"] is False  # asked once this turn
    assert decide("never", signals, asked=0, max_asks=2, threshold=0.5)["ask"] is False
    assert decide("gated", {**signals, "it_among": []}, asked=0, max_asks=2, threshold=0.5)["ask"] is False


def test_over_manuals_two_answering_products_make_the_gated_policy_ask():
    from agent.steps.clarify_policy import policy_signals

    gate = {"auto": {"signals": {"gate_probability": 0.2, "products": ["zstd", "LZ4"]}}}
    signals = policy_signals([{}, {}], gate)
    assert signals["products"] == 2
    asks = decide("gated", signals, asked=0, max_asks=2, threshold=0.65)
    assert asks["ask"] is True and asks["reason"] == "2 products answer: the options are the products"
    one_product = policy_signals([{}, {}], {"auto": {"signals": {"gate_probability": 0.2, "products": ["zstd"]}}})
    assert decide("gated", one_product, asked=0, max_asks=2, threshold=0.65)["ask"] is False
    assert decide("never", signals, asked=0, max_asks=2, threshold=0.65)["ask"] is False
    unknown = decide("gated", {"senses": 2}, asked=0, max_asks=2, threshold=0.9)
    assert unknown["ask"] is True and "no gate probability" in unknown["reason"]


def test_options_fold_a_sub_topic_into_its_sense_name_it_in_plain_words_and_stop_at_four():
    same_company = lambda earlier, option: {earlier["source"]["id"], option["source"]["id"]} == {"p1", "p2"}  # noqa: E731
    options = clarification_options(READINGS, 4, PASSAGES, same_company)
    assert [o["label"] for o in options] == ["Hewlett-Packard", "Horsepower", "Mercury: Mercury is the smallest planet.",
                                             "Mercury: Mercury is a chemical element."]  # one name, two senses: answers too
    assert options[0]["citations"] == ["p1", "p2"] and options[0]["covers"] == ["What is HP (The HP Way)?"]
    assert options[1]["source"] == {"id": "p3", "title": "Horsepower", "quote": "Horsepower is a unit of power."}
    assert [o["option"] for o in options] == [1, 2, 3, 4]  # hit points would be a fifth: not offered
    assert len(clarification_options(READINGS, 4, PASSAGES)) == 4  # without folding, the sub-topic takes a place


@pytest.mark.parametrize("reply, restated", [
    ("None of these. What is hp as a unit?", "What is hp as a unit?"), ("none of them: the unit", "the unit"),
    ("Neither", ""), ("2", None), ("Nonetheless the unit", None),
    ([{"type": "text", "text": "none of these, hit points"}], "hit points"),
])
def test_none_of_these_carries_the_persons_own_words(reply, restated):
    assert restated_intent(reply) == restated


def test_the_answer_after_a_choice_is_the_methods_sentences_on_that_sense_only():
    option = clarification_options(READINGS, 4, PASSAGES)[2]  # horsepower, cites p3 = [3]
    answer = "HP is a company [1]. Horsepower is a unit of power [3]. Both are called HP [1][3]."
    text, interpretations = chosen_answer(option, answer, READINGS, PASSAGES)
    assert text == "Horsepower is a unit of power [3]."  # the sentence contrasting two senses is left out
    assert [i["citations"] for i in interpretations] == [["p3"]]
    fallback, _ = chosen_answer(option, "HP is a company [1].", READINGS, PASSAGES)
    assert fallback == "Horsepower is a unit of power [3]."  # its cited passage sentence


def test_a_chosen_option_with_a_folded_sub_topic_is_one_interpretation():
    option = {"option": 1, "question": "What is HP, the company?", "answer": "Hewlett-Packard",
              "citations": ["p1", "p2"], "source": {"id": "p1", "title": "", "quote": "HP is a company"}}
    readings = [{"question": "What is Hewlett-Packard?", "answer": "a company", "citations": ["p1"]},
                {"question": "What is the HP Way?", "answer": "a management style", "citations": ["p2"]},
                {"question": "What is horsepower?", "answer": "a unit", "citations": ["p3"]}]
    _, interpretations = chosen_answer(option, "HP is a company [1]. The HP Way is its culture [2].", readings, PASSAGES)
    assert [(i["question"], i["citations"]) for i in interpretations] == [("What is HP, the company?", ["p1", "p2"])]


@pytest.fixture
def settings(scripted, demo_index):
    scripted.rules.extend(chat_rules())
    return {"model": "scripted", "index_dir": demo_index, "downstream": "vanilla"}


def drain(events):
    return list(events)


def test_choosing_costs_no_model_call_and_the_decision_says_why_it_asked(settings, scripted):
    session = ChatSession(InMemorySaver(), "t", settings)
    request = drain(session.send("What is HP?"))[-1]
    assert request["event"] == "clarification" and [o["label"] for o in request["options"]][1] == "Horsepower"
    calls = len(scripted.calls)
    result = drain(session.choose(2))[-1]["result"]
    assert len(scripted.calls) == calls and result["route"][-1] == "answer_chosen"
    assert "orsepower" in result["answer"] and "Hewlett" not in result["answer"]
    clarify = result["decision"]["chat"]["clarify"]
    assert clarify["policy"] == "gated" and clarify["ask"] is True and clarify["signals"]["senses"] == 2
    assert "no gate probability" in clarify["reason"]  # vanilla has no gate: it asks as always does


def test_none_of_these_runs_the_method_on_the_persons_words(settings, scripted):
    session = ChatSession(InMemorySaver(), "t", settings)
    drain(session.send("What is HP?"))
    with pytest.raises(InputError, match="no clarification"):
        ChatSession(InMemorySaver(), "other", settings).choose(1)
    events = drain(session.choose("None of these. What is a jaguar?"))
    result = events[-1]["result"]
    assert events[-1]["event"] == "result" and result["answer"].startswith("A jaguar is a big cat")
    assert result["decision"]["chat"]["restated"] == "What is a jaguar?"
    assert result["decision"]["chat"]["query"] == "What is a jaguar?"
    assert [m.content for m in session.messages() if m.type == "human"] == ["What is HP?",
                                                                             "None of these. What is a jaguar?"]


def test_never_answers_every_sense_at_once(settings):
    session = ChatSession(InMemorySaver(), "t", {**settings, "clarify_policy": "never"})
    result = drain(session.send("What is HP?"))[-1]["result"]
    assert result["decision"]["chat"]["clarify"]["ask"] is False and len(result["interpretations"]) == 2
    with pytest.raises(InputError, match="clarify_policy"):
        chat_context({**settings, "clarify_policy": "sometimes"})


def test_a_simulated_conversation_through_the_chat_graph(settings):
    example = Example(id="hp", question="What is HP?", ambiguous=True, qa_pairs=[
        {"question": "What is HP, the company Hewlett-Packard?", "short_answers": ["Hewlett-Packard"]},
        {"question": "What is hp as a unit of measurement?", "short_answers": ["horsepower"]}])
    run = run_conversation(example, chat_context(settings), seed=1)
    conversation = run["conversation"]
    intended = conversation["intended"]
    [ask] = conversation["asks"]
    assert ask["senses"][int(ask["reply"]) - 1] == intended  # it chose the option naming its sense
    assert example.qa_pairs[intended]["short_answers"][0].casefold() in run["result"]["answer"].casefold()
    assert conversation["clarify"]["ask"] is True and not conversation["gave_up"]


def test_a_conversation_records_the_question_its_final_answer_was_for(settings):
    example = Example(id="cats", question="What is HP?", ambiguous=True, qa_pairs=[
        {"question": "What is a jaguar?", "short_answers": ["big cat"]},
        {"question": "What is a jaguar car?", "short_answers": ["luxury car maker"]}])
    run = run_conversation(example, chat_context(settings), seed=0)
    conversation = run["conversation"]
    assert conversation["asks"][0]["reply"].startswith("None of these.")  # no option names a jaguar
    assert conversation["answered"] == conversation["intended_question"]
    plain = run_conversation(Example(id="hp", question="What is HP?", ambiguous=False, qa_pairs=[
        {"question": "What is HP?", "short_answers": ["Hewlett-Packard"]}]), chat_context(settings), seed=0)
    assert plain["conversation"]["answered"] == "What is HP?"


def test_the_answer_after_a_choice_keeps_its_code_block_whole():
    option = clarification_options(READINGS, 4, PASSAGES)[2]  # horsepower, cites p3 = [3]
    code = "```\nhp --watts 745.7\n\nhp --metric\n```"
    answer = f"HP is a company [1]. Convert with [3]:\n{code} Both are called HP [1][3]."
    text, _ = chosen_answer(option, answer, READINGS, PASSAGES)
    assert text == f"Convert with [3]:\n{code}"  # the blank line inside the block splits nothing


def test_an_option_the_answer_did_not_state_is_its_own_interpretation():
    option = clarification_options(READINGS, 4, PASSAGES)[2]
    text, interpretations = chosen_answer(option, "HP is a company [1].", [], PASSAGES)
    assert text == "Horsepower is a unit of power [3]."
    assert [(i["question"], i["citations"]) for i in interpretations] == [(option["question"], ["p3"])]
