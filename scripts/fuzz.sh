#!/usr/bin/env bash
# make fuzz — build every libFuzzer target and run each for FUZZ_SECONDS (default 60).
#
# Targets: the executable products named Fuzz* of the Fuzz/ package (Fuzz/Package.swift; see Fuzz/README.md),
# or of the root package when there is no separate one (other executables there, e.g. bench servers, are not
# fuzz targets).
# Recipe (shared/stack-notes.md): release + fuzzer + address sanitizers, -parse-as-library, lld (without lld
# there are no coverage counters). Corpora: Fuzz/Corpus/<target>/ or Fuzz/Corpus/<target minus "Fuzz">/ seeds
# a scratch corpus (the repo is never written); crashes land in .build/fuzz/<target>/ and fail the run.
# Usage: scripts/fuzz.sh [TARGET...]   env: FUZZ_SECONDS (default 60), FUZZ_MAX_LEN (default 4096)
set -uo pipefail
source "$(dirname "$0")/lib.sh"
cd "$PC_ROOT"
seconds="${FUZZ_SECONDS:-60}"

if [[ -f Fuzz/Package.swift ]]; then package=Fuzz; else package=.; fi
mapfile -t targets < <(
    if (($#)); then printf '%s\n' "$@"; else
        swift package --package-path "$package" describe --type json 2>/dev/null | "$(pc_python)" -c '
import json, sys
package = json.load(sys.stdin)
for product in package.get("products", []):
    if "executable" in product.get("type", {}) and product["name"].startswith("Fuzz"):
        print(product["name"])' "$package"
    fi)
((${#targets[@]})) || pc_die "no fuzz targets found (expected Fuzz/Package.swift or Fuzz* executable products)"

build=(swift build --package-path "$package" -c release --sanitize=fuzzer --sanitize=address
       -Xswiftc -parse-as-library -Xswiftc -use-ld=lld)
failed=()
for target in "${targets[@]}"; do
    pc_log "building fuzz target $target"
    if ! "${build[@]}" --product "$target"; then failed+=("$target (build)"); continue; fi
    bin="$("${build[@]}" --show-bin-path)/$target"
    work="$PC_ROOT/.build/fuzz/$target"
    rm -rf "$work/corpus" && mkdir -p "$work/corpus" "$work/artifacts"
    for seeds in "Fuzz/Corpus/$target" "Fuzz/Corpus/${target#Fuzz}"; do
        [[ -d "$seeds" ]] && cp -R "$seeds/." "$work/corpus/"
    done
    pc_log "fuzzing $target for ${seconds}s"
    if SWIFT_BACKTRACE=enable=no "$bin" -max_total_time="$seconds" -max_len="${FUZZ_MAX_LEN:-4096}" -print_final_stats=1 \
        -artifact_prefix="$work/artifacts/" "$work/corpus" >"$work/fuzz.log" 2>&1; then
        tail -n 12 "$work/fuzz.log" | grep -E "stat::number_of_executed_units|Done" || true
    else
        failed+=("$target")
        tail -n 40 "$work/fuzz.log"
        ls -1 "$work/artifacts" || true
    fi
done
if ((${#failed[@]})); then
    printf 'fuzz: %d passed, %d failed: %s\n' "$((${#targets[@]} - ${#failed[@]}))" "${#failed[@]}" "${failed[*]}"
    exit 1
fi
printf 'fuzz: %d passed, 0 failed (%ss each)\n' "${#targets[@]}" "$seconds"
