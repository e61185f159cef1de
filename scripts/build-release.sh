#!/usr/bin/env bash
# Build the release binary. These are exactly the steps the Dockerfile's build stage runs (CI runs this script
# on the host, so the container build is exercised even though no Docker engine runs here).
#
# Usage: scripts/build-release.sh [--stage DIR]
#   --stage DIR   also copy the binary and the Swift runtime libraries it loads into DIR (what the runtime
#                 image gets). The binary's RUNPATH contains $ORIGIN, so the libraries sit next to it.
set -euo pipefail
cd "$(dirname "$0")/.."

swift build -c release --product portcullis
bin="$(swift build -c release --show-bin-path)/portcullis"

if [[ "${1:-}" == "--stage" ]]; then
    dir="${2:?--stage needs a directory}"
    mkdir -p "$dir"
    install -m 0755 "$bin" "$dir/portcullis"
    # Only the toolchain's own libraries are copied; system libraries come from Debian packages in the
    # runtime stage (tests/blackbox/test_runtime_libs.py keeps that list honest).
    ldd "$bin" | awk '$3 ~ /\/lib\/swift\/linux\// { print $3 }' | while read -r lib; do
        install -m 0644 "$lib" "$dir/"
    done
fi
