"""`disambig` command line: ingest, delete, stats, search, ask, methods, chat, serve, mcp, eval, train-detector.

Errors the user can act on print as one line (`disambig: error: ...`) with exit code 1.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from agent.app.index_flags import SHARED_HELP, add_index_flags, export_for_server, index_context, index_overrides, open_index
from agent.app.ingest_command import add_ingest_parser
from agent.app.mcp_command import add_mcp_parser
from agent.app.settings import parse_settings
from agent.errors import DisambigError

STORES = {"embedded": "SQLite = Chroma = BM25", "postgresql": "passages = pgvector = postings"}


def cmd_delete(args) -> int:
    from agent.retrieval.updates import delete_documents

    store = open_index(args)
    counts = delete_documents(store, args.ids, missing_ok=args.missing_ok)
    print(json.dumps({**counts, "index": str(store.path)}) if args.json else
          f"deleted {counts['documents_deleted']} documents ({counts['removed']} passages"
          + (f", {counts['missing']} ids not in the index" if counts["missing"] else "") +
          f"); index {store.path} holds {counts['documents_total']} documents, {counts['total']} passages")
    return 0


def cmd_stats(args) -> int:
    from agent.retrieval.updates import stats

    figures = stats(open_index(args))
    if args.json:
        print(json.dumps(figures))
        return 0 if figures["check"]["consistent"] else 1
    check = figures["check"]
    problems = [f"{value} {name.replace('_', ' ')}" for name, value in check.items()
                if isinstance(value, int) and not isinstance(value, bool) and value]
    print(f"index        {figures['index']} ({figures['chroma']} vectors)\n"
          f"documents    {figures['documents']}\n"
          f"chunks       {figures['chunks']} (vectors {figures['vectors']}, BM25 {figures['sparse_passages']})\n"
          f"size         {figures['size_bytes'] / 1e6:.1f} MB\n"
          f"encoder      {figures['encoder']}\n"
          f"last update  {figures['last_update'] or 'never'} (version {figures['version']}, "
          f"BM25 built from {figures['sparse_version']})\n"
          f"consistency  " + (STORES[figures.get("backend", "embedded")] if check["consistent"] else
                              "NOT consistent: " + (", ".join(problems) or "BM25 is out of date") +
                              " (the next search, ingest or delete repairs it)"))
    return 0 if check["consistent"] else 1


def cmd_search(args) -> int:
    from agent.documents.citation import citation, location
    from agent.retrieval.retriever import get_retriever

    context = index_context(args)
    passages = get_retriever(context).search(args.query, args.mode or context.retrieval_mode, args.k)
    if args.json:
        print(json.dumps([{**{k: p[k] for k in ("id", "title", "text", "score")}, **location(p)} for p in passages],
                         ensure_ascii=False))
        return 0
    if not passages:
        print("no passage matches")
    for rank, p in enumerate(passages, 1):
        snippet = p["text"] if len(p["text"]) <= 160 else p["text"][:157] + "..."
        print(f"{rank:2}. {p['id']}  {citation(p)}  (score {p['score']:.4f})\n    {snippet}")
    return 0


def cmd_train_detector(args) -> int:
    from agent.detector.train import train_command

    return train_command(args)


def cmd_chat(args) -> int:
    from agent.app.chat_cli import chat_command

    return chat_command(args)


def cmd_serve(args) -> int:
    from agent.app.serve import serve_command

    export_for_server(args)
    return serve_command(args)


def cmd_methods(args) -> int:
    from graphs.registry import METHODS

    for name, (_, summary) in METHODS.items():
        print(f"{name:10} {summary}")
    return 0


MODEL_FIRST_NODES = ("guess_option_names", "synthesize_answer", "diva")  # auto's nodes that call the model before readings


def cmd_ask(args) -> int:
    from agent.app import api
    from graphs.registry import load_method
    from agent.errors import validate_question
    from agent.llm.models import warm_up

    schema = load_method(args.method).builder.context_schema
    overrides = parse_settings(args.set or [], schema)
    flags = {**index_overrides(args), "model": args.model, "retrieval_mode": args.mode, "k": args.k,
             "budget": args.budget}
    overrides.update({name: value for name, value in flags.items() if value is not None})
    context = api.method_context(args.method, overrides)
    validate_question(args.question)  # before the server starts loading for nothing
    budget = getattr(context, "budget", None)  # only auto has one
    # the model server loads in this process and holds the CPU (and the GIL) for seconds: a
    # method that streams readings first (auto) starts it once they are on screen, instant never
    needs_model = budget != "instant"
    pending = needs_model and budget is not None and not args.json

    def start_model() -> None:
        if warm_up(context):
            print("  starting the llama.cpp server in the background ...", file=sys.stderr, flush=True)

    if needs_model and not pending:
        start_model()
    if args.json:
        print(json.dumps(api.ask(args.question, args.method, context), ensure_ascii=False, indent=2))
        return 0
    from agent.app.early_answer import ShownAnswer

    result: dict = {}
    shown = ShownAnswer()
    for event in api.stream(args.question, args.method, context):
        kind = event.get("event")
        if kind == "stage":
            print(f"· {event['node']} ...", file=sys.stderr, flush=True)
        elif kind == "status":
            print(f"  {event['text']}", file=sys.stderr, flush=True)
        elif kind == "readings":  # cited lines chosen before the model call: on screen at once
            for line in shown.add_readings(event):
                print(line, flush=True)
        elif kind == "token":
            if shown.readings and not shown.streamed:
                print(flush=True)  # the prose as a paragraph of its own under the readings
            shown.add_token(event["text"])
            print(event["text"], end="", flush=True)
        elif kind == "result":
            result = event["result"]
        if pending and (kind == "readings" or (kind == "stage" and event.get("node") in MODEL_FIRST_NODES)):
            pending = False  # the readings are on screen (or none came, or a call precedes them): now load the model
            start_model()
    _print_answer(result, shown)
    return 0


def _print_answer(result: dict, shown) -> None:
    """The checked answer under what streamed: in full when nothing did, else only its new
    sentences and a note for each line shown that it dropped (agent/app/early_answer.py)."""
    from agent.app.early_answer import dropped_reasons, one_line
    from agent.documents.citation import citation

    if not shown.shown_anything:
        print(result["answer"] + "\n", flush=True)
    else:
        new, notes = shown.changes(result["answer"], dropped_reasons(result))
        print("\n" if shown.streamed else "", flush=True)
        if new:
            print("Checked against the passages, the answer adds:\n" + " ".join(new) + "\n", flush=True)
        for note in notes:
            print(note, flush=True)
        if notes:
            print(flush=True)
    if result["interpretations"]:
        print("Interpretations:")
        for item in result["interpretations"]:
            cites = ", ".join(item["citations"]) or "no citation"
            print(f"  - {item['question']} -> {one_line(item['answer'])}  [{cites}]")
    if result["passages"]:  # the cited ones, numbered as in the answer; the rest only counted
        cited = set(result.get("cited") or [])
        shown = [(n, p) for n, p in enumerate(result["passages"], 1) if p["id"] in cited] or \
            list(enumerate(result["passages"], 1))
        print("Sources:")
        for number, p in shown:  # "manual.pdf, p. 12, Installation > Linux" for a passage read by structure
            print(f"  [{number}] {citation(p)} ({p['id']})")
        if len(shown) < len(result["passages"]):
            print(f"  ({len(result['passages']) - len(shown)} more retrieved and not cited; --json lists them)")
    usage = result["usage"]
    print(f"route: {' > '.join(result['route'])} | {usage.get('llm_calls', 0)} LLM calls, "
          f"{usage.get('prompt_tokens', 0)}+{usage.get('completion_tokens', 0)} tokens, "
          f"{usage.get('wall_s', 0):.1f}s", file=sys.stderr)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="disambig", description="Answer ambiguous questions over your documents.")
    commands = parser.add_subparsers(dest="command", required=True)

    def with_index(sub):
        sub.add_argument("--index", help="index directory (default: $DISAMBIG_INDEX, else a per-user data dir)")
        sub.add_argument("--chroma-url", help="use a Chroma server instead of the embedded store")
        add_index_flags(sub, shared=sub.prog.endswith(" chat"))
        return sub

    add_ingest_parser(commands, with_index)
    add_lifecycle_parsers(commands, with_index)

    search = with_index(commands.add_parser("search", help="rank passages for a query"))
    search.add_argument("query")
    search.add_argument("--mode", choices=["dense", "sparse", "hybrid"], help="retriever (default $DISAMBIG_RETRIEVAL or hybrid)")
    search.add_argument("--k", type=int, default=5, help="passages to print")
    search.add_argument("--json", action="store_true", help="print a JSON list of {id, title, text, score}")
    search.set_defaults(run=cmd_search)

    ask = with_index(commands.add_parser("ask", help="answer a question with a method"))
    ask.add_argument("question")
    ask.add_argument("--method", default="auto", help="see `disambig methods` (default auto)")
    ask.add_argument("--model", help="local, local-small, gguf:PATH or openai:NAME (default $DISAMBIG_MODEL, else "
                     "openai:$OPENAI_MODEL when OPENAI_BASE_URL or OPENAI_API_KEY is set, else local)")
    ask.add_argument("--mode", choices=["dense", "sparse", "hybrid"], help="retriever (default hybrid)")
    ask.add_argument("--k", type=int, help="passages to retrieve")
    ask.add_argument("--budget", choices=["instant", "fast", "thorough"],
                     help="auto: instant (cited readings from the passages, no LLM call), fast (default: readings "
                          "plus one call) or thorough (fast, and an ambiguous question's readings judged by the "
                          "model: about 7 calls; --set thorough=diva runs DIVA instead; --set fast=judge: the "
                          "fast budget judges an ambiguous question's readings instead of drafting)")
    ask.add_argument("--set", action="append", metavar="NAME=VALUE", help="any other setting of the method")
    ask.add_argument("--json", action="store_true", help="print one JSON object instead of streaming")
    ask.set_defaults(run=cmd_ask)

    add_mcp_parser(commands, with_index)  # `disambig mcp`: the tools for agent hosts (agent/app/mcp_command.py)

    methods = commands.add_parser("methods", help="list the available methods")
    methods.set_defaults(run=cmd_methods)

    chat = with_index(commands.add_parser("chat", help="terminal chat: streamed answers, clarification, saved threads"))
    chat.add_argument("--thread", help="thread id to continue (default: a new one, printed at start)")
    chat.add_argument("--db", help="SQLite file for threads (default: chat.sqlite in the per-user data dir)")
    chat.add_argument("--database-url", help=SHARED_HELP)
    chat.add_argument("--method", help="method that answers each message (default auto; see `disambig methods`)")
    chat.add_argument("--model", help="local, local-small, gguf:PATH or openai:NAME (default $DISAMBIG_MODEL, else "
                     "openai:$OPENAI_MODEL when OPENAI_BASE_URL or OPENAI_API_KEY is set, else local)")
    chat.add_argument("--mode", choices=["dense", "sparse", "hybrid"], help="retriever (default hybrid)")
    chat.add_argument("--k", type=int, help="passages to retrieve")
    chat.add_argument("--no-clarify", action="store_true", help="never ask; answers cover every interpretation")
    chat.add_argument("--set", action="append", metavar="NAME=VALUE", help="any other chat setting (graphs/chat.py)")
    chat.set_defaults(run=cmd_chat)

    serve = commands.add_parser("serve", help="run every graph behind the LangGraph server API (langgraph dev)")
    serve.add_argument("--host", default="127.0.0.1", help="interface to bind (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=2024, help="port (default 2024)")
    serve.add_argument("--config", help="use this langgraph.json instead of one generated from the registry")
    serve.add_argument("--state-dir", help="where the generated config and server files go (default: per-user data dir)")
    serve.add_argument("--studio", action="store_true", help="also open LangGraph Studio in a browser")
    serve.add_argument("--print-config", action="store_true", help="print the generated config and command, then exit")
    serve.add_argument("--backend", choices=["dev", "postgres"],
                       help="dev: langgraph dev, in memory, no auth (default); postgres: Aegra on PostgreSQL with "
                            "API keys (default $DISAMBIG_SERVE_BACKEND)")
    serve.add_argument("--database-url", help="PostgreSQL URL for --backend postgres (default $DISAMBIG_DATABASE_URL); "
                       "it holds the index too unless $DISAMBIG_INDEX names a directory (the index alone: $DISAMBIG_INDEX_URL)")
    add_index_flags(serve, shared=True)
    serve.set_defaults(run=cmd_serve)

    from agent.evaluation.command import add_eval_parser

    add_eval_parser(commands)  # `disambig eval`: datasets, metrics, reports (agent/evaluation/)

    train = commands.add_parser("train-detector", help="train the ambiguity detector on labelled queries (CSV/JSONL)")
    train.add_argument("data", metavar="DATA", help="CSV or JSONL with text (or query/question) and label columns")
    train.add_argument("--out", default="detector_model.npz", help="where to write the model (default ./detector_model.npz)")
    train.add_argument("--test-size", type=float, default=0.25, help="held-out share (default 0.25; a split column wins)")
    train.add_argument("--seed", type=int, default=0)
    train.add_argument("--augment", action="store_true", help="add the paper's rule-based ambiguous variants to training")
    train.add_argument("--entity-types", default="", help="comma-separated entity-type words for the lexical rule")
    train.add_argument("--llm-sample", type=int, default=0, help="also score the LLM few-shot detector on N held-out queries")
    train.add_argument("--model", help="chat model for the LLM baseline (default: as for ask)")
    train.add_argument("--json", action="store_true", help="print the report as JSON")
    train.set_defaults(run=cmd_train_detector)
    return parser


def add_lifecycle_parsers(commands, with_index) -> None:
    """`disambig delete` and `disambig stats`: keeping an index in step with its sources."""
    delete = with_index(commands.add_parser("delete", help="remove documents (all their passages) by document id"))
    delete.add_argument("ids", nargs="+", metavar="ID", help="document ids (as given, or the path relative to the root)")
    delete.add_argument("--missing-ok", action="store_true", help="ignore ids the index does not hold")
    delete.add_argument("--json", action="store_true", help="print the summary as JSON")
    delete.set_defaults(run=cmd_delete)

    stats = with_index(commands.add_parser("stats", help="documents, chunks, size, encoder, last update, consistency"))
    stats.add_argument("--json", action="store_true", help="print the figures as JSON")
    stats.set_defaults(run=cmd_stats)


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except DisambigError as error:
        print(f"disambig: error: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("disambig: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
