"""Compose the answer a user reads: one short cited sentence per reading, introduced by its
sense in plain words, then the model's sentences that passed the checks and say something new.
"""

from __future__ import annotations

import re

from agent.assembly.selector import restates, says_again
from agent.assembly.text import (
    SENTENCE_END,
    STOPWORDS,
    answer_units,
    cited_sentence,
    content_tokens,
    is_question,
    said_words,
)
from agent.assembly.unit_options import is_option_unit
from agent.assembly.units import join_units, split_code
from agent.documents.citation import location
from agent.steps.interpretations import NOT_IN_DOCUMENTS, marker, sentences

MAX_SENTENCE = 600  # characters of a reading's sentence before it is cut at a word and marked as an excerpt


def sense_name(passage: dict) -> str:
    """The sense a passage stands for, in plain words: the product its document is about, when
    it was read from a file (`product`, agent/retrieval/products.py: "For Quillpad, ..." rather
    than its heading's "For User Guide, ..."), else its title less a section after a colon
    ("Saturn V: design and size" is about the Saturn V; a man page "zstd.1" or "zstd(1)" about zstd). A parenthesized aside stays: it is
    what tells the senses of one name apart ("Titan (submersible)" beside the moon's "Titan")."""
    if passage.get("product"):
        return passage["product"]
    title = passage.get("title", "").strip()
    if _MAN_SECTION.match(title) and location(passage).get("document", "").rsplit("/", 1)[-1].startswith(title):
        title = _MAN_SECTION.sub(r"\1", title)  # a man page's file: "zstd.1.txt" is zstd's page
    head, colon, _ = title.partition(": ")
    name = head.strip() if colon and head.strip() else title
    return _MAN_REFERENCE.sub(r"\1", name)  # "ctest(1)", as a rendered man page titles itself: ctest


_MAN_SECTION = re.compile(r"^([A-Za-z][\w+-]{1,40})\.[1-9][a-z]{0,3}$")
_MAN_REFERENCE = re.compile(r"^([A-Za-z][\w+-]{1,40})\([1-9][a-z]{0,3}\)$")


QUESTION_HEADING = re.compile(r"^(?:why|how|what|when|where|who|whom|which)\b", re.IGNORECASE)


def lead_sense(passage: dict) -> str:
    """The sense a reading is introduced by, or "" when the passage's title is a heading that
    asks a question ("Why the vendor security review exists"): "For Why ..., " names no sense."""
    sense = sense_name(passage)
    return "" if QUESTION_HEADING.match(sense) else sense


# words that open a sentence and are never names, though a passage may write them in lower case nowhere else
OPENERS = frozenset("if unless once since because until each every any anyone anything all some most many several "
                    "few one among amongst across around along within without despite unlike like following "
                    "according".split())
# a sentence opening with one of these needs its sense named to be read alone ("Its average discharge ...")
REFERS_BACK = frozenset("it its they their them he his she her this these those".split())


def after_lead(word: str, passage: dict, passages: list[dict], following: str = "") -> str:
    """A sentence's first word as it reads after "For <sense>, ": kept when it is a name (`is_name`)
    or the next word's capital continues it ("Leo Fender ..."); else in lower case: a common word
    ("Completed reviews ...", "Attendance is mandatory ..."). Lower case also where its own passage
    writes it so at least as often as it capitalizes it inside a sentence; only its own: another
    sense's may write a name as a word ("java", the coffee), and a passage on the language Ruby
    names the gem "ruby" once beside many "Ruby"."""
    lower = word.lower()
    if word in ("I", lower) or word.isupper() and len(word) > 1:
        return word
    bare = lower.strip(",;:")
    text = passage.get("text", "")
    lower_times = len(re.findall(rf"(?<![\w-]){re.escape(bare)}(?![\w-])", text))
    written_lower = 0 < lower_times >= len(inside_sentence(word.strip(",;:")).findall(text))
    if bare in STOPWORDS or bare in OPENERS or written_lower:
        return lower
    if following[:1].isupper() or re.search(r"[A-Z\d]", word[1:]):
        return word  # "Leo Fender", "eBay", "HP-41"
    return word if is_name(re.sub(r"['\u2019]s$", "", word.strip(",;:")), [passage, *passages]) else lower


def is_name(word: str, passages: list[dict]) -> bool:
    """Whether the passages capitalize the word inside a sentence ("... at Northwind Corp") or a
    title does ("Northwind Rental Car Policy"): a word capitalized only where a sentence starts
    is a common one ("Attendance is mandatory ...")."""
    inside = inside_sentence(word)
    anywhere = re.compile(rf"(?<![\w-]){re.escape(word)}(?![\w-])")
    return any(inside.search(p.get("text", "")) or anywhere.search(p.get("title", "")) for p in passages)


