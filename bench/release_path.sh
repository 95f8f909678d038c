#!/usr/bin/env bash
# Prints the path of the release `safesh` binary (.cargo/config.toml builds for
# the host's target triple, so artifacts are under target/<triple>/release/).
#   S=$(bench/release_path.sh)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
triple="$(rustc -vV | sed -n 's/^host: //p')"
echo "${CARGO_TARGET_DIR:-$root/target}/$triple/release/safesh"
