"""Which unit of a product's manuals answers: every unit of its documents, not only the pool's.

A manual's option list is cut into passages of a dozen options each, and the embedding of such a
passage is far from any one question: the row that answers ("-k --keep  Keep (don't delete) input
files") is often not among the retrieved passages although its document is. On the manuals' tune
products the labelled unit was in auto's pool for 27 of 49 ambiguous senses. So a product's units
are read from all of its documents' passages (`document_units`), and a short list is made of
them (`shortlist`): the SHORTLIST units that name an option the question names or share its
rarest words (`shared_words`), the SHORTLIST nearest the question in meaning (a question often
says it otherwise: "not corrupted" for "Test the integrity"), and the units of the product's best
retrieved passage. A ranker over RANKER_FEATURES (the reader's logit, the words shared against the
list's best, whether an option is named, whether the unit says how, the cosine of its passage and
of the unit itself to the question) orders the list; the reader, the costly part, reads only the
READ units the ranker prefers before it (`to_read`). The ranker is learned on the tune products
(`bench/train_product_gate.py`; card: agent/data/product_gate_card.md). It reads the reader's
probability whatever `reading_scorer` says: the selector's features were learned on encyclopedia
sentences, and over manuals they rank an option's row below the prose around it.
"""

from __future__ import annotations

import math
import os
import threading
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from agent.assembly.features import Candidate, candidates
from agent.assembly.option_guess import GUESS_FEATURES, guess_features
from agent.assembly.selector import SelectorModel, load_logistic, logit, readable, reader_scores
from agent.assembly.unit_options import names_asked
from agent.assembly.units import says_how, unit_prose
from agent.context import Context
from agent.documents.citation import location
from agent.retrieval.products import product_of
from agent.retrieval.retriever import get_retriever, passage_vectors, sentence_vectors
from agent.steps.grounding import content_tokens

RANKER_PATH = Path(__file__).resolve().parents[1] / "data" / "unit_ranker.npz"
RANKER_FEATURES = ("reader_logit", "words_shared", "option_named", "says_how", "passage_cosine", "unit_cosine")
# with the model's guess of the option names asked for (agent/assembly/option_guess.py)
GUESSED_RANKER_PATH = RANKER_PATH.with_name("unit_ranker_guessed.npz")
GUESSED_RANKER_FEATURES = RANKER_FEATURES + GUESS_FEATURES
SHORTLIST = 10  # units per channel (words, meaning): the two tens held a labelled unit for 79 of 91 tune senses
READ = 6  # units of a product's short list the reader reads when several products compete
READER_COLUMN = RANKER_FEATURES.index("reader_logit")
GUESS_OVERLAP = 0.5  # a unit whose option shares half a guessed name's words ("--keep" for "--keep-files") is listed
LENGTH_DISCOUNT = 0.02  # per content word: a long unit shares more words by its length alone
# how much surer the ranker may be of a unit that only describes than of one that says how, and the
# one that says how still go first: on the tune lists (each question left out of the ranker's fit)
# 0.05 put a labelled unit first in 73 of 119, against 70 with none, 71 at 0.02 and 0.1, 65 always
HOW_MARGIN = 0.05
HOW_COLUMN = RANKER_FEATURES.index("says_how")


@dataclass(frozen=True)
class RankedUnit:
    """A unit of a product's documents with the reader's probability and the ranker's (the sigmoid of
    its score: it orders a product's units, the gate reads the score)."""

    candidate: Candidate
    reader: float
    probability: float
    says_how: bool  # the ranker's row says so; a near tie goes to it (`how_first`)


@lru_cache(maxsize=4)
def load_unit_ranker(path: str = str(RANKER_PATH), features: tuple[str, ...] = RANKER_FEATURES) -> SelectorModel:
    """The shipped ranker."""
    return load_logistic(path, features, "unit ranker", "bench/train_product_gate.py")


def unit_ranker(guessed: bool) -> SelectorModel:
    """The shipped ranker that reads the model's guessed option names, or the one without them."""
    return load_unit_ranker(str(GUESSED_RANKER_PATH), GUESSED_RANKER_FEATURES) if guessed else load_unit_ranker()


def ranked_units(question: str, passages: list[dict], context: Context,
                 ranker: SelectorModel | None = None, read_at_most: int | None = READ,
                 guessed: tuple[str, ...] = ()) -> list[RankedUnit]:
    """The units of the documents `passages` come from that the reader reads (`to_read`: at most
    `read_at_most` of the short list, all of it for None), the ranker's most probable first; empty
    when they hold none. `guessed`: the model's guess of the option names asked for, read by the
    ranker trained with them."""
    ranker = ranker or unit_ranker(bool(guessed))
    units, rows = to_read(*shortlist(question, passages, context, guessed), ranker, read_at_most)
    if not units:
        return []
    reader = read(question, units, rows)
    probabilities = ranker.probabilities(rows)
    ranked = sorted((RankedUnit(unit, p, float(q), bool(how))
                     for unit, p, q, how in zip(units, reader, probabilities, rows[:, HOW_COLUMN] > 0)),
                    key=lambda unit: -unit.probability)
    return how_first(ranked)


