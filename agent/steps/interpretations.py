"""Interpretations users get, and the answer that states them, for every method.

A model's interpretation is kept only when it is
- grounded: its short answer's content words (normalized, lightly stemmed) are in a passage it
  cites, at least `SUPPORT` of them (3 of 3, 3 of 4): small models paraphrase a little, but an
  answer whose words are not in the cited passage came from elsewhere;
- a reading: its question differs from the user's question (compared by content words), else
  it is the question answered as it stands (kept as the direct answer, not as a reading);
- distinct: its question differs from every interpretation kept before it.
Everything dropped is counted in usage (`dropped_interpretations`) and listed in `decision`.

The final answer then states every kept interpretation with its citation (`compose_answer`):
the model's own sentences that are complete, cite a passage and do not claim the documents
are silent, plus one templated sentence for each interpretation those sentences miss.
"""

from __future__ import annotations

import re

from agent.llm.answers import cited_numbers, ends_dangling, folded
from agent.steps.grounding import answer_support, content_tokens, passage_words, said_words
from agent.usage import record

SUPPORT = 0.75  # share of the answer's content words its cited passage must contain
NOT_IN_DOCUMENTS = "The indexed documents do not answer this question."
READINGS_INTRO = "The documents support {n} readings of this question."  # before templated readings only
_INTRO = re.compile(re.escape(READINGS_INTRO).replace(re.escape("{n}"), r"\d+"))
# a blank line ends a sentence too: a passage read by structure keeps one between its paragraphs,
# after a line with no closing mark ("Added in: v7.3.0"); a list's lead-in and items (single line
# breaks) read on as one sentence; prose windows have no line breaks at all. A parenthesis closing
# after a full stop ends its sentence when a capital follows ("(See below.) The ...")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|(?<=[.!?]\])\s+|(?<=[.!?]\))\s+(?=[A-Z])|(?<=\])\s+(?=[A-Z])|\s*\n[ \t]*\n\s*")
_FENCED = re.compile(r"```.*?(?:```|$)", re.DOTALL)  # a code block, or one a cut answer left open
_BLOCK = "\x00"  # marks a code block's place while the text around it is split
_HIDDEN = re.compile("\x00(\\d+)\x00")
_SENTENCE_OR_BLOCK = re.compile(_SENTENCE.pattern + "|(?<=\x00)\\s+")  # a code block ends its sentence too
_COMPLETE = re.compile(r"[.!?](\s*\[[\d,\s]+\])?\s*$|\]\s*[.!?]\s*$")
_SILENT = re.compile(
    r"\b(do(es)?n[o']t|do(es)? not|cannot|can ?not|fail to|never)\b[^.]{0,40}\b"
    r"(answer|contain|mention|say|provide|specify|state|include|address|cover)|"
    r"\bno (passage|document|information|mention)|\bnot (mentioned|specified|stated|provided|given|found)\b",
    re.IGNORECASE,
)


def is_readings_intro(sentence: str) -> bool:
    """Whether the sentence is the templated count that opens a list of readings."""
    return bool(_INTRO.fullmatch(sentence.strip()))


def question_key(text: str) -> str:
    """A question compared by its content words: case, punctuation, stopwords and plural
    endings ignored ("What is HP?" and "what's HP" are the same question)."""
    return " ".join(content_tokens(text)) or folded(text)


def supporting(answer: str, citations: list[str], by_id: dict[str, dict], threshold: float = SUPPORT) -> list[str]:
    """The cited passage ids whose text (with title) contains the answer's content words."""
    return [c for c in citations if c in by_id and answer_support(answer, passage_words(by_id[c])) >= threshold]


