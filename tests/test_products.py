"""Readings by product over many products' manuals in one index: three invented tools' Markdown
manuals, each with an Installation section giving its own command. A question all three answer
gets a reading per product, named after the product, through the real auto graph (instant: no
model; fast: one scripted call writing a line per product); a question or a conversation naming
one product gets that one only; ADF decomposes by product; the demo corpus is as before."""

from __future__ import annotations

import json
import re

import httpx
import openai
import pytest

from agent.app import api
from agent.assembly.features import candidates
from agent.assembly.products import within_products
from agent.context import Context
from agent.retrieval.pool import document_pool, per_document, user_turns
from agent.retrieval.products import names_product, product_folder, product_of, title_product
from agent.retrieval.retriever import get_retriever
from tests.document_files import index_of
from tests.scripted import SYNTHESIS_MARKER
from tests.test_unit_check import CHECK_MARKER

# (folder, title, name as the manual writes it, install command, what it is, where its settings are,
#  what its install sentence calls it)
MANUALS = [
    ("quillpad", "Quillpad User Guide", "Quillpad", "pip install quillpad",
     "Quillpad is a note-taking tool for the terminal that keeps notes as plain files.",
     "Quillpad stores its settings in the file ~/.quillpad/config.toml.", "Quillpad"),
    ("lumenctl", "Lumenctl Manual", "Lumenctl", "apt install lumenctl",
     "Lumenctl controls smart lights on a local network from the command line.",
     "Lumenctl reads the bridge address from the LUMEN_BRIDGE environment variable.", "Lumenctl"),
    # a title that names only a kind of document and an install sentence that does not name it: the
    # product is the folder, as the text spells it
    ("fernsync", "User Guide", "Fernsync", "npm install -g fern-cli",
     "Fernsync copies folders between machines and keeps them in step.",
     "Fernsync keeps its list of folders in the file pairs.yaml next to its data.", "it"),
]
COMMANDS = {name: command for _, _, name, command, *_ in MANUALS}
LINES_MARKER = "one line that answers it for that product only"
GUESS_MARKER = "command-line options, subcommands, settings or files"


def manual(title: str, name: str, command: str, about: str, settings: str, subject: str) -> str:
    return (f"# {title}\n\n{about}\n\n## Installation\n\nInstall {subject} with the command `{command}`. "
            f"It needs Python 3.10 or later.\n\n## Configuration\n\n{settings} Restart {name} after changing it.\n\n"
            f"## Troubleshooting\n\nIf {name} does not start, check the log in your home folder and report the "
            "problem on the issue tracker.\n")


@pytest.fixture(scope="module")
def manuals_index(tmp_path_factory) -> str:
    """An index of the three manuals, each in its own folder (as manuals of many packages are laid out)."""
    return index_of({f"{folder}/README.md": manual(*fields) for folder, *fields in MANUALS},
                    tmp_path_factory.mktemp("manuals"), tmp_path_factory.mktemp("manuals-index"))


def context(index, **extra):
    return {"model": "scripted", "index_dir": index, **extra}


def test_a_passage_read_from_a_file_names_its_product_a_record_none():
    def passage(document, title, section="Installation", text=""):
        return {"id": f"{document}#1", "title": f"{title}: {section}", "text": text, "document": document,
                "section": section}

    assert product_of(passage("quillpad/README.md", "Quillpad User Guide")) == "Quillpad"
    assert product_of(passage("python/acme-cli/docs/index.md", "The Acme CLI Manual")) == "Acme CLI"
    assert product_of(passage("fernsync/guide.md", "User Guide", text="Restart Fernsync after a change.")) == "Fernsync"
    assert product_of(passage("lumenctl.md", "Lumenctl Manual")) == "Lumenctl"
    assert product_of({"id": "hp-unit", "title": "Horsepower", "text": "A unit of power."}) is None
    assert product_folder("debian/nodejs/BUILDING.md") == "nodejs" and product_folder("docs/guide.md") == ""
    assert title_product("Quillpad User Guide") == "Quillpad" and title_product("FAQ") == ""
    # a manual page saved under its own name, in a folder of several: its section is no part of the name
    assert title_product("gzip.1") == "gzip" and title_product("GZIP(1)") == "GZIP" and title_product("Python 3.1") == "Python 3.1"
    assert names_product("How do I install the Acme CLI?", "Acme CLI")
    assert not names_product("How do I install it?", "Acme CLI")


