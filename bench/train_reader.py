"""Train the answer-sentence reader; write its delta (agent/data/reader_delta.npz).

    .venv/bin/python bench/reader_data.py --out PAIRS.jsonl
    .venv/bin/python bench/train_reader.py --pairs PAIRS.jsonl [--seed 13] [--out agent/data/reader_delta.npz]

Two stages, both with binary cross-entropy weighted by the negatives-to-positives ratio and
early stopping on a validation split by question (10% of the questions, seeded):
1. the public development pairs (ASQA, CondAmbigQA, AmbigNQ dev ids);
2. adapted on the demo tune splits' pairs (the demo fixture's tune ids and the tune fixture).
The packaged MiniLM stays frozen; LoRA updates of the top `--adapted-layers` layers, their
LayerNorms, the pooler and the head are learned (agent/assembly/reader_build.py) and saved with
the scores the trained model gives a few check pairs, which the ONNX build must reproduce.
`--holdout-groups demo:saturn,...` leaves those fixture topics out of stage 2 and writes their
pairs' scores (`--scores-out`): the leave-topics-out figures.
`--init DELTA --skip-public` continues from a trained delta with stage 2 only; `--pairwise W` adds
a ranking loss that puts each answer above the mentions of its own question and passage, and
`--select-on pairs` keeps the state that orders those pairs best (docs/results/reader.md: tried,
not kept).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent.assembly.reader_inputs import DELTA_PATH, INPUTS, encode_pairs, pair_tokenizer, segment  # noqa: E402
from agent.assembly.reader_build import delta_arrays, round_to_shipped, trainable_net  # noqa: E402


def split_by_question(pairs: list[dict], share: float, seed: int) -> tuple[list[dict], list[dict]]:
    """(train, validation): a question's pairs all go one way (hash of seed and id)."""
    def held(qid: str) -> bool:
        return int(hashlib.sha256(f"{seed}:{qid}".encode()).hexdigest(), 16) % 1000 < share * 1000
    return [p for p in pairs if not held(p["qid"])], [p for p in pairs if held(p["qid"])]


def texts(pairs: list[dict]) -> list[tuple[str, str]]:
    return [(p["query"], segment(p["sentence"], p["title"])) for p in pairs]


def scores(net, tokenizer, pairs: list[dict], batch: int = 64) -> np.ndarray:
    import torch
    net.eval()
    out = []
    with torch.no_grad():
        for start in range(0, len(pairs), batch):
            feeds = encode_pairs(tokenizer, texts(pairs[start:start + batch]))
            out.append(torch.sigmoid(net(*[torch.from_numpy(feeds[n]) for n in INPUTS])).numpy())
    net.train()
    return np.concatenate(out) if out else np.zeros(0)


def quality(labels: np.ndarray, probabilities: np.ndarray) -> dict:
    from sklearn.metrics import average_precision_score, roc_auc_score
    if not 0 < labels.sum() < len(labels):
        return {"auc": None, "ap": None, "f1": None}
    best_f1 = 0.0
    for t in np.arange(0.05, 0.96, 0.05):
        chosen = probabilities >= t
        tp = float((chosen & (labels == 1)).sum())
        if chosen.sum() and tp:
            p, r = tp / chosen.sum(), tp / labels.sum()
            best_f1 = max(best_f1, 2 * p * r / (p + r))
    return {"auc": round(float(roc_auc_score(labels, probabilities)), 4),
            "ap": round(float(average_precision_score(labels, probabilities)), 4), "best_f1": round(best_f1, 4)}


def length_buckets(pairs: list[dict], size: int, rng: random.Random) -> list[list[dict]]:
    """Shuffled batches of pairs of similar length (sorted within runs of 16 batches): a batch
    is padded to its longest pair, and on two cores padding is most of the cost."""
    shuffled = list(pairs)
    rng.shuffle(shuffled)
    batches = []
    for start in range(0, len(shuffled), size * 16):
        run = sorted(shuffled[start:start + size * 16], key=lambda p: len(p["query"]) + len(p["sentence"]) + len(p["title"]))
        batches += [run[i:i + size] for i in range(0, len(run), size)]
    rng.shuffle(batches)
    return batches


def group_of(pair: dict) -> tuple[str, str, str]:
    """A question and one passage (by title): its answer and its mentions compete in one group."""
    return pair["qid"], pair["query"], pair["title"]


