"""`disambig eval` end to end with the scripted model: reports, resume, cache, fixed universe."""

import json

import pytest

from agent.app.cli import main
from agent.errors import InputError
from agent.evaluation.runner import EvalConfig, run_eval
from agent.llm.prompts import prompts_fingerprint
from tests.scripted import passage_number

QUESTIONS = [
    {"id": "hp", "question": "What is HP?", "ambiguous": True,
     "interpretations": [{"question": "What is HP, the company?", "answers": ["Hewlett-Packard"]},
                         {"question": "What is hp, the unit?", "answers": ["horsepower"]}],
     "long_answers": ["HP is the company Hewlett-Packard, and hp is horsepower, a unit of power."]},
    {"id": "jaguar", "question": "What is a Jaguar?", "ambiguous": True,
     "interpretations": [{"question": "What is the jaguar animal?", "answers": ["big cat"]},
                         {"question": "What is Jaguar the car maker?", "answers": ["car maker"]}]},
    {"id": "python", "question": "Who created Python, the language?", "ambiguous": False,
     "answers": [["Guido van Rossum", "van Rossum"]], "long_answers": ["Guido van Rossum created Python."]},
]
REPLIES = {
    "What is HP?": {"interpretations": [{"question": "What is HP, the company?", "answer": "Hewlett-Packard",
                                         "citations": [1]},
                                        {"question": "What is hp, the unit?", "answer": "horsepower", "citations": [2]}],
                    "answer": "HP is Hewlett-Packard [1], whereas hp is horsepower [2]."},
    "What is a Jaguar?": {"interpretations": [{"question": "What is the jaguar animal?", "answer": "big cat",
                                               "citations": [1]}],
                          "answer": "A jaguar is a big cat [1]."},
    "Who created Python, the language?": {"interpretations": [], "answer": "Python was created by Guido van Rossum."},
}


def reply(messages):
    """The scripted reply, each reading citing the first shown passage that contains its answer
    (so it passes the grounding check); the prose cites the same numbers."""
    text = "\n".join(str(m.content) for m in messages)
    for question, answer in REPLIES.items():
        if question in text:
            answer = json.loads(json.dumps(answer))
            prose = answer["answer"]
            for item in answer["interpretations"]:
                number = passage_number(messages, item["answer"])
                prose = prose.replace(f"[{item['citations'][0]}]", f"[#{number}]")
                item["citations"] = [number]
            answer["answer"] = prose.replace("[#", "[")
            return json.dumps(answer)
    return json.dumps({"interpretations": [], "answer": "unknown"})


@pytest.fixture
def dataset(tmp_path):
    path = tmp_path / "tiny.jsonl"
    path.write_text("\n".join(json.dumps(q) for q in QUESTIONS) + "\n")
    return path


def config(dataset, tmp_path, demo_index, out="out", cache="cache", **extra):
    values = dict(dataset="jsonl", data=str(dataset), methods=["vanilla"], out=str(tmp_path / out), model="scripted",
                  index_dir=demo_index, cache=str(tmp_path / cache), progress=False)
    values.update(extra)
    return EvalConfig(**values)


def without_latency(summary):
    methods = json.loads(json.dumps(summary["methods"]))
    for figures in methods.values():
        figures["cost"].pop("wall_s")
    return methods


