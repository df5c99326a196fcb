"""`disambig mcp` against the command line: when the readings arrive, and concurrent HTTP calls.

    .venv/bin/disambig ingest --demo --index DEMO_INDEX
    .venv/bin/python bench/mcp_server.py --index DEMO_INDEX [--budget instant] [--calls 20]

1. Readings: for each question, the seconds from enter to the first readings line of
   `disambig ask` (a new process, as a user types it) and from `call_tool` to the first progress
   notification of a running stdio server (its first call, then warm), the same budget.
2. Load: `--calls` concurrent clients, each its own streamable-HTTP session with a key, asking
   with the instant budget; prints how many were answered, wrong or lost, and the wall time.
"""

import argparse
import asyncio
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamablehttp_client

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = ["What is HP?", "What is Mercury?", "What is the renewal policy?", "Who founded Hewlett-Packard?",
             "What is Java?"]
KEY = "bench-key-0123456789abcdef"


def cli_readings_seconds(index: str, question: str, budget: str) -> float | None:
    """Enter to the first line on stdout (the readings) of `disambig ask`."""
    started = time.monotonic()
    process = subprocess.Popen([sys.executable, "-m", "agent.app.cli", "ask", question, "--index", index,
                                "--budget", budget], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               text=True)
    line = process.stdout.readline()
    seconds = time.monotonic() - started
    process.kill()
    process.wait()
    return seconds if line.strip() else None


async def mcp_progress_seconds(index: str, budget: str) -> list[float]:
    """Per question, `call_tool` to the first progress notification, on one running server."""
    params = StdioServerParameters(command=sys.executable, args=["-m", "agent.app.cli", "mcp", "--index", index,
                                                                 "--no-clarify"], env=dict(os.environ), cwd=str(ROOT))
    seconds: list[float] = []
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        for question in QUESTIONS:
            started, first = time.monotonic(), []

            async def on_progress(value, total, message, first=first, started=started):
                first.append(time.monotonic() - started) if not first else None

            await session.call_tool("ask", {"question": question, "budget": budget}, progress_callback=on_progress)
            seconds.append(first[0] if first else float("nan"))
    return seconds


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def concurrent_calls(url: str, calls: int) -> list[str | Exception]:
    async def one(question: str) -> str:
        async with streamablehttp_client(url, headers={"Authorization": f"Bearer {KEY}"}) as (read, write, _):
            async with ClientSession(read, write) as session:
                await session.initialize()
                result = await session.call_tool("ask", {"question": question, "budget": "instant"})
                return "" if result.isError else result.structuredContent["answer"]

    return await asyncio.gather(*[one(QUESTIONS[n % len(QUESTIONS)]) for n in range(calls)], return_exceptions=True)


def load(index: str, calls: int) -> None:
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "agent.app.cli", "mcp", "--http", "--port", str(port),
                               "--index", index], cwd=ROOT, env={**os.environ, "DISAMBIG_API_KEYS": f"bench:{KEY}"},
                              stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        while True:
            try:
                httpx.post(url, timeout=1)
                break
            except httpx.TransportError:
                time.sleep(0.3)
        asyncio.run(concurrent_calls(url, 1))  # the index and encoder load once, outside the timing
        started = time.monotonic()
        answers = asyncio.run(concurrent_calls(url, calls))
        wall = time.monotonic() - started
    finally:
        server.terminate()
        server.wait()
    lost = sum(isinstance(a, Exception) for a in answers)
    empty = sum(a == "" for a in answers)
    print(f"load: {calls} concurrent HTTP calls (instant): {calls - lost - empty} answered, {empty} errors, "
          f"{lost} lost, {wall:.1f} s wall")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index", required=True)
    parser.add_argument("--budget", default="instant", choices=["instant", "fast"])
    parser.add_argument("--calls", type=int, default=20)
    args = parser.parse_args()
    cli = [cli_readings_seconds(args.index, q, args.budget) for q in QUESTIONS]
    mcp = asyncio.run(mcp_progress_seconds(args.index, args.budget))
    print("question | CLI: enter to readings (s) | MCP: call to first progress (s)")
    for question, c, m in zip(QUESTIONS, cli, mcp):
        print(f"{question} | {c:.2f} | {m:.2f}" if c is not None else f"{question} | no readings | {m:.2f}")
    print(f"median: CLI {statistics.median([c for c in cli if c is not None]):.2f} s, MCP first call {mcp[0]:.2f} s, "
          f"MCP warm {statistics.median(mcp[1:]):.2f} s")
    load(args.index, args.calls)


if __name__ == "__main__":
    main()