def test_each_document_adds_its_best_passages_before_any_adds_more():
    ranked = [{"id": f"{d}#{n}", "document": d, "section": "s"} for d, n in
              [("a", 1), ("a", 2), ("a", 3), ("a", 4), ("b", 1), ("c", 1), ("b", 2)]]
    assert [p["id"] for p in per_document(ranked, 5, 2)] == ["a#1", "a#2", "b#1", "c#1", "b#2"]
    one_manual = ranked[:4]  # one long document still fills the pool
    assert [p["id"] for p in per_document(one_manual, 3, 1)] == ["a#1", "a#2", "a#3"]


def test_each_products_passages_are_scored_as_a_pool_of_their_own():
    pool = [{"id": f"{product}#{n}", "product": product, "text": f"{product.title()} keeps the file number {n}."}
            for product, n in [("gzip", 1), ("xz", 1), ("gzip", 2)]]
    seen = within_products(pool, lambda passages: [(c, [p["id"] for p in passages]) for c in candidates(passages)])
    assert [(c.passage["id"], group) for c, group in seen] == [
        ("gzip#1", ["gzip#1", "gzip#2"]), ("xz#1", ["xz#1"]), ("gzip#2", ["gzip#1", "gzip#2"])]
    assert within_products(pool[::2], lambda passages: []) is None  # one product: one pool


def test_a_question_every_manual_answers_gets_a_reading_per_product(scripted, manuals_index):
    result = api.ask("How do I install it?", "auto", context(manuals_index, budget="instant"))
    decision = result["decision"]
    assert decision["ambiguous"] is True and "3 products answer" in decision["auto"]["fired"]
    readings = decision["auto"]["assembly"]["readings"]
    assert sorted(r["sense"] for r in readings) == ["Fernsync", "Lumenctl", "Quillpad"]
    for reading in readings:  # each cites its own product's manual
        assert reading["citations"][0].startswith(reading["sense"].lower() + "/")
    assert all(command in result["answer"] for command in COMMANDS.values())
    assert "For Fernsync, " in result["answer"]  # named by its product, not its title ("User Guide")
    assert "User Guide," not in result["answer"] and not scripted.calls


def test_a_question_naming_a_product_gets_that_product_only(scripted, manuals_index):
    result = api.ask("How do I install Lumenctl?", "auto", context(manuals_index, budget="instant"))
    assert {p["document"] for p in result["passages"]} == {"lumenctl/README.md"}
    readings = result["decision"]["auto"]["assembly"]["readings"]
    assert readings and all(r["citations"][0].startswith("lumenctl/") for r in readings)
    assert COMMANDS["Lumenctl"] in result["answer"]
    assert not any(COMMANDS[other] in result["answer"] for other in ("Quillpad", "Fernsync"))


def test_a_product_the_conversation_named_is_the_one_answered(scripted, manuals_index):
    from langchain_core.messages import AIMessage, HumanMessage

    from graphs.auto import AutoContext, graph

    messages = [HumanMessage("What is Fernsync?"), AIMessage("Fernsync copies folders between machines [1]."),
                HumanMessage("How do I install it?")]
    assert user_turns(messages, "How do I install it?") == ["What is Fernsync?"]
    state = graph.invoke({"question": "How do I install it?", "messages": messages},
                         context=AutoContext(index_dir=manuals_index, model="scripted", budget="instant"))
    assert {p["document"] for p in state["passages"]} == {"fernsync/README.md"}
    assert COMMANDS["Fernsync"] in state["answer"] and COMMANDS["Quillpad"] not in state["answer"]


def product_lines(messages) -> str:
    """A line per product citing its own passage, and one citing another product's passage."""
    text = str(messages[-1].content)
    blocks = dict(re.findall(r"^(\w+):\n((?:\[\d+\] .*\n?)+)", text, re.M))
    first = {name: int(re.match(r"\[(\d+)\]", block).group(1)) for name, block in blocks.items()}
    lines = [{"product": name, "line": f"For {name}, install it with the command {COMMANDS[name]} [{number}]."}
             for name, number in first.items()]
    lines.append({"product": "Quillpad", "line": f"For Quillpad, run {COMMANDS['Lumenctl']} [{first['Lumenctl']}]."})
    # a second line for a product already answered, citing its own passage: one line per product
    lines.append({"product": "Fernsync", "line": f"Fernsync also needs Python 3.10 or later [{first['Fernsync']}]."})
    return json.dumps({"lines": lines})


