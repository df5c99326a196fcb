"""Conversations over several products' manuals: "it" is the product the conversation is about.

The resolver's rules alone (agent/steps/follow_up.py), then the chat graph over three invented
tools' manuals with no model call (instant budget): a question they all answer is asked by
product, the choice is the thread's product, a follow-up's "it" is that product, a follow-up
naming another product switches, one that stands alone is left alone; and `disambig eval
--dataset conversations` scoring labelled conversations, with the manuals loader and --split."""

from __future__ import annotations

import json

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from agent.evaluation.datasets import load_dataset
from agent.evaluation.multi_turn import choose_product, follow_up_metrics, states_answer, summarize_follow_ups
from agent.retrieval.products import product_key
from agent.steps.follow_up import (
    candidate_products,
    named_in,
    naming_product,
    only_switches,
    passage_product,
    resolve_product,
    switched_question,
)
from graphs.chat import settled

# (folder, product, install command, where its settings live)
TOOLS = [("tallyfox", "Tallyfox", "pip install tallyfox", "Tallyfox keeps its settings in the file tally.toml."),
         ("owlpost", "Owlpost", "apt install owlpost", "Owlpost reads its settings from the OWLPOST_HOME folder."),
         ("brimstat", "Brimstat", "npm install -g brimstat", "Brimstat keeps its settings in the file brim.json.")]


def manual(name: str, command: str, settings: str) -> str:
    return (f"# {name} Manual\n\n{name} is a small command-line tool.\n\n## Installation\n\nInstall {name} with the "
            f"command `{command}`.\n\n## Configuration\n\n{settings} Restart {name} after changing them.\n")


@pytest.fixture(scope="module")
def tools_index(tmp_path_factory) -> str:
    from agent.retrieval.corpus import ReadReport, read_passages
    from agent.retrieval.index import IndexStore, ingest

    root = tmp_path_factory.mktemp("tools")
    for folder, name, command, settings in TOOLS:
        (root / folder).mkdir()
        (root / folder / "README.md").write_text(manual(name, command, settings))
    path = tmp_path_factory.mktemp("tools-index")
    ingest(IndexStore(str(path), create=True), read_passages([str(root)], ReadReport()))
    return str(path)


PRODUCTS = ["Tallyfox", "Owlpost", "Brimstat"]


def resolve(question, ambiguous=True, thread=None, previous=None, turns=(), **extra):
    return resolve_product(question, ambiguous, thread_product=thread, previous_query=previous,
                           user_turns=list(turns), products=PRODUCTS, **extra)


def test_the_rules_name_the_product_the_conversation_gives():
    found = resolve("How do I install it?", thread="Tallyfox", turns=["What is Tallyfox?"])
    assert found == {"product": "Tallyfox", "product_source": "thread", "query": "How do I install Tallyfox?",
                     "unsure": False}
    # no thread product: the latest user turn naming one product decides; naming two decides nothing
    assert resolve("Where are its settings?", turns=["What is Owlpost?", "What is Brimstat?"])["query"] == \
        "Where are Owlpost's settings?"
    assert resolve("Where are its settings?", turns=["Is Owlpost like Brimstat?"])["unsure"] is True
    # a message naming a product is about it; one saying nothing more re-asks the previous question of it
    switched = resolve("And with Owlpost?", thread="Tallyfox", previous="How do I install Tallyfox?", turns=["x"])
    assert switched["product"] == "Owlpost" and switched["query"] == "How do I install Owlpost?"
    clear = resolve("Where does Brimstat keep its settings?", ambiguous=False, thread="Tallyfox", turns=["x"])
    assert clear["product"] == "Brimstat" and clear["query"] == "Where does Brimstat keep its settings?"
    # a clear message naming none is left alone unless asked to (`unnamed`)
    assert resolve("What about verbose output?", ambiguous=False, thread="Tallyfox", turns=["x"])["product"] is None
    assert resolve("What about verbose output?", ambiguous=False, thread="Tallyfox", turns=["x"], unnamed=True)[
        "query"] == "What about verbose output for Tallyfox?"
    assert resolve("How do I install it?")["unsure"] is True  # first turn: nothing to resolve against
    # a product whose name is a common word is not named by what a possessive owns ("its coverage")
    products = ["c8", "coverage"]
    owned = resolve_product("How do I exclude a block of code from its coverage?", True, thread_product="c8",
                            previous_query="x", user_turns=["x"], products=products)
    assert owned["product"] == "c8" and owned["query"] == "How do I exclude a block of code from c8's coverage?"
    # two products named, one of them the thread's: it is named again
    again = resolve_product("How do I exclude files from c8 coverage?", False, thread_product="c8",
                            previous_query="x", user_turns=["x"], products=products)
    assert again["product"] == "c8" and again["query"] == "How do I exclude files from c8 coverage?"
    # a name other manuals also use as a word is not named by the word: the thread's product stays
    word = resolve_product("How do I retry failed requests?", True, thread_product="Fetchkit", previous_query="x",
                           user_turns=["x"], products=["Fetchkit", "Requests"], words={"requests": "noun"})
    assert word["product"] == "Fetchkit"
    named = resolve_product("And with requests?", True, thread_product="Fetchkit", previous_query="How do I retry?",
                            user_turns=["x"], products=["Fetchkit", "Requests"], words={"requests": "noun"})
    assert named["product"] == "Requests" and named["product_source"] == "named"


