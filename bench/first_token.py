"""How soon a grounded answer is on screen, and what streams.

    .venv/bin/python bench/first_token.py [--index DIR] [--model local] [--n 41] [--skip-serve]
    .venv/bin/python bench/first_token.py --questions heldout --index DEMO_INDEX --skip-fresh
    .venv/bin/python bench/first_token.py --questions asqa --index WIKI_POOL_INDEX --skip-fresh
    .venv/bin/python bench/first_token.py --index DIR --skip-serve --method diva --set readings=on --set verify_calls=batched

Prints, each measured as a user meets it:
- a cold `disambig search` process (fresh interpreter, imports, encoder, index), median of 3;
- `disambig ask "What is HP?" --method auto` in a fresh process: every line it prints with its
  time after enter (stdout and stderr), the first cited line ("[n]") on stdout, and the end;
- through a warm `disambig serve` (started here, one question answered first): the first
  cited text of a new question (a `readings` event or a token holding "[n]");
- the complete `auto` answer over the demo fixture's test split (or the held-out fixture, or the
  ASQA pool's test split) through that server, one question in flight: p50/p95 seconds,
  completion tokens p95, and repeated sentences in the streamed text (a sentence whose words
  equal an earlier one's in the same answer).
CPU figures depend on whatever else runs on the machine: run it on an idle machine (under
`flock /tmp/disambig-heavy.lock` on a shared one) and say so next to the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import select
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
CITED = re.compile(r"\[\d+(?:,\s*\d+)*\]")
SOURCES = {"demo": "the demo test split", "heldout": "the held-out fixture", "asqa": "the ASQA pool test split"}


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "agent.app.cli", *args]


def cold_search(index: str, runs: int = 3) -> list[float]:
    """Seconds of whole `disambig search` processes, each a fresh interpreter."""
    times = []
    for _ in range(runs):
        started = time.time()
        done = subprocess.run(cli("search", "What is HP?", "--index", index), capture_output=True, text=True, cwd=ROOT)
        times.append(time.time() - started)
        if done.returncode != 0:
            raise SystemExit(f"search failed: {done.stderr.strip()}")
    return times


def timed_ask(question: str, index: str, model: str, method: str, settings: list[str] = ()) -> dict:
    """Run `disambig ask` in a fresh process (`settings`: its `--set NAME=VALUE`s); every output
    line with its time after enter."""
    command = cli("ask", question, "--method", method, "--model", model, "--index", index,
                  *[arg for setting in settings for arg in ("--set", setting)])
    started = time.time()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0, cwd=ROOT)
    lines, partial, first_cited = [], {process.stdout: b"", process.stderr: b""}, None
    open_streams = {process.stdout, process.stderr}
    while open_streams:
        for stream in select.select(list(open_streams), [], [])[0]:
            chunk = os.read(stream.fileno(), 4096)
            now = time.time() - started
            if not chunk:
                open_streams.discard(stream)
                chunk = b"\n" if partial[stream] else b""
            text = partial[stream] + chunk
            *complete, partial[stream] = text.split(b"\n")
            for raw in complete:
                line = raw.decode(errors="replace")
                lines.append((now, "out" if stream is process.stdout else "err", line))
                if stream is process.stdout and first_cited is None and CITED.search(line):
                    first_cited = now
            # a cited sentence still being printed on its line counts when it is complete
            if stream is process.stdout and first_cited is None and CITED.search(partial[stream].decode(errors="replace")):
                first_cited = now
    process.wait()
    return {"lines": lines, "first_cited": first_cited, "done": time.time() - started, "exit": process.returncode}


def sentence_keys(text: str) -> list[str]:
    from agent.llm.streaming import split_sentences, words

    return [" ".join(words(s)) for s in split_sentences(text) if words(s)]


def repeated_sentences(text: str) -> int:
    keys = sentence_keys(text)
    return len(keys) - len(set(keys))


class Serve:
    """`disambig serve` on a free port in its own process group, stopped on exit."""

    def __init__(self, index: str, model: str):
        from bench.postgres import free_port

        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.state = tempfile.mkdtemp(prefix="first-token-serve-")
        env = {**os.environ, "DISAMBIG_INDEX": index, "DISAMBIG_MODEL": model, "LANGSMITH_TRACING": "false",
               "LANGGRAPH_CLI_NO_ANALYTICS": "1", "LANGGRAPH_NO_VERSION_CHECK": "1"}
        self.log = open(Path(self.state) / "server.log", "w")
        self.process = subprocess.Popen(cli("serve", "--port", str(self.port), "--state-dir", self.state), cwd=ROOT,
                                        env=env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        from bench.replicas import wait_ready

        wait_ready(self.process, f"{self.url}/ok", Path(self.log.name))

    def run(self, question: str, method: str = "auto", context: dict | None = None) -> dict:
        """One stateless streamed run (`context`: the run's settings): first cited text, streamed
        tokens, the final state, seconds."""
        import httpx

        body = {"assistant_id": method, "input": {"question": question}, "stream_mode": ["custom", "values"],
                **({"context": context} if context else {})}
        started, first_cited, tokens, state, name = time.time(), None, "", {}, None
        with httpx.stream("POST", f"{self.url}/runs/stream", json=body, timeout=900) as response:
            for line in response.iter_lines():
                if line.startswith("event: "):
                    name = line[len("event: "):]
                elif line.startswith("data: ") and name:
                    data = json.loads(line[len("data: "):])
                    if name == "custom" and isinstance(data, dict):
                        cited = [r.get("text", "") for r in data.get("readings") or []] + [data.get("text") or ""]
                        if data.get("event") == "token":
                            tokens += data["text"]
                        if first_cited is None and any(CITED.search(text) for text in cited):
                            first_cited = time.time() - started
                    elif name == "values" and isinstance(data, dict):
                        state = data
                    elif name == "error":
                        raise SystemExit(f"run failed: {data}")
        return {"first_cited": first_cited, "tokens": tokens, "state": state, "seconds": time.time() - started}

    def stop(self) -> None:
        from bench.replicas import stop_group

        stop_group(self.process)
        self.log.close()


def test_questions(n: int, source: str = "demo") -> list[dict]:
    """The questions no rule was fitted to: the demo test split, the held-out fixture, or ASQA's test split."""
    if source == "asqa":
        from bench.prompt_compression import asqa_items

        return asqa_items("test")[:n]
    if source == "heldout":
        return json.loads((ROOT / "agent" / "data" / "heldout_questions.json").read_text())["questions"][:n]
    fixture = json.loads((ROOT / "agent" / "data" / "demo_questions.json").read_text())["questions"]
    wanted = (ROOT / "bench" / "splits" / "demo_test.txt").read_text().split()
    by_id = {q["id"]: q for q in fixture}
    return [by_id[i] for i in wanted if i in by_id][:n]


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * len(ordered)) - 1))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", help="an index of the demo corpus (default: built in a temp dir)")
    parser.add_argument("--model", default="local")
    parser.add_argument("--method", default="auto")
    parser.add_argument("--set", action="append", default=[], metavar="NAME=VALUE",
                        help="a setting of the method, in the fresh-process ask and the serve runs "
                             "(e.g. fast=judge); repeatable")
    parser.add_argument("--n", type=int, default=100, help="test questions through serve (0: none; default: all)")
    parser.add_argument("--questions", choices=["demo", "heldout", "asqa"], default="demo",
                        help="demo: the demo fixture's test split; heldout: the held-out fixture; asqa: the ASQA "
                             "pool's test split (needs --index of the wiki pool)")
    parser.add_argument("--skip-serve", action="store_true", help="only the fresh-process figures")
    parser.add_argument("--skip-fresh", action="store_true", help="only the figures through a warm serve")
    parser.add_argument("--out", help="write each test-split answer here (score: bench/sense_recall.py --rescore FILE)")
    args = parser.parse_args()
    if args.questions == "asqa" and not args.index:
        parser.error("--questions asqa needs --index (the wiki-pool index)")
    if args.questions == "asqa" and args.out:
        parser.error("--out writes fixture rows for bench/sense_recall.py; ASQA answers are scored by `disambig eval`")
    from bench.cost import build_demo_index

    index = args.index or build_demo_index()
    if not args.skip_fresh:
        fresh_process_figures(index, args.model, args.method, args.set)
    if args.skip_serve:
        return 0
    return serve_figures(index, args)


