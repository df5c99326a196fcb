"""The product gate over manuals: which products answer and which unit speaks for each.

Two invented compressors' Markdown manuals, each with a paragraph that describes what happens to
the input file and an options list whose row names the option that keeps it. Through the real
auto graph (instant: no model) each product's reading is its option's row, named after the
product; a clear question naming one product gets that product's row; the gate keeps only the
products its probability passes."""

from __future__ import annotations

import numpy as np
import pytest

from agent.app import api
from agent.assembly.product_gate import (FEATURES, ProductGate, choose_products, load_product_gate, product_answers,
                                         product_candidates)
from agent.assembly.manual_units import RANKER_FEATURES, product_words, shortlist
from agent.assembly.unit_options import names_asked, option_words
from agent.context import Context
from agent.retrieval.pool import document_pool
from agent.retrieval.retriever import get_retriever
from agent.steps.grounding import content_tokens
from tests.document_files import index_of

# (folder, title, name, its keep option's row, its describing sentence)
MANUALS = [
    ("zipfrog", "Zipfrog Manual", "Zipfrog", "`-k`, `--keep`: Keep the input files after compressing them.",
     "By default, Zipfrog deletes each input file once its compressed copy is written and verified."),
    ("squashly", "Squashly Reference", "Squashly", "`-K`, `--keep-source`: Do not remove the source file when done.",
     "Squashly replaces every file it compresses with the compressed file and removes the original."),
]
QUESTION = "How do I keep the original file when compressing?"


def manual(title: str, name: str, row: str, describes: str) -> str:
    return (f"# {title}\n\n{name} is a small compressor for the command line.\n\n## Description\n\n"
            f"{describes} It reads files named on the command line or standard input.\n\n## Options\n\n"
            f"- `-v`, `--verbose`: Print the name and ratio of each file.\n- {row}\n"
            f"- `-1` to `-9`: Set the compression level, from fastest to smallest.\n\n"
            f"## Exit status\n\n{name} exits with status 0 on success and 1 on any error.\n")


def gate_by_first(threshold: float, intercept: float = 0.0) -> ProductGate:
    """A gate that reads only whether a product's passage ranks first: with no intercept, the
    product retrieved first 0.98 and the others 0.5."""
    coef = np.zeros(len(FEATURES))
    coef[FEATURES.index("first_retrieved")] = 4.0
    return ProductGate(coef=coef, intercept=intercept, mean=np.zeros(len(FEATURES)), scale=np.ones(len(FEATURES)),
                       threshold=threshold)


def products_of(choice) -> tuple[list[str], list[str]]:
    """(the answering products, the offered ones) of a ProductChoice, each sorted."""
    return tuple(sorted(c.passage["product"] for c, _ in part) for part in choice)


@pytest.fixture(scope="module")
def option_manuals(tmp_path_factory) -> str:
    return index_of({f"{folder}/README.md": manual(*fields) for folder, *fields in MANUALS},
                    tmp_path_factory.mktemp("option-manuals"), tmp_path_factory.mktemp("option-manuals-index"))


def test_an_option_named_by_a_word_of_the_question_is_recognised():
    asked = set(content_tokens(QUESTION))
    assert option_words("-d --decompress --uncompress Decompress.") == {"decompres", "uncompres"}
    assert option_words("`-d`, `--decompress`: Decompress.") == {"decompres"}
    assert names_asked("-k --keep Keep (don't delete) input files during compression.", asked)
    assert names_asked("`-K, --keep-source` — Do not remove the source file.", asked)
    assert option_words("-n --no-name Do not save the name.") == {"name"}  # "no" says nothing
    assert not names_asked("Keep the original file by copying it first.", asked)  # prose names no option
    assert not names_asked("`-f`, `--force`: Overwrite existing files.", asked)


def test_each_product_is_stated_with_its_option_row_not_the_sentence_that_describes(scripted, option_manuals):
    result = api.ask(QUESTION, "auto", {"model": "scripted", "index_dir": option_manuals, "budget": "instant"})
    readings = result["decision"]["auto"]["assembly"]["readings"]
    assert sorted(r["sense"] for r in readings) == ["Squashly", "Zipfrog"]
    answer = result["answer"]
    assert "--keep" in answer and "--keep-source" in answer
    assert "deletes each input file" not in answer and "removes the original" not in answer
    assert "For Zipfrog, " in answer and "For Squashly, " in answer and not scripted.calls


