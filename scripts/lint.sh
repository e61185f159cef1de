#!/usr/bin/env bash
# make lint — swift format lint --strict (.swift-format, on the paths in .swift-format-paths; docs/style.md),
# hadolint, openapi-spec-validator, kubernetes-validate (+ kubectl kustomize when installed), promtool check and
# test rules on deploy/prometheus, the Grafana dashboard's structure.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$PC_ROOT"
pc_ensure_venv tools
exec .venv-tools/bin/pytest -p no:cacheprovider -q tests/blackbox/lint "$@"
