"""End to end with the real embedded model (the 0.5B): ingest the demo corpus, then ask."""

import json
import os
import re
import subprocess
import sys

import pytest

pytestmark = pytest.mark.integration


def disambig(*argv, env=None):
    return subprocess.run([sys.executable, "-m", "agent.app.cli", *argv], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=900)


def test_ingest_then_ask_gives_a_cited_answer(tmp_path):
    index = str(tmp_path / "index")
    ingest = disambig("ingest", "--demo", "--index", index, "--quiet")
    assert ingest.returncode == 0, ingest.stderr
    assert re.search(r"added \d{3} passages", ingest.stdout)

    asked = disambig("ask", "What is HP?", "--index", index, "--model", "local-small", "--json",
                     env={"DISAMBIG_LLM_THREADS": "2"})
    assert asked.returncode == 0, asked.stderr
    result = json.loads(asked.stdout)
    passage_ids = {p["id"] for p in result["passages"]}
    # auto's k passages, plus the passage of each extractive reading (at most 3) when it was ambiguous
    assert 5 <= len(passage_ids) <= 8 and result["answer"].strip()
    assert result["decision"]["abstained"] is False
    cited = {c for item in result["interpretations"] for c in item["citations"]}
    inline = [int(n) for n in re.findall(r"\[(\d+)\]", result["answer"])]
    assert cited <= passage_ids
    assert cited or any(1 <= n <= 5 for n in inline), "the answer cites no passage"
    usage = result["usage"]
    assert usage["llm_calls"] - usage["malformed"] == 1 and usage["completion_tokens"] > 0  # one call, or one retry
