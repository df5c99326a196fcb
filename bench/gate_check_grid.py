"""Score gate rules over a record of bench/gate_check_record.py: the units the products stated
would be, how many state a short answer of any sense (precise) and the senses recalled.

    .venv/bin/python bench/gate_check_grid.py RECORD.jsonl [--list]
"""
import json, sys
from pathlib import Path
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from agent.evaluation.sentence_metrics import states_any
fx = {q["question"]: q for q in json.load(open(ROOT / "bench/fixtures/manuals_questions.json"))["questions"]}
recs = [json.loads(l) for l in open(sys.argv[1])]
yes = {(r["q"], r["product"], r["unit"]): r["yes"] for r in recs if r["kind"] == "yes"}
prods = {}
for r in recs:
    if r["kind"] == "product": prods[(r["q"], r["product"])] = r   # last wins (a question may be run twice)
rows = []
for (q, product), r in prods.items():
    if q not in fx: continue
    qq = fx[q]
    sense = next((s for s in qq["senses"] if product.casefold() in (s["name"].casefold(), s["product"].casefold())), None)
    best = r["checked_best"]; y = yes.get((q, product, best))
    first = r["ranked"][0][0]; yf = yes.get((q, product, first))
    rows.append(dict(q=q, product=product, p=r["p"], floor=r["floor"], y=y, yf=yf, sense=sense is not None,
                     precise=bool(sense and states_any(best, sense["answers"])), any_gold=any(states_any(best, s["answers"]) for s in qq["senses"]), best=best))
senses = sum(len(fx[q]["senses"]) for q in {r["q"] for r in rows})
print(len(rows), "product rows", len({r['q'] for r in rows}), "questions", senses, "senses")
def ev(name, keep):
    k = [r for r in rows if keep(r)]
    prec = sum(r["any_gold"] for r in k) / max(1, len(k)); rec = sum(r["precise"] for r in k) / senses
    print(f"{name:40s} stated {len(k):3d} precise(any gold) {prec:.3f} recall {rec:.3f}")
ev("base", lambda r: r["p"] >= r["floor"])
for a in (0.05, 0.1, 0.2, 0.3, 0.5):
    ev(f"drop yes<{a}", lambda r, a=a: r["p"] >= r["floor"] and (r["y"] is None or r["y"] >= a))
for lo in (0.2, 0.3, 0.4):
  for b in (0.5, 0.7, 0.8, 0.9, 0.95):
    ev(f"add p>={lo} yes>={b}", lambda r, lo=lo, b=b: r["p"] >= r["floor"] or (r["p"] >= lo and r["y"] is not None and r["y"] >= b))
if "--list" in sys.argv[2:]:
    for r in sorted(rows, key=lambda r: -r["p"]):
        print(f"{r['p']:.2f} y={r['y'] if r['y'] is None else round(r['y'],2)} sense={int(r['sense'])} ok={int(r['precise'])} {r['product']:10s} | {r['q'][:50]} | {r['best'][:90]}")
ys = [(r["p"] >= r["floor"], r["y"], r["any_gold"], r["precise"]) for r in rows if r["y"] is not None]
for ans in (True, False):
    for g in (True, False):
        v = sorted(round(y, 2) for a, y, gg, _ in ys if a == ans and gg == g)
        print("answering" if ans else "held", "gold" if g else "nogold", len(v), v)
for a in (0.3, 0.4, 0.5):
  for b in (0.75, 0.8, 0.85):
    ev(f"drop<{a} add>={b}", lambda r, a=a, b=b: (r["p"] >= r["floor"] and (r["y"] is None or r["y"] >= a)) or (r["p"] >= 0.3 and r["y"] is not None and r["y"] >= b))
from collections import defaultdict
byq = defaultdict(list)
for r in rows: byq[r["q"]].append(r)
def rule(rs, a=0.5, b=0.75, keep_one=True):
    base = [r for r in rs if r["p"] >= r["floor"]]
    kept = [r for r in base if r["y"] is None or r["y"] >= a] + [r for r in rs if 0.3 <= r["p"] < r["floor"] and r["y"] is not None and r["y"] >= b]
    if not kept and base and keep_one: kept = [max(base, key=lambda r: r["p"])]
    return kept
for ko in (True, False):
    k = [r for rs in byq.values() for r in rule(rs, keep_one=ko)]
    empty = sum(1 for rs in byq.values() if not rule(rs, keep_one=ko)); base_empty = sum(1 for rs in byq.values() if not [r for r in rs if r["p"] >= r["floor"]])
    print("keep_one", ko, len(k), round(sum(r["any_gold"] for r in k)/len(k),3), round(sum(r["precise"] for r in k)/senses,3), "empty q", empty, "base empty", base_empty)
extra = sum(1 for r in rows if 0.3 <= r["p"] < r["floor"])
print("offered products checked in addition:", extra, "over", len(byq), "questions")

# a logistic of the gate's and the check's logits, each question left out of its own fit
import numpy as np
from sklearn.linear_model import LogisticRegression
L = lambda x: np.log(np.clip(x, 1e-4, 1 - 1e-4) / (1 - np.clip(x, 1e-4, 1 - 1e-4)))
R = [r for r in rows if r["y"] is not None]
X = np.array([[L(r["p"]), L(r["y"])] for r in R]); Y = np.array([int(r["precise"]) for r in R])
qs = np.array([r["q"] for r in R]); P = np.zeros(len(R))
for q in set(qs):
    m = qs != q
    P[~m] = LogisticRegression(C=1.0).fit(X[m], Y[m]).predict_proba(X[~m])[:, 1]
for t in np.arange(0.2, 0.75, 0.05):
    k = np.where(P >= t)[0]
    prec = np.mean([R[i]["any_gold"] for i in k]); rec = sum(R[i]["precise"] for i in k) / senses
    print(f"logistic t={t:.2f} stated {len(k)} precise {prec:.3f} recall {rec:.3f} F0.5 {1.25 * prec * rec / (0.25 * prec + rec):.3f}")
