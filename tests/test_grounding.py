"""Grounding check and extraction clean-up used by VERDICT (no model needed)."""

import pytest

from agent.steps.extraction import abstention_reason, name_sense, related_questions
from agent.evaluation.extra_metrics import Coverage
from agent.llm.schemas import Supported
from agent.steps.diversify import PassageVerdict
from agent.steps.grounding import answer_support, content_tokens, tokens

PASSAGE = ("Hewlett-Packard, usually shortened to HP, is an American technology company founded in 1939 "
           "by Bill Hewlett and David Packard. A character's HP could not exceed 9,999.")


@pytest.mark.parametrize("answer,support", [
    ("Hewlett-Packard", 1.0),
    ("an American technology company", 1.0),
    ("founded by Bill Hewlett", 1.0),          # "founded" and "founds" share a stem; stopwords ignored
    ("American company founded 1939", 1.0),
    ("9999", 1.0),                             # thousands separators are dropped on both sides
    ("Harry Potter", 0.0),
    ("Hewlett-Packard, a British firm", 0.5),  # hewlett, packard present; british, firm absent
    ("", 0.0),
])
def test_answer_support_is_the_share_of_answer_words_in_the_passage(answer, support):
    assert answer_support(answer, PASSAGE) == pytest.approx(support)


def test_tokens_fold_accents_possessives_and_stopword_only_answers():
    assert tokens("Pokémon's HP, 1,000") == ["pokemon", "hp", "1000"]
    assert content_tokens("the companies") == ["compani"]
    assert content_tokens("It is") == ["it", "is"]  # nothing but stopwords: keep them


@pytest.mark.parametrize("value,parsed", [("yes", "Yes"), ("NO.", "No"), ("Yes!", "Yes"),
                                          ("Yes, the passage says so", "Yes"), (" no ", "No"), ("true", "Yes")])
def test_every_yes_no_answer_is_parsed_the_same_lenient_way(value, parsed):
    """The grounding check, DIVA/DtV's verifier and the eval's LLM judge share one Yes/No type."""
    assert Supported(supported=value).supported == parsed
    assert PassageVerdict(contains_answer=value).contains_answer == parsed
    assert Coverage(covered=[value, "No"]).covered == [parsed, "No"]


def test_yes_no_rejects_anything_else():
    for model, field in ((Supported, "supported"), (PassageVerdict, "contains_answer")):
        with pytest.raises(ValueError):
            model(**{field: "maybe"})


@pytest.mark.parametrize("question,answer,reason", [
    ("What is HP, the company?", "Hewlett-Packard", ""),
    ("null", "null", "null"),
    ("What is HP?", "", "null"),
    ("What is HP?", "Unknown.", "null"),
    ("What is hp?", "The passage does not mention it", "answer says the passage does not tell"),
    ("What is hp?", "not specified", "answer says the passage does not tell"),
    ("What does the passage say HP is?", "a company", "interpretation refers to the passage"),
    ("According to the provided context, what is HP?", "a company", "interpretation refers to the passage"),
])
def test_abstention_reasons(question, answer, reason):
    assert abstention_reason(question, answer) == reason


def test_an_echoed_question_gets_the_sense_the_model_named():
    assert name_sense("What is HP?", "What is HP?", "Hewlett-Packard") == "What is HP (Hewlett-Packard)?"
    assert name_sense("what is hp", "What is HP?", "hit points") == "What is HP (hit points)?"
    assert name_sense("What is horsepower?", "What is HP?", "the unit") == "What is horsepower?"
    assert name_sense("What is HP?", "What is HP?", "") == "What is HP?"
    assert name_sense("What is HP?", "What is HP?", "HP") == "What is HP?"


def test_related_questions_number_citations_like_the_passages_shown():
    passages = [{"id": "a"}, {"id": "b"}, {"id": "c"}]
    items = [{"question": "Q1?", "answer": "A1", "citations": ["c", "a"]},
             {"question": "Q2?", "answer": "A2", "citations": ["zz"]}]
    assert related_questions(items, passages) == ["Q1? -> A1 [3] [1]", "Q2? -> A2"]
