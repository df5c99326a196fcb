"""Score one method output against one example, with the metrics the example's gold allows."""

from __future__ import annotations

from agent.evaluation import metrics
from agent.evaluation.sentence_metrics import sentence_scores
from agent.evaluation.datasets import Example

COST_FIELDS = ("llm_calls", "prompt_tokens", "completion_tokens", "retriever_calls")


def predicted_ambiguous(output: dict) -> bool:
    """Whether the method judged the question ambiguous: `decision.ambiguous` (the common
    decision every method fills, agent.state.Decision); when the method does not judge
    (None), whether it answered with two or more distinct interpretations."""
    judged = (output.get("decision") or {}).get("ambiguous")
    if isinstance(judged, bool):
        return judged
    questions = {metrics.normalize_answer(i.get("question", "")) for i in output.get("interpretations") or []}
    return len(questions - {""}) >= 2


def score(example: Example, output: dict, k: int = 5, asked: str | None = None) -> dict:
    """Per-question metrics (fractions in [0, 1]); a metric is absent when the gold lacks it.
    `asked`: the question the answer was written for, when not the example's (a simulated user
    restated it): a sentence is judged a repeat of that question's words, not the first one's."""
    answer = metrics.remove_citations(output.get("answer") or "")
    passages = output.get("passages") or []
    scores: dict = {}
    groups = [p["short_answers"] for p in example.qa_pairs if p.get("short_answers")]
    if groups:
        scores["str_em"], scores["str_hit"] = metrics.str_em_hit(groups, answer)
        scores[f"mrecall@{k}"] = metrics.mrecall_at_k([p.get("text", "") for p in passages], groups, k)
        scores.update(sentence_quality(output, passages, groups, scores["str_em"], asked or example.question))
    if any(r.strip() for r in example.long_answers):
        scores["rouge_lsum"] = metrics.rouge_lsum(example.long_answers, answer)
    if example.answer_annotations:
        predicted = [i.get("answer", "") for i in output.get("interpretations") or []]
        scores["answer_f1"] = metrics.answer_set_f1(example.answer_annotations, predicted)
    if example.gold_passage_ids:
        ranked = [p["id"] for p in passages]
        scores[f"ndcg@{k}"] = metrics.ndcg_at_k(ranked, example.gold_passage_ids, k)
        scores[f"recall@{k}"] = metrics.recall_at_k(ranked, example.gold_passage_ids, k)
    elif example.gold_titles:
        ranked = [p.get("title", "") for p in passages]
        scores[f"ndcg@{k}"] = metrics.ndcg_at_k(ranked, example.gold_titles, k)
        scores[f"recall@{k}"] = metrics.recall_at_k(ranked, example.gold_titles, k)
    scores["predicted_ambiguous"] = predicted_ambiguous(output)
    if example.ambiguous is not None:
        scores["gold_ambiguous"] = bool(example.ambiguous)
    return scores


def sentence_quality(output: dict, passages: list[dict], groups: list[list[str]], recall: float,
                     question: str = "") -> dict:
    """Sentence precision (share of the answer's sentences stating a gold short answer of some
    sense), sense F1 against STR-EM as the sense recall, broken sentences and characters."""
    counts = sentence_scores(output.get("answer") or "", passages, [a for group in groups for a in group], question)
    found = {"broken_sentences": counts["broken"], "chars": counts["chars"]}
    if counts["sentences"]:
        precision = counts["precise"] / counts["sentences"]
        found["sentence_precision"] = precision
        found["sense_f1"] = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return found
