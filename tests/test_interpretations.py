"""Grounded, distinct interpretations and the answer that states them (agent/steps/interpretations.py)."""

from agent.steps.interpretations import (
    NOT_IN_DOCUMENTS,
    compose_answer,
    complete_sentences,
    ground_interpretations,
    grounded_output,
    question_key,
    usable_sentences,
)
from agent.usage import UsageRecorder, _current

PASSAGES = [
    {"id": "co", "title": "Hewlett-Packard", "text": "Hewlett-Packard is an American technology company founded in 1939."},
    {"id": "unit", "title": "Horsepower", "text": "Horsepower is a unit of power devised by James Watt."},
    {"id": "game", "title": "Hit points", "text": "Hit points, abbreviated HP, measure a character's health in games."},
]
COMPANY = {"question": "What is HP, the company?", "answer": "an American technology company", "citations": ["co"]}
UNIT = {"question": "What is hp as a unit?", "answer": "a unit of power", "citations": ["unit"]}


def test_question_key_ignores_case_punctuation_and_stopwords():
    assert question_key("What is HP?") == question_key("what is  hp") == "hp"
    assert question_key("What is HP, the company?") != question_key("What is HP?")


def test_an_answer_whose_words_are_not_in_its_cited_passage_is_dropped():
    wrong = {"question": "What is HP in games?", "answer": "Harry Potter", "citations": ["game"]}
    kept, direct, dropped = ground_interpretations("What is HP?", [COMPANY, wrong], PASSAGES)
    assert kept == [COMPANY] and direct is None
    assert dropped == [{"question": wrong["question"], "answer": "Harry Potter", "reason": "answer not in the cited passage"}]


def test_only_the_supporting_citations_are_kept():
    both = {**UNIT, "citations": ["co", "unit"]}
    (kept,), _, _ = ground_interpretations("What is HP?", [both], PASSAGES)
    assert kept["citations"] == ["unit"]


def test_repeats_of_the_question_and_of_earlier_readings_are_not_readings():
    same = {"question": "what is HP", "answer": "a unit of power", "citations": ["unit"]}
    again = {**COMPANY, "question": "what is HP,  the Company", "citations": ["co"]}
    uncited = {"question": "What is HP in games?", "answer": "hit points", "citations": []}
    kept, direct, dropped = ground_interpretations("What is HP?", [COMPANY, same, again, uncited], PASSAGES)
    assert kept == [COMPANY]
    assert direct == same  # grounded: the question answered as it stands
    assert [d["reason"] for d in dropped] == ["repeats the question", "repeats an earlier interpretation", "no citation"]


def test_a_sentence_cut_off_by_the_length_cap_is_removed():
    prose = "HP is a company [1]. Watt wanted a simple way to market his [2]"
    assert complete_sentences(prose) == ["HP is a company [1]."]
    assert complete_sentences("draft 3") == ["draft 3"]  # a lone sentence is all there is


def test_sentences_claiming_the_documents_are_silent_are_not_used_next_to_grounded_readings():
    prose = "HP is an American technology company [1]. The documents do not answer what hp means as a unit [2]."
    assert usable_sentences(prose) == ["HP is an American technology company [1]."]


def test_the_answer_states_every_reading_with_its_citation():
    prose = "HP is an American technology company [1]. The documents do not mention any unit."
    answer = compose_answer(prose, [COMPANY, UNIT], None, PASSAGES)
    assert answer.startswith("HP is an American technology company [1].")
    assert "What is hp as a unit? A unit of power [2]." in answer
    assert "do not mention" not in answer
    template = compose_answer(prose, [COMPANY, UNIT], None, PASSAGES, style="template")
    assert template.startswith("The documents support 2 readings") and "[1]" in template and "[2]" in template


def test_nothing_grounded_says_so_only_without_any_answer():
    assert compose_answer("", [], None, PASSAGES) == NOT_IN_DOCUMENTS
    assert compose_answer("HP is a brand [1].", [], None, PASSAGES) == "HP is a brand [1]."


def test_a_direct_answer_is_stated_when_the_prose_misses_it():
    direct = {"question": "What is HP?", "answer": "a unit of power", "citations": ["unit"]}
    assert compose_answer("", [], direct, PASSAGES) == "A unit of power [2]."


def test_a_long_copied_answer_is_not_stated_again_after_prose_that_says_its_gist():
    passages = [{"id": "fruit", "title": "Apple", "text": "More than 7,500 cultivars of apple are known worldwide, "
                 "ranging from sweet dessert apples to sharp cider and cooking varieties."}]
    copied = {"question": "How many apple cultivars are known?", "citations": ["fruit"],
              "answer": "7,500 cultivars of apple are known worldwide, ranging from sweet dessert apples to sharp cider"}
    gist = "7,500 cultivars of apple are known worldwide [1]."
    assert compose_answer(gist, [], copied, passages) == gist  # said once, not twice
    assert compose_answer(gist, [copied], None, passages) == gist
    # too few words to stand for the copy, or another passage cited: the copy is stated
    assert compose_answer("Apples are known [1].", [], copied, passages).count("[1]") == 2
    uncited = compose_answer(gist.replace("[1]", "[2]"), [], copied, passages + PASSAGES[:1])
    assert uncited.endswith("to sharp cider [1].")