def group_batches(pairs: list[dict], size: int, rng: random.Random) -> list[list[dict]]:
    """Shuffled batches of whole groups (about `size` pairs each), so the within-passage loss
    sees a passage's answer beside its mentions in the same batch."""
    groups: dict[tuple, list[dict]] = {}
    for pair in pairs:
        groups.setdefault(group_of(pair), []).append(pair)
    order = list(groups.values())
    rng.shuffle(order)
    batches, batch = [], []
    for group in order:
        if batch and len(batch) + len(group) > size:
            batches.append(batch)
            batch = []
        batch += group[:size]
    if batch:
        batches.append(batch)
    return batches


def answer_mention_pairs(pairs: list[dict]) -> tuple[list[int], list[int]]:
    """(answers, mentions): the indices of each answer and each mention of the same question and
    passage, pair by pair (what the ranking loss and `ordered_share` compare)."""
    index: dict[tuple, list[int]] = {}
    for i, pair in enumerate(pairs):
        index.setdefault(group_of(pair), []).append(i)
    answers, mentions = [], []
    for members in index.values():
        for i in members:
            for j in members:
                if pairs[i]["label"] == 1 and pairs[j]["label"] == 0:
                    answers.append(i)
                    mentions.append(j)
    return answers, mentions


def within_passage_loss(logits, batch: list[dict]):
    """Mean softplus(mention - answer) over the pairs of an answer and a mention of the same
    question and passage: the reader must rank the sentence that answers above its neighbours,
    which read alike (the "over-sure near the top" failure of the pointwise loss alone)."""
    import torch
    answers, mentions = answer_mention_pairs(batch)
    if not answers:
        return logits.sum() * 0.0
    return torch.nn.functional.softplus(logits[mentions] - logits[answers]).mean()


def ordered_share(valid: list[dict], probabilities: np.ndarray) -> float | None:
    """The share of (answer, mention) pairs of one question and passage that the scores order
    right (a tie counts half): what `--select-on pairs` keeps the state by."""
    answers, mentions = answer_mention_pairs(valid)
    if not answers:
        return None
    above, below = probabilities[answers], probabilities[mentions]
    return round(float(((above > below) + 0.5 * (above == below)).mean()), 4)


def validation(net, tokenizer, valid: list[dict], labels: np.ndarray) -> dict:
    """The measures a stage logs and keeps its best state by."""
    probabilities = scores(net, tokenizer, valid)
    return {**quality(labels, probabilities), "pairs": ordered_share(valid, probabilities)}


def batch_loss(logits, batch: list[dict], pos_weight, mention_weight: float = 1.0):
    """Binary cross-entropy with positives weighted by `pos_weight`; with `mention_weight` other
    than 1, each mention (a sentence of the answer's passage that does not hold it) weighs that
    much against the other pairs: the reader's usual error is reading a mention as an answer."""
    import torch
    target = torch.tensor([float(p["label"]) for p in batch])
    if mention_weight == 1:
        return torch.nn.functional.binary_cross_entropy_with_logits(logits, target, pos_weight=pos_weight)
    scale = torch.tensor([mention_weight if p.get("why") == "mentions" else 1.0 for p in batch])
    each = torch.nn.functional.binary_cross_entropy_with_logits(logits, target, pos_weight=pos_weight, reduction="none")
    return (each * scale).mean()


