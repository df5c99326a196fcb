"""`disambig mcp` driven by real clients: the MCP SDK's own client over stdio and streamable HTTP,
and a LangGraph agent taking the tools through langchain-mcp-adapters. The server runs as a
subprocess on the demo index; `--budget instant` answers without a model, so every answer here
is the product's own (no scripted model crosses the process boundary)."""

import asyncio
import json
import os
import socket
import subprocess
import sys
import time
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamablehttp_client
from mcp.shared.exceptions import McpError

ROOT = Path(__file__).resolve().parents[1]
KEY = "alice-key-0123456789"
HP = "What is HP?"


def server_args(index: str, *extra: str) -> list[str]:
    return ["-m", "agent.app.cli", "mcp", "--index", index, *extra]


@asynccontextmanager
async def stdio_session(index: str, *extra: str, elicit=None):
    """A client session with `disambig mcp` over stdio (the environment passed whole: the SDK's default drops it)."""
    params = StdioServerParameters(command=sys.executable, args=server_args(index, *extra), env=dict(os.environ),
                                   cwd=str(ROOT))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, elicitation_callback=elicit) as session:
            await session.initialize()
            yield session


def run(coroutine):
    return asyncio.run(asyncio.wait_for(coroutine, timeout=240))


def cli_json(index: str, question: str) -> dict:
    done = subprocess.run([sys.executable, "-m", "agent.app.cli", "ask", question, "--index", index,
                           "--budget", "instant", "--json"], capture_output=True, text=True, cwd=ROOT, timeout=240)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_stdio_tools_answer_like_the_cli_with_progress_first_and_cited_resources(demo_index):
    progress: list[tuple[float, str]] = []

    async def session_run():
        async with stdio_session(demo_index) as session:  # this client offers no elicitation: every reading
            tools = {tool.name: tool for tool in (await session.list_tools()).tools}
            started = time.monotonic()

            async def on_progress(value, total, message):
                progress.append((time.monotonic() - started, message or ""))

            asked = await session.call_tool("ask", {"question": HP, "budget": "instant"}, progress_callback=on_progress)
            progress_at_result = len(progress)
            found = await session.call_tool("search", {"query": "horsepower unit of power", "k": 3})
            held = await session.call_tool("documents", {})
            cited = asked.structuredContent["sources"][0]
            resource = await session.read_resource(cited["uri"])
            return tools, asked, progress_at_result, found, held, cited, resource

    tools, asked, progress_at_result, found, held, cited, resource = run(session_run())
    assert set(tools) == {"ask", "search", "documents"}  # no ingest without --allow-ingest
    assert set(tools["ask"].inputSchema["properties"]) == {"question", "method", "budget"}
    assert {"answer", "readings", "sources", "route"} <= set(tools["ask"].outputSchema["properties"])
    result = asked.structuredContent
    expected = cli_json(demo_index, HP)
    assert not asked.isError and result["answer"] == expected["answer"]  # what `disambig ask --json` answers
    assert [r["question"] for r in result["readings"]] == [i["question"] for i in expected["interpretations"]]
    assert len(result["readings"]) >= 2 and result["chosen"] is None
    assert {s["id"] for s in result["sources"]} == set(expected["cited"])
    # the readings arrived as progress before the result, each line as the answer states it
    assert progress_at_result >= 2 and progress[-1][1] == "answer ready"
    first_lines = progress[0][1].splitlines()
    assert len(first_lines) >= 2 and all(line in result["answer"] for line in first_lines)
    passages = found.structuredContent["passages"]
    assert len(passages) == 3 and passages[0]["uri"].startswith("passage://") and passages[0]["text"]
    assert held.structuredContent["documents"] > 0 and held.structuredContent["check"]["consistent"] is True
    opened = json.loads(resource.contents[0].text)
    assert opened["id"] == cited["id"] and opened["title"] == cited["title"] and opened["text"]


