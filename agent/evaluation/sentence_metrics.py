"""Does each sentence of an answer answer the question? Precision beside recall.

A sentence *states a gold answer* when a gold short answer of some sense is in it (normalized
substring, or at least `SUPPORT` of the answer's content words). An answer's sentences are also
checked for being *broken*: cut off mid-way (or a copy of a passage sentence's start that stops
before its verb), a near-repeat of an earlier sentence (or an earlier
sentence said again with more after it), or citing a
passage that does not hold it. A sentence that only says the documents are silent about a
sense ("... the documents give no headquarters for it.") is a gap note: it is counted apart and
is neither precise nor imprecise.
"""

from __future__ import annotations

import re
from typing import Sequence

from agent.assembly.checks import stops_short
from agent.assembly.units import split_code
from agent.evaluation.metrics import normalize_answer, remove_citations
from agent.llm.answers import cited_passages, ends_dangling
from agent.retrieval.products import product_identity
from agent.steps.grounding import answer_support, content_tokens, number_words, passage_words, tokens
from agent.steps.interpretations import NOT_IN_DOCUMENTS, SUPPORT, sentences

NEAR_REPEAT = 0.8  # share of a sentence's content words already said by one earlier sentence
RESTATED_WORDS = 4  # an earlier sentence this long restated whole inside a later one makes that one a repeat too
CITED_HOLDS = 0.67  # share of a sentence's content words its cited passages must hold
_END = re.compile(r"[.!?]['\")]*\s*(\[[\d,\s]+\])?\s*[.!?]?\s*$")
GAP_NOTE = re.compile(r"\bthe documents (give|say|do not|don't|have) (no|not|nothing)\b", re.IGNORECASE)


def answer_sentences(answer: str) -> list[str]:
    """The answer's sentences; an abstention has none."""
    text = (answer or "").strip()
    if not text or text == NOT_IN_DOCUMENTS:
        return []
    return sentences(text)


# what joins a command-line option to its value: "--rcfile=RCFILE", "-p no:doctest", "--zstd[=options]"
OPTION_GLUE = re.compile(r"[=:\[\]]")


def states_answer(sentence: str, short_answer: str) -> bool:
    """Whether the sentence states this short answer."""
    plain = remove_citations(sentence)
    wanted = normalize_answer(short_answer)
    if wanted and f" {wanted} " in f" {normalize_answer(plain)} ":
        return True
    if short_answer.lstrip().startswith("-") and names_option(plain, short_answer):
        return True
    return len(content_tokens(short_answer)) >= 2 and answer_support(short_answer, plain) >= SUPPORT


def names_option(sentence: str, option: str) -> bool:
    """Whether the sentence names the option with a value glued to it: dropping punctuation joins
    "--rcfile=RCFILE" into one word that no longer holds "--rcfile", so the glue is read as a
    space on both sides first ("-p no:doctest" names "-p no:")."""
    wanted = normalize_answer(OPTION_GLUE.sub(" ", option))
    return bool(wanted) and f" {wanted} " in f" {normalize_answer(OPTION_GLUE.sub(' ', sentence))} "


def states_any(sentence: str, short_answers: Sequence[str]) -> bool:
    return any(states_answer(sentence, a) for a in short_answers if a and a.strip())


def is_cut(sentence: str, passages: list[dict] = ()) -> bool:
    """Cut off: no closing mark, an ellipsis, or a last word that needs what follows, unless a
    passage it cites ends a sentence with the same words (`ends_as_its_source`). A lead-in with
    its closed code block ("Run tests by marker expressions [2]:" and the command) is whole when
    its lead-in is: the code completes a lead-in ending in ":"."""
    plain = sentence.strip()
    lead, block = split_code(plain)
    if block:
        return not remove_citations(lead).rstrip().endswith(":") and is_cut(lead, passages)
    if not _END.search(plain) or plain.rstrip(" .[]0123456789,").endswith("...") or "..." in plain[-8:]:
        return True
    return ends_dangling(plain) and not ends_as_its_source(plain, passages)


ENDS_AS_SOURCE = 6  # last words a sentence shares with the end of a cited passage's sentence


def ends_as_its_source(sentence: str, passages: list[dict]) -> bool:
    """Its last ENDS_AS_SOURCE words end a whole sentence of a passage it cites: the source ends
    there too ("... the systems that sales and the close depend on.", a reading copied whole), so
    a last word that usually needs more does not make it cut. The answer's checks stay stricter:
    they drop a model sentence ending so, whatever its source."""
    tail = tokens(remove_citations(sentence))[-ENDS_AS_SOURCE:]
    cited = cited_passages(sentence, passages)
    return len(tail) == ENDS_AS_SOURCE and any(
        source.rstrip()[-1:] in ".!?" and tokens(source)[-ENDS_AS_SOURCE:] == tail
        for passage in cited for source in sentences(passage.get("text", "")))


