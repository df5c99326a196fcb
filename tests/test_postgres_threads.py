"""Chat threads in PostgreSQL (langgraph-checkpoint-postgres) against a real server started by the test."""

import io

import psycopg
import pytest

from agent.app.cli import main
from agent.app.conversation import ChatSession, open_checkpointer
from agent.errors import DisambigError
from tests.chat_script import FOCUSED, chat_rules


@pytest.fixture
def chat(scripted, demo_index, database_url, monkeypatch, capsys):
    scripted.rules.extend(chat_rules())

    def run(*lines, extra=()):
        monkeypatch.setattr("sys.stdin", io.StringIO("".join(f"{line}\n" for line in lines)))
        code = main(["chat", "--thread", "pg-demo", "--model", "scripted", "--index", demo_index,
                     "--method", "vanilla", "--set", "focus_answer=model", *extra])  # the thread store is under test
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return run


def test_chat_thread_and_waiting_question_live_in_postgres(chat, database_url, monkeypatch):
    monkeypatch.setenv("DISAMBIG_DATABASE_URL", database_url)
    code, out, err = chat("What is HP?")  # input ends while the clarification waits
    assert code == 0 and "Which of these did you mean?" in out
    assert f"postgresql://{database_url.split('@')[1]}" in err and "chat.sqlite" not in err
    with psycopg.connect(database_url) as connection:  # the thread is in the database, not a file
        threads = {row[0] for row in connection.execute("SELECT DISTINCT thread_id FROM checkpoints")}
    assert threads == {"pg-demo"}
    monkeypatch.delenv("DISAMBIG_DATABASE_URL")
    code, out, err = chat("2", "/quit", extra=["--database-url", database_url])  # the flag works as the env does
    assert "thread pg-demo (2 earlier messages)" in err
    assert "Which of these did you mean?" in out and "assistant> HP is Hewlett-Packard" in out


def test_two_sessions_on_one_database_share_the_thread(scripted, demo_index, database_url):
    scripted.rules.extend(chat_rules())
    settings = {"model": "scripted", "index_dir": demo_index, "downstream": "vanilla", "focus_answer": "model"}
    with open_checkpointer(database_url=database_url) as saver:
        events = list(ChatSession(saver, "shared", settings).send("What is HP?"))
        assert events[-1]["event"] == "clarification" and len(events[-1]["options"]) == 2
    with open_checkpointer(database_url=database_url) as other:  # another process or machine would do the same
        session = ChatSession(other, "shared", settings)
        assert [o["question"] for o in session.pending()["options"]][0] == "What is HP, the company?"
        result = list(session.choose(1))[-1]["result"]
        assert result["answer"] == __import__("json").loads(FOCUSED)["answer"]
        # the question, the clarification asked, the choice, the focused answer (the chat records them)
        assert [m.type for m in session.messages()] == ["human", "ai", "human", "ai"]


def test_sqlite_stays_the_default(chat, tmp_path, monkeypatch):
    monkeypatch.delenv("DISAMBIG_DATABASE_URL", raising=False)
    code, _, err = chat("/quit", extra=["--db", str(tmp_path / "c.sqlite")])
    assert code == 0 and str(tmp_path / "c.sqlite") in err and (tmp_path / "c.sqlite").exists()


def test_unreachable_database_is_one_line_error_without_the_password(chat, capsys):
    from bench.postgres import free_port

    url = f"postgresql://bob:s3cret-pw@127.0.0.1:{free_port()}/nowhere"
    code, _, err = chat("/quit", extra=["--database-url", url])
    assert code == 1 and "s3cret-pw" not in err
    assert err.strip().splitlines()[-1].startswith("disambig: error: cannot connect to PostgreSQL at 127.0.0.1:")
    with pytest.raises(DisambigError, match="must start with postgresql://"):
        with open_checkpointer(database_url="mysql://x@y/z"):
            pass


def test_python_api_keeps_a_method_thread_in_postgres(scripted, demo_index, database_url):
    from agent.app import api
    from tests.test_vanilla import SYNTHESIS

    scripted.rules.append(("", SYNTHESIS))
    with open_checkpointer(database_url=database_url) as saver:
        result = api.ask("What is HP?", "vanilla", {"model": "scripted", "index_dir": demo_index},
                         checkpointer=saver, thread_id="api-thread")
        stored = saver.get_tuple({"configurable": {"thread_id": "api-thread"}})
    assert stored.checkpoint["channel_values"]["answer"] == result["answer"] != ""
