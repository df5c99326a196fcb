"""Record the model's check of every product the gate gives LOW or more, answers unchanged.

    REC=RECORD.jsonl LOW=0.2 DISAMBIG_LLM_THREADS=2 .venv/bin/python bench/gate_check_record.py \
        --fixture bench/fixtures/manuals_questions.json --index WORK/index-tune --split tune \
        --kind ambiguous --budget fast --model local --out ANSWERS.jsonl

Runs bench/documents_questions.py with `choose_products` replaced by one that checks each product
from LOW (the shipped one checks only those it passes) and writes, per product, the gate's
probability and the unit the check puts first, and per check the model's P(yes); the answers are
the shipped gate's. bench/gate_check_grid.py RECORD.jsonl scores rules over the record.
"""
import json, os, sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[1])); sys.path.insert(0, str(Path(__file__).resolve().parent))
import numpy as np
import agent.assembly.unit_check as uc
import agent.assembly.product_gate as pg
import agent.assembly.nodes as nodes
LOW = float(os.environ.get("LOW", "0.2"))
REC = open(os.environ["REC"], "a")
_yes = uc.unit_yes
def unit_yes(question, product, unit, context):
    y = _yes(question, product, unit, context)
    REC.write(json.dumps({"kind": "yes", "q": question, "product": product, "unit": unit, "yes": y}) + "\n"); REC.flush()
    return y
uc.unit_yes = unit_yes

def choose_products(question, pool, context, gate=None, floor=None, guessed=(), checked=0):
    found = pg.product_candidates(question, pool, context, guessed=guessed)
    if found is None:
        return None
    gate = gate or pg.product_gate(bool(guessed))
    probabilities = gate.probabilities(np.array([f.features for f in found]))
    floor = gate.threshold if floor is None else floor
    units = []
    for f, p in zip(found, probabilities):
        n = context.check_units if p >= LOW else 0
        best = uc.checked_first(question, f.product, f.ranked, context, n)
        units.append(best[0].candidate if p >= floor and checked else f.ranked[0].candidate)
        REC.write(json.dumps({"kind": "product", "q": question, "product": f.product, "p": float(p), "floor": floor,
                              "answering": bool(p >= floor), "features": list(f.features),
                              "ranked": [[u.candidate.sentence, u.probability, u.reader, u.candidate.passage.get("document")] for u in f.ranked[:context.check_units]],
                              "checked_best": best[0].candidate.sentence, "guessed": list(guessed)}) + "\n"); REC.flush()
    answering = [(unit, float(p)) for unit, p in zip(units, probabilities) if p >= floor]
    offered = [(unit, float(p)) for unit, p in zip(units, probabilities) if pg.OFFER_FLOOR <= p < floor]
    return pg.ProductChoice(sorted(answering, key=lambda i: -i[1]), sorted(offered, key=lambda i: -i[1]))
pg.choose_products = choose_products
nodes.choose_products = choose_products
import documents_questions
sys.exit(documents_questions.main())
