"""Shapes of the structured answers we ask models for (validated, then turned into dicts)."""

from __future__ import annotations

from pydantic import BaseModel, Field


class CitedInterpretation(BaseModel):
    question: str = Field(description="the question, rewritten to mean exactly one thing")
    answer: str = Field(description="a short answer taken from the passages")
    citations: list[int] = Field(description="numbers of the supporting passages")


class Synthesis(BaseModel):
    # a short note per passage first: small models then notice that passages differ in meaning
    passage_meanings: list[str] = Field(max_length=30, description="per passage, in order: what it is about")
    # required fields keep their order in llama.cpp's grammar: interpretations first, answer last
    interpretations: list[CitedInterpretation] = Field(max_length=8)
    # the length cap becomes part of the grammar on llama.cpp, so small models cannot ramble on
    answer: str = Field(max_length=1500, description="long-form answer covering every interpretation, citing [n]")
