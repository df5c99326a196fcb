"""The model choosing among a product's best units in one request (listwise) against its yes/no
check of each, on the manuals' tune lists.

    N=4 CH=200 DISAMBIG_LLM_THREADS=2 .venv/bin/python bench/listwise_unit_choice.py WORK/index-tune OUT.jsonl

For each labelled product of each tune question's pool (bench/train_product_gate.py's lists,
ranked with the model's guessed option names), a ranker fitted without the question keeps the
units the app reads; of its first N, the model's yes/no check of each and one request that names
the line that tells how (its first token's probabilities over the numbers) are written to
OUT.jsonl; `--score OUT.jsonl` counts the lists whose best mix is a labelled unit.
"""
import json, math, sys, time, os
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[1])); sys.path.insert(0, str(Path(__file__).resolve().parent))
import numpy as np
from agent.assembly.manual_units import to_read
from agent.assembly.selector import logit
from agent.assembly.unit_check import unit_yes
from agent.context import Context
from agent.llm.calls import call_model
from train_product_gate import fit_ranker, tune_pools, unit_rows
from langchain_core.messages import SystemMessage, HumanMessage

N = int(os.environ.get("N", "4")); CH = int(os.environ.get("CH", "200"))
def score(path):
    L = lambda x: np.log(np.clip(x, 1e-4, 1 - 1e-4) / (1 - np.clip(x, 1e-4, 1 - 1e-4)))
    rows = [json.loads(l) for l in open(path)]
    print(len(rows), "lists")
    def right(score): return sum(r["labels"][int(np.argmax(score(r)))] for r in rows)
    print("ranker first", right(lambda r: np.array(r["ranker"])))
    for w in (0.5, 1, 2, 3):
        print(f"yes/no w={w}", right(lambda r: np.array(r["ranker"]) + w * L(np.array([0.5 if y is None else y for y in r["yes"]]))))
    for w in (0.25, 0.5, 1, 2, 4, 100):
        print(f"listwise w={w}", right(lambda r: np.array(r["ranker"]) + w * np.log(np.clip(np.array(r["listwise"] or [0.25]*4), 1e-4, 1))))
    for w in (0.5, 1, 2):
        print(f"both yes w=2 + listwise w={w}", right(lambda r: np.array(r["ranker"]) + 2 * L(np.array([0.5 if y is None else y for y in r["yes"]])) + w * np.log(np.clip(np.array(r["listwise"] or [0.25]*4), 1e-4, 1))))
    print("oracle", sum(max(r["labels"]) for r in rows))


SYSTEM = ("You pick the line from a product's manual that tells how to do what the question asks: "
          "the command, option or setting that does it. Reply with the line's number only.")

def listwise(question, product, units, context):
    lines = "\n".join(f"{i}. {u[:CH]}" for i, u in enumerate(units, 1))
    messages = [SystemMessage(SYSTEM), HumanMessage(f"Question about {product or 'the product'}: {question}\nLines:\n{lines}\nNumber:")]
    reply = call_model(context, messages, bind={"logprobs": True, "top_logprobs": 10}, max_tokens=1)
    if reply is None: return None
    toks = ((reply.response_metadata or {}).get("logprobs") or {}).get("content") or []
    mass = np.zeros(len(units))
    for top in (toks[0].get("top_logprobs") or []) if toks else []:
        w = str(top.get("token", "")).strip()
        if w.isdigit() and 1 <= int(w) <= len(units):
            mass[int(w) - 1] += math.exp(top.get("logprob", -math.inf))
    return mass / mass.sum() if mass.sum() else None

if sys.argv[1] == "--score":
    score(sys.argv[2]); sys.exit(0)
index = sys.argv[1]
context = Context(index_dir=index, model="local")
rows = unit_rows(tune_pools(index, "local"), index)
models = {g: fit_ranker([r for r in rows if r["group"] != g]) for g in {r["group"] for r in rows}}
held = [r for r in rows if r["labels"].any()]
out = open(sys.argv[2], "a")
t0 = time.time()
for n, row in enumerate(held, 1):
    kept, kept_rows = to_read(list(range(len(row["labels"]))), row["features"], models[row["group"]])
    r = logit(models[row["group"]].probabilities(kept_rows))
    order = np.argsort(-r, kind="stable")[:N]
    units = [row["units"][kept[i]] for i in order]
    yes = [unit_yes(row["text"], row["product"], u, context) for u in units]
    lw = listwise(row["text"], row["product"], units, context)
    out.write(json.dumps({"q": row["text"], "product": row["product"], "ranker": [float(r[i]) for i in order],
                          "labels": [int(row["labels"][kept[i]]) for i in order], "yes": yes,
                          "listwise": None if lw is None else lw.tolist(), "units": units}) + "\n"); out.flush()
    print(n, len(held), f"{time.time()-t0:.0f}s", file=sys.stderr, flush=True)