def test_the_rewrite_rules():
    assert naming_product("How do I make it quiet?", "zstd") == "How do I make zstd quiet?"
    assert naming_product("Where is its config?", "c8") == "Where is c8's config?"
    assert naming_product("what about verbose output", "Nox") == "what about verbose output for Nox?"
    assert only_switches("And what about Owlpost?", "Owlpost") and not only_switches("How do I install Owlpost?", "Owlpost")
    assert switched_question("How do I keep the source file with zstd?", "zstd", "LZ4") == \
        "How do I keep the source file with LZ4?"
    assert switched_question("How do I keep the source file?", None, "LZ4") == "How do I keep the source file for LZ4?"


def test_a_plain_text_file_is_its_folders_product_a_record_none():
    assert passage_product({"id": "zstd/zstd.1.txt#4", "source": "/data/text/zstd/zstd.1.txt", "title": "zstd.1"}) == "zstd"
    assert passage_product({"id": "wiki/HP#1", "source": "/data/records.jsonl", "title": "HP"}) is None


class OneProductTwoSpellings:
    """Sparse hits of one product's manual, spelled "gauge" in one passage and "Gauge.py" in the next."""

    def search_batch(self, texts, mode, k):
        hits = [{"id": "gauge/cmd.html#1", "title": "Command line usage: Execution", "section": "Execution",
                 "document": "gauge/cmd.html", "text": "Use gauge run to measure your program."},
                {"id": "gauge/cmd.html#2", "title": "Command line usage: Branches", "section": "Branches",
                 "document": "gauge/cmd.html", "text": "The tool Gauge.py measures branch coverage too."},
                {"id": "meter/README.md#0", "title": "Meter", "section": "", "document": "meter/README.md",
                 "text": "Meter reports coverage for JavaScript."}]
        return [hits for _ in texts]


def test_a_product_spelled_two_ways_is_one_product_a_message_names():
    question = "How do I measure branch gauge with Gauge.py?"  # says the plain word and the name
    products, words = candidate_products(OneProductTwoSpellings(), [question], [])
    assert products == ["Gauge.py", "Meter"]
    assert named_in(question, products, words) == ["Gauge.py"]
    assert resolve_product(question, True, thread_product=None, previous_query=None, user_turns=[],
                           products=products, words=words)["product"] == "Gauge.py"
    assert product_key("Coverage.py") == product_key("coverage") and product_key(".NET") == "net"
    # the one option found, spelled as its folder, is the product named: nothing to confirm
    assert settled("Gauge.py", [{"product": "gauge"}]) and not settled("Gauge.py", [{"product": "Meter"}])
    # the person's own words after "none of these" name it: nothing to confirm either
    assert settled(None, [{"product": "gzip"}], "How do I make it quiet? (gzip)")
    assert not settled(None, [{"product": "gzip"}], "How do I make it quiet?")
    assert not settled(None, [{"product": "gzip"}, {"product": "xz"}], "gzip or xz?")


