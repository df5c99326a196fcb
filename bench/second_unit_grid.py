"""Offline grid: would stating a product's second-best checked unit beside its first pay? Reads a
record of the fast budget's checks (every product from 0.2 checked; the record of
docs/results/manuals.md, "The model's check moves a product across the gate") and prints, for each
rule, the units stated, their precision and the sense recall. Usage: python bench/second_unit_grid.py RECORD.jsonl"""
import json, sys, math

from agent.evaluation.sentence_metrics import states_any
fx = {q["question"]: q for q in json.load(open("bench/fixtures/manuals_questions.json"))["questions"]}
recs = [json.loads(l) for l in open(sys.argv[1])]
yes = {(r["q"], r["product"], r["unit"]): r["yes"] for r in recs if r["kind"] == "yes"}
prods = {}
for r in recs:
    if r["kind"] == "product": prods[(r["q"], r["product"])] = r
lg = lambda p: math.log(max(p,1e-6)/max(1-p,1e-6))
rows = []
for (q, product), r in prods.items():
    if q not in fx: continue
    qq = fx[q]
    sense = next((s for s in qq["senses"] if product.casefold() in (s["name"].casefold(), s["product"].casefold())), None)
    head = r["ranked"][:4]
    cands = []
    for u, p, *_ in head:
        y = yes.get((q, product, u))
        cands.append(dict(u=u, p=p, y=y, mix=lg(p) + (2*lg(y) if y is not None else 0),
                          ok=bool(sense and states_any(u, sense["answers"])), gold=any(states_any(u, s["answers"]) for s in qq["senses"])))
    cands.sort(key=lambda c: -c["mix"])
    rows.append(dict(q=q, product=product, p=r["p"], floor=r["floor"], c=cands, sense=sense))
qs = {r["q"] for r in rows}
senses = sum(len(fx[q]["senses"]) for q in qs)
from collections import defaultdict
byq = defaultdict(list)
for r in rows: byq[r["q"]].append(r)
def kept(rs, a=0.5, b=0.75):
    base = [r for r in rs if r["p"] >= r["floor"]]
    k = [r for r in base if r["c"][0]["y"] is None or r["c"][0]["y"] >= a] + [r for r in rs if 0.3 <= r["p"] < r["floor"] and r["c"][0]["y"] is not None and r["c"][0]["y"] >= b]
    if not k and base: k = [max(base, key=lambda r: r["p"])]
    return k
def ev(name, second):
    n = g = rec = 0
    for rs in byq.values():
        for r in kept(rs):
            stated = [r["c"][0]] + ([r["c"][1]] if len(r["c"]) > 1 and second(r["c"][0], r["c"][1]) else [])
            n += len(stated); g += sum(c["gold"] for c in stated); rec += any(c["ok"] for c in stated)
    print(f"{name:35s} units {n:3d} prec {g/n:.3f} recall {rec/senses:.3f}")
ev("one", lambda a, b: False)
for t in (0.5, 0.6, 0.7, 0.8, 0.9):
    ev(f"second if y2>={t}", lambda a, b, t=t: b["y"] is not None and b["y"] >= t)
    ev(f"second if y2>={t} & y1<{t}", lambda a, b, t=t: b["y"] is not None and b["y"] >= t and (a["y"] or 0) < t)
for d in (0.5, 1, 2):
    ev(f"second if mix gap<{d}", lambda a, b, d=d: a["mix"] - b["mix"] < d)