def test_eval_scores_a_tiny_dataset_and_writes_reports(scripted, demo_index, dataset, tmp_path):
    scripted.rules.append(("Reply with JSON", reply))
    summary = run_eval(config(dataset, tmp_path, demo_index))
    vanilla = summary["methods"]["vanilla"]
    assert vanilla["answered"] == 3 and vanilla["errors"] == 0
    quality = vanilla["quality"]
    # STR-EM: hp 2/2 pairs, jaguar 1/2 (car maker missing), python 1/1
    assert quality["str_em"] == pytest.approx((1 + 0.5 + 1) / 3)
    assert quality["str_hit"] == pytest.approx(2 / 3)
    # answer-set F1: hp 1.0; jaguar R 1/2 P 1 -> 2/3; python: no predicted answers -> 0
    assert quality["answer_f1"] == pytest.approx((1 + 2 / 3 + 0) / 3)
    assert quality["detection"]["tp"] == 1 and quality["detection"]["fn"] == 1 and quality["detection"]["tn"] == 1
    assert 0 < quality["rouge_lsum"] <= 1
    assert vanilla["cost"]["llm_calls"] == 1 and vanilla["cost"]["retriever_calls"] == 1
    assert set(vanilla["cost"]["wall_s"]) == {"measured", "concurrency", "mean", "p50", "p95", "p99"}
    assert summary["run"]["model_calls"] == 3 and summary["run"]["questions_run"] == 3
    out = tmp_path / "out"
    lines = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    assert [r["id"] for r in lines] == ["hp", "jaguar", "python"]
    assert {"question", "output", "usage", "metrics"} <= set(lines[0])
    assert lines[0]["output"]["interpretations"][0]["answer"] == "Hewlett-Packard"
    assert json.loads((out / "summary.json").read_text())["methods"]["vanilla"]["answered"] == 3
    table = (out / "summary.md").read_text()
    assert "| vanilla | 3 |" in table and "STR-EM" in table and "p95 s" in table
    for name in ("quality_vs_tokens.png", "latency.png", "detection_confusion.png"):
        assert (out / name).read_bytes()[:4] == b"\x89PNG"


def test_second_run_comes_from_cache_without_model_calls(scripted, demo_index, dataset, tmp_path):
    scripted.rules.append(("Reply with JSON", reply))
    first = run_eval(config(dataset, tmp_path, demo_index))
    calls = len(scripted.calls)
    second = run_eval(config(dataset, tmp_path, demo_index, out="out2"))
    assert len(scripted.calls) == calls
    assert second["run"]["model_calls"] == 0 and second["run"]["questions_from_cache"] == 3
    assert second["methods"] == first["methods"]
    # a changed setting is a different cache entry
    third = run_eval(config(dataset, tmp_path, demo_index, out="out3", k=3))
    assert third["run"]["questions_run"] == 3 and third["settings_hash"] != first["settings_hash"]


def write_model(folder, version: str) -> None:
    folder.mkdir(exist_ok=True)
    (folder / "selector_model.npz").write_bytes(version.encode())


def write_code(folder, version: str) -> None:
    (folder / "agent").mkdir(parents=True, exist_ok=True)
    (folder / "graphs").mkdir(exist_ok=True)
    (folder / "agent" / "nodes.py").write_text(f"VERSION = {version!r}\n")


@pytest.mark.parametrize("part, write", [("models", write_model), ("code", write_code)])
def test_retrained_models_or_edited_code_rerun_finished_questions(part, write, scripted, demo_index, dataset, tmp_path,
                                                                   monkeypatch):
    from agent.evaluation import runner

    fingerprint = getattr(runner, f"{part}_fingerprint")
    folder = tmp_path / part
    write(folder, "shipped")
    shipped = fingerprint(folder)
    write(folder, "changed")
    assert fingerprint(folder) != shipped
    scripted.rules.append(("Reply with JSON", reply))
    first = run_eval(config(dataset, tmp_path, demo_index))
    assert first["settings"]["vanilla"][part] == fingerprint()
    monkeypatch.setattr(runner, f"{part}_fingerprint", lambda: shipped)
    second = run_eval(config(dataset, tmp_path, demo_index, out="out2"))
    assert second["run"]["questions_run"] == 3 and second["settings_hash"] != first["settings_hash"]


def test_changed_prompt_files_rerun_finished_questions(scripted, demo_index, dataset, tmp_path, monkeypatch):
    scripted.rules.append(("Reply with JSON", reply))
    first = run_eval(config(dataset, tmp_path, demo_index))
    assert first["settings"]["vanilla"]["prompts"] == prompts_fingerprint()
    monkeypatch.setattr("agent.llm.prompts.prompts_fingerprint", lambda: "edited-prompts")
    second = run_eval(config(dataset, tmp_path, demo_index, out="out2"))
    assert second["run"]["questions_run"] == 3 and second["settings_hash"] != first["settings_hash"]
    # the rendered messages did not really change here, so every reply still came from the LLM cache
    assert second["run"]["model_calls"] == 0
    # ... and replayed replies say nothing about latency: no question was timed
    assert first["methods"]["vanilla"]["cost"]["wall_s"]["measured"] == 3
    assert second["methods"]["vanilla"]["cost"]["wall_s"] == {"measured": 0, "concurrency": 1}
    assert "| 0 | – | – | – |" in (tmp_path / "out2" / "summary.md").read_text()