def inside_sentence(word: str) -> re.Pattern:
    """The word as written after another word inside a sentence, not where a sentence starts."""
    return re.compile(rf"[\w,;)] {re.escape(word)}(?![\w-])")


def names_sense(sentence: str, sense: str) -> bool:
    """Whether the sentence already says which sense it is about (its words hold the sense's). A
    file's suffix names no product (".lz4 files" in lz4's option row says which files, not whose
    option), so suffixes are read as nothing on both sides ("Coverage.py" is named by "Coverage")."""
    wanted = set(content_tokens(_SUFFIX.sub("", sense)))
    return bool(wanted) and wanted <= set(content_tokens(_SUFFIX.sub("", sentence)))


_SUFFIX = re.compile(r"\.\w+")  # ".lz4", ".py": a dot that ends a sentence has no word right after it


def reading_text(sentence: str, passage: dict, passages: list[dict], lead: bool = True) -> str:
    """The reading as the user reads it: "For <sense>, <sentence> [n]." when the sentence does
    not name its sense itself and either `lead` (the answer speaks of more than one sense) or
    it opens by referring back ("It ..."); else the sentence and its citation. An option's row of
    several sentences cites each ("`-Q, --quiet` — Make CTest quiet [6]. This option will suppress
    all the output [6]."), as does a lead-in of several: the one naming the option is no less the
    passage's. A lead-in's code block follows it on lines of its own, as it stands in the passage."""
    body, code = split_code(sentence)
    body = body.replace('""', '"').strip()
    if len(body) > MAX_SENTENCE:
        body = body[:MAX_SENTENCE].rsplit(" ", 1)[0].rstrip(" ,;:") + " ..."
    elif body[-1:] not in SENTENCE_END and not code:  # the passage is cut mid-sentence: say it is an excerpt
        body = body.rstrip(" ,;:") + " ..."
    first, _, rest = body.partition(" ")
    sense = lead_sense(passage) if lead or first.lower().strip(",;:") in REFERS_BACK else ""
    # an option's row opens with its names, so a product it names further on ("... xz will display
    # a progress indicator") does not say whose option it is: the row is introduced all the same
    if sense and (not names_sense(body, sense) or is_option_unit(sentence)):
        sense = re.sub(r"^The\b", "the", sense)  # "For the Customer Onboarding team, ..."
        first = after_lead(first, passage, passages, rest)
        body = f"For {sense}, {first} {rest}".rstrip()
    mark = marker([passage["id"]], passages)
    pieces = sentences(body) if is_option_unit(sentence) or code else []
    cited = " ".join(cited_sentence(piece, mark) for piece in pieces) if len(pieces) > 1 else cited_sentence(body, mark)
    return f"{cited}\n{code}" if code else cited


def repeats(sentence: str, earlier: list[str], question: str = "") -> bool:
    """Whether the sentence says one earlier sentence again (agent/assembly/selector.py
    `says_again`), or, given the `question`, says nothing beyond it that one earlier sentence does
    not ("The first prize at NorthHack was $15,000 [1]." after "For InvoiceLens, the team received
    the first prize of $15,000 [1]."): the same answer in the question's words."""
    words = said_words(sentence)
    beyond = words - said_words(question) if question else set()
    return any(says_again(words, said) or (beyond and beyond <= said) for said in map(said_words, earlier))


_LAST_CLAUSE = re.compile(r"^(?P<head>.+?)(?:,\s+and|;)\s+(?P<tail>[^;]+?)(?P<end>(?:\s*\[[\d,\s]+\])*\s*[.!?]?\s*)$")


def without_restated_clause(sentence: str, earlier: list[str]) -> str:
    """The sentence less a last clause (after ", and" or ";") that says one `earlier` sentence
    again ("Reviews are held each November, and completed reviews must be submitted by 15
    December [1]." after the reading "... completed reviews must be submitted by 15 December
    [1]."): what is new stays, the repeat goes. Unchanged when no last clause restates one."""
    found = _LAST_CLAUSE.match(sentence.strip())
    if not found or not earlier:
        return sentence
    tail = said_words(found["tail"])
    if len(tail) < 2 or not any(restates(tail, said) for said in map(said_words, earlier)):
        return sentence
    return f"{found['head'].rstrip(' ,')}{found['end'].rstrip() or '.'}"


def compose(first: list[str], then: list[str], gaps: list[str] = ()) -> str:
    """`first` as they are (auto: the readings, shown first), then the sentences of `then` that
    say something new, then gap notes. A question the model wrote goes with its answer: it is
    no sentence of the answer alone ("What is Java commonly known for?" after a reading that
    says it)."""
    parts = list(first)
    for unit in answer_units(then):
        if not is_question(unit[-1]) and not repeats(unit[-1], parts):
            parts += unit
    parts += list(gaps)
    return join_units(parts) if parts else NOT_IN_DOCUMENTS
