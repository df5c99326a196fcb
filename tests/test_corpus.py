import json

import pytest

from agent.retrieval.corpus import ReadReport, chunk_text, read_passages
from agent.errors import InputError
from agent.retrieval.tokens import count_tokens


def test_chunks_respect_the_token_budget_and_overlap():
    text = " ".join(f"word{i}" for i in range(400))
    chunks = chunk_text(text, chunk_tokens=50, overlap_tokens=10)
    assert len(chunks) > 5
    assert all(count_tokens(" " + chunk) <= 52 for chunk in chunks)
    first, second = chunks[0].split(), chunks[1].split()
    assert second[0] in first and first[-1] in second  # neighbours share words
    covered = {word for chunk in chunks for word in chunk.split()}
    assert covered == set(text.split())  # nothing lost


def test_short_text_is_one_chunk_and_bad_settings_are_refused():
    assert chunk_text("a short passage", 50, 10) == ["a short passage"]
    with pytest.raises(InputError):
        chunk_text("text", 10, 10)


def test_jsonl_ids_metadata_and_bad_lines_reported_with_line_numbers(tmp_path):
    path = tmp_path / "docs.jsonl"
    lines = [
        json.dumps({"id": "p1", "title": "One", "text": "first passage", "lang": "en"}),
        "{not json",
        json.dumps({"id": "p2", "title": "Two"}),
        json.dumps({"title": "Three", "text": "third passage"}),
        json.dumps(["a list"]),
        json.dumps({"id": "p1", "title": "Dup", "text": "duplicate id"}),
    ]
    path.write_text("\n".join(lines) + "\n")
    report = ReadReport()
    passages = list(read_passages([str(path)], report))
    assert [p["id"] for p in passages] == ["p1", "docs.jsonl:4"]  # no id: the file and line name the record
    assert report.duplicates == 1
    assert passages[0]["metadata"] == {"lang": "en"}
    assert passages[0]["source"].endswith("docs.jsonl:1")
    assert [problem.split(": ", 1)[0].rsplit(":", 1)[1] for problem in report.problems] == ["2", "3", "5"]


def test_text_files_directories_binary_and_invalid_utf8(tmp_path):
    (tmp_path / "guide.md").write_text("# Renewal guide\n\nLicences renew every year.")
    (tmp_path / "notes.txt").write_text("Plain notes about horsepower.")
    (tmp_path / "image.bin").write_bytes(b"\x00\x01")
    (tmp_path / "broken.txt").write_bytes(b"caf\xe9 au lait")
    (tmp_path / "zero.md").write_bytes(b"abc\x00def")
    report = ReadReport()
    passages = list(read_passages([str(tmp_path)], report))
    assert sorted(p["title"] for p in passages) == ["Renewal guide", "notes"]
    assert report.ignored_files == 1
    assert any("broken.txt: not valid UTF-8" in p for p in report.problems)
    assert any("zero.md: binary file" in p for p in report.problems)


def test_a_text_files_underlined_headings_are_sentences_of_their_own(tmp_path):
    from agent.assembly.units import passage_units

    (tmp_path / "usage.txt").write_text(
        "=====\nUsage\n=====\n\nStopping if any session fails\n-----------------------------\n\n"
        "By default the tool runs every session. Use --stop to stop at the first failure.\n"
        "A rule between parts:\n\n----\n\nThe end.\n")
    [passage] = read_passages([str(tmp_path / "usage.txt")], ReadReport())
    assert "---" not in passage["text"] and "===" not in passage["text"]
    units = [text for _, text in passage_units(passage)]
    assert "By default the tool runs every session." in units  # not glued to the heading before it
    assert not any(unit.startswith("Stopping") and "default" in unit for unit in units)
    assert "A rule between parts:" in passage["text"]  # a line ending in a mark is left as it is


def test_a_saved_help_listing_gives_one_unit_per_option(tmp_path):
    from agent.assembly.units import passage_units, says_how

    (tmp_path / "help.txt").write_text(
        "Usage: packit [options] files\n\nOutput\n"
        "  -o, --out <dir> ........ where packed files go\n"
        "  -k, --keep ............. keep the input files\n"
        "  --level n                how hard to pack, from 1 to 9;\n"
        "                           9 is the slowest\n"
        "  -q                       print nothing\n")
    [passage] = read_passages([str(tmp_path / "help.txt")], ReadReport())
    units = [text for _, text in passage_units(passage)]
    assert "`-k, --keep` — keep the input files." in units  # each option shown as code
    assert "`--level n` — how hard to pack, from 1 to 9; 9 is the slowest." in units  # its wrapped line joined
    assert "`-o, --out <dir>` — where packed files go." in units
    assert not any("...." in unit or ("--keep" in unit and "--level" in unit) for unit in units)
    assert "Usage: packit [options] files." in units  # not run into the heading after it ("... files Output.")
    assert all(says_how(passage, unit) for unit in units if unit.startswith("`"))


def test_missing_paths_are_errors_and_unsupported_files_one_skipped_line(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        list(read_passages([str(tmp_path / "absent.jsonl")], ReadReport()))
    (tmp_path / "data.xyz").write_bytes(b"%PDF")
    (tmp_path / "notes.txt").write_text("Plain notes.")
    report = ReadReport()
    passages = list(read_passages([str(tmp_path / "data.xyz"), str(tmp_path / "notes.txt")], report))
    assert [p["id"] for p in passages] == ["notes.txt"]  # the rest still comes through
    assert report.problems == [f"{tmp_path / 'data.xyz'}: unsupported file type .xyz (use .pdf, .html, .docx, .md, .rst, .txt, .jsonl or a manual page (.1 to .9), gzipped or not)"]


def test_long_records_are_split_with_numbered_ids(tmp_path):
    path = tmp_path / "long.jsonl"
    path.write_text(json.dumps({"id": "long", "title": "Long", "text": " ".join(["token"] * 600)}) + "\n")
    passages = list(read_passages([str(path)], ReadReport(), chunk_tokens=100, overlap_tokens=20))
    assert len(passages) > 1
    assert [p["id"] for p in passages] == [f"long#{i}" for i in range(len(passages))]
