#!/usr/bin/env bash
# make lint — hadolint, openapi-spec-validator, kubernetes-validate (+ kubectl kustomize when installed).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$PC_ROOT"
pc_ensure_venv tools
exec .venv-tools/bin/pytest -p no:cacheprovider -q tests/blackbox/lint "$@"
