"""auto's one model call when several products answer: a line per product, from that product's
passages alone, each kept only where its own product's cited passage holds it.

Vanilla's prompt over the top k hands the model the passages of whichever product ranks first,
and a small model then answers for that one. Here each product that answers (`products`, set
by the gate) brings its best passages under its name, and the model writes one line each
(prompts/write_product_lines.md). A line stands when it passes the checks every model sentence
passes (agent/assembly/checks.py) and cites a passage of the product it speaks for.
"""

from __future__ import annotations

from langgraph.runtime import Runtime
from pydantic import Field

from agent.assembly.checks import LINE_LEAD, model_sentences
from agent.assembly.compose import reading_text
from agent.context import Context
from agent.llm.answers import cited_numbers
from agent.llm.calls import generate_structured
from agent.llm.prompts import CITATION_MARKER, CLOSE_DATA, OPEN_DATA, as_data, format_passage
from agent.llm.schemas import OrderedModel
from agent.retrieval.products import product_key
from agent.retrieval.retriever import get_retriever
from agent.steps.clarify import offered_senses
from agent.usage import tracked

LINE_PASSAGES = 2  # a product's best passages the model reads: the per-document pool holds about as many
LINE_CHARS = 600  # of a passage shown: its lead and the command or setting after it
LINE_TOKENS = 70  # completion tokens per product's line


class ProductLine(OrderedModel):
    product: str = Field(description="the product, as its name is given")
    line: str = Field(description="one sentence answering for that product, citing its passage")


class ProductLines(OrderedModel):
    lines: list[ProductLine] = Field(default_factory=list)


def product_passages(pool: list[dict], products: list[str]) -> dict[str, list[dict]]:
    """{product: its best LINE_PASSAGES passages of the pool}, in the order of `products`."""
    wanted = {product_key(name): name for name in products}
    found: dict[str, list[dict]] = {name: [] for name in products}
    for passage in pool:
        name = wanted.get(product_key(passage.get("product") or ""))
        if name and len(found[name]) < LINE_PASSAGES:
            found[name].append(passage)
    return {name: passages for name, passages in found.items() if passages}


def unread_products(state: dict) -> list[str]:
    """The products the gate passes (`products`) that no reading answers for yet; a reading's
    sense is its product (compose.sense_name). A reading's unit is the ranker's choice among all of
    its product's documents; a line for the same product is written from the pool's best passages,
    which seldom hold that unit, and mostly describes or restates (on the tune questions the second
    sentence for a product was the imprecise one). A product the model's check held back is offered,
    not stated (`decision.offered`, agent/assembly/product_gate.py `answers`): the model said its
    best units do not answer, so no line is written for it either."""
    read = {product_key(reading.get("sense") or "") for reading in state.get("readings") or []}
    held_back = {product_key(item.get("sense") or "") for item in offered_senses(state.get("decision"))}
    return [name for name in state.get("products") or [] if product_key(name) not in read | held_back]


def products_block(groups: dict[str, list[dict]], numbered: list[dict]) -> str:
    """Each product's name, then its passages numbered as the answer numbers them, as data."""
    number = {p["id"]: n for n, p in enumerate(numbered, 1)}
    blocks = [f"{as_data(name)}:\n" + "\n".join(f"[{number[p['id']]}] {format_passage(p, LINE_CHARS)}" for p in group)
              for name, group in groups.items()]
    return f"{OPEN_DATA}\n" + "\n\n".join(blocks) + f"\n{CLOSE_DATA}"


def checked_lines(lines: list[ProductLine], groups: dict[str, list[dict]], numbered: list[dict], question: str,
                  embed) -> tuple[list[str], list[dict], list[dict]]:
    """(lines that stand, as stated; their interpretations; the dropped, with why). A line stands
    when the model sentence checks keep it, it cites only its own product's passages and no
    earlier sentence stands for its product; it is then stated as a reading is ("For <product>,
    ... [n].")."""
    by_key = {product_key(name): name for name in groups}
    kept, interpretations, dropped = [], [], []
    stated: set[str] = set()  # the products a line already stands for: one line each
    for item in lines:
        name = by_key.get(product_key(item.product))
        if name is None:
            dropped.append({"sentence": item.line, "reason": f"names no product that answers ({item.product})"})
            continue
        own = {n for n, p in enumerate(numbered, 1) if p in groups[name]}
        for sentence in model_sentences(item.line, numbered, question, embed, dropped):
            cited = {n for n in cited_numbers(sentence) if 1 <= n <= len(numbered)}
            if name in stated:  # a small model runs on, restating or drifting to the next option
                dropped.append({"sentence": sentence, "reason": f"a second line for {name}"})
                continue
            if not cited or not cited <= own:
                dropped.append({"sentence": sentence, "reason": f"cites no passage of {name}"})
                continue
            stated.add(name)
            passage = numbered[min(cited) - 1]
            bare = CITATION_MARKER.sub("", sentence).replace(" .", ".").strip()
            bare = own_lead(bare, {name, item.product})  # the answer writes "For <product>, " itself
            kept.append(reading_text(bare, passage, numbered))
            interpretations.append({"question": f"{question.strip().rstrip('?')} ({name})?", "answer": bare,
                                    "citations": [passage["id"]]})
    return kept, interpretations, dropped


def own_lead(line: str, names: set[str]) -> str:
    """The line without the "For <product>, " a model copies from the answer's form ("For curl, To
    skip ..."): reading_text writes that lead-in as every reading's, its next word in case."""
    lead = LINE_LEAD.match(line)
    if lead.group("product") and product_key(lead.group("product")) in {product_key(name) for name in names}:
        rest = line[lead.end():]
        return rest[:1].upper() + rest[1:]
    return line


@tracked
def write_product_lines(state: dict, runtime: Runtime[Context]) -> dict:
    """One call writes a line per product that answers and has no reading yet, from its passages;
    the lines that stand are the answer's prose (`prose`), beside the readings already on screen."""
    context = runtime.context
    question = state["question"]
    pool = state.get("detection_passages") or state.get("passages") or []
    groups = product_passages(pool, unread_products(state))
    numbered = list(state.get("passages") or [])
    numbered += [p for group in groups.values() for p in group if p["id"] not in {q["id"] for q in numbered}]
    reply = generate_structured(context, ProductLines, "write_product_lines",
                                max_tokens=max(context.max_answer_tokens, LINE_TOKENS * len(groups)),
                                question=question, products=products_block(groups, numbered)) if groups else None
    lines = reply.lines if reply is not None else []
    kept, interpretations, dropped = checked_lines(lines, groups, numbered, question,
                                                   get_retriever(context).embed_queries)
    return {"draft": " ".join(item.line for item in lines), "prose": kept, "dropped_sentences": dropped,
            "draft_interpretations": interpretations, "passages": numbered,
            "decision": {"product_lines": {"products": list(groups), "written": len(lines), "kept": len(kept)}}}
