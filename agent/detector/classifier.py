"""The ambiguity detector: is this conversational query clear enough to answer as it stands?

The query-rewrite paper's NLU component: a sentence embedding of the query plus three robust-scaled numeric
features (length, referential words, Coleman-Liau) go into a linear classifier trained with
class balancing; the lexical rule then turns a "clear" into "ambiguous" when the query names
an identifier without saying what kind of object it is.

The model is a logistic regression stored as plain arrays in an `.npz` file (no pickled
classes, so it loads under any scikit-learn version, and predicting needs only numpy).

    detector = load_detector()            # the model shipped in agent/data
    detector.predict("How many do I have?")["label"]   # -> "ambiguous"
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from pathlib import Path

import numpy as np

from agent.detector.features import (
    DEFAULT_ENTITY_TYPES, lexical_ambiguity, mask_entities, numeric_features, parse_entity_types, query_length,
    referential_count,
)
from agent.errors import InputError
from agent.retrieval.arrays import open_npz

AMBIGUOUS, CLEAR = "ambiguous", "clear"
LABELS = (CLEAR, AMBIGUOUS)
DEFAULT_MODEL = "detector_model.npz"
FEATURE_NAMES = ("query_length", "referential_count", "coleman_liau")
RULES_MAX_WORDS = 2  # the rules-only baseline calls queries this short unclear ("segment?", "Why?")


def default_model_path() -> str:
    return str(resources.files("agent").joinpath("data", DEFAULT_MODEL))


def normalize_label(value: object) -> str:
    """"clear"/"ambiguous" from the spellings labelled files use (vague, unclear, 1/0, true/false)."""
    text = str(value).strip().lower()
    if text in ("ambiguous", "vague", "unclear", "1", "true", "yes", "amb"):
        return AMBIGUOUS
    if text in ("clear", "unambiguous", "0", "false", "no"):
        return CLEAR
    raise InputError(f"unknown label {value!r}: use clear or ambiguous (or vague, unclear, 0/1)")


def rules_label(text: str, entity_types: tuple[str, ...] = DEFAULT_ENTITY_TYPES) -> str:
    """The rules-only baseline: referential words, a very short query, or the lexical rule."""
    unclear = (
        referential_count(text) > 0 or query_length(text) <= RULES_MAX_WORDS or lexical_ambiguity(text, entity_types)
    )
    return AMBIGUOUS if unclear else CLEAR


class AmbiguityDetector:
    """Embedding + numeric features -> logistic regression, then the lexical-rule override."""

    def __init__(
        self, weights: np.ndarray, bias: float, center: np.ndarray, scale: np.ndarray, *,
        embedder: str = "minilm", threshold: float = 0.5, entity_types: tuple[str, ...] = DEFAULT_ENTITY_TYPES,
        lexical_rule: bool = True, metadata: dict | None = None,
    ):
        self.weights = np.asarray(weights, dtype=np.float64)
        self.bias = float(bias)
        self.center = np.asarray(center, dtype=np.float64)
        self.scale = np.asarray(scale, dtype=np.float64)
        self.embedder = embedder
        self.threshold = threshold
        self.entity_types = entity_types
        self.lexical_rule = lexical_rule
        self.metadata = metadata or {}

    def configured(self, *, entity_types=None, lexical_rule: bool | None = None, threshold: float | None = None):
        """A copy with other rule settings (the learned weights are shared)."""
        return AmbiguityDetector(
            self.weights, self.bias, self.center, self.scale, embedder=self.embedder,
            threshold=self.threshold if threshold is None else threshold,
            entity_types=parse_entity_types(entity_types) if entity_types else self.entity_types,
            lexical_rule=self.lexical_rule if lexical_rule is None else lexical_rule, metadata=self.metadata,
        )

    def features(self, texts: list[str]) -> np.ndarray:
        """Rows of [sentence embedding, robust-scaled numeric features]."""
        from agent.retrieval.embeddings import get_embedder

        embeddings = get_embedder(self.embedder).embed(list(texts)).astype(np.float64)
        numeric = np.array([numeric_features(t) for t in texts], dtype=np.float64).reshape(len(texts), -1)
        return np.hstack([embeddings, (numeric - self.center) / self.scale])

    def probabilities(self, texts: list[str]) -> np.ndarray:
        """The classifier's probability that each query is ambiguous (before the rule)."""
        if not texts:
            return np.zeros(0)
        logits = self.features(texts) @ self.weights + self.bias
        return 1.0 / (1.0 + np.exp(-logits))

    def predict_many(self, texts: list[str]) -> list[dict]:
        """One decision per query: label, probability, which layer decided, masked text."""
        decisions = []
        for text, probability in zip(texts, self.probabilities(list(texts))):
            label = AMBIGUOUS if probability >= self.threshold else CLEAR
            source = "classifier"
            if label == CLEAR and self.lexical_rule and lexical_ambiguity(text, self.entity_types):
                label, source = AMBIGUOUS, "lexical_rule"
            decisions.append({
                "label": label, "probability": round(float(probability), 4), "source": source,
                "masked": mask_entities(text),
            })
        return decisions

    def predict(self, text: str) -> dict:
        return self.predict_many([text])[0]

    def labels(self, texts: list[str]) -> list[str]:
        return [decision["label"] for decision in self.predict_many(texts)]

    def save(self, path: str | Path) -> Path:
        """Write the model as arrays plus a JSON header (loads with allow_pickle=False)."""
        path = Path(path)
        if path.suffix != ".npz":
            path = path.with_suffix(".npz")
        path.parent.mkdir(parents=True, exist_ok=True)
        header = {
            **self.metadata, "format": "disambig-detector/1", "embedder": self.embedder,
            "threshold": self.threshold, "features": list(FEATURE_NAMES), "labels": list(LABELS),
            "entity_types": list(self.entity_types), "lexical_rule": self.lexical_rule,
        }
        np.savez_compressed(
            path, weights=self.weights.astype(np.float32), bias=np.array([self.bias]),
            center=self.center, scale=self.scale, header=np.array(json.dumps(header)),
        )
        return path

    @classmethod
    def load(cls, path: str | Path) -> "AmbiguityDetector":
        path = Path(path)
        if not path.is_file():
            raise InputError(f"no detector model at {path}; train one with `disambig train-detector`")
        try:
            with open_npz(path, allow_pickle=False) as data:
                header = json.loads(str(data["header"]))
                arrays = {name: data[name] for name in ("weights", "bias", "center", "scale")}
        except (OSError, KeyError, ValueError) as error:
            raise InputError(f"{path} is not a detector model ({error})") from None
        if header.get("format") != "disambig-detector/1":
            raise InputError(f"{path} has an unknown detector format {header.get('format')!r}")
        return cls(
            arrays["weights"], float(arrays["bias"][0]), arrays["center"], arrays["scale"],
            embedder=header["embedder"], threshold=float(header["threshold"]), metadata=header,
            entity_types=parse_entity_types(header.get("entity_types")), lexical_rule=header.get("lexical_rule", True),
        )


@lru_cache(maxsize=8)
def _cached(path: str) -> AmbiguityDetector:
    return AmbiguityDetector.load(path)


def load_detector(path: str = "", entity_types: str | tuple[str, ...] = "", lexical_rule: bool = True):
    """The detector at `path` (empty: the shipped default), loaded once per process; empty
    `entity_types` keeps the ones saved with the model."""
    detector = _cached(str(Path(path).expanduser().resolve()) if path else default_model_path())
    return detector.configured(entity_types=entity_types, lexical_rule=lexical_rule)
