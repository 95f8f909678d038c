"""Drives `safesh --config CONFIG mcp` with the Python MCP SDK (the `mcp`
package): the command catalogue (`commands_list`, `commands_describe`) and a
platform command through `exec`.

usage: mcp_platform.py SAFESH CONFIG PROJECT_DIR

Prints `ok: <check>` per check and `ALL OK` at the end; any failure raises.
"""

import json
import os
import sys

import anyio
from mcp import ClientSession, StdioServerParameters
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


def is_error(result):
    return bool(attr(result, "is_error", "isError"))


async def scenario(s):
    tools = {t.name: t for t in (await s.list_tools()).tools}
    check({"commands_list", "commands_describe"} <= set(tools), "catalogue tools listed", sorted(tools))

    r = await s.call_tool("commands_list", {})
    cmds = {c["name"]: c for c in sc(r).get("commands", [])}
    check(not is_error(r) and cmds.get("fs:read", {}).get("kind") == "platform", "fs:read listed as a platform command", sc(r))
    check(cmds["fs:read"]["callable"] is True, "fs:read callable")
    check(cmds.get("cat", {}).get("kind") == "utility", "utilities listed")
    check(cmds.get("git", {}).get("subcommands") == ["status", "log"], "allowed program with its subcommands", cmds.get("git"))
    gh = cmds.get("github:pr:list", {})
    check(gh.get("callable") is False and "GH_PLATFORM_TOKEN" in gh.get("reason", {}).get("message", ""), "github without token: not callable, reason names the variable", gh)

    r = await s.call_tool("commands_list", {"namespace": "fs"})
    names = sorted(c["name"] for c in sc(r)["commands"])
    check(names == ["fs:list", "fs:mkdir", "fs:read", "fs:stat", "fs:write"], "namespace filter", names)

    r = await s.call_tool("commands_describe", {"name": "github:issue:create"})
    d = sc(r)
    check(d.get("risk") == "write" and d["credentials"][0]["env"] == "GH_PLATFORM_TOKEN", "describe: risk and credential", d)
    check(d["input_schema"]["properties"]["repo"].get("x-positional") is True, "describe: x-positional")
    check("title" in d["input_schema"]["required"], "describe: required fields")

    r = await s.call_tool("commands_describe", {"name": "no:such"})
    check(is_error(r), "describe of an unknown command is an error")

    r = await s.call_tool("exec", {"script": "fs:read hello.txt | jq -r .content"})
    check(not is_error(r) and sc(r)["output"] == "hi\n\n", "exec runs a platform command", sc(r))


async def main():
    safesh, config, proj = sys.argv[1], sys.argv[2], sys.argv[3]
    params = StdioServerParameters(command=safesh, args=["--config", config, "mcp"], cwd=proj, env=dict(os.environ))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as s:
            await s.initialize()
            await scenario(s)
    print("ALL OK", flush=True)


anyio.run(main)
