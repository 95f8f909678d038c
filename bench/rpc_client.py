"""A JSON-RPC client of one `safesh rpc` process, for the benchmark scripts.

    from rpc_client import Rpc
    rpc = Rpc([safesh, "rpc"], cwd=..., env=...)
    result = rpc.call("context.get", {...})   # exits the script on an error reply
    rpc.close()                               # ends the server; its rusage
"""
import json
import os
import subprocess
import sys


class Rpc:
    """One server process; requests strictly one after the other."""

    def __init__(self, argv, cwd, env):
        self.p = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True, bufsize=1)
        self.rid = 0

    def call(self, method, params):
        """Sends one request and returns its result."""
        self.rid += 1
        request = {"jsonrpc": "2.0", "id": self.rid, "method": method, "params": params}
        self.p.stdin.write(json.dumps(request) + "\n")
        self.p.stdin.flush()
        reply = json.loads(self.p.stdout.readline())
        if "error" in reply:
            sys.exit(f"error: {reply}")
        return reply["result"]

    def close(self):
        """Closes the server's input and waits for it: its resource usage."""
        self.p.stdin.close()
        _, _, usage = os.wait4(self.p.pid, 0)
        return usage