def ground_interpretations(
    question: str, interpretations: list[dict], passages: list[dict], threshold: float = SUPPORT
) -> tuple[list[dict], dict | None, list[dict]]:
    """(kept readings, the grounded direct answer or None, dropped entries with reasons).
    Kept entries cite only the passages that support them."""
    by_id = {p["id"]: p for p in passages}
    asked = question_key(question)
    kept: list[dict] = []
    seen: set[str] = set()
    direct: dict | None = None
    dropped: list[dict] = []
    for item in interpretations:
        citations = supporting(item.get("answer", ""), item.get("citations") or [], by_id, threshold)
        key = question_key(item.get("question", ""))
        reason = ""
        if not item.get("citations"):
            reason = "no citation"
        elif not citations:
            reason = "answer not in the cited passage"
        elif key == asked:
            reason = "repeats the question"
            direct = direct or {**item, "citations": citations}
        elif key in seen:
            reason = "repeats an earlier interpretation"
        if reason:
            dropped.append({"question": item.get("question", ""), "answer": item.get("answer", ""), "reason": reason})
            continue
        seen.add(key)
        kept.append({"question": item["question"], "answer": item["answer"], "citations": citations})
    return kept, direct, dropped


def marker(citations: list[str], passages: list[dict]) -> str:
    """`[n]` (or `[n, m]`) for passage ids, numbered as the answer numbers passages."""
    numbers = [i for i, p in enumerate(passages, 1) if p["id"] in citations]
    return f" [{', '.join(map(str, numbers))}]" if numbers else ""


# an ellipsis before a lower-case word or a number leaves the sentence open ("100 k, 200 k ... 900 k")
_RUNS_ON = re.compile(r"(?:\.\.|…) [a-z0-9]$")
# a piece opening with a dash goes on the sentence before ("--contexts=A,B,... — Only display ...")
_DASHES = ("—", "–")
# a piece ending in one of these did not end a sentence ("Apple Inc. on April 1, 1976 [1].")
_ABBREVIATION = re.compile(r"\b(Inc|Corp|Co|Ltd|Jr|Sr|St|Dr|Mr|Mrs|Ms|Prof|Gen|Gov|Sen|Rep|No|vs|approx|e\.g|i\.e|"
                           r"U\.S|U\.K|[A-Z])\.$")


def sentences(text: str) -> list[str]:
    """Sentences of a text: split after . ! ? (and after a citation), not after an abbreviation
    or an initial. A fenced code block is never split (its lines and blank lines are the
    command's) and belongs to the sentence that leads into it: a manual's unit is its lead-in
    and its code ("Install it with [2]:" and the commands), one sentence."""
    blocks: list[str] = []

    def hidden(match: re.Match) -> str:
        blocks.append(match.group(0))
        return f"{_BLOCK}{len(blocks) - 1}{_BLOCK}"

    found: list[str] = []
    for piece in (p.strip() for p in _SENTENCE_OR_BLOCK.split(_FENCED.sub(hidden, text.strip()))):
        if not piece:
            continue
        if found and (_ABBREVIATION.search(found[-1]) or piece.startswith(_BLOCK) or _RUNS_ON.search(found[-1] + " " + piece[:1])
                      or piece.startswith(_DASHES)):
            found[-1] = f"{found[-1]}{chr(10) if piece.startswith(_BLOCK) else ' '}{piece}"
        else:
            found.append(piece)
    return [_HIDDEN.sub(lambda m: blocks[int(m.group(1))], sentence) for sentence in found] if blocks else found


def complete_sentences(prose: str) -> list[str]:
    """The model's sentences without a last one cut off mid-way (by the length cap)."""
    found = sentences(prose)
    return found[:-1] if len(found) > 1 and not _COMPLETE.search(found[-1]) else found


def not_silent(answer: str) -> list[str]:
    """A finished answer's complete sentences, except those claiming the documents are silent or
    ending mid-phrase: what can stay when grounded readings are added after it."""
    if answer == NOT_IN_DOCUMENTS:
        return []
    return [s for s in complete_sentences(answer) if not _SILENT.search(s) and not ends_dangling(s)]


