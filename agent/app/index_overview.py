"""What the index holds, in a few words, and questions worth asking it: an empty chat says so.

No model call: the overview reads the passages' titles. A name that heads two or more
different titles ("Jaguar (animal)", "Jaguar Cars") is a name with several senses, the kind
of question this product is for, so the first examples ask about such names; titles that
appear most often fill the rest.
"""

from __future__ import annotations

import re
from collections import Counter

EXAMPLES = 4
SHOWN_TITLES = 8  # topics named at most
_LEADING_ARTICLE = re.compile(r"^(the|a|an)\s+", re.IGNORECASE)
_NOT_NAMES = frozenset("how why what when where who which whom whose is are do does can should".split())


def title_name(title: str) -> str:
    """The sense a title stands for: the title less a section after a colon."""
    head, colon, _ = title.strip().partition(": ")
    return head.strip() if colon and head.strip() else title.strip()


def shared_names(titles: list[str]) -> list[tuple[str, int]]:
    """(name, number of different titles it heads), for names heading two or more, most first."""
    heads: dict[str, set[str]] = {}
    for title in set(titles):
        words = _LEADING_ARTICLE.sub("", title).split()
        if words and words[0][:1].isupper() and len(words[0]) > 1 and words[0].casefold() not in _NOT_NAMES:
            heads.setdefault(words[0].strip(",.;:()"), set()).add(title)
    return sorted(((name, len(found)) for name, found in heads.items() if len(found) > 1), key=lambda x: (-x[1], x[0]))


def index_overview(context=None, examples: int = EXAMPLES) -> dict:
    """{"passages", "documents", "topics" (names heading the most titles, else the most frequent
    titles), "examples" (questions to try)}."""
    from agent.context import Context, make_context
    from agent.retrieval.retriever import open_store

    store = open_store(context or make_context(Context))
    titles = [title_name(title) for _, title, _ in store.all_passages() if title]
    counts = Counter(titles)
    names = shared_names(list(counts))
    questions = [f"What is {name}?" for name, _ in names[:examples]]
    for title, _ in counts.most_common():
        if len(questions) >= examples:
            break
        if not any(title.startswith(q[len("What is "):-1]) for q in questions):
            questions.append(f"What is {title}?")
    topics = [name for name, _ in names[:SHOWN_TITLES]] or [title for title, _ in counts.most_common(SHOWN_TITLES)]
    return {"passages": len(titles), "documents": store.documents_count(), "topics": topics, "examples": questions}
