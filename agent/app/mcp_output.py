"""What the MCP tools return: typed models, so each tool publishes an output schema a host can
read, and the answer object of `disambig ask --json` cut to them."""

from pydantic import BaseModel, Field

PASSAGE_URI = "passage://{passage_id}"


class Source(BaseModel):
    n: int = Field(description="the number the answer's [n] markers use")
    id: str
    title: str
    citation: str = Field(description="where it stands: document, page, section (or the title)")
    document: str | None = None
    section: str | None = None
    page: int | None = None
    uri: str = Field(description="the passage as a resource")


class Reading(BaseModel):
    question: str = Field(description="the question as this reading understands it")
    answer: str
    citations: list[str] = Field(description="ids of the passages that support it")


class AskOutput(BaseModel):
    question: str
    method: str
    answer: str = Field(description="the answer, citing sources as [n]")
    readings: list[Reading] = Field(description="each interpretation the documents support")
    sources: list[Source] = Field(description="the cited passages, numbered as in the answer")
    route: list[str] = Field(description="the steps the method ran")
    chosen: str | None = Field(None, description="the reading the user chose when asked, else null")


class Passage(BaseModel):
    id: str
    title: str
    text: str
    score: float | None = None
    document: str | None = None
    section: str | None = None
    page: int | None = None
    uri: str


class SearchOutput(BaseModel):
    passages: list[Passage]


def passage_uri(passage_id: str) -> str:
    """The resource address of a passage (its id percent-encoded: ids hold '/' and '#')."""
    from urllib.parse import quote

    return PASSAGE_URI.format(passage_id=quote(passage_id, safe=""))


def where(passage: dict) -> dict:
    """Where a passage read from a file stands (document, section, page); nothing for a record."""
    from agent.documents.citation import location

    return {key: value for key, value in location(passage).items() if key in ("document", "section", "page")}


def sources_of(result: dict) -> list[Source]:
    """The cited passages, numbered as the answer's markers number them."""
    from agent.documents.citation import citation

    cited = set(result["cited"])
    return [Source(n=n, id=p["id"], title=p["title"], citation=citation(p), uri=passage_uri(p["id"]), **where(p))
            for n, p in enumerate(result["passages"], 1) if p["id"] in cited]


def ask_output(result: dict, question: str, method: str, chosen: str | None = None) -> AskOutput:
    readings = [Reading(question=item["question"], answer=item["answer"], citations=list(item["citations"]))
                for item in result["interpretations"]]
    return AskOutput(question=question, method=method, answer=result["answer"], readings=readings,
                     sources=sources_of(result), route=list(result["route"]), chosen=chosen)


def readings_message(event: dict) -> str:
    """A readings event as the progress line a host shows: one cited line per reading."""
    return "\n".join(reading["text"] for reading in event.get("readings") or [])
