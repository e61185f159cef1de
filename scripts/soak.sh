#!/usr/bin/env bash
# make soak: build release, then bench/soak.py (mixed traffic at ~80 % of the measured maximum for SOAK_MINUTES,
# default 30; per-minute RSS, descriptors, p50/p99 and errors into bench/results/soak-*.json and a PNG plot).
# Usage: scripts/soak.sh [soak.py options]
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$PC_ROOT"
scripts/deps.sh bench
scripts/build-release.sh
pc_ensure_venv soak
PORTCULLIS_BIN="${PORTCULLIS_BIN:-$(pc_release_bin)}"
export PORTCULLIS_BIN
exec "$PC_ROOT/.venv-soak/bin/python" bench/soak.py "$@"
