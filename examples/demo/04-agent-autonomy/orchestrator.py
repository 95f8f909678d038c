"""Demo 04's orchestrator: connects an "LLM" (fake_llm.py, scripted) to
`safesh rpc` and drives discover -> plan -> approve -> execute -> verify ->
rollback and retry. It plays the human too: when safesh asks for a plan's
approval it runs `safesh approve ID`, the human's channel (the model's own
connection cannot approve). Exits 0 when a plan passed after a refused plan
and a rolled-back run."""

import json
import os
import subprocess
import sys
import urllib.request

import fake_llm

SAFESH = os.environ["SAFESH"]
BASE = [SAFESH, "--config", "safesh.toml"]


class Rpc:
    def __init__(self):
        self.p = subprocess.Popen(BASE + ["rpc"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.n = 0

    def call(self, method, params):
        self.n += 1
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.n, "method": method, "params": params}) + "\n")
        self.p.stdin.flush()
        reply = json.loads(self.p.stdout.readline())
        if "error" in reply:
            sys.exit(f"demo FAILED: {method}: {reply['error']}")
        return reply["result"]

    def close(self):
        self.p.stdin.close()
        self.p.wait()


def ask_llm(url, messages):
    req = urllib.request.Request(
        url + "/chat/completions",
        data=json.dumps({"model": "scripted", "messages": messages}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=10) as r:
        reply = json.load(r)
    return json.loads(reply["choices"][0]["message"]["content"])


def say(text):
    print(f"\n== {text}", flush=True)


def main():
    llm = fake_llm.start()
    rpc = Rpc()
    say("discover")
    cmds = rpc.call("commands.list", {})
    print(f"{len(cmds.get('commands', []))} commands available")
    spec = rpc.call("project.load", {"path": "project.agsh.yaml"})["spec"]
    print(f"goal: {spec['goal'].strip()}")
    print(f"allowed_commands: {spec['allowed_commands']}")
    messages = [
        {"role": "system", "content": "You plan safesh steps. Reply with JSON {thought, steps}."},
        {"role": "user", "content": json.dumps({"goal": spec["goal"], "constraints": spec.get("constraints", []),
                                                "allowed_commands": spec["allowed_commands"]})},
    ]
    seen = {"refused": False, "rolled_back": False}
    for attempt in range(1, 5):
        say(f"attempt {attempt}: ask the LLM for a plan")
        answer = ask_llm(llm, messages)
        print(f"LLM: {answer['thought']}")
        messages.append({"role": "assistant", "content": json.dumps(answer)})
        plan = rpc.call("project.plan", {"path": "project.agsh.yaml", "steps": answer["steps"]})
        p = plan["plan"]
        print(f"plan {p['hash'][:12]}: {p['risk_summary']}")
        if not plan["planned"]:
            refusals = [s["refusal"]["message"] for s in p["steps"] if s.get("refusal")]
            print(f"refused before anything ran: {refusals}")
            seen["refused"] = True
            messages.append({"role": "user", "content": f"plan refused: {refusals}"})
            continue
        say("approve: safesh asks a human")
        a = rpc.call("project.approve", {"hash": p["hash"]})
        if not a["approved"]:
            approval = a["approval_id"]
            print(f"APPROVAL_REQUIRED, id {approval}; the human runs: safesh approve {approval}")
            subprocess.run(BASE + ["approve", approval], check=True)
        say("execute and verify")
        report = rpc.call("project.run", {"hash": p["hash"]})
        for r in report.get("success_criteria", {}).get("results", []):
            print(f"criterion {r['type']} {'passed' if r['passed'] else 'FAILED'}: {r['detail']}")
        if report["passed"]:
            print(open("out/inventory.txt").read(), end="")
            break
        rolled = report.get("rolled_back") is True
        print(f"failed: {report.get('error', {}).get('code')}; rolled back: {rolled}")
        if rolled and not os.path.exists("out/inventory.txt"):
            seen["rolled_back"] = True
        messages.append({"role": "user", "content": "run failed: " + json.dumps(report.get("success_criteria"))})
    else:
        sys.exit("demo FAILED: no plan passed")
    rpc.close()
    if not (seen["refused"] and seen["rolled_back"]):
        sys.exit(f"demo FAILED: expected a refused plan and a rollback first: {seen}")
    print("demo 04 passed")


if __name__ == "__main__":
    main()
