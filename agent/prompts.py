"""Load prompt files from the `prompts` package and render them into chat messages."""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources
from string import Template

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from agent.usage import record

SEPARATOR = "\n---\n"


@lru_cache(maxsize=None)
def load_prompt(name: str) -> tuple[str, Template]:
    """(system text, user template) of `prompts/<name>.md`."""
    path = resources.files("prompts").joinpath(f"{name}.md")
    if not path.is_file():
        raise FileNotFoundError(f"no prompt named {name!r} in prompts/")
    system, _, user = path.read_text(encoding="utf-8").partition(SEPARATOR)
    return system.strip(), Template(user.strip())


@lru_cache(maxsize=None)
def prompts_fingerprint() -> str:
    """A short hash of every prompt file: results computed with other prompts are other results."""
    import hashlib

    digest = hashlib.sha256()
    for path in sorted(resources.files("prompts").iterdir(), key=lambda p: p.name):
        if path.name.endswith(".md"):
            digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def render(name: str, **values: object) -> list[BaseMessage]:
    """Messages for prompt `name`; every $placeholder must be given (KeyError otherwise)."""
    system, user = load_prompt(name)
    messages: list[BaseMessage] = [SystemMessage(system)] if system else []
    messages.append(HumanMessage(user.substitute({key: str(value) for key, value in values.items()})))
    return messages


OPEN_DATA, CLOSE_DATA = "<documents>", "</documents>"
_DATA_TAG = re.compile(r"</?\s*documents\s*>", re.IGNORECASE)
_MARKER = re.compile(r"\[(\s*\d+(?:\s*,\s*\d+)*\s*)\]")
_SPACE = re.compile(r"\s+")


def as_data(text: str) -> str:
    """Passage text made inert inside the data section: one line (no fake passages or
    "System:" lines), no section tags (no way out of it), and "[n]" written "(n)" so a
    planted marker cannot pass for one of our passage numbers."""
    text = _DATA_TAG.sub(" ", text)
    text = _MARKER.sub(lambda m: f"({m.group(1).strip()})", text)
    return _SPACE.sub(" ", text).strip()


def format_passage(passage: dict, max_chars: int = 900) -> str:
    """One passage as `title: text`, made inert (see `as_data`)."""
    title, text = as_data(passage.get("title") or ""), as_data(passage["text"])[:max_chars]
    return f"{title}: {text}" if title else text


def format_passages(passages: list[dict], max_chars: int = 900) -> str:
    """Passages as the evidence block every prompt uses: `[n] title: text`, numbered from 1,
    inside <documents> tags that the prompts declare to be data, never instructions.

    Small models copy short numbers far more reliably than passage ids; `cited_ids` maps back.
    """
    lines = "\n\n".join(f"[{number}] {format_passage(p, max_chars)}" for number, p in enumerate(passages, 1))
    return f"{OPEN_DATA}\n{lines}\n{CLOSE_DATA}"


def format_single_passage(passage: dict, max_chars: int = 900) -> str:
    """One passage in its own data section, for the prompts that read a passage at a time."""
    return f"{OPEN_DATA}\n{format_passage(passage, max_chars)}\n{CLOSE_DATA}"


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
