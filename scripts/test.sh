#!/usr/bin/env bash
# The one test entry point: installs what the tests need (only what is missing, so a
# second run costs a few milliseconds), then runs the whole test suite.
#
#   scripts/test.sh                    install what is missing, then `cargo test --workspace`
#   scripts/test.sh -p safesh-tasks    extra arguments go to `cargo test --workspace`
#   scripts/test.sh --install-only     only install
#
# Needs: Debian/Ubuntu (apt-get) for the oracles, as root or with sudo.
set -euo pipefail
cd "$(dirname "$0")/.."

export DEBIAN_FRONTEND=noninteractive

as_root() {
    if [ "$(id -u)" = 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo "$@"
    else
        echo "scripts/test.sh: need root (or sudo) to run: $*" >&2
        exit 1
    fi
}

apt_updated=
apt_install() {
    if [ -z "$apt_updated" ]; then
        as_root apt-get update -qq
        apt_updated=1
    fi
    as_root apt-get install -y -qq "$@" >/dev/null
}

# Oracles of the differential tests (GNU coreutils/grep/sed/diff/findutils, mawk as
# awk, jq 1.6, bash 5.2, tree), curl/wget/openssl/gzip/git/ip (the network
# utilities' differential and TLS tests, the git wall), tmux (driving the terminal
# face as a person would).
need=()
for tool in bash jq mawk tree diff find grep sed curl wget openssl gzip git ip tmux; do
    command -v "$tool" >/dev/null 2>&1 && continue
    case "$tool" in
        diff) need+=(diffutils) ;;
        find) need+=(findutils) ;;
        ip) need+=(iproute2) ;;
        *) need+=("$tool") ;;
    esac
done
# The sandbox tests run /usr/bin/python3 (the system one: a pyenv shim on PATH is a
# shell script); the MCP face is tested with the official Python `mcp` SDK (found by
# its package directory: importing it takes a second).
have_mcp() {
    [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import importlib.util, sys; sys.exit(importlib.util.find_spec("mcp") is None)' 2>/dev/null
}
if [ ! -x /usr/bin/python3 ]; then
    need+=(python3 python3-pip)
elif ! have_mcp && ! /usr/bin/python3 -m pip --version >/dev/null 2>&1; then
    need+=(python3-pip)
fi
if [ "${#need[@]}" -gt 0 ]; then
    echo "scripts/test.sh: installing ${need[*]}" >&2
    apt_install "${need[@]}"
fi

if ! have_mcp; then
    echo "scripts/test.sh: installing the Python mcp SDK" >&2
    /usr/bin/python3 -m pip install --quiet --break-system-packages mcp 2>/dev/null \
        || /usr/bin/python3 -m pip install --quiet mcp
fi

if [ "${1:-}" = "--install-only" ]; then
    exit 0
fi

exec cargo test --workspace "$@"
