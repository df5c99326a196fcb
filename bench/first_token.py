"""Seconds from pressing enter to the first answer character of `disambig ask`, and to the end.

    .venv/bin/python bench/first_token.py --index DIR [--method vanilla] [--model local] ["What is HP?"]

Runs the CLI as a user would (a fresh process: imports, encoder, index, llama.cpp server start
included) and timestamps its stderr lines (stages, status) and the first character it prints on
stdout (the streamed answer). Run it on an otherwise idle machine.
"""

from __future__ import annotations

import argparse
import os
import select
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("question", nargs="?", default="What is HP?")
    parser.add_argument("--index", required=True)
    parser.add_argument("--method", default="vanilla")
    parser.add_argument("--model", default="local")
    args = parser.parse_args()
    command = [str(ROOT / ".venv" / "bin" / "disambig"), "ask", args.question, "--method", args.method,
               "--model", args.model, "--index", args.index]
    started = time.time()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0)
    first, out, open_streams = None, b"", {process.stdout, process.stderr}
    while open_streams:
        for stream in select.select(list(open_streams), [], [])[0]:
            chunk = os.read(stream.fileno(), 4096)
            if not chunk:
                open_streams.discard(stream)
            elif stream is process.stdout:
                first = first if first is not None or not chunk.strip() else time.time() - started
                out += chunk
            else:
                for line in chunk.decode(errors="replace").splitlines():
                    print(f"[{time.time() - started:5.1f}s] {line}", file=sys.stderr)
    process.wait()
    print(out.decode(errors="replace"))
    print(f"{args.method}: first answer character {first if first is None else round(first, 1)} s, "
          f"done {time.time() - started:.1f} s, exit {process.returncode}")
    return process.returncode


if __name__ == "__main__":
    raise SystemExit(main())