def test_the_fast_budget_writes_no_line_for_a_product_its_reading_answers(scripted, manuals_index):
    scripted.rules.extend([(LINES_MARKER, product_lines), (GUESS_MARKER, "Names: install, --install, setup")])
    result = api.ask("How do I install it?", "auto", context(manuals_index))
    assert result["route"] == ["retrieve_for_gate", "guess_option_names", "assess_ambiguity", "select_readings",
                               "compose_answer"]  # each product the gate passes has its reading: nothing left to write
    checks = [c for c in scripted.calls if CHECK_MARKER in c["text"]]  # each product's units (tests/test_unit_check.py)
    assert result["usage"]["llm_calls"] == 1 + len(checks) and not [c for c in scripted.calls if LINES_MARKER in c["text"]]
    products = result["decision"]["auto"]["signals"]["products"]
    readings = result["decision"]["auto"]["assembly"]["readings"]
    assert len(products) >= 2 and sorted(r["sense"] for r in readings) == sorted(products)
    assert all(COMMANDS[name] in result["answer"] for name in products)


def test_only_products_without_a_reading_are_left_to_the_line_writer():
    from agent.assembly.product_lines import unread_products

    readings = [{"sense": "Quillpad", "citations": ["quillpad/README.md#1"]}]
    assert unread_products({"products": ["Quillpad", "Lumenctl", "Fernsync"], "readings": readings}) == ["Lumenctl",
                                                                                                      "Fernsync"]
    assert unread_products({"products": ["Quillpad"], "readings": readings}) == []
    held_back = {"auto": {"offered": [{"sense": "Lumenctl", "passage": {"id": "lumenctl/README.md#2"}}]}}
    assert unread_products({"products": ["Quillpad", "Lumenctl", "Fernsync"], "readings": readings,
                            "decision": held_back}) == ["Fernsync"]


def test_a_models_line_is_led_by_its_product_as_every_reading_is():
    """A model copies the answer's "For <product>, " with its own capital after it; the lead-in
    is the answer's to write, so the line reads as a reading does."""
    from agent.assembly.compose import reading_text
    from agent.assembly.product_lines import own_lead

    passage = {"id": "fernsync/guide.md#2", "title": "User Guide", "text": "To install it, run npm install -g fern-cli.",
               "document": "fernsync/guide.md", "product": "Fernsync"}
    line = own_lead("For fernsync, To install it, run npm install -g fern-cli.", {"Fernsync"})
    assert line == "To install it, run npm install -g fern-cli."
    assert reading_text(line, passage, [passage]) == "For Fernsync, to install it, run npm install -g fern-cli [1]."
    assert own_lead("For example, run fern-cli sync.", {"Fernsync"}) == "For example, run fern-cli sync."


def test_the_fast_budget_writes_a_line_per_unread_product_and_keeps_those_their_passage_holds(
        scripted, manuals_index, monkeypatch):
    from agent.assembly import product_lines as lines_module

    def unread(state):  # as if no product's reading stood
        return list(state.get("products") or [])
    monkeypatch.setattr(lines_module, "unread_products", unread)
    scripted.rules.append((LINES_MARKER, product_lines))
    result = api.ask("How do I install it?", "auto", context(manuals_index, guess_options=False))
    assert result["route"] == ["retrieve_for_gate", "assess_ambiguity", "select_readings",
                               "write_product_lines", "compose_answer"]
    checks = [c for c in scripted.calls if CHECK_MARKER in c["text"]]
    assert result["usage"]["llm_calls"] == 1 + len(checks) and not [c for c in scripted.calls if SYNTHESIS_MARKER in c["text"]]
    (prompt,) = [c["text"] for c in scripted.calls if LINES_MARKER in c["text"]]
    assert all(f"{name}:\n[" in prompt for name in COMMANDS)  # each product's passages under its name
    dropped = result["decision"]["auto"]["assembly"]["dropped"]
    assert any(COMMANDS["Lumenctl"] in d["sentence"] and "Quillpad" in d["sentence"] for d in dropped)
    assert all(command in result["answer"] for command in COMMANDS.values())
    assert f"run {COMMANDS['Lumenctl']}" not in result["answer"]
    assert any(d["reason"] == "a second line for Fernsync" for d in dropped)
    assert "also needs Python" not in result["answer"]
    for item in result["interpretations"]:  # every line and reading cites its own product's manual
        name = re.search(r"\((\w+)\)\?$", item["question"]).group(1)
        assert item["citations"][0].startswith(name.lower() + "/")