def elicitation(action: str, pick: str | None = None, seen: list | None = None):
    async def answer(context, params: types.ElicitRequestParams) -> types.ElicitResult:
        choice = params.requestedSchema["properties"]["choice"]
        if seen is not None:
            seen.append((params.message, choice["enum"]))
        if action != "accept":
            return types.ElicitResult(action=action)
        return types.ElicitResult(action="accept", content={"choice": next(o for o in choice["enum"] if o == pick)})

    return answer


def test_elicitation_answers_the_chosen_reading_and_a_decline_gets_every_reading(demo_index):
    asked: list = []

    async def both():
        async with stdio_session(demo_index, elicit=elicitation("accept", "Horsepower", asked)) as session:
            chosen = await session.call_tool("ask", {"question": HP, "budget": "instant"})
        async with stdio_session(demo_index, elicit=elicitation("decline")) as session:
            declined = await session.call_tool("ask", {"question": HP, "budget": "instant"})
        return chosen.structuredContent, declined.structuredContent

    chosen, declined = run(both())
    message, options = asked[0]
    assert message.startswith(HP) and "Horsepower" in options and "Hewlett-Packard" in options
    assert options[-1] == "All of them"
    assert chosen["chosen"] == "Horsepower"
    assert [r["question"] for r in chosen["readings"]] == ["What is HP (Horsepower)?"]
    assert "unit of power" in chosen["answer"] and "Hewlett" not in chosen["answer"]
    assert [s["title"] for s in chosen["sources"]] == ["Horsepower"]
    assert declined["chosen"] is None and declined["answer"] == cli_json(demo_index, HP)["answer"]
    assert len(declined["readings"]) >= 3


def test_errors_carry_the_cli_messages(demo_index, tmp_path):
    async def errors():
        async with stdio_session(demo_index) as session:
            results = [await session.call_tool("ask", {"question": "   "}),
                       await session.call_tool("ask", {"question": HP, "method": "no-such-method"}),
                       await session.call_tool("ingest", {"paths": ["."]})]
            with pytest.raises(McpError, match="no passage 'no-such-passage' in the index"):
                await session.read_resource("passage://no-such-passage")
        async with stdio_session(str(tmp_path / "nothing-here")) as session:
            results.append(await session.call_tool("ask", {"question": HP, "budget": "instant"}))
        return results

    empty, method, ingest, no_index = run(errors())
    assert empty.isError and "question is empty" in empty.content[0].text
    assert method.isError and "unknown method 'no-such-method'" in method.content[0].text
    assert ingest.isError and "ingest" in ingest.content[0].text  # not offered without --allow-ingest
    assert no_index.isError and "no index at" in no_index.content[0].text
    assert "disambig ingest" in no_index.content[0].text


def test_unreachable_model_is_a_tool_error_naming_it(demo_index, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "none")

    async def unreachable():
        async with stdio_session(demo_index, "--model", "openai:absent") as session:
            return await session.call_tool("ask", {"question": HP, "method": "vanilla"})

    result = run(unreachable())
    assert result.isError and "cannot reach the model server at http://127.0.0.1:9/v1" in result.content[0].text


