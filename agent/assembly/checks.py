"""Checks on the model's sentences: what of its prose may stand next to grounded readings.

A model sentence stays when it is complete, held by the passages it cites, about the year the
question names, in the passages' script, on the question, and not a near-repeat of an earlier
one. Each check is a small function so the stream (which shows a sentence only once it passed)
and the final answer use the same ones.
"""

from __future__ import annotations

import re

from agent.assembly.compose import after_lead
from agent.assembly.text import (
    SENTENCE_END,
    _ACRONYM,
    about_other_years,
    answer_units,
    cited_sentence,
    is_question,
    markup_residue,
    mentions,
    passage_sentences,
    question_words,
    said_words,
    spells_out,
)
from agent.assembly.unit_options import is_option_unit
from agent.llm.answers import cited_numbers, cited_passages, ends_dangling
from agent.llm.prompts import CITATION_MARKER
from agent.steps.coherence import cosine
from agent.steps.grounding import answer_support, content_tokens, passage_words, stem, tokens
from agent.steps.interpretations import is_readings_intro, not_silent

CITED_SUPPORT = 0.67  # share of a model sentence's content words its citations must hold (0.5 and 0.67 scored alike on ASQA)
REPEAT_OVERLAP = 0.8  # share of a model sentence's content words already said that makes it a repeat


def model_sentences(answer: str, shown: list[dict], question: str = "", embed=None,
                    dropped: list[dict] | None = None, refines=None) -> list[str]:
    """The model's sentences worth keeping: complete, not claiming silence, held by what they
    cite, about the year the question names, in the passages' script, and not a near repeat
    of what the earlier ones said (the 1.5B loops on a sentence with small changes, "founded in
    1939", then "in 1949"); a list of passage titles loses its titles; each one citing nothing
    gets the passage holding it, and a bare answer becomes the cited sentence holding it
    (`in_full`). `refines(asked)`, when given, judges a question the model
    wrote before an answer ("Who signed for Apple Records? The Beatles [1]."): the pair stays
    only when it narrows the user's question. Each sentence dropped is appended to `dropped`
    with its reason."""
    kept: list[str] = []
    said: set[str] = set()
    asked = ""  # a question the model wrote before its answer ("Which team ...? The team ... [4].")
    dropped = [] if dropped is None else dropped
    for sentence in not_silent(answer):
        sentence = without_title_prefix(without_title_clauses(sentence, shown), shown)
        if is_readings_intro(sentence):  # its count goes stale once readings are added
            continue
        if is_question(sentence):
            asked = sentence  # it stays only with the answer that follows it
            continue
        if asked and refines is not None and not refines(asked):
            dropped.append({"sentence": f"{asked} {sentence}", "reason": "answers another question"})
            asked = ""
            continue
        if reason := sentence_fault(sentence, shown, question, said):
            dropped.append({"sentence": sentence, "reason": reason})
            asked = ""
            continue
        sentence = cite_holding_passage(sentence, shown)
        sentence = sentence if asked else in_full_unless_said(sentence, shown, question, said)
        kept += [asked, sentence] if asked else [sentence]
        said |= said_words(sentence)
        asked = ""
    if embed is not None and question and kept:
        on = on_question(kept, question, embed)
        dropped += [{"sentence": s, "reason": "about something else"} for s in kept if s not in on]
        kept = on
    return kept


REFINES_SHARE = 0.5  # of the user's question words a narrower question keeps ("... NorthHack 2022?" keeps all)


def narrows(asked: str, question: str) -> bool:
    """Whether a question the model wrote narrows the user's (holds most of its words) rather
    than asking another one ("Who signed for Apple Records?" for the label's first single)."""
    wanted = question_words(question)
    if not wanted:
        return True
    words = set(content_tokens(asked))
    return sum(mentions(w, words) for w in wanted) >= REFINES_SHARE * len(wanted)


def sentence_fault(sentence: str, shown: list[dict], question: str, said: set[str]) -> str | None:
    """Why a model sentence cannot stand, or None: the checks the stream and the answer share."""
    words = said_words(sentence)
    checks = (
        (not words, "empty"),
        (len(words & said) >= REPEAT_OVERLAP * len(words) if words else False, "repeat"),
        (lambda: not supported_by_citation(sentence, shown), "citation does not hold it"),
        (lambda: not cited_numbers(sentence) and not held_by_a_passage(sentence, shown), "no passage holds it"),
        (lambda: bool(_SOURCE_TALK.search(sentence)), "talks about the passages"),
        (lambda: foreign_script(sentence, shown), "foreign script"),
        (lambda: other_edition(sentence, shown, question), "another year's edition"),
        (lambda: ends_at_cut(sentence, shown), "cut off"),
        (lambda: markup_residue(sentence), "markup"),
        (lambda: bare_and_off_question(sentence, question, shown), "bare answer off the question"),
    )
    for failed, reason in checks:
        if failed() if callable(failed) else failed:
            return reason
    return None