@pytest.mark.parametrize("settings", [{"budget": "instant"}, {"guess_options": False}])
def test_no_guess_where_the_budget_calls_no_model_or_guessing_is_off(scripted, manuals_index, settings):
    scripted.rules.extend([(LINES_MARKER, product_lines), (GUESS_MARKER, "Names: --install")])
    result = api.ask("How do I install it?", "auto", context(manuals_index, **settings))
    assert "guess_option_names" not in result["route"] and result["decision"]["auto"]["option_names"] == []
    assert not [c for c in scripted.calls if GUESS_MARKER in c["text"]]
    assert all(command in result["answer"] for command in COMMANDS.values())


def test_a_guess_that_fails_leaves_the_answer_to_the_ranker_without_one(scripted, manuals_index):
    timeout = openai.APITimeoutError(request=httpx.Request("POST", "http://scripted/v1/chat/completions"))
    scripted.rules.extend([(LINES_MARKER, product_lines), (GUESS_MARKER, timeout)])
    result = api.ask("How do I install it?", "auto", context(manuals_index, max_retries=0))
    assert "guess_option_names" in result["route"] and result["decision"]["auto"]["option_names"] == []
    assert all(command in result["answer"] for command in COMMANDS.values())


def test_adf_decomposes_by_product(scripted, manuals_index):
    def sub_questions(messages) -> str:
        groups = re.findall(r"^Group (\d+):\n(.*)$", str(messages[-1].content), re.M)
        return json.dumps({"sub_questions": [
            {"group": int(n), "question": f"How do I install {lead.split()[0]}?", "passage": ""} for n, lead in groups]})

    scripted.rules.extend([("Each passage: ", sub_questions),
                           (SYNTHESIS_MARKER, json.dumps({"interpretations": [], "answer": ""}))])
    result = api.ask("How do I install it?", "adf", context(manuals_index, adf_calls="batched", readings="on"))
    decision = result["decision"]["adf"]
    assert decision["gate"] == "Ambiguous" and sorted(decision["products"]) == ["Fernsync", "Lumenctl", "Quillpad"]
    assert decision["grouping"] == "product" and len(decision["clusters"]) == 3
    for cluster in decision["clusters"]:  # a cluster is one product's passages
        assert len({i.split("/")[0] for i in cluster["passage_ids"]}) == 1


def test_the_demo_corpus_pool_is_the_plain_ranking(demo_index):
    retriever = get_retriever(Context(index_dir=demo_index))
    pool = document_pool(retriever, "What is HP?", "hybrid", 15, 20, quota=2)
    assert pool == retriever.search("What is HP?", "hybrid", 15, depth=20)
    assert not any("product" in p for p in pool)


def test_records_without_documents_get_no_option_name_guess(scripted, demo_index):
    scripted.rules.append((GUESS_MARKER, "Names: --hp"))
    result = api.ask("What is HP?", "auto", context(demo_index))
    assert result["route"][:2] == ["retrieve_for_gate", "assess_ambiguity"]
    assert not [c for c in scripted.calls if GUESS_MARKER in c["text"]]


