"""The trained detector: the shipped model, the rule override, saving, training, the CLI."""

import json

import numpy as np
import pytest

from agent.app.cli import main
from agent.detector.classifier import AMBIGUOUS, CLEAR, AmbiguityDetector, load_detector, normalize_label, rules_label
from agent.detector.llm_baseline import llm_label, parse_verdict
from agent.detector.train import evaluate, read_labelled, scores, split_rows
from agent.errors import InputError

DIMENSIONS = 384 + 3


def constant_detector(bias: float, **settings) -> AmbiguityDetector:
    """A detector whose classifier always says the same thing, to isolate the rule layer."""
    return AmbiguityDetector(np.zeros(DIMENSIONS), bias, np.zeros(3), np.ones(3), **settings)


def test_shipped_model_loads_small_and_separates_clear_from_follow_ups():
    detector = load_detector()
    assert detector.weights.shape == (DIMENSIONS,)
    assert detector.metadata["format"] == "disambig-detector/1"
    decisions = detector.predict_many([
        "How many do I have?", "Can you rename it?", "What about the other one?",
        "How do I export the 'Churn Risk' segment to Amazon S3?", "Who founded Hewlett-Packard?",
    ])
    assert [d["label"] for d in decisions] == [AMBIGUOUS] * 3 + [CLEAR] * 2
    assert all(0.0 <= d["probability"] <= 1.0 for d in decisions)
    assert decisions[0]["probability"] > 0.8 > decisions[-1]["probability"] + 0.3


def test_rule_overrides_a_clear_prediction_for_an_untyped_identifier():
    always_clear = constant_detector(-5.0)
    decision = always_clear.predict("Is 64f1c2ab9e still active?")
    assert decision == {"label": AMBIGUOUS, "probability": pytest.approx(0.0067, abs=1e-3),
                        "source": "lexical_rule", "masked": "Is ENTITY still active?"}
    assert always_clear.predict("Is the dataset 64f1c2ab9e still active?")["label"] == CLEAR
    assert always_clear.configured(lexical_rule=False).predict("Is 64f1c2ab9e still active?")["label"] == CLEAR
    typed = always_clear.configured(entity_types="job")
    assert typed.predict("Is the dataset 64f1c2ab9e still active?")["label"] == AMBIGUOUS
    assert typed.predict("Is the job 64f1c2ab9e still active?")["label"] == CLEAR


def test_rule_never_turns_an_ambiguous_prediction_clear():
    always_ambiguous = constant_detector(5.0)
    decision = always_ambiguous.predict("Show the dataset 64f1c2ab9e")
    assert decision["label"] == AMBIGUOUS and decision["source"] == "classifier"


def test_save_and_load_round_trip_without_pickle(tmp_path):
    rng = np.random.default_rng(0)
    detector = AmbiguityDetector(rng.normal(size=DIMENSIONS), 0.3, np.array([5.0, 0.0, 2.0]),
                                 np.array([4.0, 1.0, 6.0]), threshold=0.4, entity_types=("ticket",),
                                 metadata={"trained_on": "x.csv"})
    path = detector.save(tmp_path / "model")
    assert path.suffix == ".npz" and path.stat().st_size < 20_000
    with np.load(path, allow_pickle=False) as data:
        assert "header" in data
    loaded = AmbiguityDetector.load(path)
    assert loaded.threshold == 0.4 and loaded.entity_types == ("ticket",)
    assert loaded.metadata["trained_on"] == "x.csv"
    queries = ["How many do I have?", "Who founded Hewlett-Packard?"]
    np.testing.assert_allclose(loaded.probabilities(queries), detector.probabilities(queries), atol=1e-5)


def test_loading_a_missing_or_foreign_file_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="no detector model"):
        AmbiguityDetector.load(tmp_path / "absent.npz")
    np.savez(tmp_path / "other.npz", weights=np.zeros(3))
    with pytest.raises(InputError, match="not a detector model"):
        AmbiguityDetector.load(tmp_path / "other.npz")


def test_rules_only_baseline():
    assert rules_label("Can you delete it?") == AMBIGUOUS  # referential word
    assert rules_label("segment?") == AMBIGUOUS  # too short
    assert rules_label("What is the total size of 124abcde?") == AMBIGUOUS  # lexical rule
    assert rules_label("How many segments do I have?") == CLEAR
    assert rules_label("How many do I have?") == CLEAR  # what the classifier is for


def test_labels_in_many_spellings():
    assert [normalize_label(v) for v in ("Ambiguous", "vague", 1, "true")] == [AMBIGUOUS] * 4
    assert [normalize_label(v) for v in ("clear", "0", False)] == [CLEAR] * 3
    with pytest.raises(InputError):
        normalize_label("maybe")


def test_scores_of_the_ambiguous_class():
    gold = [AMBIGUOUS, AMBIGUOUS, CLEAR, CLEAR]
    result = scores(gold, [AMBIGUOUS, CLEAR, AMBIGUOUS, None])
    assert result["precision"] == 0.5 and result["recall"] == 0.5 and result["f1"] == 0.5
    assert result["accuracy"] == 0.5 and result["failed"] == 1