BARE_ANSWER = 5  # content words: fewer is a bare answer ("Carly Fiorina [1].")
OFF_QUESTION_COSINE = 0.2  # under this cosine to the question, with none of its words, a sentence answers another
# share of the question's words a bare answer's cited passages must name: "The Bills won their
# division in 1991 [4]." names 2 of 5 ("last", "time" are not in its passage), "Jaguar [1]." for the
# 2030 World Cup 1 of 5
BARE_SUPPORT = 0.34


def bare_and_off_question(sentence: str, question: str, passages: list[dict]) -> bool:
    """Whether a bare answer cites passages naming under BARE_SUPPORT of the question's words:
    "Jaguar [1]." citing "Jaguar at Le Mans" for "Who won the 2030 FIFA World Cup?" (the 1.5B
    answers what its passages do not hold, and a bare answer's own words are all in its passage)."""
    words = content_tokens(CITATION_MARKER.sub(" ", sentence))
    cited = cited_passages(sentence, passages)
    asked = question_words(question)
    if len(words) >= BARE_ANSWER or not cited or not asked:
        return False
    named = set(content_tokens(" ".join(passage_words(p) for p in cited)))
    if any(spells_out(question, p.get("title", "")) for p in cited):  # "Hewlett-Packard" names HP
        named |= {stem(w.lower()) for w in _ACRONYM.findall(question)}
    return sum(mentions(word, named) for word in asked) < BARE_SUPPORT * len(asked)


def in_full(sentence: str, passages: list[dict], question: str) -> str:
    """A bare answer ("Compaq [2].", "24 hours [1].") as the sentence of its cited passage that
    holds it, the one naming most of the question's words: the user reads an answer, not a
    fragment. Anything else, or a bare answer no cited sentence holds, stays as it is."""
    words = content_tokens(CITATION_MARKER.sub(" ", sentence))
    numbers = [n for n in cited_numbers(sentence) if 1 <= n <= len(passages)]
    if not words or len(words) >= BARE_ANSWER or len(numbers) != 1:
        return sentence
    asked = question_words(question)
    holding = [(s, held) for s in passage_sentences(passages[numbers[0] - 1]) if s.rstrip()[-1:] in SENTENCE_END
               for held in [set(content_tokens(s))] if all(mentions(w, held) for w in words)]
    if not holding:
        return sentence
    best, _ = max(holding, key=lambda item: sum(mentions(w, item[1]) for w in asked))
    return cited_sentence(best, f" [{numbers[0]}]")


def in_full_unless_said(sentence: str, passages: list[dict], question: str, said: set[str]) -> str:
    """`in_full`, unless the full sentence repeats what was `said` (the content words of the
    sentences before it): "In May 1953 [1]." after the sentence it would become stays bare."""
    full = in_full(sentence, passages, question)
    return full if len(said_words(full) & said) < REPEAT_OVERLAP * len(said_words(full)) else sentence


def off_question_only(answer: str, question: str, passages: list[dict]) -> bool:
    """Whether the answer is nothing but bare answers citing passages off the question: the model
    answered what its passages do not hold, so the documents do not answer it. (An answer whose
    sentences failed other checks, such as "as stated in passage [1]", stays as it was.)"""
    said = not_silent(answer)
    return bool(said) and all(bare_and_off_question(sentence, question, passages) for sentence in said)


def on_question(kept: list[str], question: str, embed) -> list[str]:
    """The kept sentences less those about something else: a whole clause (BARE_ANSWER content
    words or more: "Hey Jude [1]." answers by its form) with none of the question's content
    words and a cosine to it under OFF_QUESTION_COSINE ("Marie Curie [2] conducted pioneering
    research on radioactivity" for "Who made the first ascent of Mount Everest?": the 1.5B walks
    its passages). A question the model wrote goes or stays with its answer; all off: all stay."""
    units = answer_units(kept)
    asked = question_words(question)
    answers = [content_tokens(CITATION_MARKER.sub(" ", unit[-1])) for unit in units]
    vectors = embed([question] + [" ".join(unit) for unit in units])
    off = [len(words) >= BARE_ANSWER and not asked & set(words) and float(cosine(vectors[0], v)) < OFF_QUESTION_COSINE
           for words, v in zip(answers, vectors[1:])]
    if all(off):
        return kept
    return [sentence for unit, o in zip(units, off) if not o for sentence in unit]