def test_a_plain_text_manual_stands_in_its_document_and_names_its_product(tmp_path):
    """A man page saved as text has no headings, yet its passages name their file and its product."""
    from agent.documents.citation import citation
    from agent.retrieval.corpus import ReadReport, read_passages
    from agent.retrieval.index import IndexStore, ingest

    (tmp_path / "docs" / "tallyctl").mkdir(parents=True)
    (tmp_path / "docs" / "tallyctl" / "tallyctl.1.txt").write_text(
        "TALLYCTL(1)\n\nNAME\n    tallyctl - count lines in Tallyctl ledgers\n\nOPTIONS\n"
        "    -q, --quiet    Tallyctl prints nothing but errors.\n")
    store = IndexStore(str(tmp_path / "index"), create=True)
    ingest(store, read_passages([str(tmp_path / "docs")], ReadReport()))
    passage = store.get(["tallyctl/tallyctl.1.txt"])["tallyctl/tallyctl.1.txt"]
    assert passage["document"] == "tallyctl/tallyctl.1.txt" and passage["section"] == ""
    assert citation(passage) == "tallyctl/tallyctl.1.txt"
    assert product_of(passage) == "Tallyctl"


def test_a_product_is_spelled_one_way_whatever_passages_a_question_retrieves():
    from agent.retrieval.pool import with_products

    def passage(n, text):
        return {"id": f"zstd/zstd.1.txt#{n}", "title": "Manual", "text": text, "document": "zstd/zstd.1.txt",
                "section": ""}

    heading = passage(1, "The frame format of ZSTD compression is described in RFC 8878.")
    plain = passage(2, "Use the level option for a smaller file.")
    assert {p["product"] for p in with_products([heading, plain])} == {"zstd"}  # capitals only: a heading's
    assert {p["product"] for p in with_products([plain])} == {"zstd"}
    written = passage(3, "Most users call Zstd from a script.")  # a capital inside a sentence: a name
    assert {p["product"] for p in with_products([heading, plain, written])} == {"Zstd"}


def test_one_products_unit_is_led_by_its_product_unless_the_question_names_it():
    from agent.assembly.features import Candidate
    from agent.assembly.nodes import stated_readings

    passage = {"id": "zstd/zstd.1.txt#3", "title": "zstd.1", "product": "zstd", "document": "zstd/zstd.1.txt",
               "text": "-k, --keep: keep source file(s) after successful compression or decompression."}
    unit = Candidate(passage, 0, passage["text"], 0)
    readings, _ = stated_readings("How do I keep the source file?", [(unit, 0.9)], [passage], False, None)
    assert readings[0]["text"].startswith("For zstd, -k, --keep: keep source file(s)")
    readings, _ = stated_readings("How do I keep the source file with zstd?", [(unit, 0.9)], [passage], False, None)
    assert readings[0]["text"].startswith("-k, --keep: keep source file(s)")
    record = {"id": "hp-1", "title": "Horsepower", "text": "Horsepower is a unit of power."}
    readings, _ = stated_readings("What is HP?", [(Candidate(record, 0, record["text"], 0), 0.9)], [record], False, None)
    assert readings[0]["text"].startswith("Horsepower is a unit")  # a record names no product: no lead


def test_readings_of_the_one_product_a_question_names_get_no_lead_naming_its_documents():
    from agent.assembly.features import Candidate
    from agent.assembly.nodes import stated_readings

    usage = {"id": "nox/usage.txt#4", "title": "usage", "document": "nox/usage.txt",
             "text": "By default Nox uses virtualenv as the virtual environment backend."}
    config = {"id": "nox/config.txt#2", "title": "config", "document": "nox/config.txt",
              "text": "Session arguments can be parametrized with the nox.parametrize decorator."}
    chosen = [(Candidate(p, 0, p["text"], 0), 0.9) for p in (usage, config)]
    readings, _ = stated_readings("How do I set up Nox sessions?", chosen, [usage, config], True, None)
    assert [r["text"][:10] for r in readings] == ["By default", "Session ar"]  # not "For usage, ..."
    readings, _ = stated_readings("How do I set up sessions?", chosen, [usage, config], True, None)
    assert readings[0]["text"].startswith("For usage, ")  # the product not named: its documents tell readings apart
    ctest = {"id": "ctest/ctest.html#1", "title": "ctest(1)", "document": "ctest/ctest.html",
             "text": "Run only the tests that failed previously."}
    both = chosen[:1] + [(Candidate(ctest, 0, ctest["text"], 0), 0.9)]
    readings, _ = stated_readings("How do I set up Nox sessions?", both, [usage, ctest], True, None)
    assert all(r["text"].startswith("For ") for r in readings)  # two products' documents: each is named



