"""Hand-made signals of an unclear conversational query (the query-rewrite paper, section 3.3).

Pragmatic ambiguity shows up as referential words ("How many of them?"), syntactic ambiguity
as short or broken queries ("segment?"), both visible in the three numeric features below.
Lexical ambiguity is caught by a rule instead: a query that names a data object by an
identifier ("Is 124abcde still active?") but never says what kind of object it is.
"""

from __future__ import annotations

import re

# The paper's list of words that point back to something said earlier.
REFERENTIAL_WORDS = frozenset(
    ["this", "that", "those", "it", "its", "some", "others", "another", "other", "them", "above", "previous"]
)

# Kinds of business objects a user may name by identifier; configuration, not code (the paper's
# examples are dataset, segment and schema). Plurals match too.
DEFAULT_ENTITY_TYPES = (
    "dataset", "segment", "schema", "audience", "attribute", "field", "column", "table", "view", "query",
    "dashboard", "report", "chart", "journey", "campaign", "destination", "source", "connector", "workflow",
    "pipeline", "job", "profile", "user", "account", "project", "workspace", "sandbox", "team", "role",
    "ticket", "invoice", "order", "customer", "file", "folder", "document", "page", "link", "url", "website",
    "site", "email", "address", "id", "identifier", "key", "token", "version", "release", "model", "policy",
    "plan", "contract", "product", "tag", "label", "namespace", "bucket", "server", "host", "database", "event",
)

ENTITY = "ENTITY"
URL = re.compile(r"(?:https?://|ftp://|www\.)\S+", re.IGNORECASE)
QUOTED = re.compile(r"\"[^\"]+\"|“[^”]+”|‘[^’]+’|(?<![\w'])'[^']+'(?![\w])")
ORDINAL = re.compile(r"^\d+(?:st|nd|rd|th)$", re.IGNORECASE)
NUMBER = re.compile(r"^[$€£]?\d+(?:[.,:/]\d+)*%?$")  # years, counts, prices, times, dates
ABBREVIATION = re.compile(r"^(?:[A-Za-z]\.)+[A-Za-z]\.?$")  # U.S., e.g.
JOINED = re.compile(r"\w[.:]\w")  # file.csv, urn:abc
TRAILING = ".,;!?)]}"
WORD = re.compile(r"[A-Za-z0-9]+(?:['’][A-Za-z]+)?")
LETTERS = re.compile(r"[A-Za-z]")
SENTENCE_END = re.compile(r"[.!?]+(?:\s|$)")


def words(text: str) -> list[str]:
    """The words of a query: letters and digits, keeping contractions whole."""
    return WORD.findall(text)


def query_length(text: str) -> int:
    """f_QL: the number of words."""
    return len(words(text))


def referential_count(text: str) -> int:
    """f_RC: how many words come from the referential list ("it's" counts as "it")."""
    return sum(1 for token in re.findall(r"[a-z]+", text.lower()) if token in REFERENTIAL_WORDS)


def coleman_liau(text: str) -> float:
    """f_CLI: 5.89 L/W - 30 S/W - 15.8 with L letters, W words, S sentences (at least one)."""
    word_count = max(1, query_length(text))
    letters = len(LETTERS.findall(text))
    sentences = max(1, len(SENTENCE_END.findall(text.strip())))
    return 5.89 * letters / word_count - 30.0 * sentences / word_count - 15.8


def numeric_features(text: str) -> list[float]:
    """[query length, referential count, Coleman-Liau index], the classifier's extra inputs."""
    return [float(query_length(text)), float(referential_count(text)), coleman_liau(text)]


def _is_identifier(token: str) -> bool:
    """An id-like token: letters mixed with digits (4+ characters, so "MP3" stays a word), or
    parts joined by _ . : (plain numbers, ordinals, abbreviations like "U.S." and hyphenated
    words like "follow-up" are ordinary words)."""
    token = token.lstrip("([{")
    if ABBREVIATION.match(token.rstrip(",;!?)]}")):
        return False
    token = token.rstrip(TRAILING)
    if not token or ORDINAL.match(token) or NUMBER.match(token):
        return False
    if re.fullmatch(r"[A-Za-z]+(?:-[A-Za-z]+)+", token):
        return False
    has_digit, has_letter = any(c.isdigit() for c in token), any(c.isalpha() for c in token)
    return (has_digit and has_letter and len(token) >= 4) or "_" in token or bool(JOINED.search(token))


MARK = re.compile("\x00(\\d+)\x00")


def mark_entities(text: str) -> tuple[str, list[str]]:
    """`text` with each entity replaced by a numbered marker, and the entities in marker order."""
    found: list[str] = []

    def marker(value: str) -> str:
        found.append(value)
        return f"\x00{len(found) - 1}\x00"

    marked = URL.sub(lambda m: marker(m.group(0)), text)
    marked = QUOTED.sub(lambda m: marker(m.group(0)), marked)
    pieces = []
    for token in re.split(r"(\s+)", marked):
        core = token.rstrip(TRAILING)
        if core and not MARK.search(token) and _is_identifier(token):
            token = marker(core) + token[len(core):]
        pieces.append(token)
    return "".join(pieces), found


def unmark(marked: str, entities: list[str]) -> str:
    """Put the original entities back in place of their markers."""
    return MARK.sub(lambda m: entities[int(m.group(1))], marked)


def mask_entities(text: str) -> str:
    """Replace URLs, quoted strings and identifier-like tokens by ENTITY.

    "What is the total size of 124abcde?" -> "What is the total size of ENTITY?"
    """
    return MARK.sub(ENTITY, mark_entities(text)[0])


def parse_entity_types(value: str | list[str] | tuple[str, ...] | None) -> tuple[str, ...]:
    """Entity-type words from a comma-separated setting or a list (empty -> the defaults)."""
    if value is None or value == "":
        return DEFAULT_ENTITY_TYPES
    items = value.split(",") if isinstance(value, str) else list(value)
    return tuple(word.strip().lower() for word in items if word.strip())


def mentions_entity_type(text: str, entity_types: tuple[str, ...]) -> bool:
    """Whether any entity-type word (or its plural) occurs in `text`."""
    tokens = set(re.findall(r"[a-z]+", text.lower()))
    return any(kind in tokens or kind + "s" in tokens or kind + "es" in tokens for kind in entity_types)


def lexical_ambiguity(text: str, entity_types: tuple[str, ...] = DEFAULT_ENTITY_TYPES) -> bool:
    """The paper's rule: the masked query has an ENTITY but, once masked, no word saying what
    kind of object it is ("the id of 'ABC Dataset'" says id; "is 124abcde active?" says nothing)."""
    masked = mask_entities(text)
    return ENTITY in masked and not mentions_entity_type(masked.replace(ENTITY, " "), entity_types)