def test_a_clear_question_naming_one_product_gets_its_option_row(scripted, option_manuals):
    result = api.ask("How do I keep the original file when compressing with Squashly?", "auto",
                     {"model": "scripted", "index_dir": option_manuals, "budget": "instant"})
    assert "--keep-source" in result["answer"] and "Zipfrog" not in result["answer"]
    assert "removes the original" not in result["answer"]


def test_the_product_a_question_names_is_no_option_it_names(tmp_path):
    """"zstd" in "How do I unlock zstd's highest levels?" names the product, not a "--zstd" row."""
    row = "`-K`, `--keep-source`: Do not remove the source file when done.\n- `--squashly-legacy`: Write the old format"
    index = index_of({"squashly/README.md": manual("Squashly Reference", "Squashly", row, "Squashly removes files.")},
                     tmp_path / "docs", tmp_path / "index")
    question = "How do I keep the original file when compressing with Squashly?"
    context = Context(index_dir=index)
    pool = document_pool(get_retriever(context), question, "hybrid", 15, 20, context.document_quota)
    assert product_words(pool) == set(content_tokens("Squashly"))
    units, rows = shortlist(question, pool, context)
    named = [u.sentence for u, row in zip(units, rows) if row[RANKER_FEATURES.index("option_named")]]
    assert len(named) == 1 and "--keep-source" in named[0]


def test_the_gate_keeps_only_the_products_its_probability_passes(option_manuals):
    context = Context(index_dir=option_manuals)
    pool = document_pool(get_retriever(context), QUESTION, "hybrid", 15, 20, context.document_quota)
    found = product_candidates(QUESTION, pool, context)
    assert [f.product for f in found] and len(found) == 2
    # a gate that reads only whether the product's passage ranks first: the first passes, the second does not
    kept = product_answers(QUESTION, pool, context, gate_by_first(0.5, intercept=-2.0))
    assert [c.passage["product"] for c, _ in kept] == [found[0].product]
    assert product_answers(QUESTION, [p for p in pool if p.get("product") == found[0].product], context) is None


def test_the_shipped_gate_reads_this_codes_features():
    gate = load_product_gate()
    assert gate.coef.shape == (len(FEATURES),) and 0.0 < gate.threshold < 1.0


def test_two_products_answering_with_the_same_option_are_each_stated(scripted, tmp_path):
    """Tools that share a vocabulary often answer with the same option, worded alike: that is each
    product's answer, not the first one's said again."""
    row = "`-k`, `--keep`: Keep the input files after compressing them."
    files = {f"{folder}/README.md": manual(title, name, row, describes)
             for folder, title, name, _, describes in MANUALS}
    index = index_of(files, tmp_path / "docs", tmp_path / "index")
    result = api.ask(QUESTION, "auto", {"model": "scripted", "index_dir": index, "budget": "instant"})
    readings = result["decision"]["auto"]["assembly"]["readings"]
    assert sorted(r["sense"] for r in readings) == ["Squashly", "Zipfrog"]
    assert result["answer"].count("--keep") == 2
    assert "For Zipfrog, " in result["answer"] and "For Squashly, " in result["answer"]


def test_the_answer_and_the_offered_products_come_from_one_ranking_of_each_products_units(
        scripted, option_manuals, monkeypatch):
    """Ranking a product's units reads each of them with the reader, the costly part of a question
    over several manuals: the gate's signals rank them once, and the readings and the products
    offered beside them share one more ranking."""
    from agent.assembly import product_gate as module

    ranked = []
    real = module.product_candidates
    monkeypatch.setattr(module, "product_candidates", lambda *a, **k: ranked.append(1) or real(*a, **k))
    result = api.ask(QUESTION, "auto", {"model": "scripted", "index_dir": option_manuals, "budget": "instant"})
    assert sorted(r["sense"] for r in result["decision"]["auto"]["assembly"]["readings"]) == ["Squashly", "Zipfrog"]
    assert len(ranked) == 2


def test_a_product_the_gate_holds_back_is_offered_with_its_unit(option_manuals):
    context = Context(index_dir=option_manuals)
    pool = document_pool(get_retriever(context), QUESTION, "hybrid", 15, 20, context.document_quota)
    gate = gate_by_first(0.6)  # the first product 0.98, the second 0.5: over OFFER_FLOOR, under the threshold
    choice = choose_products(QUESTION, pool, context, gate)
    answering, offered = products_of(choice)
    assert len(answering) == 1 and len(offered) == 1 and set(answering) | set(offered) == {"Zipfrog", "Squashly"}
    assert all("--keep" in c.sentence for c, _ in choice.offered)
    assert choice.answering == product_answers(QUESTION, pool, context, gate)
