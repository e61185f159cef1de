#!/usr/bin/env bash
# make run — install what is missing (apt, quiet when present), build release, and serve the embedded default
# bucket (default-bucket=file:./data) on http://127.0.0.1:$PORT (default 8080).
#
# Dev setup (all under ./data/dev-keys, created once, reused afterwards):
#   jwt-private.pem / jwt-public.pem   a local RS256 key pair; the gateway trusts the public key (--jwt-keys),
#                                      and `portcullis token` mints tokens with the private one
#   signing.key                        HMAC key for cursors/upload URLs/signed URLs (stable across restarts)
#   admin.key                          admin key (bypasses rules, manages download tokens)
#   jwt-issuer, jwt-audience           the issuer and audience this gateway requires; `portcullis token` run
#                                      from the repository without --key uses them and jwt-private.pem
# Rules: deploy/dev/storage.rules (signed-in users read/write everything; anonymous users read public/).
# Override anything with PORTCULLIS_* environment variables (flags are built from them only when unset).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$PC_ROOT"
port="${PORT:-8080}"

scripts/deps.sh run
pc_log "building release"
scripts/build-release.sh >/dev/null
bin="$(pc_release_bin)"

keys="$PC_ROOT/data/dev-keys"
mkdir -p "$keys"
chmod 700 "$keys"
[[ -f "$keys/jwt-private.pem" ]] || {
    openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$keys/jwt-private.pem" 2>/dev/null
    openssl pkey -in "$keys/jwt-private.pem" -pubout -out "$keys/jwt-public.pem"
}
[[ -f "$keys/signing.key" ]] || printf 'dev:%s\n' "$(openssl rand -base64 32)" >"$keys/signing.key"
[[ -f "$keys/admin.key" ]] || openssl rand -hex 24 >"$keys/admin.key"
chmod 600 "$keys"/*

issuer="https://portcullis.local/dev"
audience="portcullis-dev"
# `portcullis token` run here without --key signs with jwt-private.pem and takes these as its defaults.
printf '%s\n' "$issuer" >"$keys/jwt-issuer"
printf '%s\n' "$audience" >"$keys/jwt-audience"
args=(serve --listen "127.0.0.1:$port")
[[ -n "${PORTCULLIS_BUCKETS:-}" ]] || args+=(--bucket "default-bucket=file:./data")
[[ -n "${PORTCULLIS_RULES:-}" ]] || args+=(--rules deploy/dev/storage.rules)
[[ -n "${PORTCULLIS_SIGNING_KEY_FILE:-}" ]] || args+=(--signing-key "$keys/signing.key")
[[ -n "${PORTCULLIS_ADMIN_KEY_FILE:-}" ]] || args+=(--admin-key "$keys/admin.key")
if [[ -z "${PORTCULLIS_JWT_KEYS:-}${PORTCULLIS_FIREBASE_PROJECT:-}" ]]; then
    args+=(--jwt-keys "$keys/jwt-public.pem" --jwt-issuer "$issuer" --jwt-audience "$audience")
fi

url="http://127.0.0.1:$port"
rel_bin="${bin#"$PC_ROOT"/}"
cat <<INFO

  Portcullis listening on $url   (bucket default-bucket -> ./data; Ctrl-C drains and stops)

  Try:
    curl -s $url/healthz
    curl -s -X POST --data-binary 'hello from portcullis' -H 'Content-Type: text/plain' \\
         "$url/v0/b/default-bucket/o?name=public/hello.txt" \\
         -H "Authorization: Bearer \$($rel_bin token --key data/dev-keys/jwt-private.pem --uid alice --issuer $issuer --audience $audience)"
    curl -s "$url/v0/b/default-bucket/o/public%2Fhello.txt?alt=media"
    curl -s "$url/v0/b/default-bucket/o?prefix=public%2F" -H "Authorization: Bearer \$(cat data/dev-keys/admin.key)"
    curl -s $url/metrics | head

INFO
if ! "$bin" token --help >/dev/null 2>&1; then
    echo "  (this build has no 'portcullis token' yet: use the admin key line above for writes)"
fi
exec "$bin" "${args[@]}"
