"""Shapes of the structured answers we ask models for (validated, then turned into dicts).

Parsing is lenient (optional lists default to empty), but the JSON schema sent to the server
lists every property as required: llama.cpp's grammar emits required properties first, in
order, so this keeps the fields in the order that helps small models reason.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field


def _all_required(schema: dict) -> None:
    schema["required"] = list(schema.get("properties", {}))


class OrderedModel(BaseModel):
    """A structured answer whose fields the model must produce in declaration order."""

    model_config = ConfigDict(json_schema_extra=_all_required)


def grammar_cap(characters: int) -> dict:
    """A length cap sent in the JSON schema (llama.cpp turns it into grammar, so small models
    cannot copy whole passages into a field) but not enforced when parsing other servers' replies."""
    return {"maxLength": characters}


QUESTION_CAP, ANSWER_CAP = 200, 150  # characters of an interpretation's fields (the grammar cuts a longer one)


class CitedInterpretation(OrderedModel):
    question: str = Field(description="the question, rewritten to mean exactly one thing",
                          json_schema_extra=grammar_cap(QUESTION_CAP))
    answer: str = Field(description="a short answer taken from the passages", json_schema_extra=grammar_cap(ANSWER_CAP))
    citations: list[int] = Field(default_factory=list, description="numbers of the supporting passages")


class Synthesis(OrderedModel):
    interpretations: list[CitedInterpretation] = Field(default_factory=list, max_length=6)
    # the length cap becomes part of the grammar on llama.cpp, so small models cannot ramble on
    answer: str = Field(max_length=1500, description="long-form answer covering every interpretation, citing [n]")


def parse_yes_no(value: Any) -> Any:
    """"Yes"/"No" from the spellings models use (`yes`, `NO.`, `Yes, because ...`, true/false);
    anything else is left as it is, so validation fails and the call is retried."""
    words = str(value).strip().split(maxsplit=1)
    word = words[0].strip(".,;:!\"'").casefold() if words else ""
    return {"yes": "Yes", "true": "Yes", "no": "No", "false": "No"}.get(word, value)


YesNo = Annotated[Literal["Yes", "No"], BeforeValidator(parse_yes_no)]  # the one Yes/No answer type


class Supported(BaseModel):  # grounding check and LLM judge (no docstring: it would go into the JSON schema)
    supported: YesNo
