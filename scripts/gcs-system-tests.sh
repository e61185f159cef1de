#!/usr/bin/env bash
# make gcs-system-tests — Google's own system tests for google-cloud-storage (`tests/system` of the pinned PyPI
# sdist, downloaded at test time into .build/gcs-system, never committed) against a Portcullis started for
# them: a bucket root so the tests create and delete their own buckets, and a service account made by
# `portcullis service-account create --admin` whose key file is the tests' credential (token endpoint for
# bearer tokens, the same key for V2/V4 signed URLs and POST policies, trusted with --signed-url-accounts).
#
# Tests listed in tests/gcs-system/out-of-scope.txt (features Portcullis does not serve) and
# tests/gcs-system/not-yet.txt (features planned but not served yet) are deselected, each with its reason.
# Ends with one line "gcs-system: N passed, N failed, N skipped, N deselected (N out of scope, N not yet)" and
# exits non-zero when a test failed. `--fast` runs the part `make test` runs (FAST_SUBSET: signed URLs and POST
# policies, preconditions, copy/rewrite/compose, buckets, listing, XML multipart uploads — about half the suite). Other arguments are
# passed to pytest (e.g. `-k signed`); PORTCULLIS_BIN picks the binary (default: the debug build);
# PC_GCS_SYSTEM_JUNIT=FILE also writes a JUnit report; the gateway's log is kept as .build/gcs-system/portcullis.log.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
cd "$PC_ROOT"

FAST_SUBSET="signed or post_policy or generation_match or compose or rewrite or copy or bucket or list or upload_chunks_concurrently"
if [[ "${1:-}" == --fast ]]; then
    shift
    set -- -k "$FAST_SUBSET" "$@"
fi

version=3.10.1
project=portcullis-systest
lists="$PC_ROOT/tests/gcs-system"
base="$PC_ROOT/.build/gcs-system"
src="$base/google_cloud_storage-$version"
bin="${PORTCULLIS_BIN:-$PC_ROOT/.build/debug/portcullis}"
[[ -x "$bin" ]] || pc_die "no portcullis binary at $bin (swift build, or set PORTCULLIS_BIN)"

pc_ensure_venv gcs-system
venv="$PC_ROOT/.venv-gcs-system"

if [[ ! -d "$src/tests/system" ]]; then
    mkdir -p "$base"
    pc_log "downloading the google-cloud-storage $version sdist (its tests/system)"
    "$venv/bin/python" -m pip download -q --disable-pip-version-check --no-binary :all: --no-deps \
        "google-cloud-storage==$version" -d "$base" || pc_die "pip download failed"
    tar -xzf "$base/google_cloud_storage-$version.tar.gz" -C "$base" || pc_die "unpacking the sdist failed"
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/pc-gcs-system.XXXXXX")"
server_pid=""
cleanup() {
    [[ -n "$server_pid" ]] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
    [[ -f "$work/portcullis.log" ]] && cp "$work/portcullis.log" "$base/portcullis.log"
    rm -rf "$work"
}
trap cleanup EXIT

port="$(pc_free_port)"
url="http://127.0.0.1:$port"
mkdir -p "$work/root"
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$work/admin.key"
email="$(env -u PORTCULLIS_SERVICE_ACCOUNTS_FILE -u PORTCULLIS_PUBLIC_URL "$bin" service-account create systest \
    --admin --accounts "$work/accounts.json" --out "$work/systest.json" --project "$project" \
    --public-url "$url")" || pc_die "portcullis service-account create failed"

env $(env | sed -n 's/^\(PORTCULLIS_[A-Z_]*\)=.*/-u \1/p') "$bin" serve --listen "127.0.0.1:$port" \
    --bucket "placeholder=file:$work/placeholder" --bucket-root "file:$work/root" \
    --admin-key "$work/admin.key" --service-accounts "$work/accounts.json" \
    --signed-url-accounts "$email" --log-format text >"$work/portcullis.log" 2>&1 &
server_pid=$!
for _ in $(seq 1 300); do
    curl -fs -o /dev/null "$url/readyz" && break
    kill -0 "$server_pid" 2>/dev/null || { cat "$work/portcullis.log" >&2; pc_die "portcullis exited"; }
    sleep 0.1
done
curl -fs -o /dev/null "$url/readyz" || pc_die "portcullis not ready on $url"

# nodeid  # reason — one per line; blank lines and lines starting with '#' are comments.
deselect=()
for list in out-of-scope not-yet; do
    while read -r nodeid; do deselect+=(--deselect "tests/system/$nodeid"); done \
        < <(sed -n 's/^\([^#[:space:]][^[:space:]]*\).*/\1/p' "$lists/$list.txt")
done

# Bounds: pytest-timeout fails a test whose setup, call or teardown (session fixtures' teardown runs in the last
# test's) takes longer than PC_GCS_SYSTEM_TEST_TIMEOUT seconds — the suite's helpers retry some errors with
# exponential backoff for hours — and `timeout` interrupts the whole run after PC_GCS_SYSTEM_RUN_TIMEOUT seconds
# with SIGINT, on which pytest still writes its report (SIGKILL 30 s later if it does not end). pytest-timeout arms
# one timer per test: after it fired in the last test's teardown, further session finalizers are bounded only by that.
test_limit="${PC_GCS_SYSTEM_TEST_TIMEOUT:-90}"
run_limit="${PC_GCS_SYSTEM_RUN_TIMEOUT:-900}"
junit="$work/junit.xml"
(cd "$src" && env STORAGE_EMULATOR_HOST="$url" API_ENDPOINT_OVERRIDE="$url" GOOGLE_CLOUD_PROJECT="$project" \
    PC_GCS_SYSTEM_KEY_FILE="$work/systest.json" PYTHONPATH="$lists" PYTHONDONTWRITEBYTECODE=1 \
    timeout -s INT -k 30 "$run_limit" "$venv/bin/python" -m pytest -p no:cacheprovider -p portcullis_credentials -q -rfEs \
    -o console_output_style=classic --timeout="$test_limit" --junitxml="$junit" "${deselect[@]}" tests/system "$@")
rc=$?
[[ -n "${PC_GCS_SYSTEM_JUNIT:-}" ]] && cp "$junit" "$PC_GCS_SYSTEM_JUNIT"
if ((rc != 0 && rc != 1)); then
    tail -n 40 "$work/portcullis.log" >&2
fi
"$venv/bin/python" "$lists/summarize.py" "$junit" "$lists/out-of-scope.txt" "$lists/not-yet.txt"
summary_rc=$?
((rc == 0 || rc == 5)) && ((summary_rc == 0))
