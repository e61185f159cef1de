#!/usr/bin/env bash
# Validates an OpenAPI document (openapi/portcullis.yaml, or $SPEC: e.g. SPEC=gcs-json.yaml for the Cloud
# Storage JSON API) and runs schemathesis (all checks) against a live gateway started on a free loopback port
# with allow-all rules and a fresh embedded bucket. Usage:
#   [SPEC=gcs-json.yaml] openapi/run-schemathesis.sh [PORTCULLIS_BINARY] [extra schemathesis args...]
# Needs `openapi-spec-validator` and `schemathesis` (st) on PATH or in .venv-openapi/.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
binary="${1:-$root/.build/debug/portcullis}"
shift || true
if [[ -x "$root/.venv-openapi/bin/st" ]]; then export PATH="$root/.venv-openapi/bin:$PATH"; fi

spec="$root/openapi/${SPEC:-portcullis.yaml}"
openapi-spec-validator "$spec"

work="$(mktemp -d)"
cleanup() {
    if [[ -n "${pid:-}" ]]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

cat > "$work/allow.rules" <<'RULES'
rules_version = '2';
service firebase.storage {
  match /b/{bucket}/o {
    match /{allPaths=**} {
      allow read, write: if true;
    }
  }
}
RULES
head -c 32 /dev/urandom | base64 > "$work/admin.key"

"$binary" serve --listen 127.0.0.1:0 --rules "$work/allow.rules" --admin-key "$work/admin.key" \
    --bucket "default-bucket=file:$work/data" --log-format text > "$work/server.log" 2>&1 &
pid=$!

port=""
for _ in $(seq 1 100); do
    port="$(grep -o 'listening host=127.0.0.1 port=[0-9]*' "$work/server.log" | head -1 | sed 's/.*port=//' || true)"
    if [[ -n "$port" ]] && curl -fsS "http://127.0.0.1:$port/readyz" > /dev/null 2>&1; then break; fi
    sleep 0.1
done
if [[ -z "$port" ]]; then cat "$work/server.log"; echo "gateway did not start" >&2; exit 1; fi

st --config-file "$root/schemathesis.toml" run "$spec" --url "http://127.0.0.1:$port" --checks all "$@"
