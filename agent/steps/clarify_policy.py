"""When asking "which did you mean?" pays, from signals the product already has.

Asking pays when answering every sense would bury the wanted one, or when the readings
disagree; it does not when one reading covers the question. Three policies (the chat's
`clarify_policy` setting):

- `never`: answer every sense at once;
- `always`: ask whenever there are two or more grounded options (senses);
- `gated`: ask when there are two or more senses and the gate's probability that the question
  is ambiguous over its passages (agent/assembly/gate.py; with `reading_scorer=reader` it is at
  least the gate's threshold when the reader is sure of a reading in two senses or more, the
  `confident_senses` signal) reaches `clarify_threshold`, or when two or more products' manuals
  answer (agent/assembly/product_gate.py: over manuals, which product is the ambiguity); and when
  only one sense was found but the probability reaches `confirm_threshold`, ask whether that one
  is meant (the person may say "none of these" and what they meant: the one reading found may
  not be theirs); and, not yet having asked this turn, when the message says "it" after an answer
  for several products and the options are those products (the `it_among` signal the chat
  sets). The thresholds were chosen on the tune splits with `disambig eval --simulate-user`, see
  docs/results/clarification.md. A method without the gate's probability asks as `always` does,
  and says so.

The decision, with its reason and the signals it read, goes into the chat's `decision`.
"""

from __future__ import annotations

from typing import Literal

ClarifyPolicy = Literal["never", "always", "gated"]


def policy_signals(options: list[dict], method_decision: dict | None) -> dict:
    """What the policies read: the senses offered and the gate's view of the passages (with the
    reader's count of confidently answered senses)."""
    signals: dict = {"senses": len(options)}
    for detail in (method_decision or {}).values():  # a method's own detail sits under its name
        if isinstance(detail, dict) and isinstance(detail.get("signals"), dict):
            gate = detail["signals"]
            for name in ("gate_probability", "readable_passages", "best_probability", "second_probability",
                         "confident_senses"):
                if gate.get(name) is not None:
                    signals[name] = gate[name]
            if isinstance(gate.get("products"), list):
                signals["products"] = len(gate["products"])
    return signals


def decide(policy: str, signals: dict, *, asked: int, max_asks: int, threshold: float,
           confirm_threshold: float = 1.0) -> dict:
    """{"policy", "ask", "reason", "signals"}: whether to ask now, and why."""

    def verdict(ask: bool, reason: str) -> dict:
        return {"policy": policy, "ask": ask, "reason": reason, "signals": signals}

    senses = signals.get("senses", 0)
    probability = signals.get("gate_probability")
    if policy == "never":
        return verdict(False, "clarify_policy=never: the answer covers every sense")
    if asked >= max_asks:
        return verdict(False, f"already asked {asked} time(s) this turn: answering what was found")
    if (policy == "gated" and senses == 1 and probability is not None and probability >= confirm_threshold):
        return verdict(True, f"one grounded sense, but gate probability {probability:.2f} >= {confirm_threshold:.2f}: "
                             "asking whether it is the one meant")
    if senses < 2:
        return verdict(False, f"{senses} grounded sense(s): nothing to choose between")
    if policy == "always":
        return verdict(True, f"{senses} grounded senses")
    if signals.get("products", 0) >= 2:
        return verdict(True, f"{signals['products']} products answer: the options are the products")
    if probability is None:
        return verdict(True, f"{senses} grounded senses and no gate probability from this method: asking as always")
    if probability >= threshold:
        return verdict(True, f"{senses} grounded senses and gate probability {probability:.2f} >= {threshold:.2f}")
    if signals.get("it_among") and not asked:
        return verdict(True, f"'it' may be any of {', '.join(signals['it_among'])}, which the last answer spoke for: "
                             "asking which product")
    return verdict(False, f"gate probability {probability:.2f} < {threshold:.2f}: one reading likely covers it")
