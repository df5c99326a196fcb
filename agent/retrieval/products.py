"""Which product a passage read from a file documents, and which products a question names.

Over many products' manuals in one index, the ambiguity of a question is often *which product*:
"How do I install it?" has one answer per manual. A passage read by structure (it carries a
`document`, agent/documents/citation.py) belongs to the product its document is about: the
folder it was ingested from (`tools/quillpad/README.md` -> quillpad), past folders that only
hold others (docs, python, debian, ...), else its document's title less the words that name a
kind of document ("Quillpad User Guide" -> Quillpad). The files read under a folder given to the
ingest that names a product keep that folder as `folder` (agent/retrieval/folder_products.py). Encyclopedia
records (JSONL, one entity per passage) carry no document and have no product: their senses are
their titles.
"""

from __future__ import annotations

import re

from agent.documents.citation import field_of, location

# folders that hold other products' documents rather than being a product themselves
CONTAINERS = frozenset("doc docs documentation manual manuals man share usr local lib lib64 site-packages "
                       "dist-packages packages package pkgs vendor vendored third_party thirdparty external src "
                       "python python3 debian node_modules opt en html md markdown pdf text txt content pages "
                       "guides guide reference references cli api usage commands examples example tutorials topics "
                       "advanced basics help articles book site website wiki source sources build _build latest "
                       "stable how-to howto tutorial explanation explanations concepts internal cookbook recipes".split())
# a release's version written onto a folder's name ("cookiecutter-2.7.1", "node-v18.19.0"): no part of the product's
VERSION = re.compile(r"[-_]v?\d+(?:\.\d+)+[\w.+-]*$")
# words of a title that name a kind of document, not what it documents
DOCUMENT_KINDS = frozenset("user users guide guides manual manuals handbook reference documentation docs doc readme "
                           "faq faqs tutorial tutorials quickstart quick start getting started introduction intro "
                           "overview release notes changelog changes installation install instructions howto how-to "
                           "the a an for of to and on with".split())
WORD = re.compile(r"[\w.+-]+")
MAN_SECTION = re.compile(r"(cat|man)[1-9n][a-z]{0,3}")  # /usr/share/man/man1 holds every product's page
MAN_PAGE = re.compile(r"((?=[\w+-]*[A-Za-z]{2})[A-Za-z][\w+-]*)(?:\.[1-9n][a-z]{0,3}|\([1-9n][a-z]{0,3}\))")  # gzip.1, GZIP(1)
LANGUAGE_SUFFIX = r"\.(?:py|js|jl|rb|rs|net)"  # written onto a name, it makes a package's name (coverage.py, Node.js)


def product_identity(passage: dict) -> str | None:
    """What makes two passages one product's, however each spells it: the product folder of their
    document, else the product their document's title names; None without document structure."""
    document = location(passage).get("document")
    if not document:
        return None
    folder = passage.get("folder") or product_folder(str(document))
    return product_key(folder) if folder else product_key(product_of(passage) or "")


def product_of(passage: dict) -> str | None:
    """The product a passage documents, in the words its document uses; None for a passage
    without document structure (a record of the demo corpus or of a JSONL file)."""
    document = location(passage).get("document")
    if not document:
        return None
    title = document_title(passage)
    folder = passage.get("folder") or product_folder(str(document))
    if folder:  # as the title writes it, else as the passage writes it as a name ("quillpad" -> Quillpad)
        return spelled_as_in(folder, title) or written_name(folder, passage.get("text") or "") or folder
    return title_product(title) or _stem(str(document)) or title or str(document)


def document_title(passage: dict) -> str:
    """The document's own title: a passage read by structure is titled "<document>: <section>"."""
    title = (passage.get("title") or "").strip()
    section = field_of(passage, "section").strip()  # flat as the index hands it back, else as a reader cut it
    if section and title.endswith(f": {section}"):
        return title[: -len(section) - 2].strip()
    return title


def product_folder(document: str) -> str:
    """The first folder of the document's path that is not a container of other products' folders
    (`python/openai/README.md` -> openai); "" when every folder is one (`docs/guide.md`)."""
    for part in document.split("/")[:-1]:
        if folder := folder_product(part):
            return folder
    return ""


def folder_product(folder: str) -> str:
    """The product a folder's name names, without a release's version ("cookiecutter-2.7.1" ->
    cookiecutter); "" for a folder that holds documents or other products' folders."""
    if not folder or folder.casefold() in CONTAINERS or MAN_SECTION.fullmatch(folder.casefold()):
        return ""
    return VERSION.sub("", folder) or folder


