"""Run methods over a dataset: cached per question, resumable, with bounded concurrency.

A finished question is stored at once under (method, dataset, question id, settings hash,
model), so a killed run resumes where it stopped and a repeated run recomputes nothing;
model replies go through a persistent response cache, so even a question interrupted
half-way replays the calls it had made.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import sys
import threading
import time
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from agent.context import cache_dir
from agent.errors import DisambigError, InputError, ModelUnavailableError
from agent.evaluation.conversations import conversation_metrics, summarize_conversations
from agent.evaluation.datasets import Example, load_dataset, read_ids
from agent.evaluation.multi_turn import follow_up_metrics, summarize_follow_ups
from agent.evaluation.llm_cache import ResponseStore, register_cached_model, replay_scope
from agent.evaluation.scoring import score
from agent.usage import COUNTERS

# Settings that change how fast a run goes, not what it answers: left out of the settings hash.
OPERATIONAL = {"concurrency", "request_timeout", "max_retries", "local_threads", "local_parallel", "chroma_url",
               "index_dir", "index_url", "read_url", "model"}


@dataclass
class EvalConfig:
    dataset: str
    data: str
    methods: list[str]
    out: str
    model: str = ""
    ids: str | None = None
    limit: int | None = None
    sample: int | None = None
    seed: int = 0
    index_dir: str | None = None
    index: dict[str, Any] = field(default_factory=dict)  # index flags (agent/app/index_flags.py): PostgreSQL, replicas
    retrieval_mode: str | None = None
    k: int | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    profile: str | None = None  # paper | product: the departures each method has (agent.context.PROFILES)
    concurrency: int = 1  # questions in flight at once
    cache: str | None = None
    universe: str = "auto"  # fixed: the dataset's own passages; index: the configured index
    judge_model: str | None = None
    qa_model: str | None = None
    progress: bool = True
    simulate_user: bool = False  # whole chat conversations with a simulated user (agent/evaluation/conversations.py)
    split: str | None = None  # tune or test, for datasets that split their questions


class ResultStore:
    """Finished questions, one row each; committed as each question ends."""

    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, timeout=60, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS results (method TEXT, dataset TEXT, qid TEXT, settings TEXT, "
                         "model TEXT, record TEXT NOT NULL, PRIMARY KEY (method, dataset, qid, settings, model))")
        self._lock = threading.Lock()

    def get(self, key: tuple) -> dict | None:
        with self._lock:
            row = self._db.execute("SELECT record FROM results WHERE method=? AND dataset=? AND qid=? AND settings=? "
                                   "AND model=?", key).fetchone()
        return None if row is None else json.loads(row[0])

    def put(self, key: tuple, record: dict) -> None:
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO results VALUES (?, ?, ?, ?, ?, ?)", (*key, json.dumps(record)))


MODEL_FILES = Path(__file__).resolve().parents[1] / "data"


def models_fingerprint(folder: Path = MODEL_FILES) -> str:
    """A hash of the shipped learned models (selector, gate, detector, the reader's delta and
    mix): a retrained model answers differently, so its results are not replayed."""
    from agent.llm.prompts import files_fingerprint

    return files_fingerprint(folder.glob("*.npz"))


CODE_ROOT = Path(__file__).resolve().parents[2]


def code_fingerprint(root: Path = CODE_ROOT) -> str:
    """A hash of the answering code (the Python files of agent/ and graphs/): an edited node
    answers differently under the same settings, so its results are not replayed."""
    from agent.llm.prompts import files_fingerprint

    return files_fingerprint([path for folder in ("agent", "graphs") for path in (root / folder).rglob("*.py")], root)


def settings_hash(context, universe: str) -> tuple[str, dict]:
    """(short hash, the settings it covers) for a method context, its passage universe, the
    prompt files, the learned models and the code: a finished question is reused only when all
    five are unchanged."""
    from agent.llm.prompts import prompts_fingerprint

    settings = {f.name: getattr(context, f.name) for f in fields(context) if f.name not in OPERATIONAL}
    settings["universe"] = universe
    settings["prompts"] = prompts_fingerprint()
    settings["models"] = models_fingerprint()
    settings["code"] = code_fingerprint()
    digest = hashlib.sha256(json.dumps(settings, sort_keys=True, default=str).encode()).hexdigest()[:16]
    return digest, settings


def _index_fingerprint(context) -> str:
    from agent.retrieval.retriever import open_store

    store = open_store(context)
    return f"index:{store.path if context.index_url else store.path.resolve()}@{store.generation()}"


def _method_contexts(config: EvalConfig, model_name: str) -> dict:
    """Each method's context from the `--profile` departures and `--set` settings it has (a
    setting no selected method has is an InputError) and the flags."""
    from agent.app.settings import method_context, method_schema
    from agent.context import profile_settings

    contexts, used = {}, set()
    flags = {"model": model_name, "index_dir": config.index_dir, "retrieval_mode": config.retrieval_mode,
             "k": config.k, **{name: value for name, value in config.index.items() if value is not None}}
    for method in config.methods:
        schema = method_schema(method)
        known = {f.name for f in fields(schema)}
        used.update(known & set(config.settings))
        profile = profile_settings(config.profile, schema) if config.profile else {}
        contexts[method] = method_context(method, {**profile, **config.settings, **flags}, strict=False)
    unused = sorted(set(config.settings) - used)
    if unused:
        raise InputError(f"--set {', '.join(unused)}: no selected method has such a setting")
    return contexts


def _chat_contexts(config: EvalConfig, model_name: str) -> dict:
    """`--simulate-user`: a chat context per method, the method answering each message
    (`downstream`), with `--set` applying to the chat's settings (clarify_policy, ...)."""
    from agent.app.conversation import chat_context, parse_chat_settings

    flags = {"model": model_name, "index_dir": config.index_dir, "retrieval_mode": config.retrieval_mode,
             "k": config.k, **{name: value for name, value in config.index.items() if value is not None}}
    settings = parse_chat_settings([f"{name}={value}" for name, value in config.settings.items()])
    return {method: chat_context({**settings, **flags, "downstream": method}) for method in config.methods}


