#!/usr/bin/env bash
# make bench / make bench-quick: build release, then bench/bench.py (Portcullis vs nginx, same run).
# Usage: scripts/bench.sh full|quick [bench.py options]
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$PC_ROOT"
mode="${1:-full}"; shift || true
scripts/deps.sh bench
scripts/build-release.sh
PORTCULLIS_BIN="$(pc_release_bin)"
export PORTCULLIS_BIN
args=()
[[ "$mode" == quick ]] && args+=(--quick)
exec "$(pc_python)" bench/bench.py "${args[@]}" "$@"
