"""`disambig chat` end to end in-process: streamed answer, numbered clarification, SQLite thread
kept across restarts, usage per turn; `disambig serve --print-config`."""

import io
import json

import pytest

from agent.app.cli import main
from tests.chat_script import FOCUSED, TWO_MEANINGS, chat_rules


@pytest.fixture
def chat(scripted, demo_index, tmp_path, monkeypatch, capsys):
    scripted.rules.extend(chat_rules())

    def run(*lines, extra=()):
        monkeypatch.setattr("sys.stdin", io.StringIO("".join(f"{line}\n" for line in lines)))
        # the terminal's rendering is under test: vanilla answers (a later --method overrides it)
        code = main(["chat", "--db", str(tmp_path / "chat.sqlite"), "--thread", "demo", "--model", "scripted",
                     "--index", demo_index, "--method", "vanilla", *extra])
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return run


def test_clarification_round_trip_in_the_terminal(chat):
    code, out, err = chat("What is HP?", "9", "2", "/quit")
    assert code == 0
    assert "Which of these did you mean?\n  1. " in out  # each sense named by its passage, with its cited sentence
    assert "  2. Horsepower\n     \"" in out and "(source: Horsepower)\n  0. all of them\n" in out
    assert "or type: none of these, and what you meant" in out
    assert "option 9 does not exist" in out  # re-asked locally
    [answer] = [line.split("assistant> ", 1)[1] for line in out.splitlines() if "assistant> " in line]  # held-back one never printed
    assert "horsepower" in answer.casefold() and "Hewlett" not in answer and answer.endswith("].")
    assert "· message is ambiguous: nothing earlier to resolve it against" in err
    assert "· retrieving passages" in err and "· interpretations found: 2 (2 grounded senses), asking" in err
    assert "· focusing on option 2: Horsepower" in err
    # the answer after the choice is the method's cited line on that sense: no model call for asking or after it
    assert "usage: 1 LLM calls" in err and "route: read_message > classify_ambiguity > run_method" in err
    assert "thread demo (0 earlier messages)" in err


def test_thread_and_pending_question_survive_a_restart(chat):
    code, out, _ = chat("What is HP?")  # input ends while the question waits
    assert code == 0 and "Which of these did you mean?" in out
    code, out, err = chat("2", "/quit")  # a new process, same --thread and --db
    assert "thread demo (2 earlier messages)" in err
    assert "Which of these did you mean?" in out and "assistant> Horsepower" in out
    _, _, err = chat("/quit")
    assert "thread demo (4 earlier messages)" in err


def test_no_clarify_streams_the_full_answer(chat):
    code, out, err = chat("What is HP?", "/quit", extra=["--no-clarify"])
    assert "Which of these" not in out and f"assistant> {json.loads(TWO_MEANINGS)['answer']}" in out
    assert "clarify off" in err


def test_bad_method_is_one_line_error(chat):
    code, _, err = chat("/quit", extra=["--method", "nope"])
    assert code == 1 and err.strip().splitlines()[-1].startswith("disambig: error: setting downstream='nope' is not one of: auto, vanilla")


def test_serve_prints_a_config_with_every_graph(capsys):
    from graphs.registry import METHODS

    assert main(["serve", "--print-config", "--port", "8123"]) == 0
    captured = capsys.readouterr()
    config = json.loads(captured.out)
    assert set(config["graphs"]) == set(METHODS) | {"chat"}
    assert config["graphs"]["chat"] == "graphs.chat:graph"
    assert "--host 127.0.0.1 --port 8123" in captured.err and "--no-browser" in captured.err


def test_terminal_shows_readings_first_and_then_only_what_the_checked_answer_changed():
    from agent.app.chat_cli import Terminal

    out, err = io.StringIO(), io.StringIO()
    terminal = Terminal(out=out, err=err)
    readings = {"event": "readings", "passages": [{"n": 1, "id": "hp-1", "title": "HP"}],
                "readings": [{"sense": "As a company", "text": "As a company, HP is Hewlett-Packard [1].",
                              "citations": ["hp-1"]},
                             {"sense": "As a unit", "text": "As a unit, hp is horsepower [2].", "citations": ["hp-2"]}]}
    prose = "HP is a company [1]. See [7]."
    result = {"answer": "As a company, HP is Hewlett-Packard [1]. HP is a company [1]. See. It was founded in 1939 [1].",
              "passages": [{"id": "hp-1", "title": "HP"}], "route": ["retrieve", "synthesize_answer"],
              "usage": {"llm_calls": 1}}
    run_events = [readings, {"event": "token", "text": prose[:20]}, {"event": "token", "text": prose[20:]},
                  {"event": "result", "result": result}]
    assert terminal.show(run_events)["result"] is result
    terminal.finish(result)
    assert out.getvalue() == ("assistant> As a company, HP is Hewlett-Packard [1].\n"
                              "assistant> As a unit, hp is horsepower [2].\n"
                              f"assistant> {prose}\n"
                              "assistant (checked against the passages)> It was founded in 1939 [1].\n"
                              '  dropped: the reading "As a unit"\n')


def test_terminal_prints_an_answer_that_did_not_stream():
    from agent.app.chat_cli import Terminal

    out = io.StringIO()
    terminal = Terminal(out=out, err=io.StringIO())
    result = {"answer": "The model did not produce a usable answer.", "passages": [], "route": ["retrieve"],
              "usage": {}}
    terminal.finish(terminal.show([{"event": "result", "result": result}])["result"])
    assert out.getvalue() == "assistant> The model did not produce a usable answer.\n"
