"""A product's unit is read from all of its documents' passages, not only those the search returned.

One invented compressor's manual, long enough to be cut into several passages, whose option that
keeps the input file stands in a passage of its own far from the description. Given only the
description's passage, the unit ranker still finds that option's row, and the pool's own passage
dicts are kept so that a reading cites the passage as the pool numbers it."""

from __future__ import annotations

import numpy as np
import pytest

from agent.assembly.manual_units import (GUESSED_RANKER_FEATURES, HOW_MARGIN, READ, RANKER_FEATURES, SHORTLIST,
                                         RankedUnit, _passage_order, how_first,
                                         document_units, load_unit_ranker, ranked_units, read, shared_words,
                                         shortlist, to_read)
from agent.assembly.units import says_how
from agent.context import Context
from agent.retrieval.retriever import get_retriever
from tests.document_files import index_of

QUESTION = "How do I keep the input files when compressing?"
FILLER = ["level", "threads", "memory", "suffix", "quiet", "verbose", "force", "stdout", "list", "test",
          "recursive", "name", "no-name", "license", "version", "help", "format", "check", "sparse", "block"]


def manual() -> str:
    rows = "\n".join(f"- `--{word}`: Sets the {word} behaviour of the tool for every file it reads on the "
                     f"command line, as the section on {word} describes in more detail below." for word in FILLER)
    return ("# Pressly Manual\n\n## Description\n\nPressly is a compressor for the command line. It replaces "
            "each file it compresses by a file with the .pz suffix and removes the original once the copy "
            "is written.\n\n## Options\n\n" + rows +
            "\n- `-k`, `--keep`: Keep (do not delete) the input files after compressing them.\n")


@pytest.fixture(scope="module")
def long_manual(tmp_path_factory) -> str:
    return index_of({"pressly/README.md": manual()}, tmp_path_factory.mktemp("long-manual"),
                    tmp_path_factory.mktemp("long-manual-index"))


def first_passage(context: Context) -> dict:
    ranked = get_retriever(context).search("Pressly compressor replaces each file removes the original", "sparse", 1)
    return {**ranked[0], "product": "Pressly"}


def test_the_option_row_is_found_in_a_passage_the_search_did_not_return(long_manual):
    context = Context(index_dir=long_manual)
    given = first_passage(context)
    assert "--keep" not in given["text"]
    units, said = document_units([given], context)
    everything = list({id(c.passage): c.passage for c in units}.values())
    assert len(everything) > 2 and all(p["product"] == "Pressly" for p in everything)
    assert any(p is given for p in everything)  # the pool's own dict: a reading cites it as the pool numbers it
    assert len(said) == len(units) and any("keep" in words for words in said)
    ranked = ranked_units(QUESTION, [given], context)
    assert ranked and "--keep" in ranked[0].candidate.sentence
    assert ranked[0].candidate.passage["id"] != given["id"]
    assert [r.probability for r in ranked] == sorted((r.probability for r in ranked), reverse=True)


def test_rarer_shared_words_weigh_more_and_length_discounts():
    asked = {"keep", "input", "file"}
    units = ["The file is read.", "The file is read.", "Keep the input.", "Keep the input " + "word " * 60]
    scores = shared_words(asked, units)
    assert scores[2] > scores[0] == scores[1]  # "keep" and "input" are rarer than "file"
    assert scores[3] < scores[2]


def test_passages_are_read_in_document_order():
    ids = ["d#p3.12", "d#p10.0", "d#p3.2", "d#7", "d#12"]
    assert sorted(ids, key=_passage_order) == ["d#p3.2", "d#p3.12", "d#7", "d#p10.0", "d#12"]


def test_a_ranker_trained_on_other_features_is_refused(tmp_path):
    shipped = load_unit_ranker()
    assert shipped.coef.shape == (len(RANKER_FEATURES),)
    other = tmp_path / "ranker.npz"
    np.savez(other, coef=np.zeros(2), intercept=0.0, mean=np.zeros(2), scale=np.ones(2), threshold=0.5,
             features=np.array(["reader_logit", "something_else"]))
    with pytest.raises(ValueError, match="other features"):
        load_unit_ranker(str(other))