def test_ingest_only_inside_the_allowed_folder(tmp_path):
    allowed, outside = tmp_path / "docs", tmp_path / "private"
    allowed.mkdir(), outside.mkdir()
    (allowed / "guide.md").write_text("# Widget guide\n\n## Install\n\nRun `widget setup --user` to install Widget.\n")
    (outside / "secret.md").write_text("# Secret\n\nThe vault code is 1234.\n")
    (allowed / "escape").symlink_to(outside / "secret.md")
    index = str(tmp_path / "index")

    async def ingesting():
        async with stdio_session(index, "--allow-ingest", str(allowed)) as session:
            names = {tool.name for tool in (await session.list_tools()).tools}
            added = await session.call_tool("ingest", {"paths": ["guide.md"]})
            refused = [await session.call_tool("ingest", {"paths": [path]})
                       for path in ("../private/secret.md", str(outside), "escape", ".")]
            found = await session.call_tool("search", {"query": "install Widget", "k": 1})
        return names, added, refused, found

    names, added, refused, found = run(ingesting())
    assert "ingest" in names
    assert not added.isError and added.structuredContent["documents_added"] == 1
    assert added.structuredContent["answer_units"] >= 1  # embedded for the host's first question
    assert (tmp_path / "index" / "sentence-vectors.sqlite").is_file()
    assert all(result.isError for result in refused)
    assert all("outside the folder this server may ingest from" in r.content[0].text for r in refused[:3])
    assert "escape links outside" in refused[3].content[0].text  # a folder holding a link out is refused whole
    passage = found.structuredContent["passages"][0]
    assert "widget setup --user" in passage["text"] and passage["document"] == "guide.md"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def http_server(demo_index):
    port = free_port()
    env = {**os.environ, "DISAMBIG_API_KEYS": f"alice:{KEY}"}
    process = subprocess.Popen([sys.executable, *server_args(demo_index, "--http", "--port", str(port))], cwd=ROOT,
                               env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}/mcp"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            httpx.post(url, timeout=1)
            break
        except httpx.TransportError:
            assert process.poll() is None, process.stderr.read()
            time.sleep(0.3)
    yield url
    process.terminate()
    process.wait(timeout=30)


def test_http_needs_a_key_and_answers_concurrent_clients(http_server):
    assert httpx.post(http_server, json={}).status_code == 401
    assert httpx.post(http_server, json={}, headers={"Authorization": "Bearer wrong-key-0123456789"}).status_code == 401

    async def ask(question: str, headers: dict) -> dict:
        async with streamablehttp_client(http_server, headers=headers) as (read, write, _):
            async with ClientSession(read, write) as session:
                await session.initialize()
                return (await session.call_tool("ask", {"question": question, "budget": "instant"})).structuredContent

    async def several():
        return await asyncio.gather(*[ask(HP, {"Authorization": f"Bearer {KEY}"}) for _ in range(3)],
                                    ask(HP, {"X-Api-Key": KEY}))

    answers = run(several())
    assert len({a["answer"] for a in answers}) == 1 and len(answers[0]["readings"]) >= 2


def test_no_key_configured_means_no_http_server(demo_index):
    env = {k: v for k, v in os.environ.items() if not k.startswith("DISAMBIG_API_KEYS")}
    done = subprocess.run([sys.executable, *server_args(demo_index, "--http", "--port", str(free_port()))], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "no API keys configured" in done.stderr


def test_a_langgraph_agent_takes_ask_through_langchain_mcp_adapters(demo_index):
    from langchain.agents import create_agent
    from langchain_mcp_adapters.client import MultiServerMCPClient

    from tests.agent_script import ToolCallingScript

    class McpAgentScript(ToolCallingScript):
        @staticmethod
        def summarize(result: dict) -> str:
            return f"{result['answer']} (sources: {', '.join(s['id'] for s in result['sources'])})"

    async def agent_run():
        client = MultiServerMCPClient({"disambig": {"transport": "stdio", "command": sys.executable, "cwd": str(ROOT),
                                                    "args": server_args(demo_index), "env": dict(os.environ)}})
        tools = await client.get_tools()
        model = McpAgentScript(tool_name="ask", tool_args={"question": HP, "budget": "instant"})
        agent = create_agent(model, tools)
        state = await agent.ainvoke({"messages": [{"role": "user", "content": HP}]})
        return model, tools, state

    model, tools, state = run(agent_run())
    assert set(model.bound_tools) == {"ask", "search", "documents"}
    tool_message = next(m for m in state["messages"] if m.type == "tool")
    structured = tool_message.artifact["structured_content"]
    assert structured["answer"] == cli_json(demo_index, HP)["answer"] and len(structured["readings"]) >= 2
    assert state["messages"][-1].content.startswith(structured["answer"].split(" [")[0])
