"""The `disambig` command line, run in-process (the scripted model is registered there)."""

import json

import pytest

from agent.app.cli import main
from tests.test_vanilla import SYNTHESIS


def run(capsys, *argv):
    code = main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_search_json_lists_ranked_passages(capsys, demo_index):
    code, out, _ = run(capsys, "search", "how many watts is a horsepower", "--index", demo_index, "--k", "3", "--json")
    hits = json.loads(out)
    assert code == 0 and len(hits) == 3
    assert set(hits[0]) == {"id", "title", "text", "score"}
    assert "horsepower" in hits[0]["id"]


@pytest.mark.parametrize("mode", ["dense", "sparse", "hybrid"])
def test_search_text_output(capsys, demo_index, mode):
    code, out, _ = run(capsys, "search", "Jaguar car maker", "--index", demo_index, "--mode", mode)
    assert code == 0
    assert out.splitlines()[0].lstrip().startswith("1. ") and "score" in out


def test_ask_json_has_the_contract_fields(capsys, demo_index, scripted):
    scripted.rules.append(("Reply with JSON", SYNTHESIS))
    code, out, _ = run(capsys, "ask", "What is HP?", "--method", "vanilla", "--index", demo_index, "--model", "scripted", "--json")
    result = json.loads(out)
    assert code == 0
    assert {"answer", "interpretations", "passages", "route", "usage"} <= set(result)
    assert set(result["interpretations"][0]) == {"question", "answer", "citations"}
    assert {"llm_calls", "prompt_tokens", "completion_tokens", "retriever_calls", "wall_s", "nodes"} <= set(result["usage"])


def test_ask_streams_stages_answer_and_sources(capsys, demo_index, scripted):
    scripted.rules.append(("Reply with JSON", SYNTHESIS))
    code, out, err = run(capsys, "ask", "What is HP?", "--method", "vanilla", "--index", demo_index, "--model", "scripted", "--k", "3")
    assert code == 0
    assert "· retrieve" in err and "· synthesize_answer" in err
    assert out.startswith("HP can mean the company Hewlett-Packard [2]")
    assert "Interpretations:" in out and "Sources:" in out and "[3]" in out


def test_ask_set_overrides_a_setting(capsys, demo_index, scripted):
    scripted.rules.append(("Reply with JSON", SYNTHESIS))
    code, out, _ = run(capsys, "ask", "What is HP?", "--method", "vanilla", "--index", demo_index, "--model", "scripted", "--set", "k=2", "--json")
    assert code == 0 and len(json.loads(out)["passages"]) == 2


@pytest.mark.parametrize("argv, message", [
    (["ask", "   "], "question is empty"),
    (["ask", "x" * 8001], "limit is 8000"),
    (["ask", "What is HP?", "--method", "nope"], "unknown method 'nope'"),
    (["ask", "What is HP?", "--model", "nope"], "unknown model 'nope'"),
    (["ask", "What is HP?", "--set", "bogus=1"], "expected NAME=VALUE"),
    (["ask", "What is HP?", "--set", "k=many"], "is not a int"),
    (["search", "hp", "--index", "/nonexistent/index"], "run `disambig ingest"),
    (["ingest"], "give at least one file"),
    (["ingest", "/nonexistent/file.jsonl"], "no such file"),
])
def test_bad_input_is_one_clear_line_and_exit_1(capsys, demo_index, argv, message):
    if argv[0] == "ask":
        argv = [*argv, "--index", demo_index]
    code, out, err = run(capsys, *argv)
    assert code == 1
    assert message in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_ingest_reports_skipped_lines_and_still_adds_the_good_ones(capsys, tmp_path):
    corpus = tmp_path / "docs.jsonl"
    corpus.write_text('{"id": "a", "title": "A", "text": "alpha text"}\n{broken\n{"id": "b", "title": "B", "text": "beta"}\n')
    index = str(tmp_path / "index")
    code, out, err = run(capsys, "ingest", str(corpus), "--index", index, "--json", "--quiet")
    summary = json.loads(out)
    assert code == 3 and summary["added"] == 2 and summary["skipped"] == 1  # 3: ingested, something skipped
    assert "docs.jsonl:2: invalid JSON" in err
    code, out, _ = run(capsys, "ingest", str(corpus), "--index", index, "--json", "--quiet")
    assert json.loads(out)["added"] == 0 and json.loads(out)["total"] == 2