def test_a_folder_given_to_the_ingest_names_the_product_its_files_run_or_name(tmp_path):
    """`disambig ingest docs/relayd` names its files `start.md`, `stop.md`: their product is the
    folder they were read in where they run it as a command or write it as a name, not each
    file's title ("Starting", "Stopping"); a folder named for the work is no product."""
    from agent.retrieval.corpus import ReadReport, read_passages
    from agent.retrieval.index import IndexStore, ingest

    relayd, notes = tmp_path / "relayd", tmp_path / "notes"
    relayd.mkdir(), notes.mkdir()
    (relayd / "start.md").write_text("# Starting\n\nStart the daemon in the foreground:\n\n```\n$ relayd --foreground\n```\n")
    (relayd / "stop.md").write_text("# Stopping\n\nSend it the TERM signal to stop it:\n\n```\n\"stop\": \"relayd stop\"\n```\n")
    (notes / "gzip.md").write_text("# Gzip\n\nGzip keeps the original file with `-k`. These notes are mine.\n")
    store = IndexStore(str(tmp_path / "index"), create=True)
    ingest(store, read_passages([str(relayd), str(notes)], ReadReport()))
    passages = store.get(["start.md", "stop.md", "gzip.md"])
    assert {product_of(passages[name]) for name in ("start.md", "stop.md")} == {"relayd"}
    assert product_of(passages["gzip.md"]) == "Gzip"  # "notes" is written, but not as a name
    assert "folder" not in passages["gzip.md"]


def test_a_manuals_pages_and_sub_folders_are_its_product(tmp_path):
    """`disambig ingest fernpkg/docs/html`: a page on caching, the contributors' guide in
    `development/` and the command pages are all fernpkg's (one page installs with it), not
    products named "Caching" and "development"; a sub-folder whose files install it by its own
    name is a product of its own."""
    from agent.retrieval.corpus import ReadReport, read_passages
    from agent.retrieval.index import IndexStore, ingest

    html = tmp_path / "fernpkg" / "docs" / "html"
    for name, text in {
            "topics/caching.md": "# Caching\n\nDownloads are kept in a cache folder between runs.\n",
            "development/ci.md": "# Continuous integration\n\nEvery change runs the linters:\n\n```\nnox -s lint\n```\n",
            "cli/install.md": "# install\n\nInstall a package:\n\n```\n$ fernpkg install quillpad\n```\n",
            "plugins/owlpost/README.md": "# Owlpost\n\nA plugin:\n\n```\npip install owlpost\n```\n"}.items():
        (html / name).parent.mkdir(parents=True, exist_ok=True)
        (html / name).write_text(text)
    store = IndexStore(str(tmp_path / "index"), create=True)
    ingest(store, read_passages([str(html)], ReadReport()))
    ids = ["topics/caching.md", "development/ci.md", "cli/install.md", "plugins/owlpost/README.md"]
    passages = store.get(ids)
    assert [product_of(passages[name]) for name in ids] == ["fernpkg", "fernpkg", "fernpkg", "Owlpost"]
    # a folder of products' folders: what one product's page runs names no product of the folder above
    tools = tmp_path / "test" / "text"
    for name, text in {"quill/README.md": "# Quill\n\nSync when the notes exist:\n\n```\ntest -f notes\n$ quill sync notes\n```\n",
                       "owl/README.md": "# Owl\n\nOwl keeps notes.\n"}.items():
        (tools / name).parent.mkdir(parents=True, exist_ok=True)
        (tools / name).write_text(text)
    ingest(store, read_passages([str(tools)], ReadReport()))
    assert product_of(store.get(["owl/README.md"])["owl/README.md"]) == "Owl"
    # a folder's name one page writes as a name is that page's alone: the other manuals keep theirs
    downloads = tmp_path / "Downloads"
    downloads.mkdir()
    (downloads / "tips.md").write_text("# Tips\n\nSave the manuals in your Downloads folder.\n")
    (downloads / "wren.md").write_text("# Wren\n\nWren keeps notes in sync.\n")
    ingest(store, read_passages([str(downloads)], ReadReport()))
    assert product_of(store.get(["wren.md"])["wren.md"]) == "Wren"
    from agent.retrieval.products import product_identity
    assert len({product_identity(passages[name]) for name in ids[:3]}) == 1


