# shellcheck shell=bash
# Shared helpers for the project scripts. Source it; do not run it.
#
# Everything here is idempotent: a second run on a prepared machine does no network work and prints nothing
# unless asked to (PC_VERBOSE=1).

PC_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# Debian packages the build needs (headers + pkg-config files of the C library modules).
PC_APT_BUILD=(libcurl4-openssl-dev libjwt-dev libssl-dev libsqlite3-dev zlib1g-dev pkg-config)
# Extra packages the tests and benchmarks need (peers and load generator; headless Chromium, its WebDriver and
# a font for the console's browser tests; Prometheus, promtool and Alertmanager for the operations suites and
# the rules' unit tests; Ceph's monitor, OSD and RADOS Gateway for scripts/rgw.sh; rclone for its suites (GCS and S3 remotes)).
PC_APT_TEST=(nginx wrk curl chromium chromium-driver fonts-dejavu-core prometheus prometheus-alertmanager rclone
    ceph-mon ceph-osd radosgw)

pc_log() { printf '==> %s\n' "$*" >&2; }
pc_die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# pc_ensure_apt PKG... — install the missing packages only. dpkg-query first; `apt-get update` runs only when
# something is missing, so a prepared machine costs one dpkg-query and no network.
pc_ensure_apt() {
    local missing=() pkg status
    for pkg in "$@"; do
        status="$(dpkg-query -W -f='${db:Status-Abbrev}' "$pkg" 2>/dev/null || true)"
        [[ "$status" == ii* ]] || missing+=("$pkg")
    done
    ((${#missing[@]} == 0)) && return 0
    local sudo=()
    if [[ $(id -u) -ne 0 ]]; then
        command -v sudo >/dev/null || pc_die "need root (or sudo) to install: ${missing[*]}"
        sudo=(sudo)
    fi
    pc_log "installing apt packages: ${missing[*]}"
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        "${missing[@]}" >/dev/null
}

# pc_python — the Python interpreter used to create venvs (3.11+).
pc_python() {
    local py
    py="$(command -v python3 || true)"
    [[ -n "$py" ]] || { pc_ensure_apt python3 python3-venv; py="$(command -v python3)"; }
    if ! "$py" -c 'import venv, ensurepip' >/dev/null 2>&1; then
        pc_ensure_apt python3-venv
    fi
    printf '%s\n' "$py"
}

# pc_ensure_venv NAME — .venv-NAME built from requirements/NAME.txt (fully pinned). A stamp holding the
# requirements file's hash makes re-runs free and a changed pin list rebuild the venv.
pc_ensure_venv() {
    local name="$1" req="$PC_ROOT/requirements/$1.txt" dir="$PC_ROOT/.venv-$1"
    [[ -f "$req" ]] || pc_die "missing $req"
    local want have=""
    want="$(sha256sum "$req" | cut -d' ' -f1)"
    [[ -f "$dir/.stamp" ]] && have="$(cat "$dir/.stamp")"
    if [[ "$want" == "$have" && -x "$dir/bin/python" ]]; then return 0; fi
    pc_log "creating $dir from requirements/$name.txt"
    rm -rf "$dir"
    "$(pc_python)" -m venv "$dir"
    # The requirements file is a complete lock (pip freeze), so skip resolution (--no-deps) and byte-compiling
    # thousands of files we mostly never import (--no-compile): both cost minutes on a 2-core CI machine.
    "$dir/bin/python" -m pip install -q --disable-pip-version-check --no-input --no-compile --no-deps -r "$req" \
        || pc_die "pip install failed for $name"
    printf '%s\n' "$want" >"$dir/.stamp"
}

# pc_release_bin — path of the release binary (after scripts/build-release.sh).
pc_release_bin() { printf '%s/portcullis\n' "$(cd "$PC_ROOT" && swift build -c release --show-bin-path)"; }

# pc_free_port — a free TCP port on 127.0.0.1 (the OS picks it).
pc_free_port() {
    "$(pc_python)" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
}

# pc_wait_http URL [SECONDS] — poll until URL answers 200 (no blind sleeps).
pc_wait_http() {
    local url="$1" deadline=$((SECONDS + ${2:-30}))
    until curl -fsS -o /dev/null --max-time 1 "$url" 2>/dev/null; do
        ((SECONDS < deadline)) || return 1
        sleep 0.05
    done
}
