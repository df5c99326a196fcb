"""Extractive compression of the synthesis prompt: each passage's first sentence and the ones
bearing on the question, numbered and fenced as before, behind `compress_passages`."""

from __future__ import annotations

import json

from agent.app import api
from agent.context import Context
from agent.llm.streaming import split_sentences
from agent.retrieval.retriever import get_retriever
from agent.retrieval.tokens import count_tokens
from agent.steps.compression import compress_passages, kept_sentences


def test_each_passage_keeps_its_first_sentence_and_the_ones_about_the_question(demo_index):
    retriever = get_retriever(Context(index_dir=demo_index))
    passages = retriever.search("When was Hewlett-Packard founded?", "hybrid", 5)
    short = compress_passages("When was Hewlett-Packard founded?", passages, retriever.embed_queries)
    assert [p["id"] for p in short] == [p["id"] for p in passages]  # same passages, same order: same [n]
    for whole, part in zip(passages, short):
        sentences, kept = split_sentences(whole["text"]), split_sentences(part["text"])
        assert kept[0] == sentences[0] and set(kept) <= set(sentences)
        assert [s for s in sentences if s in kept] == kept  # in the passage's order
    assert sum(count_tokens(p["text"]) for p in short) < 0.8 * sum(count_tokens(p["text"]) for p in passages)
    founding = next(p for p in short if p["id"] == "hp-hewlett-packard-01")
    assert "founded in 1939" in founding["text"]


def test_the_best_scoring_sentence_is_kept_beyond_the_first_within_the_budget():
    sentences = ["First one here.", "Off topic words entirely.", "The answer is right here.", "More noise."]
    assert kept_sentences(sentences, [0.1, 0.2, 0.9, 0.0]) == ["First one here.", "The answer is right here."]
    assert kept_sentences(sentences[:2], [0.0, 0.0]) == sentences[:2]  # two sentences: nothing to cut


def test_the_switch_decides_what_the_model_reads_and_the_checks_still_see_whole_passages(scripted, demo_index):
    reply = json.dumps({"interpretations": [], "answer": "Hewlett-Packard was founded in 1939 [1]."})
    scripted.rules.append(("Reply with JSON", reply))
    settings = {"model": "scripted", "index_dir": demo_index}
    whole = api.ask("When was Hewlett-Packard founded?", "vanilla", {**settings, "compress_passages": False})
    short = api.ask("When was Hewlett-Packard founded?", "vanilla", settings)  # on by default
    prompts = [call["text"] for call in scripted.calls]
    assert count_tokens(prompts[1]) < count_tokens(prompts[0])
    for prompt in prompts:
        ours = prompt.split("Passages:")[-1]
        assert ours.count("<documents>\n[1] ") == 1 and "\n\n[5] " in ours and "</documents>" in ours
    assert short["passages"] == whole["passages"]  # the result lists the whole passages
    assert short["usage"]["llm_calls"] == whole["usage"]["llm_calls"] == 1


def test_a_ranking_chooses_the_sentences_the_prompt_keeps(demo_index):
    retriever = get_retriever(Context(index_dir=demo_index))
    passages = retriever.search("When was Hewlett-Packard founded?", "hybrid", 5)

    def last_best(shown: list[dict], split: list[list[str]]) -> list[list[float]]:
        return [[float(i) for i in range(len(sentences))] for sentences in split]

    short = compress_passages("When was Hewlett-Packard founded?", passages, retriever.embed_queries, last_best)
    for whole, part in zip(passages, short):
        sentences, kept = split_sentences(whole["text"]), split_sentences(part["text"])
        assert kept[0] == sentences[0] and kept[-1] == sentences[-1]  # the first, then the ranking's best


def test_autos_draft_prompt_keeps_each_passages_sentence_the_selector_ranks_best(scripted, demo_index):
    from agent.assembly.gate import GATE_POOL
    from agent.assembly.draft import selector_ranking
    from graphs.auto import READING_POOL

    reply = json.dumps({"interpretations": [], "answer": "HP was founded in 1939 [1]."})
    scripted.rules.append(("Reply with JSON", reply))
    question = "Where is HP based?"
    result = api.ask(question, "auto", {"model": "scripted", "index_dir": demo_index})
    prompt = [call["text"] for call in scripted.calls if "Reply with JSON" in call["text"]][-1]
    context = Context(index_dir=demo_index)
    pool = get_retriever(context).search(question, "hybrid", READING_POOL * 5, depth=2 * GATE_POOL * 5)  # auto's pool
    top = [next(p for p in pool if p["id"] == shown["id"]) for shown in result["passages"][:5]]
    split = [split_sentences(p["text"]) for p in top]
    for sentences, scores in zip(split, selector_ranking(question, pool, context)(top, split)):
        if len(sentences) > 2:
            best = max(range(1, len(sentences)), key=lambda i: scores[i])
            assert sentences[best] in prompt