def test_a_folder_that_cannot_name_a_product_streams_its_documents_and_one_that_can_holds_a_bounded_few(monkeypatch):
    """Documents are held back only while a folder given may still name their product, and at most
    HELD of them: `/usr/share/doc` (every folder a container) streams each at once."""
    from agent.retrieval import folder_products
    from agent.retrieval.corpus import Document
    from agent.retrieval.folder_products import FolderProduct

    def page(name, text="Prose."):  # a plain-text file's document: its text is its code too
        return Document(id=name, title=name, text=text, source=name, origin=f"/src/fernpkg/{name}",
                        metadata={"section": ""})

    assert FolderProduct("/usr/share/doc").read(page("a.md")) == [page("a.md")]
    monkeypatch.setattr(folder_products, "HELD", 2)
    folder = FolderProduct("/src/fernpkg")
    assert folder.read(page("a.md")) == []
    first = folder.read(page("b.md", "$ fernpkg install x"))  # the second: decided, both passed on
    later = folder.read(page("c.md"))
    assert [d.metadata.get("folder") for d in [*first, *later]] == ["fernpkg"] * 3


def test_a_folder_given_is_its_product_only_where_a_file_runs_or_names_it():
    from agent.retrieval.folder_products import code_uses, own_product, own_products, prose_product, root_product

    folder = "/home/me/docs/concurrently"
    assert root_product(folder, ["$ concurrently -k 'a' 'b'"]) == "concurrently"
    assert root_product(folder, ["", "$ concurrently -k a"]) == "concurrently"  # one file's code speaks for all
    # a file that writes the folder's name as a name inside a sentence keeps it for itself
    assert prose_product(folder, "Use it with Concurrently when two run.") == "concurrently"
    assert prose_product(folder, "Concurrently exits with the first code.") == ""  # a capital opening a sentence
    assert prose_product("/home/me/concurrently/guide", "Use it with Concurrently.") == ""  # the folder given only
    assert root_product(folder, ["ls notes"]) == ""
    assert root_product("/home/me/concurrently/guide", ["concurrently -k a"]) == "concurrently"
    assert root_product("/home/me/docs", ["docs build"]) == ""  # a folder of documents
    # `disambig ingest concurrently/docs/cli`: past the folders that hold documents, to the product's
    assert root_product("/src/concurrently/docs/cli", ["concurrently -k a"]) == "concurrently"
    assert root_product("/home/alice/manuals", ["gzip -k x"]) == ""
    assert product_folder("cookiecutter-2.7.1/README.md") == "cookiecutter"  # a release's version is no part of it
    assert root_product("/src/twine-7.0.0/docs/how-to", ["twine upload dist/*"]) == "twine"
    # a distribution's documentation package around the product's name
    assert root_product("/usr/share/doc/python3-pip/html", ["python -m pip install quillpad"]) == "pip"
    assert root_product("/usr/share/doc/python-coverage-doc/html", ["$ coverage run -m pytest"]) == "coverage"
    assert root_product("/usr/share/doc/xz-utils", ["$ xz -k notes"]) == "xz"
    assert root_product("/usr/share/doc/python3-quill", ["$ xz -k notes"]) == ""  # named for no product it runs
    # a sub-folder is a product of its own where its files use its name, not a part of the manual
    own = own_products([("orjson/README.md", "pip install orjson"), ("development/ci.rst", "nox -s lint"),
                        ("topics/caching.md", "pip cache dir"), ("plugins/owlpost/docs/a.md", "import owlpost")])
    assert own == {"orjson": "orjson", "plugins/owlpost": "owlpost"}
    assert own_product("plugins/owlpost/docs/b.md", own) == "owlpost" and own_product("development/ci.rst", own) == ""
    assert code_uses("ava", "npx ava --watch") and code_uses("http-server", "http-server [path] [options]")
    assert code_uses("relayd", '"start": "relayd start"')
    assert not code_uses("relayd", "cd relayd\n") and not code_uses("relayd", "ls /etc/relayd.conf")
    # a library's manual imports or installs it rather than running it
    assert code_uses("urllib3", "import urllib3\nhttp = urllib3.PoolManager()") and code_uses("aiohttp", ">>> from aiohttp import web")
    assert code_uses("httpx", "$ pip install httpx[http2]") and code_uses("nyc", "const nyc = require('nyc')")
    assert code_uses("left-pad", "npm i -g left-pad") and code_uses("relayd", "python -m pip install --user relayd")
    assert not code_uses("notes", "import notes_app") and not code_uses("notes", "pip install notes-extra")
    assert root_product("/src/aiohttp", ["import aiohttp"]) == "aiohttp"