def turn(session, text=None, choice=None):
    events = list(session.send(text) if text is not None else session.choose(choice))
    return events[-1], [e for e in events if e.get("event") == "product"]


def test_a_chat_asks_by_product_and_it_means_the_chosen_product(scripted, tools_index):
    from agent.app.conversation import ChatSession

    session = ChatSession(InMemorySaver(), "tools", {"model": "scripted", "index_dir": tools_index,
                                                     "budget": "instant", "clarify_policy": "always"})
    asked, _ = turn(session, "How do I install it?")
    assert asked["event"] == "clarification"
    assert sorted(o["label"] for o in asked["options"]) == sorted(PRODUCTS)
    assert all(o["product"] == o["label"] for o in asked["options"])
    answered, _ = turn(session, choice="Tallyfox")
    assert "pip install tallyfox" in answered["result"]["answer"]
    assert session.graph.get_state(session.config).values["product"] == "Tallyfox"

    follow, events = turn(session, "Where does it keep its settings?")
    chat = follow["result"]["decision"]["chat"]
    assert chat["product"] == "Tallyfox" and chat["product_source"] == "thread"
    assert chat["query"] == "Where does Tallyfox keep its settings?" and events[0]["product"] == "Tallyfox"
    assert "tally.toml" in follow["result"]["answer"] and "brim.json" not in follow["result"]["answer"]

    switch, _ = turn(session, "And for Owlpost?")
    chat = switch["result"]["decision"]["chat"]
    assert chat["product"] == "Owlpost" and chat["query"] == "Where does Owlpost keep its settings?"
    assert "OWLPOST_HOME" in switch["result"]["answer"]
    assert session.graph.get_state(session.config).values["product"] == "Owlpost"

    clear, _ = turn(session, "How do I install Brimstat?")
    assert clear["result"]["decision"]["chat"]["query"] == "How do I install Brimstat?"
    assert not scripted.calls  # every product was resolved by rule


def test_the_model_rewrites_only_what_the_rules_leave_unsure(scripted, tools_index):
    from agent.app.conversation import ChatSession

    scripted.rules.append(("Latest message:", json.dumps({"question": "How do I install Owlpost?"})))
    settings = {"model": "scripted", "index_dir": tools_index, "budget": "instant", "clarify_policy": "never",
                "resolve_product": "off"}
    session = ChatSession(InMemorySaver(), "off", settings)
    turn(session, "What is Owlpost?")
    result, events = turn(session, "How do I install it?")
    assert not events and [c for c in scripted.calls if "Latest message:" in c["text"]]
    assert result["result"]["decision"]["chat"]["query"] == "How do I install Owlpost?"


CONVERSATIONS = {"conversations": [
    {"id": "c1", "split": "test", "kind": "implicit", "turns": [
        {"question": "How do I install Tallyfox?", "kind": "first", "product": "tallyfox",
         "answers": ["pip install tallyfox"], "rewrite": "How do I install Tallyfox?"},
        {"question": "Where does it keep its settings?", "kind": "implicit", "product": "tallyfox",
         "answers": ["tally.toml"], "rewrite": "Where does Tallyfox keep its settings?"}]},
    {"id": "c2", "split": "test", "kind": "clear", "turns": [
        {"question": "How do I install Owlpost?", "kind": "first", "product": "owlpost",
         "answers": ["apt install owlpost"], "rewrite": "How do I install Owlpost?"},
        {"question": "Where does Brimstat keep its settings?", "kind": "clear", "product": "brimstat",
         "answers": ["brim.json"], "rewrite": "Where does Brimstat keep its settings?"}]},
    {"id": "c3", "split": "tune", "kind": "switch", "turns": [
        {"question": "How do I install Owlpost?", "kind": "first", "product": "owlpost",
         "answers": ["apt install owlpost"], "rewrite": "How do I install Owlpost?"},
        {"question": "And with Brimstat?", "kind": "switch", "product": "brimstat",
         "answers": ["npm install -g brimstat"], "rewrite": "How do I install Brimstat?"}]},
]}