def cites_unheld(sentence: str, passages: list[dict]) -> bool:
    """Cites passages that do not hold most of its content words."""
    cited = cited_passages(sentence, passages)
    if not cited:
        return False
    return answer_support(remove_citations(sentence), " ".join(passage_words(p) for p in cited)) < CITED_HOLDS


def broken_sentences(answer_parts: list[str], passages: list[dict], question: str = "") -> list[tuple[str, str]]:
    """(sentence, why) for each broken sentence: `cut`, `repeat` or `unheld citation`. Given the
    `question`, a sentence saying nothing beyond it that one earlier sentence does not say is a
    repeat too: the same answer in the question's words. A sentence repeats only what was said
    of the products it cites (`cited_products`)."""
    found, said_by = [], []
    asked = set(content_tokens(question))
    for sentence in answer_parts:
        words = set(content_tokens(remove_citations(sentence)))
        beyond = words - asked  # what it says that the question does not
        products = cited_products(sentence, passages)
        said = [earlier for earlier, theirs in said_by if not (products and theirs and not products & theirs)]
        if is_cut(sentence, passages) or stops_short(sentence, passages):
            found.append((sentence, "cut"))
        elif words and any(len(words & earlier) >= NEAR_REPEAT * len(words) and number_words(words) <= earlier
                           for earlier in said):  # another number is another fact: "$20,000" after "$15,000"
            found.append((sentence, "repeat"))
        elif any(len(earlier) >= RESTATED_WORDS and len(words & earlier) >= NEAR_REPEAT * len(earlier)
                 and number_words(earlier) <= words for earlier in said):  # says an earlier sentence again, with more after it
            found.append((sentence, "repeat"))
        elif asked and beyond and any(beyond <= earlier for earlier in said):
            found.append((sentence, "repeat"))  # "The first prize ... was $15,000." after "... prize of $15,000"
        elif cites_unheld(sentence, passages):
            found.append((sentence, "unheld citation"))
        said_by.append((words, products))
    return found


def cited_products(sentence: str, passages: list[dict]) -> set[str]:
    """The products whose manuals the sentence cites (none for records without documents). Two
    sentences citing different products say two answers however alike they read: "For zstd,
    `-t, --test` — Test the integrity of compressed files" and then LZ4's row repeat nothing."""
    cited = cited_passages(sentence, passages)
    return {identity for passage in cited if (identity := product_identity(passage))}


def sentence_scores(answer: str, passages: list[dict], gold_answers: Sequence[str], question: str = "") -> dict:
    """Per-answer counts: sentences judged, precise ones, gap notes, broken ones (`question`:
    the question asked, for `broken_sentences`), characters."""
    parts = answer_sentences(answer)
    notes = [s for s in parts if GAP_NOTE.search(s)]
    judged = [s for s in parts if s not in notes]
    precise = [s for s in judged if states_any(s, gold_answers)]
    broken = broken_sentences(parts, passages, question)
    return {"sentences": len(judged), "precise": len(precise), "gap_notes": len(notes), "broken": len(broken),
            "broken_why": [why for _, why in broken], "chars": len(answer or ""),
            "abstained": not parts}


def summarize(rows: list[dict]) -> dict:
    """Micro-averaged sentence precision, sense recall and F1 over per-question rows holding
    `sentence_scores` keys and, for labelled fixtures, `senses`/`recalled`."""
    n = max(len(rows), 1)
    sentences_judged = sum(r["sentences"] for r in rows)
    precision = sum(r["precise"] for r in rows) / sentences_judged if sentences_judged else 0.0
    labelled = [r for r in rows if r.get("senses")]
    recall = (sum(len(r["recalled"]) for r in labelled) / sum(r["senses"] for r in labelled)) if labelled else None
    f1 = (2 * precision * recall / (precision + recall)) if recall and precision else 0.0
    return {"n": len(rows), "sense_recall": recall, "sentence_precision": precision, "sense_f1": f1,
            "broken_per_answer": sum(r["broken"] for r in rows) / n, "chars_per_answer": sum(r["chars"] for r in rows) / n,
            "answered": sum(not r["abstained"] for r in rows) / n}
