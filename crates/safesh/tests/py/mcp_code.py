"""Drives the MCP tool `code` of `safesh mcp` with the Python MCP SDK (issue 20).

usage: mcp_code.py SAFESH CONFIG PROJECT_DIR

Prints `ok: <check>` per check and `ALL OK` at the end; any failure raises.
"""

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


async def scenario(s, proj):
    tools = {t.name: t for t in (await s.list_tools()).tools}
    check("code" in tools, "the code tool is listed", sorted(tools))
    props = attr(tools["code"], "input_schema", "inputSchema")["properties"]
    check({"source", "language", "session", "timeout_ms", "input", "output_mode"} <= set(props), "code's parameters", props)

    r = await s.call_tool("code", {"source": "const n: number = 41; console.log(n + 1);"})
    check(not is_error(r) and sc(r)["exit_code"] == 0 and sc(r)["output"] == "42\n", "typescript runs", sc(r))

    r = await s.call_tool("code", {"source": "console.log([1,2].map(x => x * 3).join())", "language": "javascript", "output_mode": "merged"})
    check(sc(r)["output"] == "3,6\n", "javascript, merged output", sc(r))

    r = await s.call_tool("code", {"source": "throw new Error('boom')", "output_mode": "separate"})
    check(sc(r)["exit_code"] == 1 and "Uncaught Error: boom" in sc(r)["stderr"], "uncaught exception: exit 1 with the message", sc(r))

    r = await s.call_tool("code", {"source": "await $.cmd('sudo', 'id')"})
    check(is_error(r) and sc(r)["error"]["code"] == "BLOCKED", "a refused program is the same refusal as exec", sc(r))

    r = await s.call_tool("code", {"source": "console.log(await fs.read('.env'))"})
    check("sk-live" not in str(sc(r)), "a printed secret is redacted", sc(r))

    r = await s.call_tool("code", {"source": "for (;;) {}", "timeout_ms": 300})
    check(sc(r)["error"]["code"] == "TIMEOUT", "an infinite loop is TIMEOUT", sc(r))

    r = await s.call_tool("code", {"source": "console.log($session.input.toUpperCase())", "input": "abc"})
    check(sc(r)["output"] == "ABC\n", "input", sc(r))

    sid = sc(await s.call_tool("session_start", {"cwd": proj}))["session"]
    for want in (1, 2, 3):
        r = await s.call_tool("code", {"source": "$session.vars.n = ($session.vars.n ?? 0) + 1; console.log($session.vars.n)", "session": sid})
        check(sc(r)["output"] == f"{want}\n", f"$session.vars persists ({want})", sc(r))
    await s.call_tool("exec", {"script": "mkdir -p sub && cd sub && echo x > here.txt", "session": sid})
    r = await s.call_tool("code", {"source": "console.log(await fs.read('here.txt'), $session.cwd.endsWith('/sub'))", "session": sid})
    check(sc(r)["output"] == "x\n true\n", "code runs in the session's cwd", sc(r))
    r = await s.call_tool("code", {"source": "console.log($session.vars.n)"})
    check(sc(r)["output"] == "undefined\n", "a fresh request has its own vars", sc(r))


async def main():
    safesh, config, proj = sys.argv[1], sys.argv[2], sys.argv[3]
    params = StdioServerParameters(command=safesh, args=["--config", config, "mcp"], cwd=proj, env=dict(os.environ))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as s:
            await s.initialize()
            await scenario(s, proj)
    print("ALL OK", flush=True)


anyio.run(main)