def test_an_interrupted_run_resumes_and_ends_as_an_uninterrupted_one(scripted, demo_index, dataset, tmp_path):
    scripted.rules.append(("Reply with JSON", reply))
    reference = run_eval(config(dataset, tmp_path, demo_index, out="ref", cache="ref-cache"))

    def interrupt_on_jaguar(messages):
        if "What is a Jaguar?" in "\n".join(str(m.content) for m in messages):
            raise KeyboardInterrupt  # what Ctrl-C or a kill looks like to the run
        return reply(messages)

    scripted.rules[:] = [("Reply with JSON", interrupt_on_jaguar)]
    with pytest.raises(KeyboardInterrupt):
        run_eval(config(dataset, tmp_path, demo_index))
    assert not (tmp_path / "out" / "summary.json").exists()

    scripted.rules[:] = [("Reply with JSON", reply)]
    scripted.calls.clear()
    resumed = run_eval(config(dataset, tmp_path, demo_index))
    assert resumed["run"]["questions_from_cache"] == 1  # hp finished before the interruption
    assert resumed["run"]["model_calls"] == 2 and len(scripted.calls) == 2
    assert without_latency(resumed) == without_latency(reference)


def test_reply_cache_replays_retries_in_order(scripted, demo_index, dataset, tmp_path):
    """A malformed first reply then a valid retry: replaying from the reply cache alone (fresh
    result store) gives the same answer with no model call."""
    scripted.rules.append(("Reply with JSON", ["not json at all", reply]))
    first = run_eval(config(dataset, tmp_path, demo_index, limit=1))
    assert first["run"]["model_calls"] == 2  # malformed, then the retry
    (tmp_path / "cache" / "results.sqlite").unlink()
    calls = len(scripted.calls)
    again = run_eval(config(dataset, tmp_path, demo_index, limit=1, out="again"))
    assert len(scripted.calls) == calls and again["run"]["model_calls"] == 0
    assert again["run"]["cache_hits"] == 2
    assert again["methods"]["vanilla"]["quality"] == first["methods"]["vanilla"]["quality"]


def test_fixed_universe_replaces_retrieval_with_the_given_passages(scripted, tmp_path):
    scripted.rules.append(("Reply with JSON", reply))
    passages = [{"id": f"p{n}", "title": title, "text": text} for n, (title, text) in enumerate([
        ("HP Inc.", "HP Inc. is the printer and PC company split from Hewlett-Packard."),
        ("Horsepower", "Horsepower (hp) is a unit of power."),
        ("Hit points", "HP in games are hit points."),
    ])]
    data = tmp_path / "fixed.jsonl"
    data.write_text(json.dumps({"id": "hp", "question": "What is HP?", "answers": [["Hewlett-Packard"]],
                                "gold_passage_ids": ["p0", "p1"], "passages": passages}) + "\n")
    summary = run_eval(EvalConfig(dataset="jsonl", data=str(data), methods=["vanilla"], out=str(tmp_path / "o"),
                                  model="scripted", cache=str(tmp_path / "c"), progress=False,
                                  index_dir=str(tmp_path / "no-such-index")))
    record = json.loads((tmp_path / "o" / "predictions.jsonl").read_text())
    assert {p["id"] for p in record["output"]["passages"]} == {"p0", "p1", "p2"}
    assert summary["settings"]["vanilla"]["universe"] == "fixed"
    assert summary["methods"]["vanilla"]["quality"]["recall@5"] == 1.0