def test_dropped_interpretations_are_counted_in_usage():
    recorder = UsageRecorder()
    token = _current.set(recorder)
    try:
        wrong = {"question": "What is HP in games?", "answer": "Harry Potter", "citations": ["game"]}
        answer, kept, details = grounded_output("What is HP?", [COMPANY, wrong], PASSAGES, "")
    finally:
        _current.reset(token)
    assert recorder.counts["dropped_interpretations"] == 1
    assert kept == [COMPANY] and details["interpretations_check"]["kept"] == 1
    assert answer == "What is HP, the company? An American technology company [1]."


def test_a_copied_fragment_ending_mid_phrase_is_not_used():
    from agent.steps.interpretations import usable_sentences

    prose = "Watt wanted a simple way to market his [3]. Horsepower is a unit of power [3]."
    assert usable_sentences(prose) == ["Horsepower is a unit of power [3]."]
    assert usable_sentences("HP makes printers and PCs [1]. It was founded by Hewlett and Packard [2].") == [
        "HP makes printers and PCs [1].", "It was founded by Hewlett and Packard [2]."]



def test_sentences_do_not_end_at_an_abbreviation_or_an_initial():
    from agent.steps.interpretations import sentences

    text = ("Steve Jobs and Ronald Wayne founded Apple Inc. on April 1, 1976 [1]. J. K. Rowling wrote it in the U.S. "
            "in 1997 [2]. It sold well.")
    assert sentences(text) == ["Steve Jobs and Ronald Wayne founded Apple Inc. on April 1, 1976 [1].",
                               "J. K. Rowling wrote it in the U.S. in 1997 [2].", "It sold well."]


def test_a_sentence_in_parentheses_ends_with_its_parenthesis():
    from agent.steps.interpretations import sentences

    text = "(The name is kept if it was cut.) When unpacking, the name is restored (see below). It works (mostly.)"
    assert sentences(text) == ["(The name is kept if it was cut.)", "When unpacking, the name is restored (see below).",
                               "It works (mostly.)"]


def test_an_ellipsis_before_a_lower_case_word_or_a_number_ends_no_sentence():
    from agent.steps.interpretations import sentences

    text = "Set the block size to 100 k, 200 k ...  900 k when compressing. It waited... Then it left … and came back."
    assert sentences(text) == ["Set the block size to 100 k, 200 k ... 900 k when compressing.", "It waited...",
                               "Then it left … and came back."]


def test_a_field_the_grammar_cut_mid_word_loses_the_cut_word():
    from agent.llm.answers import uncut
    from agent.llm.schemas import ANSWER_CAP, CitedInterpretation, Synthesis
    from agent.steps.nodes import interpretations_from

    cut = ("Amazon's headquarters are in Seattle, Washington, and in 2018 the company selected Arlington, "
           "Virginia, as the site of its second headquarters, knowns")
    assert len(cut) == ANSWER_CAP
    assert uncut(cut, ANSWER_CAP).endswith("as the site of its second headquarters")
    assert uncut("Tata Motors", ANSWER_CAP) == "Tata Motors"  # not cut: untouched
    on_a_space = ("Java is an object-oriented programming language developed by James Gosling and colleagues at "
                  "Sun Microsystems. The language was renamed Java, and Sun ")  # demo tune: the cap fell after "Sun"
    assert len(on_a_space) == ANSWER_CAP and uncut(on_a_space, ANSWER_CAP).endswith("at Sun Microsystems.")
    assert uncut("word " * 29 + "of the ending", 150) == " ".join(["word"] * 29)  # no dangling "of"
    two = ("Northwind Corp launched Project Atlas for two reasons. The Project Atlas business case promises a "
           "five-day month-end close, the retirement of about 14")  # a reply of the 1.5B, cut at the cap
    assert uncut(two, ANSWER_CAP) == "Northwind Corp launched Project Atlas for two reasons."
    synthesis = Synthesis(interpretations=[CitedInterpretation(question="Where is Amazon?", answer=cut, citations=[1])],
                          answer="")
    [item] = interpretations_from(synthesis, [{"id": "a", "title": "Amazon", "text": cut}])
    assert not item["answer"].endswith("knowns")


def test_a_code_block_is_one_sentence_with_its_lead_in():
    from agent.steps.interpretations import sentences

    text = "Install it [1]:\n\n```\npip install tool\n\ntool --init\n```\n\nThen run it. Or not [2]."
    assert sentences(text) == ["Install it [1]:\n```\npip install tool\n\ntool --init\n```", "Then run it.", "Or not [2]."]
    assert sentences("Run:\n```\nmake. all\n``` It builds.") == ["Run:\n```\nmake. all\n```", "It builds."]
    assert sentences("Cut off:\n```\nmake") == ["Cut off:\n```\nmake"]  # a block a length cap left open
