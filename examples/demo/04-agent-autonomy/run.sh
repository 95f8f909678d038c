#!/bin/sh
# Demo 04: agent autonomy. orchestrator.py drives `safesh rpc` with a scripted
# local OpenAI-compatible "LLM": discover, plan (a refused plan first), a
# human's approval (`safesh approve ID`), execute, verify (a failed criterion
# rolls back), retry until a plan passes.
. "$(dirname "$0")/../lib.sh"
command -v python3 >/dev/null || { echo "demo 04 needs python3" >&2; exit 2; }
export SAFESH
python3 orchestrator.py