def test_conversations_and_manuals_load_with_their_split(tmp_path):
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(CONVERSATIONS))
    examples = load_dataset("conversations", path, split="test")
    assert [e.id for e in examples] == ["c1", "c2"] and len(examples[0].turns) == 2
    assert examples[0].qa_pairs == [{"question": "Where does Tallyfox keep its settings?",
                                     "short_answers": ["tally.toml"], "sense": "tallyfox"}]
    manuals = tmp_path / "manuals.json"
    manuals.write_text(json.dumps({"products": {"tallyfox": {"split": "test", "name": "Tallyfox"}}, "questions": [
        {"id": "q1", "split": "test", "ambiguous": False, "question": "How do I install it?",
         "senses": [{"product": "tallyfox", "answers": ["pip install tallyfox"]}]},
        {"id": "q2", "split": "tune", "ambiguous": False, "question": "x?", "senses": []}]}))
    [example] = load_dataset("manuals", manuals, split="test")
    assert example.qa_pairs[0]["question"] == "How do I install it? (Tallyfox)" and example.split == "test"


def test_the_scripted_person_picks_the_turns_product():
    request = {"options": [{"option": 1, "label": "Owlpost", "product": "Owlpost"},
                           {"option": 2, "label": "Tallyfox", "product": "Tallyfox"}]}
    assert choose_product(request, {"product": "tallyfox", "question": "q"}) == "2"
    assert choose_product(request, {"product": "brimstat", "question": "q", "rewrite": "How do I install Brimstat?"}) \
        == "None of these. How do I install Brimstat?"
    assert states_answer(["-k, --keep"], "Use -k, --keep: keep the file [1].") and not states_answer(["--rm"], "no")


def test_eval_scores_each_follow_up(scripted, tools_index, tmp_path):
    from agent.evaluation.runner import EvalConfig, run_eval

    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(CONVERSATIONS))
    summary = run_eval(EvalConfig(dataset="conversations", data=str(path), methods=["auto"], out=str(tmp_path / "out"),
                                  model="scripted", index_dir=tools_index, cache=str(tmp_path / "cache"),
                                  settings={"budget": "instant", "clarify_policy": "never"}, progress=False))
    rows = summary["follow_ups"]["chat:auto"]
    assert rows["implicit"]["n"] == 1 and rows["implicit"]["resolved"] == 1.0
    assert rows["clear"]["left_alone"] == 1.0 and rows["switch"]["resolved"] == 1.0
    assert rows["all"]["answered"] == 1.0 and rows["all"]["llm_calls"] == 0
    assert rows["all"]["product_s_max"] < 1.0
    assert "Where does it keep its settings?" in (tmp_path / "out" / "conversations.txt").read_text()
    record = {"conversation": {"turns": [{}, {"kind": "implicit", "question": "q", "label": "tallyfox", "query": "q",
                                              "product": None, "model_rewrite": True, "asks": [], "answer": "",
                                              "llm_calls": 1}]}}
    [row] = follow_up_metrics(load_dataset("conversations", path)[0], record)
    assert row["resolved"] is False and row["model_rewrite"] is True
    assert summarize_follow_ups([{"follow_ups": [row]}])["implicit"]["resolved"] == 0.0