def pooled_documents(tmp_path, manuals: dict[str, str]):
    """question -> the documents of the pool `auto` builds for it over an index of `manuals`."""
    retriever = get_retriever(Context(index_dir=index_of(manuals, tmp_path / "docs", tmp_path / "index")))
    return lambda question: {p["document"] for p in document_pool(retriever, question, "hybrid", 6, None, 2)}


def test_a_product_named_by_a_verb_is_not_named_where_the_question_uses_the_verb(tmp_path):
    """"serve" is a product and a word other manuals use: "How do I serve a directory listing?"
    asks every server, "How do I install serve?" asks serve."""
    from agent.retrieval.products import said_as_verb

    documents = pooled_documents(tmp_path, {
        "serve/README.md": "# serve\n\nserve helps you serve a static site from a folder.\n\n## Usage\n\n"
                           "Install it with `npm install --global serve`, then run `serve folder-name/`.\n",
        "webd/README.md": "# Webd\n\nWebd is a small HTTP server; serve files from any folder with it.\n\n## Options\n\n"
                          "Use `webd --listing` to serve a directory listing of folders without an index.html.\n"})
    assert documents("How do I serve a directory listing?") == {"serve/README.md", "webd/README.md"}
    assert documents("How do I install serve?") == {"serve/README.md"}
    assert documents("How do I install Webd?") == {"webd/README.md"}  # a name no manual uses as a word: as before
    assert said_as_verb("Serve static files?", "serve") and not said_as_verb("What does Serve do?", "serve")
    # a tool's name the manuals use only as a name is no word: "How do I gzip a file?" names gzip
    from agent.retrieval.products import also_words
    others = [{"text": "Like gzip, xz can write the gzip format; use gzip -d to undo it."},
              {"text": "serve helps you serve a static site."}]
    assert also_words(["gzip", "serve"], others) == {"serve": "verb"}
    assert not said_as_verb("How do I use `serve`?", "serve") and not said_as_verb("Can I make serve quiet?", "serve")


def test_a_capitalized_name_other_manuals_use_as_a_word_is_not_named_by_the_word(tmp_path):
    """Requests is a product and "requests" a word the other manuals use: "How do I retry failed
    requests?" asks every library, "How do I install requests?" asks Requests. A product's own
    manual saying "the git repository" of itself makes no word of Git."""
    from agent.retrieval.products import also_words, said_as_word

    documents = pooled_documents(tmp_path, {
        "requests/README.md": "# Requests\n\nRequests is a simple HTTP library.\n\n## Installing Requests\n\n"
                              "Requests is available on PyPI:\n\n```\n$ python -m pip install requests\n```\n",
        "fetchkit/README.md": "# Fetchkit\n\nFetchkit sends many requests at once for you.\n\n## Retrying\n\n"
                              "Failed requests are retried three times; pass `retries=5` to retry failed requests more often.\n"})
    assert documents("How do I retry failed requests?") == {"requests/README.md", "fetchkit/README.md"}
    assert documents("How do I install requests?") == {"requests/README.md"}
    assert documents("Does Requests retry?") == {"requests/README.md"}  # a capital inside the sentence: the name
    assert said_as_word("How do I retry failed requests?", "Requests", "noun")
    assert not said_as_word("How do I set a timeout with requests?", "Requests", "noun")
    assert not said_as_word("Can I call `requests` twice?", "Requests", "noun")
    assert not said_as_word("How do I stop xz from using RAM?", "XZ", "verb")  # a verb's name is no noun
    own = [{"text": "Clone the git repository first; git stores it.", "product": "Git"},
           {"text": "Retrying requests: failed requests and slow requests are sent again.", "product": "Fetchkit"}]
    assert also_words(["Git", "Requests"], own) == {"requests": "noun"}
    # however the others say it, a product whose passages lead the ranking is the one asked about
    assert also_words(["Requests"], [{"text": "Requests retries.", "product": "Requests"}, *own]) == {}