def spelled_as_in(folder: str, title: str) -> str:
    """The folder's name as the title writes it ("quillpad" in "Quillpad User Guide" -> Quillpad,
    "acme-cli" in "The Acme CLI Manual" -> Acme CLI), or "" when the title does not hold it."""
    parts = [p for p in re.split(r"[-_\s.]+", folder.casefold()) if p]
    words = WORD.findall(title)
    for start in range(len(words)):
        run, joined = [], ""
        for word in words[start:]:
            run.append(word)
            joined = "".join(w.casefold() for w in run)
            if joined == "".join(parts) or [w.casefold() for w in run] == parts:
                return " ".join(run)
            if len(joined) >= len("".join(parts)):
                break
    return ""


def written_name(folder: str, text: str) -> str:
    """The folder's name as the text writes it inside a sentence, where that says it is a name:
    with a language's suffix written onto it ("coverage" -> coverage.py: a bare "coverage" is
    also a word; "pytest.ini" is a file)
    or with a capital ("fernsync" -> Fernsync; a capital where a sentence starts says nothing);
    else ""."""
    parts = [re.escape(p) for p in re.split(r"[-_\s.]+", folder) if p]
    if not parts:
        return ""
    pattern = r"(?<=[\w,;)(\"'] )" + r"[-_\s.]?".join(parts) + rf"({LANGUAGE_SUFFIX})?(?![\w-])"
    found = [(m.group(), bool(m.group(1))) for m in re.finditer(pattern, text, re.IGNORECASE)]
    suffixed = [name for name, suffix in found if suffix]
    capitalized = [name for name, _ in found if name != name.lower()]
    return (suffixed or capitalized or [""])[0]


def name_like(name: str) -> int:
    """How surely a spelling is a name rather than a word: a language's suffix on it, a capital.
    A spelling in capitals only is a heading's ("ZSTD(1)", "GZIP"), under the name as written
    lower-case: otherwise one product reads "zstd" in one answer and "ZSTD" in the next, as the
    passages a question retrieves happen to spell it."""
    if re.search(rf"\w{LANGUAGE_SUFFIX}$", name):
        return 2
    if name == name.upper() and name != name.lower():
        return -1
    return int(name != name.lower())


def title_product(title: str) -> str:
    """A title less the words that name a kind of document: "Quillpad User Guide" -> Quillpad; a
    manual page's section is no part of its name ("gzip.1", "GZIP(1)" -> gzip, GZIP)."""
    if page := MAN_PAGE.fullmatch(title.strip()):
        return page.group(1)
    words = WORD.findall(title)
    while words and words[0].casefold() in DOCUMENT_KINDS:
        words.pop(0)
    while words and words[-1].casefold() in DOCUMENT_KINDS:
        words.pop()
    return " ".join(words)


def _stem(document: str) -> str:
    stem = document.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    return "" if stem.casefold() in DOCUMENT_KINDS else stem


_SEPARATORS = re.compile(r"[-_\s.]+")  # between a name's words: "Acme CLI", "acme-cli", "coverage.py"


def product_key(product: str) -> str:
    """Two spellings of one product are one product ("Acme CLI", "acme-cli"; "Coverage.py" and
    "coverage", as one manual writes its name in one passage and its folder in the next)."""
    return _SEPARATORS.sub("", re.sub(rf"(?<=\w){LANGUAGE_SUFFIX}$", "", product.casefold().strip()))


def names_product(text: str, product: str) -> bool:
    """Whether `text` names the product: its words in order, as words ("install Quillpad",
    "the Acme CLI"), or run together ("acmecli"), as spelled: its language suffix too (a bare
    "coverage" is also a word, so it does not name Coverage.py; `product_key` would)."""
    parts = [p for p in _SEPARATORS.split(product.casefold()) if p]
    if not parts:
        return False
    words = [w.casefold().strip(".") for w in WORD.findall(text)]
    joined = "".join(parts)
    for start in range(len(words)):
        if words[start:start + len(parts)] == parts or _SEPARATORS.sub("", words[start]) == joined:
            return True
    return False


def asked_product_only(question: str, passages: list[dict]) -> bool:
    """Whether every passage documents one product and the question names it: the question chose
    the product, and a lead naming one of its documents ("For usage, ..." from nox/usage.txt)
    tells the person nothing."""
    identities = {product_identity(p) for p in passages}
    if len(identities) != 1 or None in identities:
        return False
    name = product_of(passages[0])
    return bool(name) and names_product(question, name)


def named_products(texts: list[str], products: list[str], words: dict[str, str] | None = None) -> set[str]:
    """The product keys the first text that names any of `products` names: the question, else
    the conversation's latest user turn that names one (`texts` newest first). A product in
    `words` (names that are also words of the documents, `also_words`) is not named where the text
    says the word rather than the name (`said_as_word`): "How do I serve a directory listing?"
    does not name serve, "How do I retry failed requests?" does not name Requests; "How do I
    install serve?" and "How do I install requests?" do."""
    words = words or {}
    for text in texts:
        named = {product_key(p) for p in products
                 if names_product(text, p) and not said_as_word(text, p, words.get(product_key(p)))}
        if named:
            return named
    return set()