def _run_question(method: str, context, example: Example, fixed: bool, simulate: int | None = None) -> dict:
    """One method on one question; returns the result object (see agent.app.api.to_result), or
    with `simulate` (the user's seed) a whole simulated conversation {"result", "conversation"}."""
    from agent.app.api import ask
    from agent.evaluation.conversations import run_conversation
    from agent.evaluation.multi_turn import run_turns
    from agent.retrieval.fixed_universe import fixed_universe

    def run(context):
        if example.turns:  # a labelled conversation, turn by turn through the chat
            return run_turns(example, context)
        if simulate is not None:
            return run_conversation(example, context, simulate)
        return ask(example.question, method, context)

    with replay_scope():
        if fixed:
            with fixed_universe(example.passages or [], context.embedding_model) as name:
                return run(context.replace(index_dir=name))
        return run(context)


def _output(result: dict) -> dict:
    passages = [{"id": p["id"], "title": p.get("title", ""), "text": p.get("text", ""), "score": p.get("score")}
                for p in result.get("passages") or []]
    return {"answer": result.get("answer", ""), "interpretations": result.get("interpretations") or [],
            "passages": passages, "cited": result.get("cited") or [], "route": result.get("route") or [], "decision": result.get("decision") or {}}


def _usage(result: dict) -> dict:
    usage = result.get("usage") or {}
    return {**{name: usage.get(name, 0) for name in COUNTERS},
            "wall_s": usage.get("wall_s", 0.0), "nodes": usage.get("nodes", {})}


def _select(config: EvalConfig) -> tuple[list[Example], bool]:
    """The questions to run, and whether their own passages replace retrieval."""
    examples = load_dataset(config.dataset, config.data, ids=read_ids(config.ids) if config.ids else None,
                            sample=config.sample, seed=config.seed, limit=config.limit, split=config.split)
    if not examples:
        raise InputError("no question selected: check --ids, --limit and --sample")
    fixed = {"auto": all(e.passages for e in examples), "fixed": True, "index": False}.get(config.universe)
    if fixed is None:
        raise InputError(f"--universe must be auto, fixed or index, not {config.universe!r}")
    if fixed and not all(e.passages for e in examples):
        raise InputError(f"dataset {config.dataset!r} gives no passages for a fixed universe; use --universe index")
    return examples, fixed


def _execute(tasks: list[tuple], work, concurrency: int, stop: threading.Event) -> None:
    """`work(*task)` for every task on `concurrency` threads; a fatal error or Ctrl-C stops
    the questions not yet started and is raised."""
    with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
        futures = [pool.submit(work, *task) for task in tasks]
        try:
            done, _ = wait(futures, return_when=FIRST_EXCEPTION)
            failure = next((f.exception() for f in done if f.exception() is not None), None)
        except BaseException:
            failure = sys.exc_info()[1]
        if failure is not None:
            stop.set()
            for future in futures:
                future.cancel()
            raise failure


