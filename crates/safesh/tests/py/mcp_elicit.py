"""Plays the human behind an MCP client (the official Python `mcp` SDK) that
declares elicitation, against the shipped `safesh mcp` over stdio.

usage: mcp_elicit.py SAFESH CONFIG MODE SCRIPT
  MODE: accept  - declare elicitation, tick the box and accept
        decline - declare elicitation, decline
        none    - no elicitation capability (never asked)

Runs SCRIPT with the `exec` tool (no session) and prints one JSON line:
{"asked": [messages shown to the human], "result": structuredContent,
 "is_error": bool}.
"""

import json
import os
import sys

import anyio
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client


def attr(obj, snake, camel):
    """SDK 1.x uses camelCase attributes, 2.x snake_case."""
    v = getattr(obj, snake, None)
    return v if v is not None else getattr(obj, camel, None)


async def main():
    safesh, config, mode, script = sys.argv[1:5]
    asked = []

    async def human(context, params):
        asked.append(getattr(params, "message", ""))
        if mode == "accept":
            return types.ElicitResult(action="accept", content={"approve": True})
        return types.ElicitResult(action="decline")

    kwargs = {} if mode == "none" else {"elicitation_callback": human}
    params = StdioServerParameters(
        command=safesh, args=["--config", config, "mcp"], cwd=os.getcwd(), env=dict(os.environ)
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, **kwargs) as s:
            await s.initialize()
            r = await s.call_tool("exec", {"script": script})
            out = {
                "asked": asked,
                "result": attr(r, "structured_content", "structuredContent") or {},
                "is_error": bool(attr(r, "is_error", "isError")),
            }
    print(json.dumps(out), flush=True)


anyio.run(main)