# words after which a sentence's next word is its verb: "how do I serve ...", "to serve ..."
BEFORE_VERB = frozenset("i we you to can could should would will must may might please".split())
_SUBJECT_OR_MODAL = "|".join(sorted(BEFORE_VERB - {"please"}))  # as a manual's sentence has them
# words after which a name stands where a word could too: "install requests", "a timeout with requests"
BEFORE_NAME = frozenset("install uninstall upgrade import from use using with in via run require configure "
                        "called named about".split())
WORD_USES = 2  # lower-case uses in the documents' sentences that make a capitalized name a word as well
LEADING = 1  # passages at the head of a question's ranking: a product with one there is the one it asks about


def also_words(products: list[str], passages: list[dict]) -> dict[str, str]:
    """The products whose name the passages also use as a word of the language, so a question
    saying it need not mean the product, by key: "verb", lower case after a subject or a modal
    ("helps you serve a static site", "to serve files"); or "noun", for a name written with a
    capital (Requests), its lower case inside other products' sentences where no name stands ("retrying
    requests", "failed requests"), unless its own passages lead the question's ranking (`passages`
    in rank order): "How do I make git grep ignore case?" is Git's, however other manuals say
    "a git checkout". A tool's name the manuals only use as a name ("like gzip", "the gzip format")
    is not one: "How do I gzip a file?" names gzip."""
    found = {}
    for product in products:
        key = product_key(product)
        verb = re.compile(rf"\b(?:{_SUBJECT_OR_MODAL})\s+({_spelled(product).pattern})", re.IGNORECASE)
        if any(m.group(1) == m.group(1).lower() for p in passages for m in verb.finditer(p.get("text") or "")):
            found[key] = "verb"
        elif product != product.lower():
            own = [product_key(p.get("product") or "") == key for p in passages]
            others = [p.get("text") or "" for p, mine in zip(passages, own) if not mine]
            if not any(own[:LEADING]) and sum(len(_word_uses(text, product)) for text in others) >= WORD_USES:
                found[key] = "noun"
    return found


def said_as_word(text: str, product: str, kind: str | None) -> bool:
    """Whether every time `text` says the product's name it says the word of that `kind` instead
    (`also_words`): a verb's, lower case where a verb stands (`said_as_verb`); a noun's, lower case
    where no name stands ("retry failed requests"): never quoted, capitalized or after "install"."""
    if kind == "verb":
        return said_as_verb(text, product)
    found = list(_spelled(product).finditer(text))
    return kind == "noun" and bool(found) and len(_word_uses(text, product)) == len(found)


def _word_uses(text: str, product: str) -> list[re.Match]:
    """The lower-case uses of the name inside a sentence that are no name's: after a lower-case
    word other than one a name follows (`BEFORE_NAME`), not quoted, not code (`requests.get(`)."""
    uses = []
    for match in _spelled(product).finditer(text):
        before = re.search(r"([A-Za-z]+)[ \t]+$", text[:match.start()])
        after = text[match.end():match.end() + 2]
        if (match.group() == match.group().lower() and before and before.group(1).islower()
                and before.group(1) not in BEFORE_NAME and not re.match(r"[`'\"’(]|\.\w", after)):
            uses.append(match)
    return uses


def said_as_verb(text: str, product: str) -> bool:
    """Whether every time `text` says the product's name it stands where a verb does, lower case:
    first in a sentence or after a subject or modal ("How do I serve a folder?"), never where a
    name does ("install serve", "`serve`", "Serve's options")."""
    found = list(_spelled(product).finditer(text))
    for match in found:
        words = re.findall(r"[\w'`]+|[.?!]", text[:match.start()])
        first = not words or words[-1] in ".?!"  # where a capital says nothing
        capital = match.group() != match.group().lower() and not first
        quoted = text[match.end():match.end() + 1] in ("`", "'", "\"", "’")
        if capital or quoted or not (first or words[-1].casefold() in BEFORE_VERB):
            return False
    return bool(found)


def _spelled(product: str) -> re.Pattern:
    """The product's name as a word, however it is separated and in any case."""
    parts = [re.escape(p) for p in re.split(r"[-_\s.]+", product) if p] or ["(?!)"]
    return re.compile(r"(?<![\w-])" + r"[-_\s.]?".join(parts) + r"(?![\w-])", re.IGNORECASE)


def product_names(passages: list[dict]) -> list[str]:
    """The products the passages document (`product`, set by agent/retrieval/pool.py), in order."""
    names: dict[str, str] = {}
    for passage in passages:
        if passage.get("product"):
            names.setdefault(product_key(passage["product"]), passage["product"])
    return list(names.values())


def product_title(passage: dict) -> str:
    """The passage's title, led by its product where the title does not name it ("Fernsync User
    Guide: Installation"): what a title tells a reader of one sentence is which sense it is about."""
    title = passage.get("title") or ""
    product = passage.get("product")
    return f"{product} {title}".strip() if product and not names_product(title, product) else title
