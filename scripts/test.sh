#!/usr/bin/env bash
# make test — what CI runs (.ci/run). Installs what the tests need (apt + pinned venvs), builds, runs
# `swift test`, starts the upstream emulators, runs lint and every black-box suite, stops what it started, and
# ends with ONE line "N passed, N failed[, N skipped]" over all of them. Exit status: 0 only if nothing failed.
#
# A step that fails without reporting a test failure (a build error, a crashed runner) counts as one failure,
# so a red build can never print "0 failed".
set -uo pipefail
source "$(dirname "$0")/lib.sh"
cd "$PC_ROOT"

results="$PC_ROOT/.build/test-results"
rm -rf "$results" && mkdir -p "$results"
steps="$results/steps.tsv"
: >"$steps"
started=$SECONDS

# step NAME [XML] -- CMD... : run CMD, record its exit status (and the junit file it writes, if any).
step() {
    local name="$1" xml="$2"; shift 3
    local t=$SECONDS rc=0
    pc_log "$name: $*"
    "$@" || rc=$?
    printf '%s\t%s\t%s\t%s\n' "$name" "$rc" "$((SECONDS - t))" "$xml" >>"$steps"
    return "$rc"
}
# skipped NAME WHY : a step that could not run because an earlier one failed (counts as a failure).
skipped() { printf '%s\t%s\t0\t\n' "$1" "not run: $2" >>"$steps"; pc_log "$1: not run ($2)"; }

scripts/deps.sh test || pc_die "installing test dependencies failed"

# Real upstreams (fake-gcs-server, moto, Ceph RGW) for the Swift backend tests and the black-box
# suites; started before `swift test` so the GCS/S3 suites run against them; stopped on any exit.
stop_upstreams() {
    scripts/emulators.sh stop >/dev/null 2>&1 || true
    scripts/rgw.sh stop >/dev/null 2>&1 || true
}
trap stop_upstreams EXIT
if [[ -x scripts/emulators.sh ]]; then
    export PC_EMULATORS_VENV="$PC_ROOT/.venv-emulators"
    if emu_env="$(scripts/emulators.sh start)"; then
        eval "$emu_env"
    else
        skipped emulators "scripts/emulators.sh start failed"
    fi
fi
# Ceph's RADOS Gateway, a real S3 engine (one-node cluster in memory, ~3 s to start): the s3:// suites run on it
# as well as on moto.
if rgw_env="$(scripts/rgw.sh start)"; then
    eval "$rgw_env"
else
    skipped rgw "scripts/rgw.sh start failed"
fi

# At most 16 Swift Testing tests at once (unless the caller chose): fully parallel, ~650 tests held ~1,800 open
# descriptors in the one test process, and Foundation's `Process.run` then read past the end of readdir's buffer
# while listing /proc/self/fd (SIGSEGV). Sixteen at a time peaks at ~220 descriptors and runs no slower.
export SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH="${SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH:-16}"
if step build-debug "" -- swift build --build-tests; then
    step swift-test "$results/swift.xml" -- swift test --skip-build --xunit-output "$results/swift.xml"
else
    skipped swift-test "debug build failed"
fi

have_release=0
if step build-release "" -- scripts/build-release.sh; then
    have_release=1
    PORTCULLIS_BIN="$(pc_release_bin)"
    export PORTCULLIS_BIN
fi

export PYTHONDONTWRITEBYTECODE=1
# The scale-out fleet shares a fake-gcs-server bucket (the emulators are up by now); PC_SCALEOUT_BACKEND=file
# runs it on one shared embedded directory instead.
export PC_SCALEOUT_BACKEND="${PC_SCALEOUT_BACKEND:-gcs}"
pytest_common=(-p no:cacheprovider -o console_output_style=classic -rfE)
step lint "$results/lint.xml" -- \
    .venv-tools/bin/pytest "${pytest_common[@]}" tests/blackbox/lint --junitxml="$results/lint.xml"

if ((have_release)); then
    step blackbox "$results/blackbox.xml" -- \
        .venv-tools/bin/pytest "${pytest_common[@]}" tests/blackbox \
        --ignore=tests/blackbox/lint --ignore=tests/blackbox/pyrebase --ignore=tests/blackbox/clients \
        --ignore=tests/blackbox/console --junitxml="$results/blackbox.xml"
    step pyrebase "$results/pyrebase.xml" -- \
        .venv-pyrebase/bin/pytest "${pytest_common[@]}" tests/blackbox/pyrebase --junitxml="$results/pyrebase.xml"
    # Google's and Firebase's server-side clients against the Cloud Storage JSON API, and S3's clients (boto3, the
    # AWS CLI, s3fs, rclone) against the S3 surface (their own venv).
    step clients "$results/clients.xml" -- \
        .venv-clients/bin/pytest "${pytest_common[@]}" tests/blackbox/clients --junitxml="$results/clients.xml"
    # Google's own google-cloud-storage system tests, the part covering signed URLs, preconditions, copy/rewrite/
    # compose, buckets and listing (`--fast`, under a minute); the full run is `make gcs-system-tests`.
    step gcs-system "$results/gcs-system.xml" -- \
        env PC_GCS_SYSTEM_JUNIT="$results/gcs-system.xml" scripts/gcs-system-tests.sh --fast
    # The web console in headless Chromium (Selenium: its own venv).
    step console "$results/console.xml" -- \
        .venv-browser/bin/pytest "${pytest_common[@]}" tests/blackbox/console --junitxml="$results/console.xml"
    # Both event-loop drivers pass the same tests (docs/architecture.md): the suites above ran on the platform's default
    # (epoll on Linux); the ones that exercise the connection layer from outside run again on Dispatch.
    if [[ "$(uname -s)" == Linux ]]; then
        step blackbox-dispatch "$results/blackbox-dispatch.xml" -- \
            env PC_EVENT_LOOP=dispatch .venv-tools/bin/pytest "${pytest_common[@]}" \
            tests/blackbox/test_malformed_http.py tests/blackbox/test_connection_churn.py \
            tests/blackbox/test_v0_conformance.py tests/blackbox/test_scaleout.py tests/blackbox/test_tls.py \
            --junitxml="$results/blackbox-dispatch.xml"
    fi
else
    skipped blackbox "release build failed"
    skipped pyrebase "release build failed"
    skipped clients "release build failed"
    skipped gcs-system "release build failed"
    skipped console "release build failed"
    skipped blackbox-dispatch "release build failed"
fi

pc_log "make test took $((SECONDS - started)) s"
"$(pc_python)" scripts/summarize.py "$results"
