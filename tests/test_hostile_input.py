"""Property tests: hostile questions and malformed documents fail clearly or pass cleanly.

Questions: any text is either refused with one InputError line (empty, whitespace, too long,
NUL, invalid UTF-8) or answered; nothing in between crashes retrieval or the graph. Documents:
a JSONL file mixing good records with missing fields and wrong types ingests every good line
and reports every bad one with its line number.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent.app import api
from agent.app.cli import main
from agent.retrieval.corpus import ReadReport, read_passages
from agent.errors import MAX_QUESTION_CHARS, InputError, validate_question

SYNTHESIS = json.dumps({"interpretations": [], "answer": "scripted answer"})
FAST = settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
SLOW = settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

hostile_text = st.one_of(
    st.text(),  # any code points, control characters and mixed scripts included
    st.text(alphabet=st.sampled_from(" \t\n\r\x0b\x0c\u00a0\u2003\u3000")),  # whitespace only
    st.sampled_from(["x" * 100_000, "\x00", "ok\x00ok", "caf\udcff", "\x1b[31mred\x07", "HP 什么 Что ما \u202e\u200b"]),
)


@FAST
@given(question=hostile_text)
def test_any_question_is_accepted_stripped_or_refused_with_a_reason(question):
    try:
        text = validate_question(question)
    except InputError as error:
        assert str(error) and "\n" not in str(error)
        stripped = question.strip()
        assert not stripped or len(stripped) > MAX_QUESTION_CHARS or "\x00" in stripped or _not_utf8(stripped)
        return
    assert text == question.strip() and text and len(text) <= MAX_QUESTION_CHARS
    text.encode("utf-8")  # what the retriever and the model are given is always valid text


def _not_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
        return False
    except UnicodeEncodeError:
        return True


@SLOW
@given(question=st.one_of(
    st.text(min_size=1, max_size=300).filter(lambda q: q.strip() and "\x00" not in q and not _not_utf8(q)),
    st.sampled_from(["\x1b[31mred\x07 HP?", "HP 什么 Что ما \u202e\u200b", "y" * MAX_QUESTION_CHARS]),
))
def test_valid_hostile_questions_get_an_answer_through_the_api(question, demo_index, scripted):
    scripted.rules[:] = [("Reply with JSON", SYNTHESIS)]
    result = api.ask(question, "vanilla", {"model": "scripted", "index_dir": demo_index})
    assert result["answer"] == "scripted answer" and result["route"] == ["retrieve", "synthesize_answer"]


@pytest.mark.parametrize("question, message", [
    ("", "question is empty"),
    (" \t\n ", "question is empty"),
    ("z" * 100_000, "the limit is"),
    ("a\x00b", "NUL byte"),
    ("caf\udcff", "not valid UTF-8"),
])
def test_cli_refuses_hostile_questions_in_one_line(question, message, capsys, demo_index):
    code = main(["ask", question, "--index", demo_index, "--model", "openai:unused"])
    err = capsys.readouterr().err.strip()
    assert code == 1 and message in err and len(err.splitlines()) == 1


good_record = st.fixed_dictionaries(
    {"text": st.text(min_size=1, max_size=40).filter(lambda t: t.split() != [])},
    optional={"title": st.text(max_size=20), "id": st.one_of(st.integers(0, 10**6), st.from_regex(r"[a-z]{1,8}", fullmatch=True))},
)
bad_record = st.one_of(
    st.fixed_dictionaries({"title": st.text(max_size=10)}),  # no text
    st.fixed_dictionaries({"text": st.one_of(st.integers(), st.none(), st.lists(st.text(), max_size=2), st.just("   "))}),
    st.fixed_dictionaries({"text": st.just("fine text"), "title": st.one_of(st.integers(), st.lists(st.integers(), max_size=2))}),
    st.fixed_dictionaries({"text": st.just("fine text"), "id": st.one_of(st.floats(allow_nan=False), st.lists(st.integers(), max_size=2))}),
    st.lists(st.integers(), max_size=3),  # not an object
    st.just("{truncated"),  # not JSON at all
)


@FAST
@given(lines=st.lists(st.one_of(good_record.map(lambda r: (True, r)), bad_record.map(lambda r: (False, r))),
                      min_size=1, max_size=12))
def test_jsonl_bad_lines_are_reported_by_number_and_good_lines_ingested(lines, tmp_path_factory):
    path = tmp_path_factory.mktemp("hostile") / "docs.jsonl"
    rendered, good_lines, bad_lines = [], [], []
    for number, (good, record) in enumerate(lines, 1):
        if good:
            record = dict(record)
            record["id"] = record.get("id", f"line{number}")  # distinct ids: no deduplication in play
            record["id"] = f"{record['id']}-{number}"
            good_lines.append(number)
            rendered.append(json.dumps(record))
        else:
            bad_lines.append(number)
            rendered.append(record if isinstance(record, str) else json.dumps(record))
    path.write_text("\n".join(rendered) + "\n", encoding="utf-8")
    report = ReadReport()
    passages = list(read_passages([str(path)], report))
    reported = [int(problem.split(": ", 1)[0].rsplit(":", 1)[1]) for problem in report.problems]
    assert reported == bad_lines
    assert sorted({int(p["source"].rsplit(":", 1)[1]) for p in passages}) == good_lines