def test_methods_lists_auto_first_and_vanilla(capsys):
    code, out, _ = run(capsys, "methods")
    assert code == 0 and out.startswith("auto") and "\nvanilla" in out


def test_ask_never_prints_a_loop_and_does_not_reprint_the_streamed_answer(capsys, demo_index, scripted):
    loop = "HP is horsepower [5]. " * 3 + "HP is also a company [4]."
    scripted.rules.append(("Reply with JSON", json.dumps({"interpretations": [], "answer": loop})))
    assert main(["ask", "What is HP?", "--method", "vanilla", "--index", demo_index, "--model", "scripted"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("HP is horsepower [5].\n") and out.count("HP is horsepower") == 1
    assert "checked" not in out.split("Sources:")[0]  # the answer is what streamed: nothing to add


READINGS = {"event": "readings", "passages": [{"n": 1, "id": "hp-hewlett-packard-01", "title": "Hewlett-Packard"},
                                              {"n": 2, "id": "hp-horsepower-01", "title": "Horsepower"}],
            "readings": [{"sense": "As a company", "text": "As a company, HP is Hewlett-Packard [1].",
                          "citations": ["hp-hewlett-packard-01"]},
                         {"sense": "As a unit of power", "text": "As a unit of power, hp is a unit of power [2].",
                          "citations": ["hp-horsepower-01"]}]}


def test_ask_prints_readings_first_then_the_prose_then_only_what_the_check_changed(capsys, monkeypatch):
    from agent.app import api

    answer = ("As a company, HP is Hewlett-Packard [1]. HP was founded in 1939 [1]. "
              "It was started in a garage in Palo Alto [1].")
    result = {"answer": answer, "interpretations": [], "passages": [], "cited": [], "route": ["retrieve"],
              "decision": {"dropped_readings": [{"sense": "As a unit of power", "reason": "its passage does not say it"}]},
              "usage": {}}
    events = [{"event": "stage", "node": "retrieve"}, READINGS, {"event": "token", "text": "HP was founded in 1939 [1]."},
              {"event": "result", "result": result}]
    monkeypatch.setattr(api, "stream", lambda *args, **kwargs: iter(events))
    assert main(["ask", "What is HP?", "--method", "vanilla", "--model", "scripted"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("As a company, HP is Hewlett-Packard [1].\nAs a unit of power, hp is a unit of power [2].\n"
                          "\nHP was founded in 1939 [1].\n")
    assert out.count("Hewlett-Packard [1]") == 1 and out.count("founded in 1939") == 1  # nothing printed twice
    assert "the answer adds:\nIt was started in a garage in Palo Alto [1].\n" in out
    assert 'dropped: the reading "As a unit of power" (its passage does not say it)' in out


def test_ask_lists_the_cited_sources_and_counts_the_rest(capsys, demo_index, scripted):
    scripted.rules.append(("Reply with JSON", SYNTHESIS))
    code, out, _ = run(capsys, "ask", "What is HP?", "--method", "vanilla", "--index", demo_index, "--model", "scripted", "--k", "5")
    sources = out.split("Sources:\n", 1)[1].splitlines()
    listed = [line for line in sources if line.startswith("  [")]
    assert code == 0 and 1 <= len(listed) < 5
    _, as_json, _ = run(capsys, "ask", "What is HP?", "--method", "vanilla", "--index", demo_index, "--model", "scripted",
                        "--k", "5", "--json")
    assert sorted(line.split("(")[-1].rstrip(")") for line in listed) == sorted(json.loads(as_json)["cited"])
    assert f"({5 - len(listed)} more retrieved and not cited; --json lists them)" in out