def usable_sentences(prose: str) -> list[str]:
    """The model's sentences a reader can trust next to grounded readings: those `not_silent`
    keeps that also cite a passage."""
    return [s for s in not_silent(prose) if cited_numbers(s)]


GIST_WORDS = 4  # content words a model sentence needs before it can stand for a longer copied answer
GIST_SHARE = 0.8  # share of such a sentence's content words that the answer holds


def covers(text: str, item: dict, passages: list[dict], threshold: float = SUPPORT) -> bool:
    """Whether the text states the interpretation's answer and cites one of its passages: it holds
    the answer's content words, or one of its sentences citing that passage says the gist of the
    answer (a small model often copies a whole passage sentence as the "answer" and writes its
    core in the prose; stating the copy again would say the same thing twice)."""
    numbers = {i for i, p in enumerate(passages, 1) if p["id"] in item["citations"]}
    if not cited_numbers(text) & numbers:
        return False
    if answer_support(item["answer"], text) >= threshold:
        return True
    answer_words = set(content_tokens(item["answer"]))
    for sentence in sentences(text):
        words = said_words(sentence)
        if (cited_numbers(sentence) & numbers and len(words) >= GIST_WORDS
                and len(words & answer_words) >= GIST_SHARE * len(words)):
            return True
    return False


def stated(item: dict, passages: list[dict]) -> str:
    """One templated sentence: the reading, then its answer and citation."""
    answer = item["answer"].strip().rstrip(".")
    return f"{item['question'].strip()} {answer[:1].upper()}{answer[1:]}{marker(item['citations'], passages)}."


def compose_answer(prose: str, kept: list[dict], direct: dict | None, passages: list[dict], style: str = "checked") -> str:
    """The final answer: every kept reading stated with its citation. `checked` keeps the
    model's usable sentences and adds a templated one per reading they miss; `template` uses
    the templated sentences only. Nothing grounded: the complete sentences, or NOT_IN_DOCUMENTS."""
    if not kept and direct is None:  # nothing to contradict: the model's complete sentences, if any
        return " ".join(complete_sentences(prose)) or NOT_IN_DOCUMENTS
    usable = usable_sentences(prose) if style == "checked" else []
    if not kept:
        text = " ".join(usable)
        if covers(text, direct, passages):
            return text
        answer = direct["answer"].strip().rstrip(".")
        return " ".join([*usable, f"{answer[:1].upper()}{answer[1:]}{marker(direct['citations'], passages)}."])
    parts = list(usable)
    if len(kept) > 1 and not usable:
        parts.append(READINGS_INTRO.format(n=len(kept)))
    for item in kept:
        if not covers(" ".join(parts), item, passages):
            parts.append(stated(item, passages))
    return " ".join(parts)


def checked_interpretations(
    question: str, interpretations: list[dict], passages: list[dict]
) -> tuple[list[dict], dict | None, list[dict]]:
    """`ground_interpretations`, with the dropped ones counted in usage as
    `dropped_interpretations`: call it once per answer."""
    kept, direct, dropped = ground_interpretations(question, interpretations, passages)
    if dropped:
        record(dropped_interpretations=len(dropped))
    return kept, direct, dropped


def grounded_output(
    question: str, interpretations: list[dict], passages: list[dict], prose: str, style: str = "checked",
    checked: tuple[list[dict], dict | None, list[dict]] | None = None,
) -> tuple[str, list[dict], dict]:
    """(answer, kept interpretations, decision details) from a method's candidates and prose.
    `checked`: the result of `checked_interpretations` when the method already ran it (VERDICT
    lists the kept readings before it writes the answer)."""
    kept, direct, dropped = checked or checked_interpretations(question, interpretations, passages)
    answer = compose_answer(prose, kept, direct, passages, style)
    details = {"kept": len(kept), "dropped": dropped, "direct_answer": direct is not None, "answer_style": style}
    return answer, kept, {"interpretations_check": details}
