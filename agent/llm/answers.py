"""What a model's reply becomes before users see it: citations mapped back to passage ids,
invented citation markers dropped, greedy-decoding loops cut."""

from __future__ import annotations

import re

from agent.llm.prompts import CITATION_MARKER as _MARKER
from agent.llm.streaming import is_complete
from agent.usage import record


def cited_ids(numbers: list, passages: list[dict]) -> list[str]:
    """Passage ids for the 1-based numbers a model cited. A number that names no passage
    (an invented citation) is dropped and counted in usage as `invalid_citations`."""
    ids: list[str] = []
    invalid = 0
    for number in numbers:
        try:
            index = int(str(number).strip("[] ")) - 1
        except ValueError:
            invalid += 1
            continue
        if not 0 <= index < len(passages):
            invalid += 1
        elif passages[index]["id"] not in ids:
            ids.append(passages[index]["id"])
    if invalid:
        record(invalid_citations=invalid)
    return ids


def keep_valid_citations(answer: str, passages: list[dict]) -> str:
    """The answer with every inline marker `[n]` (or `[n, m]`) that names no passage removed,
    each removed number counted in usage as `invalid_citations`."""
    invalid = 0

    def check(match: re.Match) -> str:
        nonlocal invalid
        numbers = [int(n) for n in match.group(1).split(",")]
        valid = [n for n in numbers if 1 <= n <= len(passages)]
        invalid += len(numbers) - len(valid)
        return f"[{', '.join(map(str, valid))}]" if valid else ""

    cleaned = _MARKER.sub(check, answer)
    if invalid:
        record(invalid_citations=invalid)
        cleaned = re.sub(r"[ \t]+([.,;:])", r"\1", re.sub(r"[ \t]{2,}", " ", cleaned))
    return cleaned


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def folded(text: str) -> str:
    """Text compared the way people read it: case and runs of whitespace ignored."""
    return " ".join(text.casefold().split())


def without_repeated_sentences(answer: str) -> str:
    """The answer with every sentence that repeats an earlier one dropped: small models
    decoding greedily fall into loops, and the repeats carry nothing new."""
    kept, seen = [], set()
    for sentence in _SENTENCE_END.split(answer.strip()):
        key = folded(re.sub(r"\[[\d,\s]*\]|\W", " ", sentence))
        if key and key in seen:
            continue
        seen.add(key)
        kept.append(sentence)
    return " ".join(kept)


def clean_answer(answer: str, passages: list[dict]) -> str:
    """A model's long-form answer as users get it: no looping repeats, no invented citations."""
    return keep_valid_citations(without_repeated_sentences(answer.strip()), passages)


# a sentence cannot end on these: it was cut off, by the model or at a passage's chunk boundary
# ("... to market his [5].", "... words meaning [1].", "... the retirement of about [5].")
DANGLING_WORDS = frozenset(
    "a an the of to for by with and or but from into his her their its our my your which that whose meaning called "
    "named including such as than is are was were in on at about around approximately nearly almost between among "
    "during via per".split())


def ends_dangling(sentence: str) -> bool:
    """Whether the sentence, its citations aside, stops on a word that needs what follows, or on
    a comma, colon or dash ("The Sabbatical Panel, chaired by Priya Ramasamy, [4]"). A question
    may ("Where is it from?")."""
    plain = _MARKER.sub(" ", sentence).rstrip()
    if plain.rstrip(" .").endswith((",", ";", ":", "(", "-", "\u2013", "\u2014")):
        return True
    words = re.findall(r"[\w']+", plain)
    return bool(words) and words[-1].casefold() in DANGLING_WORDS and not is_question(sentence)


_LAST_SENTENCE_END = re.compile(r"^(.*[.!?])\s")


def uncut(text: str, cap: int) -> str:
    """A field the grammar's length cap cut: its complete sentences when it holds one ("... for two
    reasons. The business case promises ... the retirement of about 14" keeps the first), else
    its words without the cut one ("... its second headquarters, knowns") and the words left
    dangling before it ("of the"); shorter text is untouched. The cap counts the field as
    written, so a cut that fell on a space ("... renamed Java, and Sun ") is measured before
    the space is stripped."""
    if len(text) < cap:
        return text.strip()
    text = text.strip()
    whole = _LAST_SENTENCE_END.match(text[:cap])
    if whole:
        return whole.group(1)
    words = text[:cap].split()[:-1]
    while words and words[-1].strip(",;:-(").casefold() in DANGLING_WORDS | {""}:
        words.pop()
    return " ".join(words).rstrip(",;:-(") or text


def cited_numbers(text: str) -> set[int]:
    """The 1-based passage numbers named by a text's `[n]` / `[n, m]` markers."""
    return {int(n) for match in _MARKER.finditer(text or "") for n in match.group(1).split(",")}


def cited_passages(text: str, passages: list[dict]) -> list[dict]:
    """The passages a text's `[n]` markers cite, of `passages` as the answer numbers them (a
    number past them cites nothing)."""
    return [passages[n - 1] for n in cited_numbers(text) if 1 <= n <= len(passages)]


def is_question(sentence: str) -> bool:
    """Whether the model wrote a question, not a statement."""
    return sentence.rstrip().endswith("?")


def may_stream(sentence: str) -> bool:
    """Whether a model sentence over passages may be shown while the answer streams: it is
    complete and cites a passage, or is a question (it goes with its answer). The answer keeps an
    uncited claim only where the model kept no cited interpretation, so one shown could be
    withdrawn (live, 3 of the 5 sentences 16 tune questions streamed); held back, it comes with
    the checked answer."""
    return is_complete(sentence) and (bool(cited_numbers(sentence)) or is_question(sentence))


def cited_passage_ids(answer: str, interpretations: list[dict], passages: list[dict]) -> list[str]:
    """The ids of the passages an output cites (interpretations' citations, then the answer's
    [n] markers), in order of first citation: the `cited` subset of the retrieved `passages`."""
    ids = [passage_id for item in interpretations for passage_id in item.get("citations") or []]
    for match in _MARKER.finditer(answer or ""):
        ids += [passages[int(n) - 1]["id"] for n in match.group(1).split(",") if 1 <= int(n) <= len(passages)]
    known = {p["id"] for p in passages}
    return [passage_id for passage_id in dict.fromkeys(ids) if passage_id in known]


MAX_QUERY_CHARS = 300
_QUERY_LABEL = re.compile(r"^\s*(?:[-*\d.)]+\s+)?(?:(?:new\s+)?(?:search\s+)?query\s*:\s*)?", re.IGNORECASE)


def clean_query(reply: str | None) -> str:
    """A search query from a model reply: the first non-empty line without a bullet, a
    "Query:"/"Search query:"/"New query:" label or quotes ("" when there is none, so the caller
    falls back to what it had)."""
    for line in (reply or "").splitlines():
        line = _QUERY_LABEL.sub("", line).strip().strip("\"'`").strip()
        if line:
            return line[:MAX_QUERY_CHARS]
    return ""
