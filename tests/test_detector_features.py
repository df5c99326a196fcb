"""The detector's hand-made features, ENTITY masking, the lexical rule and augmentation."""

import random

import pytest

from agent.detector.augment import augment, drop_entity_type, insert_referential, omit_details, vague_statement
from agent.detector.features import (
    DEFAULT_ENTITY_TYPES, coleman_liau, lexical_ambiguity, mask_entities, numeric_features, parse_entity_types,
    query_length, referential_count,
)


def test_query_length_counts_words_not_punctuation():
    assert query_length("How many do I have?") == 5
    assert query_length("segment?") == 1
    assert query_length("What's the user's name?") == 4


def test_referential_count_uses_the_papers_word_list():
    assert referential_count("How many do I have?") == 0
    assert referential_count("Compare it with the previous one and the others") == 3
    assert referential_count("It's above those, isn't it?") == 4  # it, above, those, it
    assert referential_count("Iterate over the items") == 0  # words, not substrings


def test_coleman_liau_follows_the_formula():
    # "What is it?": 8 letters, 3 words, 1 sentence
    assert coleman_liau("What is it?") == pytest.approx(5.89 * 8 / 3 - 30 * 1 / 3 - 15.8)
    # two sentences lower the index; longer words raise it
    assert coleman_liau("Stop. Go.") < coleman_liau("Stop go")
    assert coleman_liau("Characterization of heterogeneous infrastructure") > coleman_liau("Is it on?")


def test_numeric_features_are_length_referential_readability():
    length, referential, readability = numeric_features("Can you delete it?")
    assert (length, referential) == (4.0, 1.0)
    assert readability == pytest.approx(coleman_liau("Can you delete it?"))


@pytest.mark.parametrize("query, masked", [
    ("What is the total size of 124abcde?", "What is the total size of ENTITY?"),
    ("Are we removing abc123 from XYZ?", "Are we removing ENTITY from XYZ?"),
    ("Tell me about 'ABC' dataset", "Tell me about ENTITY dataset"),
    ('Who owns "Spring Promo 2024"?', "Who owns ENTITY?"),
    ("Who owns “Spring Promo”?", "Who owns ENTITY?"),
    ("Summarize https://example.com/a?b=1 now", "Summarize ENTITY now"),
    ("Open www.example.org/docs.", "Open ENTITY"),
    ("Is clickstream_raw ingested?", "Is ENTITY ingested?"),
    ("Load orders.csv please", "Load ENTITY please"),
])
def test_identifiers_quotes_and_urls_are_masked(query, masked):
    assert mask_entities(query) == masked


@pytest.mark.parametrize("query", [
    "Who won the hackathon in 2021?",
    "What is the 2nd step of the pre-requisite check?",
    "Is a follow-up needed by 10:30 for 3.5% growth?",
    "Is the U.S. bigger than Canada?",
    "What's the user's name?",
    "What is MP3?",
])
def test_numbers_ordinals_abbreviations_and_hyphenated_words_are_not_entities(query):
    assert mask_entities(query) == query


def test_lexical_rule_flags_an_entity_without_an_entity_type_word():
    assert lexical_ambiguity("What is the total size of 124abcde?")
    assert lexical_ambiguity("Are we removing abc123 from XYZ?")
    assert lexical_ambiguity("What is on https://example.com/share/8f3a?")
    assert not lexical_ambiguity("What is the total size of the dataset 124abcde?")
    assert not lexical_ambiguity("Tell me about the 'ABC' dataset")
    assert not lexical_ambiguity("Summarize the page https://example.com/docs")
    assert not lexical_ambiguity("How many segments do I have?")  # no entity at all


def test_entity_type_words_inside_the_entity_do_not_count():
    # the kind must be said outside the masked name: report_2023.csv does not say "report"
    assert lexical_ambiguity("Open report_2023.csv")
    assert not lexical_ambiguity("Open the file report_2023.csv")


def test_entity_types_are_configuration():
    query = "Is 5f3e2a91bc still active?"
    assert lexical_ambiguity(query)
    assert not lexical_ambiguity("Is campaign 5f3e2a91bc still active?")
    assert lexical_ambiguity("Is campaign 5f3e2a91bc still active?", parse_entity_types("segment, dataset"))
    assert not lexical_ambiguity("Is ticket 5f3e2a91bc still open?", parse_entity_types("ticket"))
    assert not lexical_ambiguity("Are tickets 5f3e2a91bc open?", parse_entity_types("ticket"))  # plural


def test_parse_entity_types_falls_back_to_the_defaults():
    assert parse_entity_types("") == DEFAULT_ENTITY_TYPES
    assert parse_entity_types(" Segment ,dataset,, ") == ("segment", "dataset")
    assert parse_entity_types(["Schema"]) == ("schema",)


def test_omit_details_cuts_after_the_x_of():
    assert omit_details("What is the name of my largest dataset?") == "What is the name?"
    assert omit_details("What is the total size of the dataset 124abcde?") == "What is the total size?"
    assert omit_details("How do I reset my password?") is None


def test_insert_referential_replaces_an_article_with_a_referential_word():
    rng = random.Random(0)
    variants = {insert_referential("What is the name?", rng) for _ in range(30)}
    assert len(variants) > 3
    assert all(v.startswith("What is ") and v.endswith(" name?") and " the name" not in v for v in variants)
    assert insert_referential("How do I reset my password?", rng) is None


def test_vague_statement_turns_an_imperative_into_a_statement():
    rng = random.Random(1)
    outputs = {vague_statement("Tell me about 'ABC' dataset", rng) for _ in range(40)}
    assert "There is no such 'ABC' dataset" in outputs
    assert all(o.endswith("'ABC' dataset") and not o.lower().startswith("tell") for o in outputs)
    assert vague_statement("Can you tell me about it?", rng) is None  # a question, not a statement


def test_drop_entity_type_leaves_a_lexical_ambiguity():
    assert drop_entity_type("What is the total size of the dataset 124abcde?") == "What is the total size of the 124abcde?"
    assert drop_entity_type("Who created the 'Loyalty Members' segment?") == "Who created the 'Loyalty Members'?"
    assert drop_entity_type("How many segments do I have?") is None  # no identifier
    # "segment" survives inside the quoted name, but the name is still of an unknown kind
    assert lexical_ambiguity(drop_entity_type("Is the dataset 'Users segment' empty?"))


def test_augment_labels_variants_ambiguous_and_keeps_their_parent():
    rows = [
        {"id": "a", "text": "What is the name of my largest dataset?", "label": "clear"},
        {"id": "b", "text": "Tell me about the 'ABC' dataset", "label": "clear"},
        {"id": "c", "text": "Can you delete it?", "label": "ambiguous"},
    ]
    out = augment(rows, seed=3)
    texts = [r["text"] for r in out]
    assert "What is the name?" in texts
    assert "Tell me about the 'ABC'" in texts
    assert all(r["label"] == "ambiguous" and r["parent"] in ("a", "b") for r in out)
    assert len(texts) == len({t.lower() for t in texts})
    assert not {t.lower() for t in texts} & {r["text"].lower() for r in rows}
    assert augment(rows, seed=3) == out  # deterministic for a seed
