"""Offline metrics, defined as the reference scorers define them (ASQA/ALCE, AmbigQA, JPR).

Every function is pure and small so each can be unit-tested against hand-computed values.
"""

from __future__ import annotations

import math
import re
import string
from functools import lru_cache
from typing import Iterable, Sequence

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = set(string.punctuation)


def normalize_answer(text: str) -> str:
    """SQuAD/ALCE normalization: lowercase, drop punctuation, then articles, collapse spaces."""
    text = "".join(ch for ch in text.lower() if ch not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def remove_citations(text: str) -> str:
    """Drop `[n]` citation marks the way ALCE does before scoring the text."""
    return re.sub(r"\[\d+", "", re.sub(r" \[\d+", "", text)).replace(" |", "").replace("]", "")


def exact_presence(short_answers: Iterable[str], output: str) -> bool:
    """A QA pair hits when any of its normalized short answers is a substring of the
    normalized output."""
    context = normalize_answer(output)
    return any(normalize_answer(answer) in context for answer in short_answers)


def str_em_hit(answer_groups: Sequence[Sequence[str]], output: str) -> tuple[float, float]:
    """(STR-EM, STR-HIT) for one question: the fraction of QA pairs that hit, and 1.0 when
    all of them hit (ALCE `compute_str_em`)."""
    if not answer_groups:
        raise ValueError("STR-EM needs at least one QA pair")
    hits = [exact_presence(group, output) for group in answer_groups]
    em = sum(hits) / len(hits)
    return em, float(em == 1.0)


_ABBREVIATIONS = {
    "mr", "mrs", "ms", "dr", "st", "jr", "sr", "vs", "etc", "inc", "ltd", "co", "corp", "no", "vol",
    "gen", "gov", "sen", "rep", "col", "lt", "sgt", "capt", "prof", "rev", "ft", "mt", "jan", "feb",
    "mar", "apr", "aug", "sept", "sep", "oct", "nov", "dec", "approx", "est", "fig", "e.g", "i.e",
    "u.s", "u.k", "u.n", "d.c", "a.m", "p.m",
}
_SENTENCE_END = re.compile(r"([.!?]+['\")\]]*)\s+")
_NUMBER = re.compile(r"^-?[.,]?\d[\d,.-]*$")  # punkt's ##number## token type


def split_sentences(text: str) -> list[str]:
    """Sentences without any downloaded model: break after . ! ? and whitespace, except after
    a known abbreviation, a single-letter initial, or a number followed by a lower-case word
    (punkt's orthographic rule). This is what punkt's English model does on the lowercased
    text ALCE feeds it, for the cases that matter to ROUGE-Lsum."""
    sentences, start = [], 0
    for match in _SENTENCE_END.finditer(text):
        before = text[start:match.start()].split()
        last = before[-1].lower().rstrip(".") if before else ""
        following = text[match.end():match.end() + 1]
        if match.group(1).startswith(".") and (
            last in _ABBREVIATIONS or (len(last) == 1 and last.isalpha())
            or (_NUMBER.match(last) and following.islower())
        ):
            continue
        sentences.append(text[start:match.end(1)].strip())
        start = match.end()
    tail = text[start:].strip()
    if tail:
        sentences.append(tail)
    return [s for s in sentences if s]


@lru_cache(maxsize=1)
def _rouge_scorer():
    from rouge_score import rouge_scorer

    return rouge_scorer.RougeScorer(["rougeLsum"], use_stemmer=True)


def _sentence_lines(text: str) -> str:
    return "\n".join(split_sentences(text.lower()))


def rouge_lsum(references: Sequence[str], output: str) -> float:
    """ROUGE-Lsum F-measure with Porter stemming, best over the reference long answers; text
    is lowercased and put one sentence per line, as the ASQA/ALCE scorers do."""
    references = [r for r in references if r and r.strip()]
    if not references:
        raise ValueError("ROUGE-Lsum needs at least one reference")
    prediction = _sentence_lines(output)
    scorer = _rouge_scorer()
    return max(scorer.score(_sentence_lines(ref), prediction)["rougeLsum"].fmeasure for ref in references)


def _matches(gold_group: Sequence[str], prediction: str) -> bool:
    target = normalize_answer(prediction)
    return any(normalize_answer(answer) == target for answer in gold_group)


def answer_set_f1(annotations: Sequence[Sequence[Sequence[str]]], predictions: Sequence[str]) -> float:
    """AmbigQA answer F1: each gold answer group and each predicted answer is used at most once
    (greedy, in order, normalized exact match); F1 of the two coverage rates, maximised over
    the annotations (each annotation = a list of answer groups = lists of variants)."""
    predictions = [p for p in predictions if p and p.strip()]
    if not annotations:
        raise ValueError("answer F1 needs at least one annotation")
    if not predictions:
        return 0.0
    best = 0.0
    for groups in annotations:
        if not groups:
            continue
        used_gold, used_pred = [False] * len(groups), [False] * len(predictions)
        for i, group in enumerate(groups):
            for j, prediction in enumerate(predictions):
                if not used_gold[i] and not used_pred[j] and _matches(group, prediction):
                    used_gold[i] = used_pred[j] = True
        recall, precision = sum(used_gold) / len(groups), sum(used_pred) / len(predictions)
        if recall + precision:
            best = max(best, 2 * recall * precision / (recall + precision))
    return best


def _relevant_ranks(retrieved: Sequence[str], gold: set[str], k: int) -> list[int]:
    """1-based ranks within the top k that hold a gold item not already credited higher up."""
    seen, ranks = set(), []
    for rank, item in enumerate(retrieved[:k], 1):
        if item in gold and item not in seen:
            seen.add(item)
            ranks.append(rank)
    return ranks


def ndcg_at_k(retrieved: Sequence[str], gold: Iterable[str], k: int = 5) -> float:
    """Binary-gain nDCG@k; each gold item (title or passage id) earns gain once."""
    gold = set(gold)
    if not gold:
        raise ValueError("nDCG needs gold items")
    dcg = sum(1.0 / math.log2(rank + 1) for rank in _relevant_ranks(retrieved, gold, k))
    ideal = sum(1.0 / math.log2(rank + 1) for rank in range(1, min(k, len(gold)) + 1))
    return dcg / ideal


def recall_at_k(retrieved: Sequence[str], gold: Iterable[str], k: int = 5) -> float:
    """The fraction of gold items (titles or passage ids) found in the top k."""
    gold = set(gold)
    if not gold:
        raise ValueError("recall needs gold items")
    return len(_relevant_ranks(retrieved, gold, k)) / len(gold)


def mrecall_at_k(passage_texts: Sequence[str], answer_groups: Sequence[Sequence[str]], k: int = 5) -> float:
    """JPR's MRecall@k: 1.0 when the top-k passages contain all n answers (n <= k) or at least
    k of them (n > k); an answer is contained when any variant occurs, normalized, in a passage."""
    if not answer_groups:
        raise ValueError("MRecall needs answers")
    texts = [normalize_answer(text) for text in passage_texts[:k]]
    covered = sum(any(normalize_answer(a) in t for a in group if normalize_answer(a) for t in texts)
                  for group in answer_groups)
    return float(covered >= min(k, len(answer_groups)))


def detection_scores(pairs: Iterable[tuple[bool, bool]]) -> dict:
    """Precision, recall, F1 and accuracy of (predicted ambiguous, gold ambiguous) pairs,
    ambiguous being the positive class; plus the confusion counts."""
    tp = fp = fn = tn = 0
    for predicted, gold in pairs:
        tp += predicted and gold
        fp += predicted and not gold
        fn += gold and not predicted
        tn += not predicted and not gold
    total = tp + fp + fn + tn
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1,
            "accuracy": (tp + tn) / total if total else 0.0, "tp": tp, "fp": fp, "fn": fn, "tn": tn, "n": total}


def percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolation percentile (numpy's default), q in [0, 100]."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("percentile of no values")
    position = (len(ordered) - 1) * q / 100.0
    low, high = math.floor(position), math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def token_f1(prediction: str, gold: str) -> float:
    """SQuAD token-level F1 between normalized strings (used by Disambig-F1)."""
    predicted, expected = normalize_answer(prediction).split(), normalize_answer(gold).split()
    if not predicted or not expected:
        return float(predicted == expected)
    common = 0
    remaining = list(expected)
    for token in predicted:
        if token in remaining:
            remaining.remove(token)
            common += 1
    if not common:
        return 0.0
    precision, recall = common / len(predicted), common / len(expected)
    return 2 * precision * recall / (precision + recall)
