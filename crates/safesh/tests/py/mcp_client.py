"""Drives `safesh mcp` with the Python MCP SDK (the `mcp` package).

usage: mcp_client.py stdio SAFESH PROJECT_DIR
       mcp_client.py http URL TOKEN PROJECT_DIR

Prints `ok: <check>` per check and `ALL OK` at the end; any failure raises
(non-zero exit) with the reason.
"""

import json
import os
import sys
import time

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

TOOLS = ["exec", "run", "session_start", "session_end", "session_update",
         "job_start", "job_list", "job_output", "job_kill", "job_follow"]


def check(cond, what, detail=""):
    if not cond:
        raise AssertionError(f"{what}: {detail}")
    print(f"ok: {what}", flush=True)


def attr(obj, snake, camel):
    """SDK 1.x uses camelCase attributes, 2.x snake_case."""
    v = getattr(obj, snake, None)
    return v if v is not None else getattr(obj, camel, None)


def sc(result):
    return attr(result, "structured_content", "structuredContent") or {}


def is_error(result):
    return bool(attr(result, "is_error", "isError"))


async def call(s, name, args):
    return await s.call_tool(name, args)


async def scenario(s, proj, full):
    init_instructions = getattr(s, "_safesh_instructions", None)
    tools = (await s.list_tools()).tools
    names = sorted(t.name for t in tools)
    check(set(TOOLS) <= set(names), "all tools listed", names)
    for t in tools:
        check(attr(t, "input_schema", "inputSchema").get("type") == "object" and attr(t, "output_schema", "outputSchema"), f"{t.name} has schemas")

    r = await call(s, "exec", {"script": "echo hi | tr a-z A-Z"})
    check(not is_error(r) and sc(r)["output"] == "HI\n", "exec", sc(r))
    check(any("HI" in getattr(c, "text", "") for c in r.content), "exec text part")

    r = await call(s, "run", {"command": "printf", "args": ["%s|", "a b", "$HOME", "*"]})
    check(sc(r).get("output") == "a b|$HOME|*|", "run passes argv untouched", sc(r))

    r = await call(s, "exec", {"script": "sudo id"})
    check(is_error(r) and sc(r)["error"]["code"] == "BLOCKED", "refused command is isError with the refusal", sc(r))
    check(sc(r)["error"].get("suggestion"), "refusal has a suggestion")

    r = await call(s, "exec", {"script": "seq 1 200000"})
    res = sc(r)
    check(res["truncated"] and res["log_path"], "capped output", {k: res[k] for k in ("truncated", "total_bytes")})
    with open(res["log_path"], "rb") as f:
        data = f.read()
    want = "".join(f"{i}\n" for i in range(1, 200001)).encode()
    check(data == want, "spill file holds every byte", (len(data), len(want)))
    check(len(res["output"]) < 4096, "capped output is small", len(res["output"]))

    sid = sc(await call(s, "session_start", {"cwd": proj}))["session"]
    await call(s, "exec", {"script": "n=41; greet() { echo hello $1; }; mkdir -p d; cd d", "session": sid})
    r = await call(s, "exec", {"script": "echo $((n+1)); greet you; pwd", "session": sid})
    check(sc(r)["output"] == f"42\nhello you\n{os.path.join(proj, 'd')}\n", "session persistence", sc(r))
    await call(s, "session_update", {"session": sid, "env": {"COLOR": "blue"}})
    r = await call(s, "exec", {"script": "echo $COLOR", "session": sid})
    check(sc(r)["output"] == "blue\n", "session_update env", sc(r))

    j = sc(await call(s, "job_start", {"script": "echo first; sleep 0.3; echo second", "session": sid}))
    jid = j["job_id"]
    check(j["status"] == "running" and j["pid"] is None, "job started", j)
    listed = sc(await call(s, "job_list", {"session": sid}))["jobs"]
    check(any(x["job_id"] == jid for x in listed), "job listed")
    progress = []

    async def on_progress(p, total, message):
        progress.append(message)

    r = await s.call_tool("job_follow", {"job_id": jid, "session": sid}, progress_callback=on_progress)
    f = sc(r)
    check(f["status"] == "exited" and f["exit_code"] == 0 and f["output"] == "first\nsecond\n", "job_follow waits for the end", f)
    check(progress and "first" in "".join(m or "" for m in progress), "job_follow streams output as progress", progress)
    o = sc(await call(s, "job_output", {"job_id": jid, "since": 6, "session": sid}))
    check(o["data"] == "second\n" and o["next_offset"] == 13, "job_output since offset", o)
    k = sc(await call(s, "job_start", {"script": "sleep 30"}))
    killed = sc(await call(s, "job_kill", {"job_id": k["job_id"], "signal": "TERM"}))
    check(killed["status"] == "killed", "job_kill", killed)

    # `cmd &` in a script: the call returns at once, the command is a job.
    r = sc(await call(s, "exec", {"script": "echo main; { echo bg; sleep 30; } &", "session": sid}))
    check(r["output"] == "main\n" and r["exit_code"] == 0, "exec with cmd & returns", r)
    bg = [x for x in sc(await call(s, "job_list", {"session": sid}))["jobs"] if x["command"] == "{ echo bg; sleep 30 } &"]
    check(len(bg) == 1 and bg[0]["status"] == "running" and bg[0]["session"] == sid, "cmd & is listed as a job", bg)
    if bg:
        # Its output arrives in its own buffer (the job runs on, so poll).
        for _ in range(200):
            o = sc(await call(s, "job_output", {"job_id": bg[0]["job_id"], "since": 0, "session": sid}))
            if o["data"]:
                break
            await anyio.sleep(0.05)
        check(o["data"] == "bg\n", "a cmd & job's output is its own", o)
        killed = sc(await call(s, "job_kill", {"job_id": bg[0]["job_id"], "session": sid}))
        check(killed["status"] == "killed", "job_kill stops a cmd & job", killed)

    # A request past its timeout_ms says so.
    r = await call(s, "exec", {"script": "sleep 30", "timeout_ms": 200})
    check(is_error(r) and sc(r)["stopped"] == "timeout" and sc(r)["error"]["code"] == "TIMEOUT", "timeout_ms", sc(r))

    # Cancellation: abandoning the call sends notifications/cancelled; the session
    # is free again only once the command has stopped.
    t = time.monotonic()
    with anyio.move_on_after(0.5):
        await call(s, "exec", {"script": "sleep 30", "session": sid})
    r = await call(s, "exec", {"script": "echo free", "session": sid})
    check(sc(r)["output"] == "free\n" and time.monotonic() - t < 8, "cancellation stops the command", time.monotonic() - t)
    e = sc(await call(s, "session_end", {"session": sid}))
    check(e["ended"], "session_end")

    if full:
        async def one(i, out):
            sid = sc(await call(s, "session_start", {}))["session"]
            await call(s, "exec", {"script": f"v={i}", "session": sid})
            r = await call(s, "exec", {"script": "echo $v", "session": sid})
            out[i] = sc(r)["output"]
            await call(s, "session_end", {"session": sid})

        out = {}
        async with anyio.create_task_group() as tg:
            for i in range(100):
                tg.start_soon(one, i, out)
        check(all(out[i] == f"{i}\n" for i in range(100)), "100 concurrent sessions stay isolated",
              [i for i in range(100) if out.get(i) != f"{i}\n"][:5])


async def main():
    mode = sys.argv[1]
    if mode == "stdio":
        safesh, proj = sys.argv[2], sys.argv[3]
        params = StdioServerParameters(command=safesh, args=["mcp"], cwd=proj, env=dict(os.environ))
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as s:
                init = await s.initialize()
                check("Readable roots" in (init.instructions or ""), "instructions summarise the policy")
                await scenario(s, proj, True)
    else:
        import mcp.client.streamable_http as sh
        url, token, proj = sys.argv[2], sys.argv[3], sys.argv[4]
        headers = {"Authorization": f"Bearer {token}"}
        if hasattr(sh, "streamable_http_client"):
            from mcp.shared._httpx_utils import create_mcp_http_client
            ctx = sh.streamable_http_client(url, http_client=create_mcp_http_client(headers=headers))
        else:
            ctx = sh.streamablehttp_client(url, headers=headers)
        async with ctx as streams:
            read, write = streams[0], streams[1]
            async with ClientSession(read, write) as s:
                await s.initialize()
                await scenario(s, proj, False)
    print("ALL OK", flush=True)


anyio.run(main)