# words with which a sentence goes on from a phrase that cannot end it: its verb ("depending on how
# its source | is measured") or a comparison's second half ("more | than"); not "to" or "of", before
# which a copy may stop whole ("an allowance | of $1,500", "$1,500 | to spend on courses")
GOES_ON = frozenset("is are was were than".split())
# words that open a new phrase or clause, before which a copy may stop whole ("... into the Pacific
# Ocean | near Astoria", "... 745.7 watts | and is the usual ...")
OPENS_PHRASE = frozenset(
    "and or but nor so yet while whereas because although though if when where which who whom whose that as "
    "in on at by for with from to of after before during since until near between into onto through under over "
    "about across along around among against toward towards beyond including like per via within without "
    "such then".split())
COPIED_TAIL = 8  # words: a sentence ending in this long a copy of a passage sentence's middle copied it
_WORD = re.compile(r"[\w']+")
_TOKEN = re.compile(r"[\w']+|[^\w\s]")


def stops_short(sentence: str, passages: list[dict]) -> bool:
    """Whether the sentence copies part of a sentence of a passage it cites and stops where that
    one goes on: the 1.5B cut its copy. Two shapes: a copy of the start that stops before the
    verb ("... the second longest river in the world depending on how its source [3]." from "...
    how its source is measured."), and a long copy of the middle that stops inside a phrase ("...
    to review the rates against published [1]." from "... against published government per-diem
    tables."). A copy that stops at a clause's end ("... in the Solar System" before "and the
    closest"), before a preposition or a participle ("... language | developed by"), stands; a
    name's next word is no participle ("... until the Chrysler | Building")."""
    mine = _WORD.findall(CITATION_MARKER.sub(" ", sentence).casefold())
    if len(mine) < 4:
        return False
    for n in cited_numbers(sentence):
        for source in passage_sentences(passages[n - 1]) if 1 <= n <= len(passages) else []:
            found = _TOKEN.findall(source)
            at = [i for i, token in enumerate(found) if _WORD.fullmatch(token)]
            words = [found[i].casefold() for i in at]
            if len(at) > len(mine) and words[:len(mine)] == mine:
                if found[at[len(mine) - 1] + 1].casefold() in GOES_ON:
                    return True
            going_on = _copied_tail_goes_on(mine, found, at, words)
            if going_on and _WORD.fullmatch(going_on) and going_on.casefold() not in OPENS_PHRASE \
                    and not (going_on.islower() and going_on.endswith(("ed", "ing"))):
                return True
    return False


def _copied_tail_goes_on(mine: list[str], found: list[str], at: list[int], words: list[str]) -> str | None:
    """The token of the source sentence (`found`, its tokens; `at`, where its words are; `words`,
    them case-folded) after the sentence's last COPIED_TAIL words (`mine`, case-folded), where
    the source holds them inside, not at its end; else None. A punctuation mark there is a
    clause's end."""
    tail = mine[-COPIED_TAIL:]
    if len(tail) < COPIED_TAIL:
        return None
    for start in range(len(words) - COPIED_TAIL):
        if words[start:start + COPIED_TAIL] == tail:
            return found[at[start + COPIED_TAIL - 1] + 1]
    return None


def ends_at_cut(sentence: str, passages: list[dict]) -> bool:
    """Whether the sentence stops mid-way: on a word that needs what follows ("... to market
    his [5].", "... derived from Greek words meaning [1]."), or where a cited passage is cut off
    mid-sentence (a chunk boundary) and the model copied the fragment, or where the passage
    sentence it copies goes on with its verb (`stops_short`)."""
    if ends_dangling(sentence) or stops_short(sentence, passages):
        return True
    tail = tokens(CITATION_MARKER.sub(" ", sentence))[-3:]
    if len(tail) < 3:
        return False
    for n in cited_numbers(sentence):
        text = passages[n - 1]["text"].rstrip() if 1 <= n <= len(passages) else ""
        if cut_mid_sentence(text) and tokens(text)[-3:] == tail:
            return True
    return False


def cut_mid_sentence(text: str) -> bool:
    """Whether a passage's text stops mid-sentence (a chunk boundary): its last line is prose that
    ends in no sentence mark. A closed code block or an option's row ("-k --keep — Keep input
    files") is whole without one, and a sentence that ends by quoting it is not cut."""
    last = text.rstrip().rsplit("\n", 1)[-1].strip()
    return bool(last) and last[-1] not in SENTENCE_END and not last.startswith("```") and not is_option_unit(last)


def other_edition(sentence: str, passages: list[dict], question: str) -> bool:
    """Whether the sentence cites only passages about other years than the question names
    ("Which team was runner-up at NorthHack 2021?" answered from "NorthHack 2022")."""
    return about_other_years(cited_passages(sentence, passages), question)


def other_edition_reading(item: dict, by_id: dict[str, dict], question: str) -> bool:
    """Whether an interpretation cites only passages about other years than the question names."""
    return about_other_years([by_id[c] for c in item["citations"] if c in by_id], question)




_CLAUSE = re.compile(r"(\[[\d,\s]+\])")


