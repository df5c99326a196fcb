"""Load prompt files from the `prompts` package and render them into chat messages."""

from __future__ import annotations

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
    system, _, user = path.read_text(encoding="utf-8").partition(SEPARATOR)
    return system.strip(), Template(user.strip())


def render(name: str, **values: object) -> list[BaseMessage]:
    """Messages for prompt `name`; every $placeholder must be given (KeyError otherwise)."""
    system, user = load_prompt(name)
    messages: list[BaseMessage] = [SystemMessage(system)] if system else []
    messages.append(HumanMessage(user.substitute({key: str(value) for key, value in values.items()})))
    return messages


def format_passages(passages: list[dict], max_chars: int = 900) -> str:
    """Passages as the evidence block every prompt uses: `[n] title: text`, numbered from 1.

    Small models copy short numbers far more reliably than passage ids; `cited_ids` maps back.
    """
    return "\n\n".join(
        f"[{number}] {p.get('title', '')}: {p['text'][:max_chars]}" for number, p in enumerate(passages, 1)
    )


def cited_ids(numbers: list, passages: list[dict]) -> list[str]:
    """Passage ids for the 1-based numbers a model cited, ignoring numbers out of range."""
    ids: list[str] = []
    for number in numbers:
        try:
            index = int(str(number).strip("[] ")) - 1
        except ValueError:
            continue
        if 0 <= index < len(passages) and passages[index]["id"] not in ids:
            ids.append(passages[index]["id"])
    return ids
