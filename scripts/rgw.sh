#!/usr/bin/env bash
# A real S3 engine for tests and benchmarks: Ceph's RADOS Gateway (radosgw, Debian's Ceph 16.2) on a one-node
# cluster (one monitor, one OSD) under a state directory, with no systemd and no mgr, on free loopback ports.
#
#   eval "$(scripts/rgw.sh start)"        start; prints `export VAR=...` lines (below)
#   eval "$(scripts/rgw.sh start big)"    the same with a file-backed (bluestore, sparse file) OSD instead of
#                                         memstore, for objects larger than RAM should hold
#   scripts/rgw.sh stop                   stop what `start` started (by recorded pid) and remove its data
#
# Needs the Debian packages ceph-mon, ceph-osd and radosgw (scripts/lib.sh installs them with the test
# packages). Readiness is polled, never slept on; RGW answers its first request 2–3 s after `start` begins.
# Exports PC_RGW_URL, PC_RGW_ACCESS_KEY, PC_RGW_SECRET_KEY, PC_RGW_REGION (what the black-box suites read),
# PORTCULLIS_TEST_RGW_ENDPOINT/_ACCESS_KEY/_SECRET_KEY (what the Swift backend tests read) and PC_RGW_BUCKET (a
# bucket created at start, for benchmarks). The user's keys are fixed: they are test credentials, valid only
# on this loopback cluster.
#
# Settings that are not obvious (each costs seconds or hangs without it):
# - `auth ... = none` needs `ms mon client mode = crc secure`, or radosgw hangs at start;
# - `paxos propose interval`/`paxos min wait` short, or every pool and user change waits ~1 s (start ~17 s);
# - beast with `tcp_nodelay=1` on `endpoint=127.0.0.1:N` (`port=N` binds every address; without nodelay each
#   small answer waits ~40 ms for Nagle);
# - `osd client watch timeout = 5`: a killed radosgw otherwise stalls the next bucket change 30 s;
# - deleted objects' data is collected after 30 s (`rgw gc obj min wait`), not 2 h — memstore keeps it in RAM;
# - one OSD: pool size 1, `mon allow pool size one`, CRUSH failure domain "osd", 8 PGs, autoscaling off.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$PC_ROOT"
state="${PC_RGW_STATE:-$PC_ROOT/.build/rgw}"
access_key="PORTCULLISTESTKEY000"
secret_key="portcullis-test-secret-key-not-for-production"
region="us-east-1"