def without_title_clauses(sentence: str, passages: list[dict]) -> str:
    """The sentence less the clauses that only name their cited passage's title: the 1.5B lists
    its sources as answers ("... is PEP 8 [1], Python version history [2], Ball python [4]")."""
    pieces = _CLAUSE.split(sentence)  # text, marker, text, marker, ..., tail
    if len(pieces) < 5:  # one citation: nothing listed
        return sentence
    kept = [pieces[0], pieces[1]]
    for text, citation in zip(pieces[2:-1:2], pieces[3::2]):
        numbers = [n for n in cited_numbers(citation) if 1 <= n <= len(passages)]
        titles = " ".join(passages[n - 1].get("title", "") for n in numbers)
        words = set(content_tokens(re.sub(r"\band\b", " ", text)))
        if numbers and words and words <= set(content_tokens(titles)):
            continue
        kept += [text, citation]
    tail = pieces[-1] if len(pieces) % 2 else ""
    return "".join(kept + [tail])


LINE_LEAD = re.compile(r"^(?:For (?P<product>[^,]{1,60}), )?")  # a product line's lead ("For XZ, "), or ""


def without_title_prefix(sentence: str, passages: list[dict]) -> str:
    """The sentence less its cited passage's title copied before it ("For XZ, XZ: OPTIONS: -Q,
    --no-warn ..."): the prompt shows each passage as "title: text", and the 1.5B copies the
    heading path with the text it answers from."""
    lead = LINE_LEAD.match(sentence).group(0)
    rest = sentence[len(lead):]
    for number in cited_numbers(sentence):
        passage = passages[number - 1] if 1 <= number <= len(passages) else {}
        title = passage.get("title", "").strip()
        if title and rest[:len(title) + 1].casefold() == f"{title}:".casefold() and rest[len(title) + 1:].strip():
            body = rest[len(title) + 1:].lstrip()
            if not lead:
                return body
            first, _, following = body.partition(" ")
            return f"{lead}{after_lead(first, passage, passages, following)} {following}".rstrip()
    return sentence


_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")


def foreign_script(sentence: str, passages: list[dict]) -> bool:
    """Whether the sentence has CJK characters no passage has: the Qwen models slip into
    Chinese mid-sentence ("The partners started the业务 [3].")."""
    return bool(_CJK.search(sentence)) and not any(_CJK.search(p["text"]) for p in passages)


def holding_passage(sentence: str, passages: list[dict]) -> int | None:
    """The number of the passage holding most of an uncited sentence's content words, when one
    holds CITED_SUPPORT of them, else None (ties: the better-ranked passage)."""
    if not passages:
        return None
    support, number = max(((answer_support(sentence, p["text"]), n) for n, p in enumerate(passages, 1)),
                          key=lambda found: (found[0], -found[1]))
    return number if support >= CITED_SUPPORT else None


def cite_holding_passage(sentence: str, passages: list[dict]) -> str:
    """A model sentence that cites nothing gets the marker of the passage holding most of its
    content words, when one holds CITED_SUPPORT of them ("...sold to Tata Motors." -> "[3]"):
    an answer's claims carry their source. Sentences that cite, or that no passage holds, stay."""
    if cited_numbers(sentence) or is_question(sentence):
        return sentence  # a question (a templated reading's first half) is not a claim
    number = holding_passage(sentence, passages)
    if number is None:
        return sentence
    body = sentence.rstrip()
    end = body[-1] if body[-1:] in ".!?" else ""
    return f"{body[:len(body) - len(end)].rstrip()} [{number}]{end}"


# a sentence about the sources instead of the subject: "The passage [1] defines Mercury as ..."
_SOURCE_TALK = re.compile(r"\b(?:the|this|that|these|those|each|both|other)\s+(?:passage|document|context|text|excerpt|"
                          r"source)s?\b(?!\s+(?:editor|message|file)s?\b)|\bpassages?\s+\[\d", re.IGNORECASE)


def held_by_a_passage(sentence: str, passages: list[dict]) -> bool:
    """Whether some passage holds most of an uncited sentence's content words: it then gets that
    passage's marker (`cite_holding_passage`); one no passage holds is the model's own claim,
    and an answer over documents states none."""
    if is_question(sentence) or not passages:
        return True  # a question (a templated reading's first half) is not a claim
    return holding_passage(CITATION_MARKER.sub(" ", sentence), passages) is not None


def supported_by_citation(sentence: str, passages: list[dict]) -> bool:
    """A sentence citing passages must have most of its content words in them ("The HP Way [4]"
    citing the hit-points passage does not); one citing nothing is judged by `held_by_a_passage`."""
    cited = [passages[n - 1]["text"] for n in cited_numbers(sentence) if 1 <= n <= len(passages)]
    if not cited:
        return True
    return answer_support(CITATION_MARKER.sub(" ", sentence), " ".join(cited)) >= CITED_SUPPORT

