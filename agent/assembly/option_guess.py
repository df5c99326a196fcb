"""The option names a question asks for, as the model guesses them: HyDE for manuals.

Over manuals the unit that answers names an option the question never says: "How do I overwrite
an output file that already exists?" is answered by `-f, --force`, and neither the question's words
nor MiniLM's meaning put that row first. A small model knows the names such tools use for it
("--force, -f, --overwrite"), as HyDE's hypothetical document knows an answer's wording. One short
call guesses them (prompts/guess_option_names.md; about 15 tokens out, under a second once the
server holds the prompt's head), and the unit ranker reads how well a unit's option names match a
guessed one (`guess_features`). Budgets that call no model rank without a guess, with the ranker
and gate trained so (agent/assembly/manual_units.py, product_gate.py).
"""

from __future__ import annotations

import re

from agent.assembly.unit_options import option_names, option_words
from agent.context import Context
from agent.llm.calls import generate_text
from agent.steps.grounding import stem

GUESS_TOKENS = 30
GUESSED_NAMES = 6  # of the reply's names at most; the prompt asks for four, a small model runs on
GUESS_FEATURES = ("guess_named", "guess_letter_named", "guess_overlap")


def guess_option_names(question: str, context: Context) -> list[str]:
    """The names the model guesses the question asks for ("--force", "-f", "overwrite"), at most
    GUESSED_NAMES, without repeats; empty when the model did not answer."""
    reply = generate_text(context, "guess_option_names", max_tokens=GUESS_TOKENS, question=question)
    return parse_names(reply or "")


def guessed_names(state: dict) -> tuple[str, ...]:
    """The guess a graph's state holds (`option_names`), as the rankers take it; empty where none was made."""
    return tuple(state.get("option_names") or ())


def parse_names(reply: str) -> list[str]:
    """The names of a reply such as "Names: -f, --force, --overwrite": comma separated items, each
    cut to its first word ("--sort=time" stays whole); an echoed "Names:" label goes."""
    text = re.sub(r"^\s*names\s*:", "", reply.strip().splitlines()[0] if reply.strip() else "", flags=re.IGNORECASE)
    names: list[str] = []
    for item in text.split(","):
        name = item.strip().strip("`'\".").split(" ")[0] if item.strip() else ""
        if name and len(name) <= 40 and name.lower() not in {n.lower() for n in names}:
            names.append(name)
    return names[:GUESSED_NAMES]


def guess_features(unit: str, names: list[str]) -> tuple[float, float, float]:
    """(whether the unit's option head names a guessed long option exactly, "--force" for
    "--force"; a guessed one-letter option, "-f" for "-f", weighed apart since tools share few letters;
    the best overlap of its option words with one guessed name's words, "--keep" for
    "--keep-headers" 0.5)."""
    if not names:
        return 0.0, 0.0, 0.0
    named = {name.lower() for name in names if name.startswith("-")} & option_names(unit)
    exact = float(any(len(name) > 2 for name in named))
    letter = float(any(len(name) <= 2 for name in named))
    words = option_words(unit)
    overlap = 0.0
    for name in names:
        guessed = name_words(name)
        if guessed and words:
            overlap = max(overlap, len(guessed & words) / len(guessed | words))
    return exact, letter, overlap


def name_words(name: str) -> set[str]:
    """A guessed name's words as `option_words` counts an option's ("--sort=time" -> {sort, time})."""
    return {stem(word.lower()) for word in re.split(r"[-_=./\s]", name) if len(word) > 2}
