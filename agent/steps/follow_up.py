"""Which product a follow-up is about: "it" means the product the conversation was about.

Over several products' manuals, "How do I install it?" has one answer per manual; in a thread
that has talked about one product it means that one. Where the detector calls a follow-up
ambiguous, the product is resolved here without a model call: the product the message names,
else the thread's (`product` in state: named, chosen in a clarification, or the one the last
answer cited), else the one the latest user turn naming a single product named. The message is
then rewritten by rule to name it ("How do I install zstd?"), so retrieval keeps that product's
passages only. Only a follow-up left unsure (no product, or several) goes to the model.
Everything here is plain data: the product travels in the thread's state.
"""

from __future__ import annotations

import re

from agent.detector.classifier import AMBIGUOUS, rules_label
from agent.llm.answers import cited_passage_ids
from agent.retrieval.pool import with_products
from agent.retrieval.products import also_words, named_products, names_product, product_folder, product_key, product_of
from agent.steps.grounding import STOPWORDS, tokens

CANDIDATES = 20  # sparse hits per text whose products may be the ones it names
# words a follow-up that only switches product may hold besides the product ("and for lz4?")
SWITCH_WORDS = frozenset("same question one case instead too please thanks ok okay now again well".split())
PRONOUN = re.compile(r"\b(it|its)\b(?!['’]s)", re.IGNORECASE)
# a word after a possessive belongs to what the possessive refers to: "its coverage" names no product
OWNED = re.compile(r"\b(?:its|their|his|her|our|your|my)\s+[\w.+-]+", re.IGNORECASE)


def passage_product(passage: dict) -> str | None:
    """The product a passage documents: as retrieval tagged it, else as its document tells, else
    the folder its document id names (a plain-text file `zstd/zstd.1.txt` is zstd's)."""
    found = passage.get("product") or product_of(passage)
    if found:
        return found
    document = str(passage.get("id") or "").split("#", 1)[0]  # chunk ids are <document id>#<n>
    read_from_file = "/" in document and str(passage.get("source") or "").endswith("/" + document)
    return (product_folder(document) or None) if read_from_file else None


def products_of(passages: list[dict]) -> list[str]:
    """The products the passages document, one name per product, in order."""
    names: dict[str, str] = {}
    for passage in passages:
        if name := passage_product(passage):
            names.setdefault(product_key(name), name)
    return list(names.values())


def candidate_products(retriever, texts: list[str], known: list[str]) -> tuple[list[str], dict[str, str]]:
    """Products a text might name: `known` ones (the thread's), then those of each text's sparse
    hits; and those whose name the hits also use as a word (`also_words`, in the first text's
    ranking: the message's)."""
    hits = retriever.search_batch([t for t in texts if t.strip()], "sparse", CANDIDATES) if retriever else []
    # one product spelled one way (`with_products`): "coverage" and "coverage.py" are one product's
    # names, and a message saying both ("branch coverage with Coverage.py") names one product
    passages = [{**p, "product": passage_product(p)} for p in with_products([p for found in hits for p in found])]
    products = products_of([{"product": name} for name in known] + passages)
    return products, also_words(products, passages)


def named_in(text: str, products: list[str], words: dict[str, str] | None = None) -> list[str]:
    """The products `text` names, as words (agent/retrieval/products.py `named_products`): never
    as what a possessive owns (a product whose name is a common word: "its coverage"), nor one in
    `words` where the text says the word ("retry failed requests")."""
    named = named_products([OWNED.sub(" ", text)], products, words)
    return [name for name in products if product_key(name) in named]


def answer_products(state: dict) -> list[str]:
    """The products the answer cites."""
    passages = state.get("passages") or []
    cited = set(cited_passage_ids(state.get("answer") or "", state.get("interpretations") or [], passages))
    return products_of([p for p in passages if p["id"] in cited])


def answer_product(state: dict) -> str | None:
    """The one product the answer cites, or None when it cites none or several."""
    found = answer_products(state)
    return found[0] if len(found) == 1 else None