def fresh_process_figures(index: str, model: str, method: str, settings: list[str] = ()) -> None:
    searches = cold_search(index)
    print(f"cold `disambig search` process: median {statistics.median(searches):.2f} s "
          f"({', '.join(f'{t:.2f}' for t in searches)})", flush=True)

    ask = timed_ask("What is HP?", index, model, method, settings)
    sets = "".join(f" --set {setting}" for setting in settings)
    print(f"\n`disambig ask \"What is HP?\" --method {method} --model {model}{sets}` in a fresh process:")
    for seconds, stream, line in ask["lines"]:
        print(f"[{seconds:6.2f}s {stream}] {line}")
    first = ask["first_cited"]
    print(f"first cited line on stdout: {'none' if first is None else f'{first:.2f} s'}; done {ask['done']:.1f} s, "
          f"exit {ask['exit']}", flush=True)


def serve_figures(index: str, args: argparse.Namespace) -> int:
    from agent.app.settings import parse_settings
    from bench.sense_recall import result_row
    from graphs.registry import load_method

    context = parse_settings(args.set, load_method(args.method).builder.context_schema)
    server = Serve(index, args.model)
    try:
        server.run("What is HP?", args.method, context)  # the warm-up question: later ones find everything loaded
        warm = server.run("What is a Jaguar?", args.method, context)
        first = warm["first_cited"]
        print(f"\nwarm `disambig serve`: first cited text {'none' if first is None else f'{first:.2f} s'}, "
              f"answer complete {warm['seconds']:.1f} s", flush=True)
        runs = []
        out = open(args.out, "w", encoding="utf-8") if args.out else None
        for number, question in enumerate(test_questions(args.n, args.questions), 1):
            run = server.run(question["question"], args.method, context)
            run["repeats"] = repeated_sentences(run["tokens"])
            run["ambiguous"] = (run["state"].get("decision") or {}).get("ambiguous")  # the gate's verdict
            runs.append(run)
            flag = f"  ({run['repeats']} repeated)" if run["repeats"] else ""
            first = "    -" if run["first_cited"] is None else f"{run['first_cited']:5.1f}"
            gate = {True: "ambiguous", False: "clear"}.get(run["ambiguous"], "")
            print(f"  {number:2}. {run['seconds']:5.1f} s (first cited {first} s, {gate})  "
                  f"{question['question']}{flag}", flush=True)
            if out:
                row = result_row(question, run["state"], args.method, run["seconds"])
                out.write(json.dumps(row, ensure_ascii=False) + "\n")
                out.flush()
    finally:
        server.stop()
    if runs:
        seconds = [r["seconds"] for r in runs]
        completion = [(r["state"].get("usage") or {}).get("completion_tokens", 0) for r in runs]
        loops = sum((r["state"].get("usage") or {}).get("loops_stopped", 0) for r in runs)
        repeats = sum(r["repeats"] for r in runs)
        print(f"\n{args.method} over {SOURCES[args.questions]} (n={len(runs)}, one question in flight, warm serve, "
              f"model {args.model}): p50 {statistics.median(seconds):.1f} s, p95 {percentile(seconds, 0.95):.1f} s; "
              f"completion tokens p95 {percentile(completion, 0.95):.0f} (max {max(completion)}); "
              f"repeated sentences in streamed text: {repeats}; loops stopped: {loops}")
        for label, flag in (("ambiguous", True), ("clear", False)):
            mine = [r for r in runs if r["ambiguous"] is flag]
            firsts = [r["first_cited"] for r in mine if r["first_cited"] is not None]
            if mine:
                complete = statistics.median(r["seconds"] for r in mine)
                print(f"  judged {label} (n={len(mine)}): complete p50 {complete:.1f} s"
                      + (f", first cited text p50 {statistics.median(firsts):.1f} s ({len(firsts)} with one)"
                         if firsts else ", no cited text streamed"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