def how_first(ranked: list[RankedUnit]) -> list[RankedUnit]:
    """`ranked` (the likeliest first) with the likeliest unit that says how moved first where the
    first only describes and the ranker is as sure of it within HOW_MARGIN: a near tie goes to the
    unit that says how, as the manuals answer."""
    near = next((unit for unit in ranked if unit.says_how), None)
    if near is None or ranked[0].says_how or ranked[0].probability - near.probability > HOW_MARGIN:
        return ranked
    return [near] + [unit for unit in ranked if unit is not near]


def shortlist(question: str, passages: list[dict], context: Context,
              guessed: tuple[str, ...] = ()) -> tuple[list[Candidate], np.ndarray]:
    """(the readable units of the documents `passages` come from that the question names an option
    of or shares the most words with, SHORTLIST of them, those nearest it in meaning, SHORTLIST
    more, those naming an option the model guessed (`guessed`), SHORTLIST more, and the units of
    `passages[0]` (the best retrieved); the ranker's row of each, RANKER_FEATURES, then
    GUESS_FEATURES when there is a guess, its reader's logit left 0 for `read`). Words alone miss
    a question that says it otherwise ("not corrupted" for "Test the integrity"): on the tune
    products the words' ten held a labelled unit for 53 of 91 senses, with the ten nearest in
    meaning 79."""
    columns = len(GUESSED_RANKER_FEATURES if guessed else RANKER_FEATURES)
    found, said = document_units(passages, context)
    if not found:
        return [], np.zeros((0, columns))
    asked = set(content_tokens(question))
    shared = _shared(asked, said)
    options_asked = asked - product_words(passages)  # "zstd" in the question names the product, not "--zstd"
    named = [names_asked(c.sentence, options_asked) for c in found]
    by_words = sorted(range(len(found)), key=lambda i: (-named[i], -shared[i], i))[:SHORTLIST]
    retriever = get_retriever(context)
    asked_vector = sentence_vectors(retriever, [question])[0]
    meaning = sentence_vectors(retriever, [unit_prose(c.sentence) for c in found], keep=True) @ asked_vector
    by_meaning = sorted(range(len(found)), key=lambda i: (-meaning[i], i))[:SHORTLIST]
    guess = [guess_features(c.sentence, list(guessed)) for c in found] if guessed else []
    by_guess = sorted((i for i, (exact, letter, overlap) in enumerate(guess) if exact or letter or overlap >= GUESS_OVERLAP),
                      key=lambda i: (-guess[i][0], -guess[i][2], -guess[i][1], i))[:SHORTLIST]
    short = sorted(set(by_words) | set(by_meaning) | set(by_guess)
                   | {i for i, c in enumerate(found) if c.passage["id"] == passages[0]["id"]})
    units = [found[i] for i in short]
    best_shared = max(shared[i] for i in short) or 1.0
    closeness = passage_vectors(retriever, [u.passage for u in units]) @ asked_vector
    rows = np.array([[0.0, shared[i] / best_shared, float(named[i]), float(says_how(unit.passage, unit.sentence)),
                      float(near), float(meaning[i]), *(guess[i] if guessed else ())]
                     for i, unit, near in zip(short, units, closeness)])
    return units, rows.reshape(len(units), columns)


def product_words(passages: list[dict]) -> set[str]:
    """The words of the names of the products `passages` document, as the question's words are
    counted."""
    names = {p.get("product") or product_of(p) for p in passages}
    return {word for name in names if name for word in content_tokens(name)}


def to_read(units: list, rows: np.ndarray, ranker: SelectorModel, at_most: int | None = READ
            ) -> tuple[list, np.ndarray]:
    """The `at_most` units the ranker prefers before the reader has read them (its other features
    only), in list order: the reader is the costly part of a question over several products, and on
    the tune products the ranker's first of six so kept is the labelled unit about as often as its
    first of the whole list (70 and 70 of the 119 tune lists holding a labelled unit, each question
    left out of the ranker's fit)."""
    if at_most is None or len(units) <= at_most:
        return units, rows
    unread = rows.copy()
    unread[:, READER_COLUMN] = 0.0
    kept = sorted(np.argsort(-ranker.probabilities(unread), kind="stable")[:at_most])
    return [units[i] for i in kept], rows[kept]


def read(question: str, units: list[Candidate], rows: np.ndarray) -> list[float]:
    """The reader's probability of each unit, its logit written into the rows' first column."""
    reader = reader_scores(question, units)
    rows[:, READER_COLUMN] = logit(np.asarray(reader, dtype=float))
    return [float(p) for p in reader]


def shared_words(asked: set[str], units: list[str]) -> list[float]:
    """How much of the question each unit says: the rarity (inverse document frequency among these
    units) of the question's content words it holds, discounted by its length."""
    return _shared(asked, [unit_words(unit) for unit in units])


