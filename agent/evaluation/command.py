"""`disambig eval`: the command-line face of the evaluation harness (imports stay light)."""

from __future__ import annotations

import argparse
import json


def add_eval_parser(commands) -> argparse.ArgumentParser:
    """Register the `eval` subcommand on the CLI's subparsers."""
    sub = commands.add_parser("eval", help="run methods over a dataset and score them (offline)")
    sub.add_argument("--dataset", required=True,
                     choices=["asqa", "ambignq", "condambigqa", "msmarco", "jsonl", "fixture", "manuals", "conversations"],
                     help="fixture: the project's labelled questions (agent/data/demo_questions.json, heldout_questions.json); "
                          "manuals: bench/fixtures/manuals_questions.json (senses by product); conversations: labelled "
                          "multi-turn conversations (bench/fixtures/manuals_conversations.json), each run turn by turn "
                          "through the chat, scored per follow-up")
    sub.add_argument("--data", required=True, metavar="PATH", help="the dataset file")
    sub.add_argument("--ids", metavar="FILE", help="only these question ids (one a line)")
    sub.add_argument("--split", choices=["tune", "test"], help="only this split, for datasets that have one (manuals, conversations)")
    sub.add_argument("--limit", type=int, help="at most this many questions")
    sub.add_argument("--sample", type=int, metavar="N", help="a seeded random sample of N questions")
    sub.add_argument("--seed", type=int, default=0, help="seed for --sample (default 0)")
    sub.add_argument("--methods", default="vanilla", help="comma-separated, see `disambig methods` (default vanilla)")
    sub.add_argument("--model", help="local, local-small, gguf:PATH or openai:NAME (default $DISAMBIG_MODEL, else "
                     "openai:$OPENAI_MODEL when OPENAI_BASE_URL or OPENAI_API_KEY is set, else local)")
    sub.add_argument("--out", required=True, metavar="DIR", help="where predictions, summary and plots go")
    sub.add_argument("--index", help="index directory (default: $DISAMBIG_INDEX, else a per-user data dir)")
    from agent.app.index_flags import add_index_flags

    add_index_flags(sub)
    sub.add_argument("--mode", choices=["dense", "sparse", "hybrid"], help="retriever (default hybrid)")
    sub.add_argument("--k", type=int, help="passages to retrieve")
    sub.add_argument("--set", action="append", metavar="NAME=VALUE", help="a method setting (any method that has it)")
    sub.add_argument("--profile", choices=["paper", "product"],
                     help="paper: every method as published; product: the product's departures (readings, "
                          "verify_calls, adf_calls, answer_length) for every method that has them; --set wins (default: each "
                          "method's own defaults)")
    sub.add_argument("--concurrency", type=int, default=1, help="questions run at once (default 1)")
    sub.add_argument("--cache", metavar="DIR", help="result and LLM reply cache (default $DISAMBIG_EVAL_CACHE or a per-user cache dir)")
    sub.add_argument("--universe", choices=["auto", "fixed", "index"], default="auto",
                     help="fixed: each question's given passages replace retrieval (auto when the dataset has them)")
    sub.add_argument("--judge-model", help="judge for grounded precision/recall/G-F1 (off unless given)")
    sub.add_argument("--qa-model", metavar="DIR", help="local SQuAD-2 QA model for Disambig-F1 and DR (off unless given)")
    sub.add_argument("--simulate-user", action="store_true",
                     help="run whole chat conversations (each method answering the chat) with a scripted simulated user "
                          "holding one labelled sense (drawn with --seed); --set applies to the chat (clarify_policy=...)")
    sub.add_argument("--quiet", action="store_true", help="no progress bar")
    sub.add_argument("--json", action="store_true", help="print summary.json instead of the table")
    sub.set_defaults(run=cmd_eval)
    return sub


def cmd_eval(args) -> int:
    from agent.app.index_flags import index_overrides
    from agent.errors import InputError
    from agent.evaluation.report import markdown_table
    from agent.evaluation.runner import EvalConfig, run_eval

    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    if not methods:
        raise InputError("--methods needs at least one method")
    settings = {}
    for pair in args.set or []:
        name, sep, raw = pair.partition("=")
        if not sep or not name:
            raise InputError(f"--set {pair!r}: expected NAME=VALUE")
        settings[name] = raw
    config = EvalConfig(
        dataset=args.dataset, data=args.data, methods=methods, out=args.out, model=args.model or "", ids=args.ids,
        limit=args.limit, sample=args.sample, seed=args.seed, index_dir=args.index, index=index_overrides(args),
        retrieval_mode=args.mode, k=args.k, settings=settings, profile=args.profile, concurrency=args.concurrency,
        cache=args.cache, universe=args.universe,
        judge_model=args.judge_model, qa_model=args.qa_model, progress=not args.quiet,
        simulate_user=args.simulate_user, split=args.split,
    )
    summary = run_eval(config)
    print(json.dumps(summary, indent=2, default=str) if args.json else markdown_table(summary))
    if summary.get("follow_ups") and not args.json:
        from agent.evaluation.multi_turn import follow_up_table

        print("Follow-ups:\n\n" + follow_up_table(summary))
    elif args.simulate_user and not args.json:
        from agent.evaluation.conversations import conversation_table

        print("Simulated conversations:\n\n" + conversation_table(summary))
    if not args.json:
        print(f"reports in {args.out}: predictions.jsonl, summary.json, summary.md"
              + (", conversations.txt" if args.simulate_user or summary.get("follow_ups") else "")
              + "".join(f", {p.rsplit('/', 1)[-1]}" for p in summary.get("plots", {}).values()))
    return 0