def run_eval(config: EvalConfig) -> dict:
    """Run every method on every selected question, then score, write reports, return the summary."""
    from tqdm import tqdm

    from agent.context import default_model
    from agent.evaluation import extra_metrics, report

    examples, fixed = _select(config)
    extra = extra_metrics.ExtraMetrics(config.judge_model, config.qa_model)  # fails fast on a bad QA model path
    model = config.model or default_model()
    root = Path(config.cache or os.environ.get("DISAMBIG_EVAL_CACHE") or cache_dir() / "eval").expanduser()
    responses = ResponseStore(root / "llm.sqlite")
    results = ResultStore(root / "results.sqlite")
    cached_model = register_cached_model(model, responses)
    chat = config.simulate_user or any(e.turns for e in examples)  # answered through the chat graph
    contexts = (_chat_contexts if chat else _method_contexts)(config, cached_model)
    if not fixed:  # open the index once here: Chroma's first open is not safe from several threads
        from agent.retrieval.retriever import get_retriever

        get_retriever(next(iter(contexts.values()))).store.collection
    universe = "fixed" if fixed else _index_fingerprint(next(iter(contexts.values())))
    hashes = {m: settings_hash(c, universe) for m, c in contexts.items()}
    if config.simulate_user:  # a conversation depends on the user's seed too
        hashes = {m: (f"{h}:user{config.seed}", s) for m, (h, s) in hashes.items()}
    simulate = config.seed if config.simulate_user else None
    names = {m: f"chat:{m}" if chat else m for m in config.methods}

    records: dict[tuple, dict] = {}
    pending = []
    for method in config.methods:
        for example in examples:
            key = (names[method], config.dataset, example.id, hashes[method][0], model)
            cached = results.get(key)
            if cached is not None:
                records[key] = {**cached, "from_cache": True, "model_calls": 0}
            else:
                pending.append((key, method, example))
    bar = tqdm(total=len(records) + len(pending), initial=len(records), unit="q", desc="eval", file=sys.stderr,
               disable=not config.progress)
    stop = threading.Event()  # set when the run must end: later questions are not started

    def work(key, method, example) -> None:
        if stop.is_set():
            return
        before, started = responses.model_calls, time.time()
        head = {"method": names[method], "dataset": config.dataset, "id": example.id, "question": example.question,
                "model": model, "settings_hash": key[3]}
        try:
            result = _run_question(method, contexts[method], example, fixed, simulate)
        except ModelUnavailableError:
            stop.set()  # no later question can succeed either
            raise
        except (DisambigError, Exception) as error:  # one bad question must not sink the run
            records[key] = {**head, "error": f"{type(error).__name__}: {error}", "output": None, "usage": None,
                            "from_cache": False, "model_calls": None, "seconds": round(time.time() - started, 3)}
        except BaseException:  # interrupted: stop at once, as a killed process would
            stop.set()
            raise
        else:
            whole = simulate is not None or bool(example.turns)  # {"result", "conversation"}
            conversation = result.pop("conversation", None) if whole else None
            result = result["result"] if whole else result
            record = {**head, "error": None, "output": _output(result), "usage": _usage(result)}
            if conversation is not None:
                record["conversation"] = conversation
            if not record["usage"]["timeouts"]:  # a timed-out call is the machine's fault: retry next run
                results.put(key, record)
            calls = responses.model_calls - before if config.concurrency <= 1 else None
            records[key] = {**record, "from_cache": False, "model_calls": calls}
        bar.update(1)
        bar.set_postfix(model_calls=responses.model_calls, cache_hits=responses.cache_hits)

    try:
        _execute(pending, work, config.concurrency, stop)
    finally:
        bar.close()

    by_id = {e.id: e for e in examples}
    ordered = [records[(names[m], config.dataset, e.id, hashes[m][0], model)] for m in config.methods for e in examples]
    for record in ordered:
        if record["output"] is not None:
            record["metrics"] = score(by_id[record["id"]], record["output"],
                                      asked=(record.get("conversation") or {}).get("answered"))
            if by_id[record["id"]].turns:
                record["follow_ups"] = follow_up_metrics(by_id[record["id"]], record)
            elif record.get("conversation") is not None:
                record["simulated"] = conversation_metrics(by_id[record["id"]], record)
    extra.add(ordered, by_id, responses)
    run = {"model_calls": responses.model_calls, "cache_hits": responses.cache_hits,
           "questions_from_cache": sum(r["from_cache"] for r in ordered),
           "questions_run": sum(not r["from_cache"] for r in ordered), "cache_dir": str(root)}
    summary = report.summarize(ordered, config=config, model=model, settings={m: h[1] for m, h in hashes.items()},
                               hashes={m: h[0] for m, h in hashes.items()}, run=run)
    if any(e.turns for e in examples):
        summary["follow_ups"] = {names[m]: summarize_follow_ups([r for r in ordered if r["method"] == names[m]])
                                 for m in config.methods}
    elif config.simulate_user:
        summary["conversations"] = {names[m]: summarize_conversations([r for r in ordered if r["method"] == names[m]])
                                    for m in config.methods}
    report.write(config.out, ordered, summary)
    responses.close()
    return summary