def naming_product(question: str, product: str) -> str:
    """The question naming the product: "it"/"its" read as the product, else "for <product>" at its end."""
    if names_product(question, product):
        return question
    match = PRONOUN.search(question)
    if match:
        said = product if match.group(1).lower() == "it" else f"{product}'s"
        return question[:match.start()] + said + question[match.end():]
    body = question.rstrip(" ?.!")
    return f"{body} for {product}{question[len(body):].strip() or '?'}"


def only_switches(question: str, product: str) -> bool:
    """Whether the message says nothing but the product ("And with lz4?", "What about nodemon?")."""
    own = {word.casefold() for word in re.split(r"[-_\s.]+", product) if word}
    return not [w for w in tokens(question) if w not in STOPWORDS and w not in SWITCH_WORDS and w not in own]


def switched_question(previous: str, old: str | None, new: str) -> str:
    """The previous question asked of another product: its product's name replaced, else named."""
    if old and names_product(previous, old):
        pattern = r"[-_\s.]?".join(re.escape(p) for p in re.split(r"[-_\s.]+", old) if p)
        return re.sub(rf"(?<![\w-]){pattern}(?![\w-])", new, previous, count=1, flags=re.IGNORECASE)
    return naming_product(previous, new)


def unclear(question: str, verdict: str | None) -> bool:
    """The paper's detector says the message needs the conversation: its classifier, or its rules
    (a referential word such as "it", a very short message; the classifier may miss "with it")."""
    return verdict == AMBIGUOUS or rules_label(question) == AMBIGUOUS


def conversation_product(thread_product: str | None, user_turns: list[str], products: list[str],
                         words: dict[str, str] | None = None) -> tuple[str | None, str | None]:
    """(product, where it came from) for a message that names none: the thread's, else the one
    product the latest user turn naming any names; (None, None) when nothing decides."""
    if thread_product:
        return thread_product, "thread"
    for turn in user_turns:  # newest first
        named = named_in(turn, products, words)
        if named:
            return (named[0], "earlier turn") if len(named) == 1 else (None, None)
    return None, None


def resolve_product(question: str, ambiguous: bool, *, thread_product: str | None, previous_query: str | None,
                    user_turns: list[str], products: list[str], unnamed: bool = False,
                    answered: list[str] = (), words: dict[str, str] | None = None) -> dict:
    """The turn's product and the query that goes downstream, with no model call.

    {"product", "product_source" (named | thread | earlier turn | None), "query", "unsure", "among"}:
    a message naming one product is about it (one that says nothing else re-asks the previous
    question of it); an ambiguous message naming none is about the conversation's product and
    is rewritten to name it (`unnamed`: a clear one too). Where the last answer spoke for several
    products (`answered`) and nothing else decides, "it" is one of them: `among` lists them for
    the person to choose, since a model could only guess. `unsure` when the model should rewrite."""
    named = named_in(question, products, words)
    if len(named) > 1 and thread_product:  # "c8 coverage" in a c8 thread: the thread's product, named again
        named = [name for name in named if product_key(name) == product_key(thread_product)] or named
    if len(named) == 1:
        product = named[0]
        switch = bool(previous_query) and only_switches(question, product)
        query = switched_question(previous_query, thread_product, product) if switch else question
        return {"product": product, "product_source": "named", "query": query, "unsure": False}
    if named or not (ambiguous or unnamed) or not (user_turns or thread_product):
        return {"product": None, "product_source": None, "query": question, "unsure": ambiguous}
    if not thread_product and len(answered) > 1:  # the last answer spoke for several: ask which
        return {"product": None, "product_source": None, "query": question, "unsure": False, "among": list(answered)}
    product, source = conversation_product(thread_product, user_turns, products, words)
    if product is None:
        return {"product": None, "product_source": None, "query": question, "unsure": ambiguous}
    return {"product": product, "product_source": source, "query": naming_product(question, product), "unsure": False}


def product_after(turn_product: str | None, result: dict) -> str | None:
    """The thread's product once a turn is answered: the one the turn was resolved to, else the
    one product its answer cites (None when it cites several: nothing decides the next "it")."""
    return turn_product or answer_product(result)