def test_an_option_line_as_a_man_page_text_has_it_says_how():
    assert says_how({}, "-k --keep Keep (don't delete) input files during compression.")
    assert says_how({}, "--rm: remove source file(s) after successful compression.")
    assert not says_how({}, "-- has xx other links: unchanged")  # a diagnostic, not an option
    assert not says_how({}, "The -k flag keeps the input files.")


SAID_OTHERWISE = "How can I verify that an archive is not damaged?"


def worded_alike_manual() -> str:
    """Twenty options that share the question's words and one, worded otherwise, that answers it."""
    rows = "\n".join(f"- `--{word}`: Sets how the archive {word} is damaged or verified when the tool "
                     f"writes it, as the section on {word} describes." for word in FILLER)
    return ("# Crate Manual\n\n## Options\n\n" + rows +
            "\n- `-t`, `--test`: Test the integrity of compressed files.\n")


def test_a_unit_worded_otherwise_is_short_listed_by_its_meaning(tmp_path):
    index = index_of({"crate/README.md": worded_alike_manual()}, tmp_path / "files", tmp_path / "index")
    context = Context(index_dir=index)
    given = {**get_retriever(context).search("Crate archive options", "sparse", 1)[0], "product": "Crate"}
    units, rows = shortlist(SAID_OTHERWISE, [given], context)
    found = [i for i, unit in enumerate(units) if "integrity" in unit.sentence]
    assert found
    shared = rows[:, RANKER_FEATURES.index("words_shared")]
    assert shared[found[0]] == 0 and (shared > 0).sum() >= SHORTLIST  # the words alone would miss it
    assert np.all(rows[:, RANKER_FEATURES.index("reader_logit")] == 0)  # not read yet: `read` fills it
    read(SAID_OTHERWISE, units, rows)
    assert np.any(rows[:, RANKER_FEATURES.index("reader_logit")] != 0)


def test_the_reader_reads_the_units_the_ranker_prefers_unread(long_manual):
    context = Context(index_dir=long_manual)
    given = first_passage(context)
    units, rows = shortlist(QUESTION, [given], context)
    assert len(units) > READ
    kept, kept_rows = to_read(units, rows, load_unit_ranker())
    assert len(kept) == READ and kept_rows.shape == (READ, len(RANKER_FEATURES))
    assert any("--keep" in unit.sentence for unit in kept)
    assert len(ranked_units(QUESTION, [given], context)) == READ
    assert len(ranked_units(QUESTION, [given], context, read_at_most=None)) == len(units)


WORDED_APART = "How do I replace an output file that is already there?"  # the --force row says neither "replace" nor "output"


def test_a_guessed_option_name_short_lists_and_ranks_its_row(long_manual):
    context = Context(index_dir=long_manual)
    given = first_passage(context)
    units, rows = shortlist(WORDED_APART, [given], context, ("--force", "-f", "--overwrite"))
    assert rows.shape == (len(units), len(GUESSED_RANKER_FEATURES))
    named = GUESSED_RANKER_FEATURES.index("guess_named")
    forced = [i for i, unit in enumerate(units) if unit.sentence.startswith("`--force` — ")]
    assert forced and rows[forced[0], named] == 1 and rows[:, named].sum() == 1
    ranked = ranked_units(WORDED_APART, [given], context, guessed=("--force", "-f", "--overwrite"))
    assert ranked[0].candidate.sentence.startswith("`--force` — ")
    unguessed, unguessed_rows = shortlist(WORDED_APART, [given], context)
    assert unguessed_rows.shape[1] == len(RANKER_FEATURES)  # no guess: the ranker trained without one reads it


def test_a_near_tie_goes_to_the_unit_that_says_how():
    describes, tells = RankedUnit("describes", 0.9, 0.98, False), RankedUnit("tells how", 0.8, 0.98 - HOW_MARGIN / 2, True)
    assert how_first([describes, tells])[0] is tells
    far = RankedUnit("tells how", 0.8, 0.98 - 2 * HOW_MARGIN, True)
    assert how_first([describes, far])[0] is describes  # the ranker is surer than a near tie
    assert how_first([tells, describes])[0] is tells and how_first([describes]) == [describes]
