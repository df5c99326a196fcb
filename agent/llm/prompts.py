"""Load prompt files from the `prompts` package and render them into chat messages."""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import resources
from string import Template

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

SEPARATOR = "\n---\n"


@lru_cache(maxsize=None)
def load_prompt(name: str) -> tuple[str, Template]:
    """(system text, user template) of `prompts/<name>.md`."""
    path = resources.files("prompts").joinpath(f"{name}.md")
    if not path.is_file():
        raise FileNotFoundError(f"no prompt named {name!r} in prompts/")
    return parse_prompt(path.read_text(encoding="utf-8"))


def parse_prompt(text: str) -> tuple[str, Template]:
    """(system text, user template) of a prompt file's text: the system part ends at SEPARATOR."""
    system, _, user = text.partition(SEPARATOR)
    return system.strip(), Template(user.strip())


@lru_cache(maxsize=None)
def prompts_fingerprint() -> str:
    """A short hash of every prompt file: results computed with other prompts are other results."""
    return files_fingerprint(path for path in resources.files("prompts").iterdir() if path.name.endswith(".md"))


def files_fingerprint(files, root=None) -> str:
    """A short hash of files' names and bytes, in name order (the evaluation cache's key parts);
    with `root`, a file is named by its path under it (names repeat across folders)."""
    import hashlib

    def name(path) -> str:
        return path.relative_to(root).as_posix() if root is not None else path.name

    digest = hashlib.sha256()
    for path in sorted(files, key=name):
        digest.update(name(path).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def fragment(name: str, **values: object) -> str:
    """The text of `prompts/<name>.md` (a piece of a prompt, e.g. guidance for the synthesis)
    with its $placeholders filled: prompt wording lives in prompts/, not in Python strings."""
    path = resources.files("prompts").joinpath(f"{name}.md")
    if not path.is_file():
        raise FileNotFoundError(f"no prompt named {name!r} in prompts/")
    return Template(path.read_text(encoding="utf-8").strip()).substitute({k: str(v) for k, v in values.items()})


def render(name: str, **values: object) -> list[BaseMessage]:
    """Messages for prompt `name`; every $placeholder must be given (KeyError otherwise)."""
    return messages_of(*load_prompt(name), **values)


def messages_of(system: str, user: Template, **values: object) -> list[BaseMessage]:
    """The chat messages of a parsed prompt (`parse_prompt`) with its $placeholders filled."""
    messages: list[BaseMessage] = [SystemMessage(system)] if system else []
    messages.append(HumanMessage(user.substitute({key: str(value) for key, value in values.items()})))
    return messages


OPEN_DATA, CLOSE_DATA = "<documents>", "</documents>"
_DATA_TAG = re.compile(r"</?\s*documents\s*>", re.IGNORECASE)
CITATION_MARKER = _MARKER = re.compile(r"\[(\s*\d+(?:\s*,\s*\d+)*\s*)\]")
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


def format_passages(passages: list[dict], max_chars: int = 900, numbers: list[int] | None = None) -> str:
    """Passages as the evidence block every prompt uses: `[n] title: text`, numbered from 1
    (or with the given `numbers`, e.g. a subset keeping its numbers in the full list), inside
    <documents> tags that the prompts declare to be data, never instructions.

    Small models copy short numbers far more reliably than passage ids; `cited_ids` maps back.
    """
    numbers = numbers or list(range(1, len(passages) + 1))
    lines = "\n\n".join(f"[{number}] {format_passage(p, max_chars)}" for number, p in zip(numbers, passages))
    return f"{OPEN_DATA}\n{lines}\n{CLOSE_DATA}"


def format_single_passage(passage: dict, max_chars: int = 900) -> str:
    """One passage in its own data section, for the prompts that read a passage at a time."""
    return f"{OPEN_DATA}\n{format_passage(passage, max_chars)}\n{CLOSE_DATA}"