def test_judge_metrics_only_with_a_judge_and_qa_model_path_is_checked(scripted, demo_index, dataset, tmp_path):
    scripted.rules += [("Reply with JSON only: {\"supported\"", '{"supported": "Yes"}'),
                       ("For every reference reading", '{"covered": ["Yes", "No"]}'),
                       ("Reply with JSON", reply)]
    plain = run_eval(config(dataset, tmp_path, demo_index, limit=1))
    assert "g_precision" not in plain["methods"]["vanilla"]["quality"]
    judged = run_eval(config(dataset, tmp_path, demo_index, limit=1, judge_model="scripted", out="judged"))
    quality = judged["methods"]["vanilla"]["quality"]
    # both produced readings verified; both references grounded, one covered -> recall 2 / (2 + 1)
    assert quality["g_precision"] == 1.0 and quality["g_recall"] == pytest.approx(2 / 3)
    assert quality["g_f1"] == pytest.approx(0.8)
    with pytest.raises(InputError, match="qa-model"):
        run_eval(config(dataset, tmp_path, demo_index, qa_model=str(tmp_path / "missing-squad2")))


def test_disambig_f1_uses_the_qa_model_answers():
    from agent.evaluation.extra_metrics import disambig_f1

    pairs = [{"question": "Who, men?", "short_answers": ["Ali Daei"]},
             {"question": "Who, women?", "short_answers": ["Christine Sinclair"]}]
    answers = {"Who, men?": "Daei", "Who, women?": ""}
    assert disambig_f1(lambda q, context: answers[q], pairs, "text") == pytest.approx((2 / 3 + 0) / 2)


def test_cli_eval_prints_the_table_and_rejects_unknown_settings(scripted, demo_index, dataset, tmp_path, capsys):
    scripted.rules.append(("Reply with JSON", reply))
    argv = ["eval", "--dataset", "jsonl", "--data", str(dataset), "--methods", "vanilla", "--model", "scripted",
            "--index", demo_index, "--out", str(tmp_path / "cli"), "--cache", str(tmp_path / "cc"), "--quiet"]
    assert main(argv + ["--limit", "2"]) == 0
    printed = capsys.readouterr().out
    assert "| vanilla | 2 |" in printed and "summary.md" in printed
    assert main(argv + ["--set", "no_such_knob=1"]) == 1
    assert "no_such_knob" in capsys.readouterr().err


def test_a_question_with_a_timed_out_call_is_not_final(scripted, demo_index, dataset, tmp_path):
    import httpx
    import openai

    timeout = openai.APITimeoutError(request=httpx.Request("POST", "http://127.0.0.1/v1/chat/completions"))
    scripted.rules.append(("Reply with JSON", [timeout, reply]))
    first = run_eval(config(dataset, tmp_path, demo_index, limit=1))
    assert first["methods"]["vanilla"]["answered"] == 1 and first["run"]["model_calls"] == 1
    again = run_eval(config(dataset, tmp_path, demo_index, limit=1, out="again"))
    # re-run (not taken from the result cache), its successful reply replayed: no model call
    assert again["run"]["questions_run"] == 1 and again["run"]["model_calls"] == 0
    third = run_eval(config(dataset, tmp_path, demo_index, limit=1, out="third"))
    assert third["run"]["questions_from_cache"] == 1


def test_a_fresh_run_times_every_method(demo_index, dataset, tmp_path, monkeypatch):
    """Live replies are not replayed ones: on an empty cache every method's questions are timed,
    and the latency figures say at how many questions in flight they were taken."""
    from graphs.registry import METHODS
    from bench.fake_openai import FakeOpenAI
    from bench.schema_reply import schema_reply

    methods = [m for m in METHODS if m != "rewrite"]  # rewrite hands off to another method
    with FakeOpenAI(reply=schema_reply) as fake:
        monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        for method in methods:  # a cache each: methods that send identical requests would share replies
            summary = run_eval(config(dataset, tmp_path, demo_index, methods=[method], model="openai:fake",
                                      limit=1, cache=f"cache-{method}", out=f"out-{method}"))
            figures = summary["methods"][method]
            assert figures["errors"] == 0 and figures["cost"]["llm_calls"] >= 1, method
            assert figures["cost"]["wall_s"]["measured"] == 1, method
            assert figures["cost"]["wall_s"]["concurrency"] == 1, method
            assert "p50 s (1 in flight)" in (tmp_path / f"out-{method}" / "summary.md").read_text()
