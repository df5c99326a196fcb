"""The evaluation harness behind `disambig eval`.

datasets (loaders into one Example shape) -> runner (methods x questions, cached, resumable)
-> scoring/metrics (reference definitions) and extra_metrics (judge / QA model, optional)
-> report (predictions.jsonl, summary.json, summary.md, PNG plots).
"""