def test_the_rewrite_graph_carries_the_product_on_its_thread(scripted, tools_index):
    from agent.app import api

    saver = InMemorySaver()
    settings = {"model": "scripted", "index_dir": tools_index, "downstream": "vanilla"}
    scripted.rules.append(("Passages:", lambda messages: json.dumps(
        {"interpretations": [], "answer": messages[-1].content.split("Question: ", 1)[1].split("\n", 1)[0]})))
    first = api.ask("How do I install Brimstat?", "rewrite", settings, checkpointer=saver, thread_id="r")
    assert first["decision"]["rewrite"]["product"] == "Brimstat"
    second = api.ask("Where does it keep its settings?", "rewrite", settings, checkpointer=saver, thread_id="r")
    assert second["decision"]["rewrite"]["query"] == "Where does Brimstat keep its settings?"
    assert second["answer"] == "Where does Brimstat keep its settings?"  # what went downstream
    assert not [call for call in scripted.calls if "Latest message:" in call["text"]]  # no model rewrite


def test_it_after_an_answer_for_several_products_is_asked_by_product(scripted, tools_index):
    from agent.app.conversation import ChatSession

    saver = InMemorySaver()
    settings = {"model": "scripted", "index_dir": tools_index, "budget": "instant"}
    first, _ = turn(ChatSession(saver, "several", {**settings, "clarify_policy": "never"}), "How do I install it?")
    assert all(command in first["result"]["answer"] for _, _, command, _ in TOOLS)  # every product answered
    session = ChatSession(saver, "several", {**settings, "clarify_policy": "gated"})
    asked, _ = turn(session, "Where does it keep its settings?")
    assert asked["event"] == "clarification" and sorted(o["product"] for o in asked["options"]) == sorted(PRODUCTS)
    answered, _ = turn(session, choice="Brimstat")
    assert "brim.json" in answered["result"]["answer"]
    assert session.graph.get_state(session.config).values["product"] == "Brimstat" and not scripted.calls
    assert resolve("How do I make it quiet?", turns=["How do I install it?"], answered=PRODUCTS)["among"] == PRODUCTS


def test_products_the_gate_holds_back_are_offered_and_answered_when_chosen(scripted, tools_index, monkeypatch):
    import numpy as np

    from agent.app.conversation import ChatSession
    from agent.assembly import product_gate

    # a gate that reads only whether the product's passage ranks first: the first product gets 0.6 and
    # is stated, the others 0.35, under its threshold and over the floor from which a product is offered
    coef = np.zeros(len(product_gate.FEATURES))
    coef[product_gate.FEATURES.index("first_retrieved")] = 1.0
    gate = product_gate.ProductGate(coef=coef, intercept=-0.6, mean=np.zeros(len(coef)), scale=np.ones(len(coef)),
                                    threshold=0.5)
    monkeypatch.setattr(product_gate, "product_gate", lambda guessed: gate)
    settings = {"model": "scripted", "index_dir": tools_index, "budget": "instant"}
    told, _ = turn(ChatSession(InMemorySaver(), "told", {**settings, "clarify_policy": "never"}), "How do I install it?")
    stated = [product for _, product, command, _ in TOOLS if command in told["result"]["answer"]]
    offered = told["result"]["decision"]["auto"]["offered"]
    assert len(stated) == 1 and sorted(o["sense"] for o in offered) == sorted(set(PRODUCTS) - set(stated))
    assert all(0.3 <= o["probability"] < 0.5 for o in offered)

    session = ChatSession(InMemorySaver(), "offered", {**settings, "clarify_policy": "gated"})
    asked, _ = turn(session, "How do I install it?")
    assert asked["event"] == "clarification" and sorted(o["product"] for o in asked["options"]) == sorted(PRODUCTS)
    held_back = next(tool for tool in TOOLS if tool[1] not in stated)
    answered, _ = turn(session, choice=held_back[1])
    assert held_back[2] in answered["result"]["answer"] and stated[0] not in answered["result"]["answer"]
    assert "[" in answered["result"]["answer"]  # cited: its passage is numbered after the answer's own
    cited = [c for item in answered["result"]["interpretations"] for c in item["citations"]]
    assert cited and all(c.startswith(held_back[0] + "/") for c in cited)  # the chosen product's passage
    assert session.graph.get_state(session.config).values["product"] == held_back[1] and not scripted.calls
