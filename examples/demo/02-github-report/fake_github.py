#!/usr/bin/env python3
"""A fake GitHub REST API v3 on 127.0.0.1 for demo 02 (the same repository as
the tests' fake, crates/safesh/tests/safesh/platform_support.rs): repository
octo/demo with 3 open pull requests and 3 issues (one of them a pull request).
It checks the token (Authorization: Bearer TOKEN, else 401). Prints its port
on stdout once it listens, then serves until killed."""

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

TOKEN = sys.argv[1] if len(sys.argv) > 1 else "ghp_demoToken"


def user(login):
    return {"login": login, "id": 1, "type": "User", "site_admin": False}


def pr(n, base):
    return {
        "url": f"{base}/repos/octo/demo/pulls/{n}", "id": 1000 + n, "number": n,
        "state": "open", "locked": False, "title": f"Change number {n}",
        "user": user("alice"), "body": f"Body of {n}",
        "created_at": "2026-11-01T10:00:00Z", "updated_at": "2026-11-02T10:00:00Z",
        "draft": n == 2, "head": {"ref": f"feature-{n}", "sha": "abc"},
        "base": {"ref": "main", "sha": "def"},
        "html_url": f"https://github.com/octo/demo/pull/{n}",
    }


def issue(n, is_pr, base):
    v = {
        "url": f"{base}/repos/octo/demo/issues/{n}", "id": 2000 + n, "number": n,
        "state": "open", "title": f"Issue number {n}", "user": user("bob"),
        "labels": [{"id": 1, "name": "bug", "color": "d73a4a"}], "comments": n,
        "created_at": "2026-11-01T10:00:00Z", "updated_at": "2026-11-02T10:00:00Z",
        "html_url": f"https://github.com/octo/demo/issues/{n}", "body": "text",
    }
    if is_pr:
        v["pull_request"] = {"url": f"{base}/repos/octo/demo/pulls/{n}"}
    return v


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def send(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.headers.get("Authorization") != f"Bearer {TOKEN}":
            return self.send(401, {"message": "Bad credentials"})
        base = f"http://{self.headers.get('Host')}"
        url = urlsplit(self.path)
        state = parse_qs(url.query).get("state", ["open"])[0]
        if url.path == "/repos/octo/demo/pulls":
            items = [pr(n, base) for n in (3, 2, 1)] if state in ("open", "all") else []
            return self.send(200, items)
        if url.path == "/repos/octo/demo/issues":
            return self.send(200, [issue(6, False, base), issue(5, True, base), issue(4, False, base)])
        return self.send(404, {"message": "Not Found"})


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
