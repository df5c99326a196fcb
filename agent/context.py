"""Run-time knobs shared by every graph, editable per run in LangGraph Studio.

Precedence: an explicit run context > environment variables > the defaults below.
The environment is read when a Context is created, never at import time.
"""

from __future__ import annotations

import functools
import os
import typing
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Literal

from platformdirs import user_cache_dir, user_data_dir

APP_NAME = "disambig"


def _env(name: str, default: Any = None) -> Any:
    value = os.environ.get(name)
    return default if value in (None, "") else value


def default_model() -> str:
    """`DISAMBIG_MODEL`, else an OpenAI-compatible API when one is configured, else `local`."""
    if model := _env("DISAMBIG_MODEL"):
        return model
    if _env("OPENAI_BASE_URL") or _env("OPENAI_API_KEY"):
        return "openai:" + _env("OPENAI_MODEL", "gpt-4o-mini")
    return "local"


def default_index_dir() -> str:
    """`DISAMBIG_INDEX`, else `index` in the per-user data directory (`~/.local/share/disambig` on Linux)."""
    return _env("DISAMBIG_INDEX") or str(Path(user_data_dir(APP_NAME)) / "index")


def cache_dir() -> Path:
    """Where assembled model weights and tokenizer files live (`DISAMBIG_CACHE`)."""
    return Path(_env("DISAMBIG_CACHE") or user_cache_dir(APP_NAME))


def _env_field(name: str, default: Any, cast=str, description: str = "") -> Any:
    return field(
        default_factory=lambda: cast(_env(name, default)),
        metadata={"description": f"{description} (env {name})"},
    )


AnswerLength = Literal["long", "short"]  # the synthesis's prose; a departure (PROFILES below)


@functools.cache
def choices(cls: type) -> dict[str, tuple]:
    """{setting: allowed values} for every setting of `cls` typed as a Literal."""
    hints = typing.get_type_hints(cls)
    return {f.name: typing.get_args(hints[f.name]) for f in fields(cls)
            if typing.get_origin(hints.get(f.name)) is Literal}


