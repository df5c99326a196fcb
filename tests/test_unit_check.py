"""The model's check of which unit speaks for a product (agent/assembly/unit_check.py).

The unit ranker reads words and vectors; on budgets that call the model, each answering product's
best `check_units` units are checked by it (one 1-token request each) and the best mix of the
check and the ranker is stated. Through the real auto graph over two invented compressors'
manuals, a scripted model that says yes to another row moves that product's reading to it; the
instant budget never asks."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from agent.app import api
from agent.assembly.product_gate import choose_products
from agent.assembly.manual_units import RankedUnit
from agent.assembly.unit_check import CHECK_WEIGHT, checked_first, checked_score
from agent.context import Context
from agent.retrieval.pool import document_pool
from agent.retrieval.retriever import get_retriever
from tests.document_files import index_of
from tests.test_product_gate import MANUALS, QUESTION, gate_by_first, manual, products_of

CHECK_MARKER = "You check a line from a product's manual"


def unit(sentence: str, probability: float) -> RankedUnit:
    return RankedUnit(SimpleNamespace(sentence=sentence), 0.5, probability, False)


def says_yes_to(word: str):
    """A check that answers yes to the line holding `word`, no to every other."""
    return lambda messages: "yes 0.97" if word in str(messages[-1].content).split("Line:", 1)[1] else "no 0.03"


def checks(scripted) -> list[dict]:
    return [c for c in scripted.calls if CHECK_MARKER in c["text"]]


def test_the_models_yes_moves_a_unit_the_ranker_put_second_to_the_front(scripted):
    scripted.rules.append((CHECK_MARKER, says_yes_to("--test")))
    ranked = [unit("`--ignore-check` — Do not verify the integrity check.", 0.7),
              unit("`-t, --test` — Test the integrity of compressed files.", 0.6),
              unit("`-q` — Be quiet.", 0.1)]
    context = Context(model="scripted")
    first = checked_first("How do I check that an archive is not corrupted?", "Crate", ranked, context, 2)
    assert first[0] is ranked[1] and sorted(map(id, first)) == sorted(map(id, ranked))
    asked = checks(scripted)
    assert len(asked) == 2  # the ranker's first two only
    assert all(c["kwargs"].get("logprobs") and c["kwargs"].get("max_tokens") == 1 for c in asked)
    assert "Question about Crate: How do I check" in asked[0]["text"]


def test_a_check_that_says_nothing_leaves_the_rankers_order(scripted):
    scripted.rules.append((CHECK_MARKER, "maybe"))  # no yes or no among the reply's alternatives
    ranked = [unit("first", 0.7), unit("second", 0.6)]
    assert checked_first("q?", "P", ranked, Context(model="scripted"), 4) == ranked
    assert checked_first("q?", "P", ranked, Context(model="scripted"), 0) == ranked
    assert len(checks(scripted)) == 2  # none asked when checking is off
    assert checked_score(ranked[0], None) == pytest.approx(0.8473, abs=1e-3)  # the ranker's logit alone
    assert checked_score(ranked[0], 0.5) == checked_score(ranked[0], None)  # an unsure check moves nothing
    assert checked_score(ranked[1], 0.9) - checked_score(ranked[1], None) == pytest.approx(CHECK_WEIGHT * 2.1972, abs=1e-3)


@pytest.fixture(scope="module")
def option_manuals(tmp_path_factory) -> str:
    return index_of({f"{folder}/README.md": manual(*fields) for folder, *fields in MANUALS},
                    tmp_path_factory.mktemp("checked-manuals"), tmp_path_factory.mktemp("checked-manuals-index"))


def test_on_the_fast_budget_each_products_reading_is_the_row_the_model_checks_yes(scripted, option_manuals):
    settings = {"model": "scripted", "index_dir": option_manuals, "guess_options": False}
    instant = api.ask(QUESTION, "auto", {**settings, "budget": "instant"})
    assert not scripted.calls and "--keep-source" in instant["answer"]
    scripted.rules.append((CHECK_MARKER, says_yes_to("--verbose")))
    fast = api.ask(QUESTION, "auto", {**settings, "budget": "fast"})
    assert sorted(r["sense"] for r in fast["decision"]["auto"]["assembly"]["readings"]) == ["Squashly", "Zipfrog"]
    assert fast["answer"].count("--verbose") == 2 and "--keep" not in fast["answer"]  # the model's yes outweighs the ranker
    assert 2 <= len(checks(scripted)) <= 8  # at most four units of each answering product
    off = api.ask(QUESTION, "auto", {**settings, "budget": "fast", "check_units": 0})
    assert "--keep-source" in off["answer"] and "--keep" in off["answer"]


@pytest.fixture(scope="module")
def one_manual(tmp_path_factory) -> str:
    folder, *fields = MANUALS[0]
    return index_of({f"{folder}/README.md": manual(*fields)},
                    tmp_path_factory.mktemp("one-manual"), tmp_path_factory.mktemp("one-manual-index"))


def test_over_one_products_manual_the_answer_is_the_row_the_model_checks_yes(scripted, one_manual):
    """A clear question over one product's manual (and the answer once a person has named the
    product) is checked as each product's is over several."""
    settings = {"model": "scripted", "index_dir": one_manual, "guess_options": False}
    instant = api.ask(QUESTION, "auto", {**settings, "budget": "instant"})
    assert not scripted.calls and "--keep" in instant["answer"]
    scripted.rules.append((CHECK_MARKER, says_yes_to("--verbose")))
    fast = api.ask(QUESTION, "auto", {**settings, "budget": "fast"})
    assert "--verbose" in fast["answer"] and "--keep" not in fast["answer"]
    assert 2 <= len(checks(scripted)) <= 4 and all("Question about Zipfrog" in c["text"] for c in checks(scripted))
    off = api.ask(QUESTION, "auto", {**settings, "budget": "fast", "check_units": 0})
    assert "--keep" in off["answer"] and "--verbose" not in off["answer"]


