"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1 that
plays the agent's LLM in demo 04: each call returns the next scripted reply
(a JSON plan), whatever was asked. The replies are the story: first a plan
with a command outside allowed_commands (refused in the plan), then one that
runs but counts words instead of lines (the success criteria fail and the run
is rolled back), then the right one."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

REPLIES = [
    {"thought": "clean out/ first, then count",
     "steps": [{"script": "rm -rf out"},
               {"script": "mkdir -p out && wc -l workspace/a.txt workspace/b.txt > out/inventory.txt"}]},
    {"thought": "no rm allowed; count per file",
     "steps": [{"name": "count", "intent": "count each file",
                "script": "mkdir -p out\nfor f in workspace/*.txt; do printf '%s: %s\\n' \"${f##*/}\" \"$(wc -w < \"$f\")\"; done > out/inventory.txt"}]},
    {"thought": "lines, not words",
     "steps": [{"name": "count", "intent": "count each file's lines",
                "script": "mkdir -p out\nfor f in workspace/*.txt; do printf '%s: %s\\n' \"${f##*/}\" \"$(wc -l < \"$f\")\"; done > out/inventory.txt"}]},
]


class Handler(BaseHTTPRequestHandler):
    calls = 0
    lock = threading.Lock()

    def log_message(self, *args):
        pass

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        request = json.loads(self.rfile.read(length) or b"{}")
        with Handler.lock:
            n = min(Handler.calls, len(REPLIES) - 1)
            Handler.calls += 1
        body = json.dumps({
            "id": f"chatcmpl-demo-{n}",
            "object": "chat.completion",
            "model": request.get("model", "scripted"),
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": json.dumps(REPLIES[n])}}],
            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
        }).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def start():
    """Starts the server in a thread; returns its base URL."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}/v1"