def unit_words(unit: str) -> frozenset[str]:
    """The content words a unit says, as `shared_words` counts them."""
    return frozenset(content_tokens(unit_prose(unit)))


def _shared(asked: set[str], said: list[frozenset[str]]) -> list[float]:
    counts = Counter(word for words in said for word in words & asked)
    rarity = {word: math.log((len(said) + 1) / (counts[word] + 0.5)) for word in asked}
    return [sum(rarity[word] for word in words & asked) / (1 + LENGTH_DISCOUNT * len(words)) for words in said]


def document_units(passages: list[dict], context: Context) -> tuple[list[Candidate], list[frozenset[str]]]:
    """(the readable units of every passage of the documents `passages` come from, in reading
    order, each passage tagged with its document's product as the pool tags it (the pool's own
    dict where it holds the passage); the content words each unit says). `passages`' own units
    where they come from no document. A document's units are split and read once per index
    version: the gate and the readings read the same products in turn."""
    documents = _documents(passages)
    if not documents:
        found = [c for c in candidates(passages) if readable(c)]
        return found, [unit_words(c.sentence) for c in found]
    stored, units = _stored_units(get_retriever(context).store, documents)
    tagged = _as_pool_tags(passages, stored)
    return [Candidate(tagged[i], position, sentence, i) for i, position, sentence, _ in units], [w for *_, w in units]


def embed_units_under(context: Context, paths: list[str]) -> int:
    """`embed_document_units` for the documents read from `paths` (files or folders), where the
    index keeps their vectors (agent/retrieval/vector_cache.py); 0 otherwise. Run after an ingest."""
    retriever = get_retriever(context)
    if getattr(retriever, "vector_cache", None) is None:
        return 0
    roots = {os.path.abspath(os.path.expanduser(path)) for path in paths}
    return embed_document_units(context, sorted({doc for root in roots for doc in retriever.store.documents_under(root)}))


def embed_document_units(context: Context, documents: list[str]) -> int:
    """Embed the units of `documents` now, into the vectors kept beside the index
    (agent/retrieval/vector_cache.py), so the first question over them does not wait for it;
    returns how many units they hold. Done after an ingest: a question over a product reads
    every unit of its documents (`shortlist`)."""
    retriever = get_retriever(context)
    total = 0
    for document in documents:  # read past the questions' memo: an ingest's documents one by one would crowd it out
        _, units = _read_units(retriever.store, (document,))
        if units:
            sentence_vectors(retriever, [unit_prose(sentence) for _, _, sentence, _ in units], keep=True)
        total += len(units)
    return total


def _documents(passages: list[dict]) -> tuple[str, ...]:
    return tuple(sorted({location(p).get("document") for p in passages} - {None, ""}))


def _as_pool_tags(passages: list[dict], stored: list[dict]) -> list[dict]:
    """`stored` as the pool has them: its own dict where it holds the passage (so a unit of one
    cites it as the pool numbers it), else tagged with its document's product."""
    products = {location(p).get("document"): p.get("product") for p in passages}
    given = {p["id"]: p for p in passages}
    return [given.get(p["id"]) or ({**p, "product": products[p["document"]]} if products.get(p.get("document")) else p)
            for p in stored]


_MEMO: dict[tuple, tuple[list[dict], list[tuple]]] = {}
_MEMO_LOCK = threading.Lock()
MEMO_SIZE = 64  # documents sets; a question reads a few, its gate and readings read the same again


def _stored_units(store, documents: tuple[str, ...]) -> tuple[list[dict], list[tuple[int, int, str, frozenset[str]]]]:
    """(the stored passages of `documents`, in document then passage order; their readable units as
    (passage index, position, unit, its content words)): read once per index version."""
    key = (str(getattr(store, "path", "")), store.version(), documents)
    with _MEMO_LOCK:
        if key in _MEMO:
            return _MEMO[key]
    found, units = _read_units(store, documents)
    with _MEMO_LOCK:
        if len(_MEMO) >= MEMO_SIZE:
            _MEMO.clear()
        _MEMO[key] = (found, units)
    return found, units


def _read_units(store, documents: tuple[str, ...]) -> tuple[list[dict], list[tuple[int, int, str, frozenset[str]]]]:
    """`_stored_units`, read from the store each time."""
    rows = store.chunk_rows(list(documents))
    ids = [pid for document in documents for pid in sorted(rows.get(document, {}), key=_passage_order)]
    stored = store.get(ids)
    found = [stored[pid] for pid in ids if pid in stored]
    return found, [(c.rank, c.position, c.sentence, unit_words(c.sentence)) for c in candidates(found) if readable(c)]


def _passage_order(passage_id: str) -> tuple:
    """"doc#p3.12" and "doc#7" in reading order: the numbers after "#", as numbers."""
    tail = passage_id.rsplit("#", 1)[-1].lstrip("p")
    return tuple(int(part) if part.isdigit() else 0 for part in tail.split("."))
