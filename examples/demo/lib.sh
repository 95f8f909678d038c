# Shared by the demos' run.sh: finds safesh, copies the demo to a scratch
# directory (the repository stays clean) and gives safesh a state directory of
# its own there (approvals, checkpoints, history, trust).
set -eu

SAFESH="${SAFESH:-$(command -v safesh || true)}"
if [ -z "$SAFESH" ] || [ ! -x "$SAFESH" ]; then
    echo "demo: safesh not found: put it on PATH or set SAFESH=/path/to/safesh" >&2
    exit 2
fi

DEMO_SRC="$(cd "$(dirname "$0")" && pwd)"
SCRATCH="$(mktemp -d "${TMPDIR:-/tmp}/safesh-demo.XXXXXX")"
trap 'rm -rf "$SCRATCH"' EXIT
mkdir -p "$SCRATCH/home" "$SCRATCH/state" "$SCRATCH/config" "$SCRATCH/work"
cp -R "$DEMO_SRC/." "$SCRATCH/work/"
export HOME="$SCRATCH/home"
export XDG_STATE_HOME="$SCRATCH/state"
export XDG_CONFIG_HOME="$SCRATCH/config"
cd "$SCRATCH/work"

say() { printf '\n== %s\n' "$*"; }
fail() { printf 'demo FAILED: %s\n' "$*" >&2; exit 1; }
