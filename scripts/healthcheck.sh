#!/usr/bin/env bash
# Container HEALTHCHECK: GET /healthz on the port from PORTCULLIS_LISTEN, with bash's /dev/tcp only, so the
# runtime image needs no curl. Exit 0 on a 200 status line, 1 otherwise.
set -euo pipefail
listen="${PORTCULLIS_LISTEN:-127.0.0.1:8080}"
port="${listen##*:}"
exec 3<>"/dev/tcp/127.0.0.1/$port"
printf 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n' >&3
IFS= read -r -t 3 status <&3
[[ "$status" == HTTP/1.?" 200"* ]]
