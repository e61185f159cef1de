#!/usr/bin/env bash
# Install what a command needs, idempotently: quiet and offline when everything is already there.
# Usage: scripts/deps.sh build|run|test|bench|all
set -euo pipefail
source "$(dirname "$0")/lib.sh"
case "${1:-all}" in
    build)      pc_ensure_apt "${PC_APT_BUILD[@]}" ;;
    run)        pc_ensure_apt "${PC_APT_BUILD[@]}" curl openssl ;;
    bench)      pc_ensure_apt "${PC_APT_BUILD[@]}" "${PC_APT_TEST[@]}" openssl ;;
    test|all)   pc_ensure_apt "${PC_APT_BUILD[@]}" "${PC_APT_TEST[@]}" openssl
                # The venvs are independent: build them in parallel (mostly download and unpack time).
                pids=()
                for venv in tools pyrebase emulators clients browser functions gcs-system gsutil; do
                    pc_ensure_venv "$venv" & pids+=($!)
                done
                status=0
                for pid in "${pids[@]}"; do wait "$pid" || status=1; done
                exit "$status" ;;
    *) pc_die "usage: $0 build|run|test|bench|all" ;;
esac