@dataclass(kw_only=True)
class Context:
    """Settings every method reads. Method-specific knobs live in subclasses.

    A context remembers which settings were given explicitly (`explicit`): when one method
    runs another, only those carry over, so the inner method's own defaults win otherwise."""

    def __new__(cls, *args: Any, **given: Any) -> "Context":
        self = super().__new__(cls)
        object.__setattr__(self, "_explicit", frozenset(given))
        return self

    model: str = field(
        default_factory=default_model,
        metadata={"description": "Chat model: local, local-small, gguf:PATH or openai:NAME (env DISAMBIG_MODEL)"},
    )
    index_dir: str = field(
        default_factory=default_index_dir,
        metadata={"description": "Index directory (env DISAMBIG_INDEX)"},
    )
    chroma_url: str = _env_field("DISAMBIG_CHROMA_URL", "", str, "Chroma server URL; empty uses the embedded store")
    index_url: str = _env_field(
        "DISAMBIG_INDEX_URL", "", str, "PostgreSQL (pgvector) URL holding the index instead of index_dir; empty: embedded"
    )
    read_url: str = _env_field("DISAMBIG_INDEX_READ_URL", "", str,
                               "Comma-separated read replicas of index_url for searches (the primary is the fallback)")
    embedding_model: str = _env_field(
        "DISAMBIG_EMBEDDINGS", "minilm", str, "minilm (packaged all-MiniLM-L6-v2) or openai:NAME"
    )
    retrieval_mode: Literal["dense", "sparse", "hybrid"] = _env_field(
        "DISAMBIG_RETRIEVAL", "hybrid", str, "Retriever: dense, sparse or hybrid (RRF)"
    )
    k: int = field(default=5, metadata={"description": "Passages retrieved per query"})
    document_quota: int = field(default=2, metadata={
        "description": "auto and adf, over passages read from files: each document adds at most this many of its "
                       "best to a question's pool before any adds more, so every manual that answers is in it "
                       "(0: the plain ranking)"})
    answer_style: Literal["checked", "template"] = _env_field(
        "DISAMBIG_ANSWER_STYLE", "checked", str,
        "Final answer: the model's checked sentences plus one per reading they miss (checked), or readings only (template)",
    )
    # answer assembly (agent/assembly/): the learned reading selector and its thresholds
    max_readings: int = field(default=4, metadata={"description": "Extractive readings stated at most (0: none; 4 chosen on the tune splits, see the selector card)"})
    reading_threshold: float = field(
        default=0.0, metadata={"description": "Selector probability a reading needs; 0 uses the shipped model's threshold"})
    confident_threshold: float = field(
        default=0.8, metadata={"description": "Probability a reading needs when the question was judged clear"})
    prose_floor: float = field(default=0.1, metadata={
        "description": "Selector probability a model sentence needs to stay beside readings (0: no floor; 0.1 "
                       "chosen on the tune splits, see agent/data/selector_card.md)"})
    reading_scorer: Literal["reader", "logistic"] = field(default="reader", metadata={
        "description": "What judges whether a sentence answers the question: reader (the trained answer-sentence "
                       "reader's probability beside the selector's features, for the readings, the model sentences' "
                       "floor, the gate's count of confident senses and the gap notes; card: "
                       "agent/data/reader_card.md) or logistic (the selector's hand features alone)"})
    reader_candidates: int = field(default=30, metadata={
        "description": "reading_scorer=reader: the reader reads the selector's best this many sentences of the pool "
                       "(0: every one; each costs reader time)"})
    reader_floor: float = field(default=0.0, metadata={
        "description": "reading_scorer=reader: the reader's probability a sentence needs to be stated, a reading or a "
                       "model sentence, and a sense's reading to count as confident for the gate, there at least 0.95 "
                       "(0: the shipped reader's threshold)"})
    check_units: int = field(default=4, metadata={
        "description": "Over manuals: the model checks this many of the best units of each product that answers "
                       "or is offered (of the one product, over one product's), one 1-token request each; the best "
                       "mix of its check and the unit ranker speaks for the product, and the check moves a product "
                       "the gate is unsure of across it (0: the ranker and gate alone; auto's instant budget never "
                       "checks)"})
    judge_per_passage: int = field(default=1, metadata={
        "description": "Sentences of one passage the judge may read among its judge_readings candidates (1: each "
                       "passage's best by the selector)"})
    judge_readings: int = field(default=0, metadata={
        "description": "Ambiguous questions: the model judges this many best candidate readings (those between "
                       "judge_min and judge_max), one short request each, and its judgment is mixed with the "
                       "selector's (0: off, except that auto's thorough budget judges 6; set, it applies in any budget, "
                       "instant included)"})
    judge_weight: float = field(default=0.6, metadata={
        "description": "Weight of the model's judgment against the selector's probability (logits) when judging "
                       "(0.6 and judge_threshold 0.5 chosen on the tune splits)"})
    judge_threshold: float = field(default=0.5, metadata={
        "description": "Mixed probability a judged reading needs (judge_readings > 0)"})
    judge_min: float = field(default=0.1, metadata={
        "description": "Selector probability from which a candidate is judged: a less likely one is not stated anyway"})
    judge_max: float = field(default=0.6, metadata={
        "description": "Selector probability up to which a candidate is judged: a surer one keeps the selector's "
                       "(0.1 to 0.6 judged as well as 0 to 1 on the tune splits, with half the requests)"})
    temperature: float = field(default=0.0, metadata={"description": "Sampling temperature"})
    max_tokens: int = field(default=700, metadata={"description": "Completion token cap per LLM call"})
    max_answer_tokens: int = field(default=250, metadata={
        "description": "Completion token cap of the synthesis call (readings + prose): bounds the wait and a loop"})
    compress_passages: bool = field(default=True, metadata={
        "description": "Send the synthesis prompt only each passage's first sentence and those bearing on the question"})
    answer_length: AnswerLength = field(default="short", metadata={  # paper methods default to "long" (PROFILES)
        "description": "Synthesis prose: long (a long-form answer, as the papers wrote it) or short (a sentence per "
                       "interpretation, the product's)"})
    concurrency: int = _env_field("DISAMBIG_CONCURRENCY", 4, int, "Parallel LLM calls at most")
    request_timeout: float = _env_field("DISAMBIG_TIMEOUT", 120.0, float, "Seconds per LLM request")
    max_retries: int = _env_field("DISAMBIG_MAX_RETRIES", 2, int, "Retries per LLM request (5xx, timeouts)")
    structured_output: Literal["json_schema", "json_object", "prompt"] = _env_field(
        "DISAMBIG_STRUCTURED", "json_schema", str, "How JSON answers are requested from the server"
    )
    local_threads: int = _env_field("DISAMBIG_LLM_THREADS", os.cpu_count() or 2, int, "llama.cpp threads")
    local_ctx_size: int = _env_field("DISAMBIG_LLM_CTX", 8192, int, "llama.cpp context size per parallel slot (tokens)")
    local_parallel: int = _env_field("DISAMBIG_LLM_PARALLEL", 4, int, "llama.cpp parallel slots")

    def __post_init__(self) -> None:
        """An enumerated setting with a value outside its choices is an InputError (a typo
        must not silently fall back to some default behaviour)."""
        from agent.errors import InputError

        for name, allowed in choices(type(self)).items():
            value = getattr(self, name)
            if value not in allowed:
                raise InputError(f"setting {name}={value!r} is not one of: {', '.join(map(str, allowed))}")

    @property
    def explicit(self) -> dict[str, Any]:
        """The settings given explicitly when this context was made (not left at their default)."""
        names = getattr(self, "_explicit", frozenset())
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name in names}

    def replace(self, **changes: Any) -> "Context":
        """A copy with some fields changed (unknown names raise TypeError); what was explicit
        stays explicit, and the changed settings become explicit."""
        copy = type(self)(**{**self.explicit, **changes})
        for f in fields(self):  # settings left at their default keep this context's value (env read once)
            if f.name not in copy._explicit:
                object.__setattr__(copy, f.name, getattr(self, f.name))
        return copy