def test_the_models_check_moves_a_product_across_the_gate(scripted, option_manuals):
    """A product the gate only offers answers when the model says yes to its unit; one it passes
    is held back when the model says no to every unit checked, unless no product would be left."""
    context = Context(index_dir=option_manuals, model="scripted")
    pool = document_pool(get_retriever(context), QUESTION, "hybrid", 15, 20, context.document_quota)
    scripted.rules.append((CHECK_MARKER, says_yes_to("--keep")))  # both products' keep rows
    offered_only = choose_products(QUESTION, pool, context, gate_by_first(0.6), checked=4)
    assert products_of(offered_only) == (["Squashly", "Zipfrog"], [])  # the offered one said yes: it answers
    assert len(products_of(choose_products(QUESTION, pool, context, gate_by_first(0.6), checked=0))[0]) == 1

    scripted.rules.insert(0, (CHECK_MARKER, lambda messages: "no 0.03" if "Squashly" in str(messages[-1].content)
                              else "yes 0.97"))
    held = choose_products(QUESTION, pool, context, gate_by_first(0.4), checked=4)
    assert products_of(held) == (["Zipfrog"], ["Squashly"])  # passed, but the model said no: offered

    scripted.rules.insert(0, (CHECK_MARKER, "no 0.03"))
    alone = choose_products(QUESTION, pool, context, gate_by_first(0.4), checked=4)
    assert len(alone.answering) == 1 and alone.answering[0][1] > 0.9  # all said no: the gate's surest stays


def test_a_product_the_check_holds_back_is_offered_and_gets_no_line_of_the_models(scripted, option_manuals):
    """Held back, a product is not stated by another road: the line writer is not asked for it."""
    scripted.rules.append((CHECK_MARKER, lambda messages: "no 0.03" if "Squashly" in str(messages[-1].content)
                           else "yes 0.97"))
    result = api.ask(QUESTION, "auto", {"model": "scripted", "index_dir": option_manuals, "guess_options": False,
                                        "budget": "fast"})
    assert [r["sense"] for r in result["decision"]["auto"]["assembly"]["readings"]] == ["Zipfrog"]
    assert [o["sense"] for o in result["decision"]["auto"]["offered"]] == ["Squashly"]
    assert "write_product_lines" not in result["route"] and "Squashly" not in result["answer"]
    assert all(CHECK_MARKER in c["text"] for c in scripted.calls)  # the checks were the only requests


def test_a_pool_whose_products_have_no_units_chooses_none(monkeypatch):
    from agent.assembly import product_gate as module

    monkeypatch.setattr(module, "product_candidates", lambda *a, **k: [])
    assert choose_products(QUESTION, [], Context(model="scripted"), gate_by_first(0.6), checked=4) == ([], [])
