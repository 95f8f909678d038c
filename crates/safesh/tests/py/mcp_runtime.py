"""Drives `safesh mcp` (stdio) with the Python MCP SDK for the agent runtime:
the envelope and intent/verify on `exec`, `pipeline`, `history`, `task_list`
and `task_run` with progress notifications.

usage: mcp_runtime.py SAFESH CONFIG PROJECT_DIR

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


async def scenario(s):
    names = {t.name for t in (await s.list_tools()).tools}
    check({"pipeline", "history", "task_run", "task_list"} <= names, "runtime tools listed", sorted(names))

    r = await s.call_tool("exec", {"script": "echo '{\"n\": 3}'", "intent": "count things",
                                   "verify": [{"type": "contains", "value": "n"}], "tags": {"who": "py"}})
    v = sc(r)
    check(not is_error(r) and v["intent"] == "count things" and v["verification"]["passed"], "exec honours intent and verify", v)
    check(v["meta"]["content_type"] == "application/json" and v["payload"] == {"n": 3}, "exec envelope payload", v)
    check(v["meta"]["tags"] == {"who": "py"} and v["provenance"][0]["status"] == "ok", "exec envelope tags and provenance", v)

    r = await s.call_tool("exec", {"script": "printf 'a\\nb\\n'", "intent": "three lines",
                                   "verify": [{"type": "count_gte", "expected": 3, "message": "want 3"}]})
    v = sc(r)
    check(v.get("exit_code") == 1 and (v.get("error") or {}).get("code") == "VERIFICATION_FAILED"
          and v["verification"]["results"][0]["actual"] == "a\nb\n", "exec: a failed assertion is VERIFICATION_FAILED", v)
    try:
        r = await s.call_tool("exec", {"script": "touch bad-ran.txt", "verify": [{"type": "matches_regex", "expected": "(a"}]})
        refused = is_error(r) and "verify[0].expected" in str(r)
    except Exception as e:  # the SDK raises on a JSON-RPC error
        refused = "verify[0].expected" in str(e)
    check(refused and not os.path.exists("bad-ran.txt"), "exec: a bad assertion is refused before anything runs", r)

    r = await s.call_tool("pipeline", {"steps": [
        {"script": "printf 'b\\na\\n'"},
        {"command": "sort"},
        {"script": "tr a-z A-Z"},
    ]})
    v = sc(r)
    check(not is_error(r) and v["passed"] and v["steps"][2]["output"] == "A\nB\n", "pipeline data flows", v)

    r = await s.call_tool("pipeline", {"checkpoint_before": True, "steps": [
        {"script": "echo changed > f.txt"},
        {"script": "exit 2"},
    ]})
    v = sc(r)
    with open("f.txt") as f:
        content = f.read()
    check(is_error(r) and v["rolled_back"] and content == "original\n", "pipeline rolls back", (v, content))

    h = sc(await s.call_tool("history", {"limit": 50}))
    check(any(e.get("command") == "tr a-z A-Z" for e in h["entries"]), "history has the pipeline's steps", h)

    tl = sc(await s.call_tool("task_list", {}))
    check([t["name"] for t in tl["tasks"]] == ["all", "one", "two"], "task_list", tl)

    progress = []

    async def on_progress(p, total, message):
        progress.append((p, total, message))

    r = await s.call_tool("task_run", {"name": "all"}, progress_callback=on_progress)
    v = sc(r)
    check(not is_error(r) and v["passed"] and [x["result"]["output"] for x in v["runs"]] == ["one\n", "two\n"], "task_run", v)
    check(len(progress) >= 4 and progress[-1][1] == 4 and any("two: exit 0" in (m or "") for _, _, m in progress),
          "task_run sends progress", progress)
    r = await s.call_tool("task_run", {"name": "missing"})
    check(is_error(r), "task_run of an unknown task is an error", sc(r))


async def main():
    safesh, config, proj = sys.argv[1], sys.argv[2], sys.argv[3]
    params = StdioServerParameters(command=safesh, args=["--config", config, "mcp"], cwd=proj, env=dict(os.environ))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as s:
            await s.initialize()
            await scenario(s)
    print("ALL OK", flush=True)


if __name__ == "__main__":
    anyio.run(main)