def test_read_labelled_csv_and_jsonl(tmp_path):
    csv_path = tmp_path / "q.csv"
    csv_path.write_text("query,label\nWhat is it?,vague\nWho founded HP?,clear\n")
    rows = read_labelled(csv_path)
    assert [(r["text"], r["label"]) for r in rows] == [("What is it?", AMBIGUOUS), ("Who founded HP?", CLEAR)]
    jsonl = tmp_path / "q.jsonl"
    jsonl.write_text('{"question": "Why?", "label": 1}\n\n{"text": "Who founded HP?", "label": 0}\n')
    assert [r["label"] for r in read_labelled(jsonl)] == [AMBIGUOUS, CLEAR]
    jsonl.write_text('{"text": "Why?", "label": "perhaps"}\n')
    with pytest.raises(InputError, match=r"q.jsonl:1: unknown label"):
        read_labelled(jsonl)
    jsonl.write_text('{"text": "Why?", "label": "vague"}\n')
    with pytest.raises(InputError, match="both clear and ambiguous"):
        read_labelled(jsonl)


def test_split_keeps_augmented_variants_with_their_source_and_honours_a_split_column():
    rows = [{"text": f"q{i}", "label": CLEAR if i % 2 else AMBIGUOUS, "group": f"g{i // 3}"} for i in range(60)]
    train, test = split_rows(rows, 0.25, seed=1)
    assert {r["group"] for r in train}.isdisjoint({r["group"] for r in test})
    assert {r["label"] for r in test} == {CLEAR, AMBIGUOUS}
    fixed = [{**r, "split": "test" if i < 5 else "train"} for i, r in enumerate(rows)]
    assert [r["text"] for r in split_rows(fixed)[1]] == [f"q{i}" for i in range(5)]


def test_llm_baseline_parses_clear_or_vague(scripted):
    assert parse_verdict("LABEL: VAGUE") == AMBIGUOUS
    assert parse_verdict("label: clear\n") == CLEAR
    assert parse_verdict("I am not sure") is None
    def judge(messages):
        return "LABEL: VAGUE" if " it?" in messages[-1].content else "Sure. LABEL: CLEAR"

    scripted.rules.append(("MESSAGE:", judge))
    from agent.context import Context

    context = Context(model="scripted")
    assert llm_label(context, "Who owns it?") == AMBIGUOUS
    assert llm_label(context, "Who founded HP?") == CLEAR
    prompt = scripted.calls[0]["text"]
    assert prompt.count("LABEL: VAGUE") >= 3 and prompt.count("LABEL: CLEAR") >= 3  # few-shot examples
    assert prompt.rstrip().endswith("MESSAGE: Who owns it?")
    report = evaluate(constant_detector(-5.0), [{"text": "Who owns it?", "label": AMBIGUOUS},
                                                {"text": "Who founded HP?", "label": CLEAR}],
                      llm_context=context, llm_sample=2)
    assert report["LLM few-shot"]["accuracy"] == 1.0
    assert report["classifier (no rule)"]["recall"] == 0.0


def test_train_detector_command_writes_a_model_and_reports_held_out_scores(tmp_path, capsys):
    data = tmp_path / "labelled.csv"
    clear = ["What is a segment?", "Who owns the Orders dataset?", "How long is the Amazon River?",
             "Who founded Hewlett-Packard?", "How do I reset my password?", "Which destinations failed today?",
             "What is the retention policy for event datasets?", "How many segments do I have?"]
    vague = ["How many do I have?", "Can you delete it?", "What about the other one?", "How long is it?",
             "Who founded it?", "And for last year?", "Why did that fail?", "segment?"]
    data.write_text("text,label\n" + "".join(f"{q},clear\n" for q in clear) + "".join(f"{q},ambiguous\n" for q in vague))
    out = tmp_path / "model.npz"
    assert main(["train-detector", str(data), "--out", str(out), "--json", "--augment"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["model"] == str(out) and report["test"] == 4
    assert report["train"] > 12  # augmented variants were added
    assert set(report["scores"]) == {"rules only", "classifier (no rule)", "classifier + lexical rule"}
    assert all(0 <= s["f1"] <= 1 and s["n"] == 4 for s in report["scores"].values())
    trained = load_detector(str(out))
    assert trained.metadata["trained_on"] == "labelled.csv"
    assert trained.predict("Can you rename it?")["label"] == AMBIGUOUS


def test_train_detector_reports_bad_input_in_one_line(tmp_path, capsys):
    data = tmp_path / "bad.csv"
    data.write_text("text,label\nWhat is it?,sometimes\n")
    assert main(["train-detector", str(data), "--out", str(tmp_path / "m.npz")]) == 1
    assert "bad.csv:2: unknown label" in capsys.readouterr().err


def test_the_card_states_the_augmentation_effect_of_its_own_report():
    from agent.detector.card import _augmentation_note

    row = {"precision": 0.9, "recall": 0.9, "accuracy": 0.9, "n": 10}
    note = _augmentation_note({"classifier + lexical rule": {**row, "f1": 0.8},
                               "classifier + lexical rule, no augmentation": {**row, "f1": 0.85}})
    assert "costs F1 (0.800 with, 0.850 without" in note
    assert "not measured" in _augmentation_note({})
    from pathlib import Path

    card = (Path(__file__).resolve().parents[1] / "agent" / "data" / "detector_card.md").read_text()
    assert "0.902" not in card and "0.934" not in card
