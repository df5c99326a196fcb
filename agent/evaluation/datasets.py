"""Evaluation datasets: loaders turn each benchmark's own format into one `Example` shape.

Loaders take paths; nothing is bundled. Fields a dataset does not give stay empty and the
metrics that need them are skipped for it.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

from agent.errors import InputError


@dataclass
class Example:
    id: str
    question: str
    qa_pairs: list[dict] = field(default_factory=list)  # [{question, short_answers}] for STR-EM/MRecall
    long_answers: list[str] = field(default_factory=list)  # references for ROUGE-Lsum
    answer_annotations: list[list[list[str]]] = field(default_factory=list)  # AmbigQA answer-set F1
    interpretations: list[str] = field(default_factory=list)  # gold disambiguations
    gold_titles: list[str] = field(default_factory=list)
    gold_passage_ids: list[str] = field(default_factory=list)
    ambiguous: bool | None = None
    passages: list[dict] | None = None  # the fixed universe, when the dataset gives one
    passage_senses: dict[str, str] | None = None  # passage id -> "topic/sense", when the corpus labels them
    split: str | None = None  # tune or test, where the dataset splits its questions
    turns: list[dict] | None = None  # a labelled conversation's turns (agent/evaluation/multi_turn.py)

    def to_dict(self) -> dict:
        return asdict(self)


def _read_json(path: str | Path):
    path = Path(path).expanduser()
    if not path.is_file():
        raise InputError(f"dataset file not found: {path}")
    try:
        if path.suffix in (".jsonl", ".ndjson"):
            with open(path, encoding="utf-8") as handle:
                return [json.loads(line) for line in handle if line.strip()]
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise InputError(f"{path} is not valid JSON: {error}") from None


def _groups(values) -> list[str]:
    return [str(v) for v in (values if isinstance(values, list) else [values]) if str(v).strip()]


def load_asqa(path: str | Path) -> list[Example]:
    """ASQA (`asqa_dev.json`): QA pairs with short answers, two long answers, Wikipedia pages."""
    examples = []
    for item in _read_json(path):
        pairs = [{"question": p["question"], "short_answers": _groups(p["short_answers"])} for p in item["qa_pairs"]]
        titles = [page["title"] for page in item.get("wikipages") or [] if page.get("title")]
        titles += [p["wikipage"] for p in item["qa_pairs"] if p.get("wikipage")]
        titles += [k["wikipage"] for a in item["annotations"] for k in a.get("knowledge") or [] if k.get("wikipage")]
        examples.append(Example(
            id=str(item["id"]), question=item["question"], qa_pairs=pairs,
            long_answers=[a["long_answer"] for a in item["annotations"] if a.get("long_answer")],
            answer_annotations=[[p["short_answers"] for p in pairs]],
            interpretations=[p["question"] for p in pairs],
            gold_titles=list(dict.fromkeys(titles)), ambiguous=len(pairs) > 1,
        ))
    return examples


def load_ambignq(path: str | Path) -> list[Example]:
    """AmbigNQ light: annotations are singleAnswer or multipleQAs; ambiguous when any is multi."""
    examples = []
    for item in _read_json(path):
        annotations, pairs = [], []
        for annotation in item["annotations"]:
            if annotation["type"] == "multipleQAs":
                qa = [{"question": p["question"], "short_answers": _groups(p["answer"])} for p in annotation["qaPairs"]]
                annotations.append([p["short_answers"] for p in qa])
                pairs = pairs or qa
            else:
                annotations.append([_groups(annotation["answer"])])
        pairs = pairs or [{"question": item["question"], "short_answers": annotations[0][0]}]
        examples.append(Example(
            id=str(item["id"]), question=item["question"], qa_pairs=pairs, answer_annotations=annotations,
            interpretations=[p["question"] for p in pairs],
            ambiguous=any(a["type"] == "multipleQAs" for a in item["annotations"]),
        ))
    return examples


_CITED = re.compile(r"^(\d+)\.\s")


def load_condambigqa(path: str | Path) -> list[Example]:
    """CondAmbigQA (`mcaqa.json`): 20 given passages per question (the fixed universe),
    conditions with ground-truth answers, and citations `"N. title"` into those passages."""
    examples = []
    for item in _read_json(path):
        qid = str(item["id"])
        passages = [{"id": f"{qid}:{n}", "title": c.get("title", ""), "text": c.get("text", "")}
                    for n, c in enumerate(item["ctxs"], 1)]
        cited = []
        for prop in item["properties"]:
            for citation in prop.get("citations") or []:
                if (match := _CITED.match(citation.get("title", ""))) and 1 <= int(match.group(1)) <= len(passages):
                    cited.append(passages[int(match.group(1)) - 1]["id"])
        examples.append(Example(
            id=qid, question=item["question"],
            long_answers=[" ".join(" ".join(_groups(p.get("groundtruth") or [])) for p in item["properties"])],
            interpretations=[p["condition"] for p in item["properties"]],
            gold_passage_ids=list(dict.fromkeys(cited)), ambiguous=len(item["properties"]) > 1, passages=passages,
        ))
    return examples


def load_msmarco(path: str | Path) -> list[Example]:
    """MS MARCO ambiguous queries: intents with answers, and the query's own passages (used as
    its fixed universe; the selected ones are gold)."""
    examples = []
    for item in _read_json(path):
        qid = str(item.get("query_id") or item["item_id"])
        answerable = [(intent, answer) for intent, answer, ok in
                      zip(item["intents"], item["answers"], item.get("is_answerable") or []) if ok == 1 and answer]
        passages = [{"id": f"{qid}:{n}", "title": p.get("url", ""), "text": p["passage_text"]}
                    for n, p in enumerate(item["passages"], 1)]
        well_formed = [a for a in item.get("wellFormedAnswers") or [] if a]
        examples.append(Example(
            id=qid, question=item["query"],
            qa_pairs=[{"question": intent, "short_answers": [answer]} for intent, answer in answerable],
            long_answers=[" ".join(well_formed)] if well_formed else [],
            interpretations=[intent for intent, _ in answerable],
            gold_passage_ids=[p["id"] for p, raw in zip(passages, item["passages"]) if raw.get("is_selected")],
            ambiguous=item.get("is_ambiguous"), passages=passages,
        ))
    return examples


def load_jsonl(path: str | Path) -> list[Example]:
    """Generic JSONL, one question a line: `id`, `question`, and any of `answers` (strings, or
    lists of variants), `qa_pairs` [{question, short_answers}], `interpretations` (strings or
    {question, answers}), `long_answers`, `ambiguous`, `gold_titles`, `gold_passage_ids`, `passages`."""
    examples = []
    for number, item in enumerate(_read_json(path), 1):
        if not isinstance(item, dict) or not item.get("id") or not item.get("question"):
            raise InputError(f"{path}: line {number} needs `id` and `question`")
        pairs = [{"question": p.get("question", item["question"]), "short_answers": _groups(p["short_answers"])}
                 for p in item.get("qa_pairs") or []]
        interpretations = []
        for entry in item.get("interpretations") or []:
            if isinstance(entry, dict):
                interpretations.append(entry["question"])
                if entry.get("answers") and not item.get("qa_pairs"):
                    pairs.append({"question": entry["question"], "short_answers": _groups(entry["answers"])})
            else:
                interpretations.append(str(entry))
        if not pairs:
            pairs = [{"question": item["question"], "short_answers": _groups(a)} for a in item.get("answers") or []]
        long_answers = item.get("long_answers") or ([item["long_answer"]] if item.get("long_answer") else [])
        examples.append(Example(
            id=str(item["id"]), question=item["question"], qa_pairs=pairs, long_answers=list(long_answers),
            answer_annotations=[[p["short_answers"] for p in pairs]] if pairs else [],
            interpretations=interpretations or [p["question"] for p in pairs if len(pairs) > 1],
            gold_titles=list(item.get("gold_titles") or []), gold_passage_ids=list(item.get("gold_passage_ids") or []),
            ambiguous=item.get("ambiguous"), passages=item.get("passages"),
        ))
    return examples


def load_fixture(path: str | Path) -> list[Example]:
    """The project's labelled fixtures (`agent/data/demo_questions.json`, the test-only
    `heldout_questions.json`, the tune fixture): each question's labelled senses, with their
    sub-question and short answer, and whether it is ambiguous."""
    data = _read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("questions"), list):
        raise InputError(f"{path}: a fixture holds {{\"questions\": [...]}}")
    labels = _corpus_senses(Path(path).expanduser())
    examples = []
    for item in data["questions"]:
        senses = item.get("interpretations") or []
        pairs = [{"question": s["question"], "short_answers": _groups(s["answer"]),
                  "sense": f"{item.get('topic', '')}/{s.get('sense', '')}"} for s in senses]
        examples.append(Example(
            id=str(item["id"]), question=item["question"], qa_pairs=pairs,
            answer_annotations=[[p["short_answers"] for p in pairs]] if pairs else [],
            interpretations=[p["question"] for p in pairs], gold_passage_ids=list(item.get("answer_passages") or []),
            ambiguous=item.get("label") == "ambiguous", passage_senses=labels or None,
        ))
    return examples


def load_manuals(path: str | Path) -> list[Example]:
    """The manuals benchmark (bench/fixtures/manuals_questions.json): each question's senses are
    products, each with the short answers its documents write; a sense's question names its
    product (as the simulated user would restate it)."""
    data = _read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("products"), dict) or not isinstance(data.get("questions"), list):
        raise InputError(f"{path}: the manuals benchmark holds {{\"products\": {{...}}, \"questions\": [...]}}")
    names = {key: entry.get("name") or key for key, entry in data["products"].items()}
    examples = []
    for item in data["questions"]:
        pairs = [{"question": f"{item['question']} ({names.get(s['product'], s['product'])})",
                  "short_answers": _groups(s["answers"]), "sense": s["product"],
                  "product": names.get(s["product"], s["product"])} for s in item.get("senses") or []]
        examples.append(Example(
            id=str(item["id"]), question=item["question"], qa_pairs=pairs,
            answer_annotations=[[p["short_answers"] for p in pairs]] if pairs else [],
            interpretations=[p["question"] for p in pairs] if len(pairs) > 1 else [],
            ambiguous=bool(item.get("ambiguous")), split=item.get("split"),
        ))
    return examples


def load_conversations(path: str | Path) -> list[Example]:
    """Labelled multi-turn conversations (bench/fixtures/manuals_conversations.json, run turn by
    turn by agent/evaluation/multi_turn.py), {"conversations": [{id, split, kind, turns: [{question,
    product, answers, rewrite, kind}]}]}: one Example per conversation, its first question as `question`, its last turn's answers as
    its QA pair (what the conversation ends on), the turns in `turns`."""
    data = _read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("conversations"), list):
        raise InputError(f"{path}: a conversations file holds {{\"conversations\": [...]}}")
    examples = []
    for item in data["conversations"]:
        turns = item.get("turns") or []
        if len(turns) < 2 or not all(t.get("question") and t.get("product") for t in turns):
            raise InputError(f"{path}: conversation {item.get('id')} needs two or more turns with question and product")
        last = turns[-1]
        examples.append(Example(
            id=str(item["id"]), question=turns[0]["question"], split=item.get("split"), turns=turns,
            qa_pairs=[{"question": last.get("rewrite") or last["question"], "short_answers": list(last["answers"]),
                       "sense": last["product"]}],
        ))
    return examples


def _corpus_senses(questions: Path) -> dict[str, str]:
    """passage id -> "topic/sense" from the corpus beside a fixture (x_questions.json ->
    x_corpus.jsonl), when it is there and labels its passages."""
    corpus = questions.with_name(questions.name.replace("questions", "corpus")).with_suffix(".jsonl")
    if corpus == questions or not corpus.is_file():
        return {}
    rows = _read_json(corpus)
    return {str(r["id"]): f"{r.get('topic', '')}/{r.get('sense', '')}" for r in rows
            if isinstance(r, dict) and r.get("sense")}


LOADERS: dict[str, Callable[[str | Path], list[Example]]] = {
    "fixture": load_fixture,
    "asqa": load_asqa,
    "ambignq": load_ambignq,
    "condambigqa": load_condambigqa,
    "msmarco": load_msmarco,
    "jsonl": load_jsonl,
    "manuals": load_manuals,
    "conversations": load_conversations,
}


def read_ids(path: str | Path) -> list[str]:
    """Ids one a line (blank lines and `#` comments ignored)."""
    path = Path(path).expanduser()
    if not path.is_file():
        raise InputError(f"id list not found: {path}")
    return [line.strip() for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip() and not line.startswith("#")]


def load_dataset(
    name: str, path: str | Path, *, ids: list[str] | None = None, sample: int | None = None,
    seed: int = 0, limit: int | None = None, split: str | None = None,
) -> list[Example]:
    """Load a dataset and select: the `split` (tune or test, where the dataset has one), the ids
    listed (in the file's order), then a seeded sample of `sample` of them, then the first `limit`."""
    if name not in LOADERS:
        raise InputError(f"unknown dataset {name!r}; choose one of: {', '.join(LOADERS)}")
    examples = LOADERS[name](path)
    if split:
        if not any(e.split for e in examples):
            raise InputError(f"{path} has no tune/test split to select {split!r} from")
        examples = [e for e in examples if e.split == split]
    if ids is not None:
        by_id = {e.id: e for e in examples}
        missing = list(dict.fromkeys(i for i in ids if i not in by_id))
        if missing:
            shown = ", ".join(missing[:5]) + (", ..." if len(missing) > 5 else "")
            raise InputError(f"{len(missing)} of the {len(set(ids))} listed ids are not in {path}: {shown}")
        examples = [by_id[i] for i in dict.fromkeys(ids) if i in by_id]
    if sample is not None and sample < len(examples):
        examples = random.Random(seed).sample(examples, sample)
    if limit is not None:
        examples = examples[:max(limit, 0)]
    return examples