stop() {
    [[ -d "$state" ]] || return 0
    local name pid pids=()
    # SIGKILL: the whole cluster and its data go, so nothing needs a clean shutdown (radosgw takes seconds).
    for name in radosgw osd mon; do
        [[ -f "$state/$name.pid" ]] || continue
        pid="$(cat "$state/$name.pid")"
        kill -9 "$pid" 2>/dev/null && pids+=("$pid")
        rm -f "$state/$name.pid"
    done
    for pid in "${pids[@]}"; do
        for _ in $(seq 200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
    done
    rm -rf "$state"
}

# launch NAME CMD... : start CMD detached (own session) in the foreground mode of the daemon, record its pid.
launch() {
    local name="$1"; shift
    setsid "$@" >"$state/log/$name.out" 2>&1 </dev/null &
    echo $! >"$state/$name.pid"
}

fail() {
    echo "error: $1; last log lines:" >&2
    tail -n 15 "$state"/log/*.log "$state"/log/*.out 2>/dev/null >&2 || true
    stop
    exit 1
}

# until_ok SECONDS CMD... : poll CMD until it succeeds.
until_ok() {
    local deadline=$((SECONDS + $1)); shift
    until "$@" >/dev/null 2>&1; do
        ((SECONDS < deadline)) || return 1
        sleep 0.05
    done
}

start() {
    local mode="${1:-memstore}"
    command -v ceph-mon >/dev/null && command -v ceph-osd >/dev/null && command -v radosgw >/dev/null \
        || pc_die "ceph-mon, ceph-osd and radosgw are not installed (apt-get install --no-install-recommends ceph-mon ceph-osd radosgw)"
    stop
    mkdir -p "$state"/{log,run,mon,osd,rgw}
    local fsid mon_port rgw_port conf="$state/ceph.conf" store
    fsid="$(cat /proc/sys/kernel/random/uuid)"
    mon_port="$(pc_free_port)"
    rgw_port="$(pc_free_port)"
    case "$mode" in
        memstore) store=$'osd objectstore = memstore\nmemstore device bytes = 8589934592' ;;
        big)
            # bluestore on a sparse file: the disk holds only what is written.
            truncate -s 64G "$state/osd/block"
            store=$'osd objectstore = bluestore\nbluestore block path = '"$state/osd/block"$'\nbluestore block create = false\nbluestore fsck on mkfs = false\nbluestore cache size = 134217728'
            ;;
        *) pc_die "unknown mode $mode (memstore or big)" ;;
    esac
    cat >"$conf" <<CONF
[global]
fsid = $fsid
mon host = v2:127.0.0.1:$mon_port
mon initial members = a
auth cluster required = none
auth service required = none
auth client required = none
ms mon client mode = crc secure
ms bind msgr1 = false
public addr = 127.0.0.1
run dir = $state/run
admin socket = $state/run/\$name.asok
log file = $state/log/\$name.log
log to stderr = false
err to stderr = true
pid file =
keyring = /dev/null
mon data = $state/mon/\$name
mon allow pool size one = true
mon allow pool delete = true
mon warn on pool no redundancy = false
mon data avail warn = 1
mon data avail crit = 0
paxos propose interval = 0.05
paxos min wait = 0.01
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 0
osd data = $state/osd/data
osd client watch timeout = 5
$store
[client.rgw]
rgw frontends = beast endpoint=127.0.0.1:$rgw_port tcp_nodelay=1
rgw data = $state/rgw
rgw gc obj min wait = 30
rgw gc processor period = 30
rgw dns name =
CONF
    local ceph=(ceph -c "$conf" --connect-timeout 10)
    monmaptool --create --fsid "$fsid" --addv a "[v2:127.0.0.1:$mon_port]" "$state/monmap" >/dev/null \
        || fail "monmaptool failed"
    ceph-mon -c "$conf" -i a --mkfs --monmap "$state/monmap" >"$state/log/mon-mkfs.out" 2>&1 \
        || fail "ceph-mon --mkfs failed"
    launch mon ceph-mon -c "$conf" -i a -f
    local osd_uuid osd_id
    osd_uuid="$(cat /proc/sys/kernel/random/uuid)"
    osd_id="$("${ceph[@]}" osd new "$osd_uuid" 2>"$state/log/osd-new.out")" || fail "ceph osd new failed"
    mkdir -p "$state/osd/data"
    ceph-osd -c "$conf" -i "$osd_id" --mkfs --osd-uuid "$osd_uuid" >"$state/log/osd-mkfs.out" 2>&1 \
        || fail "ceph-osd --mkfs failed"
    launch osd ceph-osd -c "$conf" -i "$osd_id" -f
    # The user (and the pools it needs) while the OSD comes up: radosgw-admin waits for it.
    radosgw-admin -c "$conf" user create --uid portcullis --display-name "Portcullis tests" \
        --access-key "$access_key" --secret-key "$secret_key" >"$state/log/user.out" 2>&1 \
        || fail "radosgw-admin user create failed"
    launch radosgw radosgw -c "$conf" -n client.rgw -f
    until_ok 60 curl -fsS -o /dev/null --max-time 1 "http://127.0.0.1:$rgw_port/" || fail "radosgw did not answer"
    local code
    code="$(curl -sS -o /dev/null -w '%{http_code}' -X PUT --aws-sigv4 "aws:amz:$region:s3" \
        --user "$access_key:$secret_key" -H "x-amz-content-sha256: $(printf '' | sha256sum | cut -d' ' -f1)" \
        "http://127.0.0.1:$rgw_port/portcullis-bench")"
    [[ "$code" == 200 ]] || fail "creating the bucket portcullis-bench answered $code"
    cat <<ENV
export PC_RGW_URL=http://127.0.0.1:$rgw_port
export PC_RGW_ACCESS_KEY=$access_key
export PC_RGW_SECRET_KEY=$secret_key
export PC_RGW_REGION=$region
export PC_RGW_BUCKET=portcullis-bench
export PORTCULLIS_TEST_RGW_ENDPOINT=http://127.0.0.1:$rgw_port
export PORTCULLIS_TEST_RGW_ACCESS_KEY=$access_key
export PORTCULLIS_TEST_RGW_SECRET_KEY=$secret_key
ENV
}

case "${1:-}" in
    start) start "${2:-memstore}" ;;
    stop) stop ;;
    *) echo "usage: $0 start [memstore|big] | stop" >&2; exit 2 ;;
esac
