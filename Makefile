# Portcullis — the project's commands. Each target is a thin wrapper over a script in scripts/ so that CI, the
# Dockerfile and people run the same steps.
#
#   make run           install what is missing, build release, serve ./data on http://127.0.0.1:$(PORT)
#   make test          everything CI runs: swift test, lint, black-box suites; ends with "N passed, N failed"
#   make lint          swift format lint, hadolint, openapi-spec-validator, kubernetes-validate, promtool (part of make test)
#   make coverage      swift test with code coverage: line coverage per target, HTML under .build/coverage/
#   make fuzz          every fuzz target in Fuzz/ for FUZZ_SECONDS each (default 60)
#   make bench         the full benchmark against nginx (never part of make test); bench-quick: ~2 minutes
#   make gcs-system-tests  Google's own google-cloud-storage system tests against a Portcullis (make test runs its --fast part)
#   make soak          SOAK_MINUTES (default 30) of mixed traffic at ~80% of the maximum: RSS, fds, p99 (not in make test)
SHELL := /bin/bash
.DEFAULT_GOAL := help

PORT ?= 8080
FUZZ_SECONDS ?= 60
SOAK_MINUTES ?= 30
export PORT FUZZ_SECONDS SOAK_MINUTES

.PHONY: help run test lint gcs-system-tests coverage fuzz bench bench-quick soak build release deps clean

help:
	@sed -n 's/^#   //p' Makefile

run:
	@scripts/run.sh

test:
	@scripts/test.sh

lint:
	@scripts/lint.sh

coverage:
	@scripts/coverage.sh

fuzz:
	@scripts/fuzz.sh

bench:
	@scripts/bench.sh full

bench-quick:
	@scripts/bench.sh quick

soak:
	@scripts/soak.sh

gcs-system-tests:
	@scripts/gcs-system-tests.sh

build:
	swift build

release:
	@scripts/build-release.sh

deps:
	@scripts/deps.sh all

clean:
	rm -rf .build bench/results .venv-*
