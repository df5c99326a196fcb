"""auto, the default method: decide per question whether it is clear or ambiguous from cheap
signals, then answer from the passages with readings chosen by a learned selector.

retrieve_for_gate (3k passages, ranked as a 2k search; over documents read from files, each
document's best first, and only a named product's: agent/retrieval/pool.py) ->
  over documents read from files, budgets "fast" and "thorough": guess_option_names (one short
              call: the option names the question asks for, which a manual's unit is ranked with;
              agent/assembly/option_guess.py) ->
assess_ambiguity
(no LLM, on the top 2k: query detector, focus of the passages on the question, years the top
titles leave open, ADF coherence for the record; agent/steps/ambiguity_signals.py; two products
that answer make it ambiguous: agent/assembly/products.py) ->
  budget "thorough" with `thorough=diva` and ambiguous: the DIVA graph as a subgraph node
              (graphs/compose.py; several calls, with the product's settings); its detail goes
              under `decision.diva`
  otherwise: select_readings (the learned selector's cited sentences from the 3k passages,
              streamed at once as a `readings` event; a clear question gets one only when the
              selector is confident; on the thorough budget an ambiguous question's best
              candidates are judged by the model first, one short request each; with
              `fast=judge` the fast budget judges those the selector is unsure of, after
              streaming the sure ones; over manuals, on the fast and thorough budgets, the model
              checks the best units of each product passed or offered, one 1-token request each,
              the best mix of its check and the unit ranker is stated, and the check moves a
              product the gate is unsure of across it: agent/assembly/unit_check.py) ->
    budget "instant", or "fast" with `fast=judge` and ambiguous:
                       compose_answer (the readings alone, no draft)
    budget "fast", "thorough": synthesize_answer (one call over the top k, vanilla's prompt) ->
                       check_sentences (the draft's sentences that stand) -> compose_answer
    budget "fast", "thorough" where two or more products answer (passages read from files):
                       write_product_lines (one call: a line for each product without a reading,
                       from its own passages, each kept when its product's cited passage holds it;
                       no call when every product has its reading) -> compose_answer
`decision` = {ambiguous, branch, interpretations_source, abstained, auto: {signals, fired, thresholds,
method}, assembly: {readings, dropped}} (+ `diva: {...}` when DIVA answered); the stream carries an
`auto_decision` event as soon as the gate has decided.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from agent.context import AnswerLength, Context, Readings, VerifyCalls, departure
from agent.errors import InputError, validate_question
from agent.retrieval.pool import document_pool, user_turns
from agent.retrieval.retriever import get_retriever
from agent.state import InputState, OutputState, Passage, RAGState, starts_turn
from agent.assembly.gate import GATE_POOL, gate_signals, load_gate
from agent.assembly.draft import check_sentences, draft_answer
from agent.assembly.nodes import compose_answer, select_readings
from agent.assembly import option_guess, product_lines
from agent.documents.citation import location
from agent.steps.ambiguity_signals import DEFAULT_THRESHOLDS, GateThresholds, is_ambiguous
from agent.usage import emit, tracked
from graphs.compose import subgraph_node
from graphs.diva import DIVASettings

Budget = Literal["instant", "fast", "thorough"]
READING_POOL = 3  # x k passages an ambiguous question's readings may come from
METHOD_FOR_BUDGET = {"instant": "extractive readings", "fast": "synthesis + extractive readings",
                     "thorough": "synthesis + judged readings"}
JUDGED = 6  # candidates the model judges (each passage's best): every one on thorough, the unsure on fast=judge
# (8 with two sentences of a passage, judge_per_passage=2, gained on tune but not on test)


@dataclass(kw_only=True)
class AutoContext(Context, DIVASettings):
    """auto's knobs: the gate's thresholds and what an ambiguous question may cost; DIVA's
    settings (the thorough budget's subgraph reads them) with the product's departures."""

    readings: Readings = departure("readings", "product")
    verify_calls: VerifyCalls = departure("verify_calls", "product")
    answer_length: AnswerLength = departure("answer_length", "product")
    budget: Budget = field(
        default="fast",
        metadata={"description": "instant (the selector's cited readings alone, no LLM call), fast (readings plus "
                                 "vanilla's one call, its sentences checked) or thorough (fast, and an ambiguous "
                                 "question's best readings judged by the model first: about 7 calls)"},
    )
    fast: Literal["draft", "judge"] = field(
        default="draft",
        metadata={"description": "What the fast budget spends its call on for an ambiguous question: draft (vanilla's "
                                 "one call over the top k, its sentences checked) or judge (no draft: of the "
                                 f"{JUDGED} best candidate readings, those the selector gives judge_min to judge_max "
                                 "are judged by the model, one 1-token request each, about 3.5 requests and 0.7x the "
                                 "draft's tokens; the surer readings stream first); a clear question gets the draft "
                                 "either way"},
    )
    thorough: Literal["judge", "diva"] = field(
        default="judge",
        metadata={"description": "What the thorough budget spends its calls on for an ambiguous question: judge "
                                 f"(the model judges the {JUDGED} best candidate readings unless "
                                 "judge_readings says how many) or diva (the DIVA graph as a subgraph: "
                                 "pseudo-interpretations, verification; less precise on the tune questions)"},
    )
    gate_detector: float = field(
        default=DEFAULT_THRESHOLDS.detector,
        metadata={"description": "Ambiguous when the query detector's probability is at least this"},
    )
    gate: Literal["learned", "rules"] = field(
        default="learned",
        metadata={"description": "learned: the gate model over the signals and the selector's view (agent/data/gate_model.npz); "
                                 "rules: the detector, focus and editions thresholds below"},
    )
    gate_threshold: float = field(
        default=0.0, metadata={"description": "Learned gate: ambiguous at this probability; 0 uses the model's threshold"})
    gate_focus: float = field(
        default=DEFAULT_THRESHOLDS.focus,
        metadata={"description": "Ambiguous when the best passage is closer to the question than the mean by less than this"},
    )
    guess_options: bool = field(
        default=True,
        metadata={"description": "Over documents read from files, on the fast and thorough budgets: one short call "
                                 "guesses the option names the question asks for (\"--force, -f\"), and a manual's "
                                 "unit is chosen with them (agent/assembly/option_guess.py); false ranks without"},
    )

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.budget not in METHOD_FOR_BUDGET:
            raise InputError(f"budget must be instant, fast or thorough, not {self.budget!r}")
        if self.thorough not in ("judge", "diva"):
            raise InputError(f"thorough must be judge or diva, not {self.thorough!r}")
        if self.budget == "instant":  # no model call in any node: no option names guessed, no unit checked
            self.guess_options, self.check_units = False, 0

    @property
    def runs_diva(self) -> bool:
        return self.budget == "thorough" and self.thorough == "diva"

    @property
    def judges_instead_of_drafting(self) -> bool:
        """The fast budget with fast=judge: an ambiguous question's readings are judged, and no draft written."""
        return (self.budget, self.fast) == ("fast", "judge")

    @property
    def judges(self) -> bool:
        """Whether an ambiguous question's readings are judged by the model (thorough, or fast=judge)."""
        return (self.budget, self.thorough) == ("thorough", "judge") or self.judges_instead_of_drafting


class AutoState(RAGState, total=False):
    detection_passages: list[Passage]  # 3k passages: the gate looks at the top 2k, readings at all
    ambiguous: bool
    readings: list[dict]  # the selector's readings, as streamed (agent/assembly/nodes.py)
    draft: str  # the model's answer before its sentences are checked
    draft_interpretations: list[dict]
    prose: list[str]  # the draft's sentences that stand
    dropped_sentences: list[dict]  # the draft's sentences that did not, with why
    reading_scores: list[float]  # the selector's probability per sentence of the pool (the gate reads them)
    products: list[str]  # the products whose passages answer, when two or more do: one reading and line each
    option_names: list[str]  # the model's guess of the option names asked for, over manuals (option_guess.py)


@tracked
def retrieve_for_gate(state: AutoState, runtime: Runtime[AutoContext]) -> dict:
    """3k passages for the question: the gate needs a wider view than the k an answer uses, and
    the readings a wider one still (on the demo fixture 2k held the answer of 89% of the labelled
    senses, 3k of 97%; sense recall 0.598 -> 0.637). Ranked with a 2k search's fusion depth,
    so the gate's 2k and the answer's k are what they were."""
    context = runtime.context
    question = validate_question(state["question"])
    wider = document_pool(get_retriever(context), question, context.retrieval_mode, READING_POOL * context.k,
                          depth=2 * GATE_POOL * context.k,  # ranked as the gate's 2k alone
                          quota=context.document_quota, conversation=user_turns(state.get("messages"), question))
    return {"detection_passages": wider, "guidance": "", "products": [], "option_names": []}


@tracked
def guess_option_names(state: AutoState, runtime: Runtime[AutoContext]) -> dict:
    """The option names the model guesses the question asks for (agent/assembly/option_guess.py):
    a manual's units are ranked with them. Only over documents read from files (manuals have
    units to name), and only on budgets that call the model."""
    guessed = option_guess.guess_option_names(state["question"], runtime.context)
    emit({"event": "option_names", "names": guessed})
    return {"option_names": guessed}


def route_after_retrieve(state: AutoState, runtime: Runtime[AutoContext]) -> Literal["guess_option_names",
                                                                                    "assess_ambiguity"]:
    context = runtime.context
    over_files = any(location(p).get("document") for p in state.get("detection_passages") or [])
    guesses = context.guess_options and not context.runs_diva
    return "guess_option_names" if over_files and guesses else "assess_ambiguity"


@tracked
def assess_ambiguity(state: AutoState, runtime: Runtime[AutoContext]) -> dict:
    """The signals and the gate's verdict (the learned gate, or the rules with `gate=rules`);
    says in the stream which way it went. The selector's scores of the pool go on to
    select_readings."""
    context = runtime.context
    pool = state.get("detection_passages") or []
    signals, scored = gate_signals(state["question"], pool, context, option_guess.guessed_names(state))
    thresholds = GateThresholds(detector=context.gate_detector, focus=context.gate_focus)
    model = load_gate() if context.gate == "learned" else None
    if model is not None:
        probability = model.probability(signals)
        threshold = context.gate_threshold if context.gate_threshold > 0 else model.threshold
        signals["gate_probability"] = round(probability, 4)
        ambiguous, fired = probability >= threshold, [f"gate {probability:.2f} >= {threshold:.2f}"]
        fired = fired if ambiguous else []
    else:
        ambiguous, fired = is_ambiguous(signals, thresholds)
    products = signals.get("products") or []
    if len(products) >= 2:  # each product is a reading, whatever the encyclopedia-trained gate says
        ambiguous, fired = True, [*fired, f"{len(products)} products answer"]
    method = "diva" if context.runs_diva else METHOD_FOR_BUDGET[context.budget]
    method = "judged readings" if context.judges_instead_of_drafting else method
    method = method if ambiguous or context.budget == "instant" else "vanilla"
    if len(products) >= 2 and method.startswith("synthesis"):
        method = method.replace("synthesis", "a line per product", 1)
    emit({"event": "auto_decision", "ambiguous": ambiguous, "method": method, "fired": fired})
    return {
        "ambiguous": ambiguous,
        "products": products if len(products) >= 2 else [],
        "reading_scores": [round(p, 5) for _, p in scored],
        "decision": {
            "ambiguous": ambiguous, "branch": "ambiguous" if ambiguous else "clear",
            "interpretations_source": "diva" if method == "diva" else "synthesis",
            "auto": {"gate": "ambiguous" if ambiguous else "clear", "signals": signals, "fired": fired,
                     "method": method, "budget": context.budget, "option_names": state.get("option_names") or [],
                     "gate_model": "learned" if model is not None else "rules",
                     "thresholds": {"detector": thresholds.detector, "focus": thresholds.focus,
                                    "editions": thresholds.editions}},
        },
    }


def route_after_assess_ambiguity(
    state: AutoState, runtime: Runtime[AutoContext]
) -> Literal["select_readings", "diva"]:
    return "diva" if state.get("ambiguous") and runtime.context.runs_diva else "select_readings"


def select_readings_for_budget(state: AutoState, runtime: Runtime[AutoContext]) -> dict:
    """select_readings; the thorough budget spends its extra calls on the model's judgment of an
    ambiguous question's best candidates, every one of them (on the tune questions DIVA's
    several calls gave less precise answers than the fast budget's one), and
    the fast budget with fast=judge on those the selector is unsure of (judge_min to judge_max).
    The instant budget calls no model: its context checks no unit (`check_units` 0)."""
    context = runtime.context
    if context.judges and context.judge_readings == 0:  # thorough judges every one, fast=judge the unsure
        every = {"judge_min": 0.0, "judge_max": 1.0} if context.budget == "thorough" else {}
        context = replace(context, judge_readings=JUDGED, **every)
    products = state.get("products") or []
    if len(products) > context.max_readings:  # the answer states each product that answers
        context = replace(context, max_readings=len(products))
    return select_readings(state, runtime.override(context=context))


def route_after_select_readings(
    state: AutoState, runtime: Runtime[AutoContext]
) -> Literal["synthesize_answer", "write_product_lines", "compose_answer"]:
    """The readings alone (instant, or fast=judge's judged ones), a line per product when two or
    more products answer, else vanilla's draft."""
    context = runtime.context
    judged_only = context.judges_instead_of_drafting and state.get("ambiguous") is not False
    if context.budget == "instant" or judged_only:
        return "compose_answer"
    if len(state.get("products") or []) < 2:
        return "synthesize_answer"
    return "write_product_lines" if product_lines.unread_products(state) else "compose_answer"


builder = StateGraph(AutoState, context_schema=AutoContext, input_schema=InputState, output_schema=OutputState)
builder.add_node("retrieve_for_gate", starts_turn(retrieve_for_gate, ambiguous=None, branch="clear",
                                                  interpretations_source="synthesis"))
builder.add_node("guess_option_names", guess_option_names)
builder.add_node("assess_ambiguity", assess_ambiguity)
builder.add_node("select_readings", select_readings_for_budget)
builder.add_node("synthesize_answer", draft_answer)
builder.add_node("check_sentences", check_sentences)
builder.add_node("write_product_lines", product_lines.write_product_lines)
builder.add_node("compose_answer", compose_answer)
builder.add_node("diva", subgraph_node("diva"))
builder.add_edge(START, "retrieve_for_gate")
builder.add_conditional_edges("retrieve_for_gate", route_after_retrieve)
builder.add_edge("guess_option_names", "assess_ambiguity")
builder.add_conditional_edges("assess_ambiguity", route_after_assess_ambiguity)
builder.add_conditional_edges("select_readings", route_after_select_readings)
builder.add_edge("synthesize_answer", "check_sentences")
builder.add_edge("check_sentences", "compose_answer")
builder.add_edge("write_product_lines", "compose_answer")
builder.add_edge("compose_answer", END)
builder.add_edge("diva", END)

graph = builder.compile(name="auto")
