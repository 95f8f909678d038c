"""Drives the MCP `project_*` tools of `safesh mcp` (stdio) with the official
Python MCP SDK, playing the human behind a client that declares elicitation:
validate, plan, approve (the human accepts in the elicitation), run once (the
approval is used up), a second run the human declines, and a client without
elicitation that gets an approval id for `safesh approve`.

usage: mcp_project.py SAFESH CONFIG

Prints `ok: <check>` per check and `ALL OK` at the end; any failure raises.
"""

import os
import sys

import anyio
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client


def check(cond, what, detail=""):
    if not cond:
        raise AssertionError(f"{what}: {detail}")
    print(f"ok: {what}", flush=True)


def attr(obj, snake, camel):
    v = getattr(obj, snake, None)
    return v if v is not None else getattr(obj, camel, None)


def sc(result):
    return attr(result, "structured_content", "structuredContent") or {}


async def session(safesh, config, answers, body):
    asked = []

    async def human(context, params):
        asked.append(getattr(params, "message", ""))
        if answers and answers.pop(0) == "accept":
            return types.ElicitResult(action="accept", content={"approve": True})
        return types.ElicitResult(action="decline")

    kwargs = {} if answers is None else {"elicitation_callback": human}
    params = StdioServerParameters(
        command=safesh, args=["--config", config, "mcp"], cwd=os.getcwd(), env=dict(os.environ)
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, **kwargs) as s:
            await s.initialize()
            await body(s, asked)


async def main():
    safesh, config = sys.argv[1:3]

    async def with_human(s, asked):
        names = {t.name for t in (await s.list_tools()).tools}
        want = {"project_load", "project_validate", "project_plan", "project_approve",
                "project_reject", "project_run", "project_init"}
        check(want <= names, "project tools listed", sorted(names))
        v = sc(await s.call_tool("project_validate", {"path": "project.agsh.yaml"}))
        check(v.get("valid") is True, "project_validate", v)
        v = sc(await s.call_tool("project_plan", {"path": "project.agsh.yaml"}))
        check(v.get("planned") is True and v.get("needs_approval") is True, "project_plan", v)
        h = v["plan"]["hash"]
        v = sc(await s.call_tool("project_approve", {"hash": h}))
        check(v.get("approved") is True and len(asked) == 1 and h[:12] in asked[0],
              "project_approve asks the human by elicitation", (v, asked))
        v = sc(await s.call_tool("project_run", {"hash": h}))
        check(v.get("passed") is True and os.path.exists("found.txt"), "project_run runs the approved plan", v)
        check(len(asked) == 1, "the run used the approval without asking again", asked)
        os.remove("found.txt")
        v = sc(await s.call_tool("project_run", {"hash": h}))
        check(v.get("passed") is False and v["error"]["code"] == "PERMISSION_DENIED"
              and not os.path.exists("found.txt") and len(asked) == 2,
              "single use: the next run asks again, and the human declines", v)

    await session(safesh, config, ["accept", "decline"], with_human)

    async def without_human(s, asked):
        v = sc(await s.call_tool("project_plan", {"path": "project.agsh.yaml"}))
        h = v["plan"]["hash"]
        v = sc(await s.call_tool("project_approve", {"hash": h}))
        check(v.get("approved") is False and v["error"]["code"] == "APPROVAL_REQUIRED" and v.get("approval_id"),
              "without elicitation: APPROVAL_REQUIRED with an id", v)

    await session(safesh, config, None, without_human)
    print("ALL OK", flush=True)


anyio.run(main)
