"""A scripted tool-calling chat model that drives `create_agent` in tests and notebooks.

Turn 1 (no tool result yet): call `ask_documents` with the scripted arguments. Turn 2: reply
from the tool's JSON, so a test can check the agent really used what the tool returned.
"""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from tests.scripted import ScriptedChatModel


def tool_text(content: str | list) -> str:
    """A tool message's text: LangChain tools give a string, MCP tools (langchain-mcp-adapters) content blocks."""
    if isinstance(content, str):
        return content
    return "".join(block["text"] if isinstance(block, dict) else str(block) for block in content
                   if not isinstance(block, dict) or block.get("type") == "text")


class ToolCallingScript(ScriptedChatModel):
    tool_name: str = "ask_documents"
    tool_args: dict[str, Any] = Field(default_factory=dict)
    bound_tools: list[str] = Field(default_factory=list)

    def bind_tools(self, tools, **kwargs):
        self.bound_tools = [getattr(t, "name", None) or t.get("name") for t in tools]
        return self

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        last = messages[-1]
        if last.type != "tool":
            call = {"name": self.tool_name, "args": self.tool_args, "id": "call-1", "type": "tool_call"}
            message = AIMessage(content="", tool_calls=[call])
        else:
            message = AIMessage(content=self.summarize(json.loads(tool_text(last.content))))
        return ChatResult(generations=[ChatGeneration(message=message)])

    @staticmethod
    def summarize(result: dict) -> str:
        if result["status"] == "needs_clarification":
            listing = "; ".join(f"{o['option']}) {o['question']}" for o in result["options"])
            return f"Which do you mean? {listing}"
        if result["status"] == "error":
            return f"The documents tool failed: {result['error']}"
        sources = ", ".join(s["id"] for s in result["sources"])
        return f"{result['answer']} (sources: {sources})"
