#!/usr/bin/env bash
# make bench / make bench-quick: build release, then bench/bench.py (Portcullis vs nginx, same run).
# Usage: scripts/bench.sh full|quick [bench.py options]
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$PC_ROOT"
mode="${1:-full}"; shift || true
scripts/deps.sh bench
scripts/build-release.sh
# S10/S11 (full runs) stream from fake-gcs-server: the binary bundled in the emulators venv.
if [[ "$mode" == full && -z "${PC_EMULATORS_VENV:-}${PC_FAKE_GCS_BIN:-}" ]]; then
    pc_ensure_venv emulators
fi
PORTCULLIS_BIN="$(pc_release_bin)"
export PORTCULLIS_BIN
# S9: the in-process micro-benchmarks live in the Fuzz package (its own .build under Fuzz/).
(cd Fuzz && swift build -c release --product portcullis-microbench)
PORTCULLIS_MICROBENCH="$(cd Fuzz && swift build -c release --show-bin-path)/portcullis-microbench"
export PORTCULLIS_MICROBENCH
args=()
[[ "$mode" == quick ]] && args+=(--quick)
exec "$(pc_python)" bench/bench.py "${args[@]}" "$@"