def make_context(cls: type[Context] = Context, overrides: dict[str, Any] | None = None) -> Context:
    """Build a context of `cls`, keeping only the overrides that are not None."""
    given = {key: value for key, value in (overrides or {}).items() if value is not None}
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(given) - known)
    if unknown:
        from agent.errors import InputError

        raise InputError(f"unknown setting(s) for {cls.__name__}: {', '.join(unknown)}")
    return cls(**given)


# Where a method named after a paper departs from it for the product's sake. Each departure is a
# setting: the paper profile runs the method as published, the product profile as the product
# ships it (`auto`'s DIVA, `disambig eval --profile product`). One table, so a reader finds every
# departure, its values and both defaults here.
Profile = Literal["paper", "product"]
Readings = Literal["off", "on"]
VerifyCalls = Literal["per_interpretation", "batched"]
ADFCalls = Literal["per_cluster", "batched"]
PROFILES: dict[str, dict[str, str]] = {
    "paper": {"readings": "off", "verify_calls": "per_interpretation", "adf_calls": "per_cluster",
              "answer_length": "long"},
    "product": {"readings": "on", "verify_calls": "batched", "adf_calls": "batched", "answer_length": "short"},
}
DEPARTURES: dict[str, str] = {
    "readings": "State extractive readings of the method's passages first, streamed before its synthesis call, "
                "then the synthesis's new sentences (on), or the method's synthesis alone (off, as published)",
    "verify_calls": "Verification: one Yes/No call per pseudo-interpretation, in parallel (per_interpretation, as "
                    "published), or one call over all of them (batched: the passages are sent once)",
    "adf_calls": "ADF: one call per cluster for its sub-question and one per sub-question for its HyDE passage "
                 "(per_cluster, as published), or one call writing them all (batched)",
    "answer_length": "The synthesis's prose: a long-form answer of a few sentences contrasting the interpretations "
                     "(long, as published, prompts/synthesize_long_answer.md, capped by max_tokens), or a sentence "
                     "per interpretation (short, prompts/synthesize_answer.md, capped by max_answer_tokens)",
}


def departure(name: str, profile: Profile) -> Any:
    """The dataclass field of departure `name`, defaulting to `profile`'s value."""
    return field(default=PROFILES[profile][name], metadata={
        "description": f"{DEPARTURES[name]}; paper: {PROFILES['paper'][name]}, product: {PROFILES['product'][name]}"})


def profile_settings(profile: str, schema: type) -> dict[str, str]:
    """The departures `schema` has, set as `profile` sets them (InputError for an unknown profile)."""
    if profile not in PROFILES:
        from agent.errors import InputError

        raise InputError(f"profile must be one of: {', '.join(PROFILES)}, not {profile!r}")
    names = {f.name for f in fields(schema)}
    return {name: value for name, value in PROFILES[profile].items() if name in names}
