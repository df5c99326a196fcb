"""Shapes of the structured answers we ask models for (validated, then turned into dicts).

Parsing is lenient (optional lists default to empty), but the JSON schema sent to the server
lists every property as required: llama.cpp's grammar emits required properties first, in
order, so this keeps the fields in the order that helps small models reason.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field


def _all_required(schema: dict) -> None:
    schema["required"] = list(schema.get("properties", {}))


class OrderedModel(BaseModel):
    """A structured answer whose fields the model must produce in declaration order."""

    model_config = ConfigDict(json_schema_extra=_all_required)


def _grammar_cap(characters: int) -> dict:
    """A length cap sent in the JSON schema (llama.cpp turns it into grammar, so small models
    cannot copy whole passages into a field) but not enforced when parsing other servers' replies."""
    return {"maxLength": characters}


class CitedInterpretation(OrderedModel):
    question: str = Field(description="the question, rewritten to mean exactly one thing",
                          json_schema_extra=_grammar_cap(200))
    answer: str = Field(description="a short answer taken from the passages", json_schema_extra=_grammar_cap(150))
    citations: list[int] = Field(default_factory=list, description="numbers of the supporting passages")


class Synthesis(OrderedModel):
    # a short note per passage first: small models then notice that passages differ in meaning
    passage_meanings: list[Annotated[str, Field(json_schema_extra=_grammar_cap(80))]] = Field(
        default_factory=list, max_length=30, description="per passage: its meaning in a few words")
    interpretations: list[CitedInterpretation] = Field(default_factory=list, max_length=8)
    # the length cap becomes part of the grammar on llama.cpp, so small models cannot ramble on
    answer: str = Field(max_length=1500, description="long-form answer covering every interpretation, citing [n]")