def train_stage(net, tokenizer, train: list[dict], valid: list[dict], args, lr: float, epochs: float,
                name: str, log) -> dict:
    """One stage: AdamW, weighted BCE, evaluation every `--eval-every` steps; the best state by
    the validation measure `--select-on` (ROC-AUC by default: average precision on a few hundred
    pairs is too noisy to stop on) is kept, and the stage stops after `--patience` evaluations
    without a better one."""
    import torch
    rng = random.Random(args.seed)
    positives = sum(p["label"] for p in train)
    weight = torch.tensor((len(train) - positives) / max(positives, 1))
    optimizer = torch.optim.AdamW([p for p in net.parameters() if p.requires_grad], lr=lr, weight_decay=0.01)
    total = int(len(train) * epochs / args.batch)
    if args.pairwise > 0:  # whole groups fill batches less evenly: a step per batch of an epoch
        total = int(len(group_batches(train, args.batch, random.Random(args.seed))) * epochs)
    labels = np.array([p["label"] for p in valid])
    best, best_state, waited, step, started = -1.0, None, 0, 0, time.time()
    if args.init:  # the state it starts from competes too: a stage that only harms it keeps it
        found = validation(net, tokenizer, valid, labels)
        log({"stage": name, "step": 0, "of": total, **found})
        best, best_state = found[args.select_on] or 0, {k: v.detach().clone() for k, v in net.state_dict().items()}
    order: list[list[dict]] = []
    while step < total:
        if not order:
            order = (group_batches if args.pairwise > 0 else length_buckets)(train, args.batch, rng)
        batch = order.pop()
        feeds = encode_pairs(tokenizer, texts(batch))
        logits = net(*[torch.from_numpy(feeds[n]) for n in INPUTS])
        loss = batch_loss(logits, batch, weight, args.mention_weight)
        if args.pairwise > 0:
            loss = loss + args.pairwise * within_passage_loss(logits, batch)
        optimizer.zero_grad()
        loss.backward()
        for group in optimizer.param_groups:  # linear decay to 10% over the stage
            group["lr"] = lr * (1 - 0.9 * step / max(total, 1))
        optimizer.step()
        step += 1
        if step % args.eval_every == 0 or step == total:
            found = validation(net, tokenizer, valid, labels)
            log({"stage": name, "step": step, "of": total, "loss": round(loss.item(), 4),
                 "minutes": round((time.time() - started) / 60, 1), **found})
            if (found[args.select_on] or 0) > best:
                best, waited = found[args.select_on] or 0, 0
                best_state = {k: v.detach().clone() for k, v in net.state_dict().items()}
            else:
                waited += 1
                if waited >= args.patience:
                    break
    if best_state is not None:
        net.load_state_dict(best_state)
    return {"steps": step, f"best_{args.select_on}": best, "minutes": round((time.time() - started) / 60, 1)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", required=True)
    parser.add_argument("--out", default=str(DELTA_PATH))
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--max-tokens", type=int, default=128)
    parser.add_argument("--adapted-layers", type=int, default=6)
    parser.add_argument("--rank", type=int, default=8)
    parser.add_argument("--alpha", type=float, default=16.0)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--epochs", type=float, default=1.5)
    parser.add_argument("--adapt-epochs", type=float, default=2.0)
    parser.add_argument("--lr", type=float, default=5e-4)
    parser.add_argument("--adapt-lr", type=float, default=2e-4)
    parser.add_argument("--max-pairs", type=int, default=0, help="use at most this many public pairs (0: all)")
    parser.add_argument("--eval-every", type=int, default=60)
    parser.add_argument("--patience", type=int, default=3)
    parser.add_argument("--pairwise", type=float, default=0.0,
                        help="weight of the within-passage ranking loss (answer above its passage's mentions)")
    parser.add_argument("--mention-weight", type=float, default=1.0,
                        help="loss weight of the mentions (same-passage sentences without the answer) against other negatives")
    parser.add_argument("--init", help="start from this delta (its settings) instead of the packaged weights")
    parser.add_argument("--skip-public", action="store_true", help="no public stage (with --init: adapt only)")
    parser.add_argument("--select-on", choices=("auc", "ap", "pairs"), default="auc",
                        help="validation measure that picks the kept state and stops a stage")
    parser.add_argument("--valid-max", type=int, default=1200, help="validation pairs scored per evaluation")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--holdout-groups", default="", help="fixture topics (groups) left out of stage 2")
    parser.add_argument("--scores-out", help="JSONL: the held-out groups' pairs with their scores")
    parser.add_argument("--skip-adapt", action="store_true", help="stage 1 only")
    args = parser.parse_args(argv)
    import torch
    torch.set_num_threads(args.threads)
    random.seed(args.seed)
    np.random.seed(args.seed)
    log_lines = []

    def log(row: dict) -> None:
        log_lines.append(row)
        print(json.dumps(row), flush=True)

    pairs = [json.loads(line) for line in Path(args.pairs).read_text().splitlines() if line.strip()]
    held_groups = {g for g in args.holdout_groups.split(",") if g}
    public = [p for p in pairs if p["source"] != "demo"]
    if args.max_pairs:
        public = public[:args.max_pairs]
    demo = [p for p in pairs if p["source"] == "demo" and p["group"] not in held_groups]
    held = [p for p in pairs if p["group"] in held_groups]
    tokenizer = pair_tokenizer(args.max_tokens)
    net = trainable_net(args.adapted_layers, args.rank, args.alpha, args.seed)
    if args.init:
        load_delta(net, Path(args.init), args)
    net.train()
    started = time.time()
    train, valid = split_by_question(public, 0.1, args.seed)
    valid = valid[:args.valid_max]
    log({"stage": "public", "train": len(train), "valid": len(valid), "positives": sum(p["label"] for p in train)})
    report = {} if args.skip_public else {
        "public": train_stage(net, tokenizer, train, valid, args, args.lr, args.epochs, "public", log)}
    demo_train, demo_valid = split_by_question(demo, 0.2, args.seed)
    demo_valid = demo_valid[:args.valid_max]
    report["public_valid_after_public"] = quality(np.array([p["label"] for p in valid]), scores(net, tokenizer, valid))
    report["demo_valid_before_adapt"] = quality(np.array([p["label"] for p in demo_valid]), scores(net, tokenizer, demo_valid))
    if not args.skip_adapt and demo_train:
        log({"stage": "adapt", "train": len(demo_train), "valid": len(demo_valid)})
        report["adapt"] = train_stage(net, tokenizer, demo_train, demo_valid, args, args.adapt_lr, args.adapt_epochs,
                                      "adapt", log)
        report["demo_valid_after_adapt"] = quality(np.array([p["label"] for p in demo_valid]),
                                                   scores(net, tokenizer, demo_valid))
        report["public_valid_after_adapt"] = quality(np.array([p["label"] for p in valid]), scores(net, tokenizer, valid))
    report["minutes"] = round((time.time() - started) / 60, 1)
    if held and args.scores_out:
        found = scores(net, tokenizer, held)
        Path(args.scores_out).write_text("".join(json.dumps({**p, "score": float(s)}) + "\n" for p, s in zip(held, found)))
        report["held_out_groups"] = quality(np.array([p["label"] for p in held]), found)
    net.eval()
    round_to_shipped(net)
    check = (demo_valid or valid)[:24]
    check_scores = scores(net, tokenizer, check)
    dev_scores = scores(net, tokenizer, demo_valid) if demo_valid else np.zeros(0)
    threshold = best_f1_threshold(np.array([p["label"] for p in demo_valid]), dev_scores) if demo_valid else 0.5
    config = {"max_tokens": args.max_tokens, "adapted_layers": args.adapted_layers, "rank": args.rank,
              "alpha": args.alpha, "threshold": threshold, "seed": args.seed,
              "trained": {k: v for k, v in vars(args).items() if k not in ("out", "pairs", "scores_out")}}
    arrays = delta_arrays(net)
    np.savez_compressed(args.out, config=json.dumps(config), check_questions=np.array([q for q, _ in texts(check)]),
                        check_texts=np.array([t for _, t in texts(check)]), check_scores=check_scores, **arrays)
    report["delta_bytes"] = Path(args.out).stat().st_size
    report["threshold"] = threshold
    log({"report": report})
    return 0


def load_delta(net, path: Path, args) -> None:
    """Start from a trained delta: its tensors into the trainable net, whose shape its settings fix."""
    import torch
    with np.load(path) as data:
        config = json.loads(str(data["config"]))
        for name in ("adapted_layers", "rank", "alpha", "max_tokens"):
            if config[name] != getattr(args, name):
                raise SystemExit(f"--init {path} was trained with {name}={config[name]}, not {getattr(args, name)}")
        tensors = {name: data[name] for name in data.files if name.startswith(("bert.", "head."))}
    trainable = dict(net.named_parameters())
    missing = [name for name, parameter in trainable.items() if parameter.requires_grad and name not in tensors]
    if missing:
        raise SystemExit(f"--init {path} lacks {len(missing)} trained tensors (first: {missing[0]})")
    with torch.no_grad():
        for name, value in tensors.items():
            trainable[name].copy_(torch.from_numpy(value.astype(np.float32)))


def best_f1_threshold(labels: np.ndarray, probabilities: np.ndarray) -> float:
    """The pair-level threshold with the best F1 on the adaptation's validation questions (the
    product's threshold is tuned on the tune answers afterwards: bench/reader_eval.py)."""
    best, at = -1.0, 0.5
    for t in np.round(np.arange(0.05, 0.96, 0.05), 2):
        chosen = probabilities >= t
        tp = float((chosen & (labels == 1)).sum())
        f1 = 2 * tp / (chosen.sum() + labels.sum()) if chosen.sum() + labels.sum() else 0.0
        if f1 > best:
            best, at = f1, float(t)
    return at


if __name__ == "__main__":
    raise SystemExit(main())
