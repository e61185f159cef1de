#!/usr/bin/env bash
# make fuzz — build every libFuzzer target and run each for FUZZ_SECONDS (default 60), one after the other.
#
# Targets: the executable products named Fuzz* of the Fuzz/ package (Fuzz/Package.swift; see Fuzz/README.md),
# or of the root package when there is no separate one (other executables there, e.g. bench servers, are not
# fuzz targets).
# Build recipe (Fuzz/README.md explains each flag): PORTCULLIS_FUZZ_BUILD=1 (Gateway without its console-assets
# plugin, see Package.swift), release, `--sanitize=fuzzer --sanitize=address` (so SwiftPM
# links libFuzzer's main), `-Xswiftc -sanitize=fuzzer,address` (swiftc keeps only the LAST -sanitize= flag, so
# SwiftPM's two flags alone compile ASan without coverage counters), -parse-as-library, lld, in a scratch
# directory of its own. A run whose log lacks libFuzzer's "Loaded N modules (N inline 8-bit counters)" line
# fails: the target would only mutate blindly.
# Per target, from Fuzz/Corpus/: <name>/ seeds a scratch corpus (the repo is never written), <name>.dict is
# passed as -dict, and <name>.options holds extra libFuzzer flags, one per line (<name> is the target with or
# without its "Fuzz" prefix). Crashes land in .build/fuzz/<target>/artifacts/ and fail the run.
# Usage: scripts/fuzz.sh [TARGET...]
# env: FUZZ_SECONDS (default 60), FUZZ_MAX_LEN (default 4096), FUZZ_TIMEOUT (seconds per input, default 10)
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

build=(env PORTCULLIS_FUZZ_BUILD=1 swift build --package-path "$package" --scratch-path "$package/.build/fuzz" -c release
       --sanitize=fuzzer --sanitize=address -Xswiftc -sanitize=fuzzer,address
       -Xswiftc -parse-as-library -Xswiftc -use-ld=lld)
summary="$PC_ROOT/.build/fuzz/summary.tsv"
mkdir -p "$(dirname "$summary")"
printf 'target\truns\texec_per_s\tcov\tft\tcorpus_files\tcorpus_bytes\tcrashes\tseconds\n' >"$summary"
failed=()
for target in "${targets[@]}"; do
    pc_log "building fuzz target $target"
    if ! "${build[@]}" --product "$target"; then failed+=("$target (build)"); continue; fi
    bin="$("${build[@]}" --show-bin-path)/$target"
    work="$PC_ROOT/.build/fuzz/$target"
    rm -rf "$work/corpus" "$work/artifacts" && mkdir -p "$work/corpus" "$work/artifacts"
    extra=()
    for name in "$target" "${target#Fuzz}"; do
        [[ -d "Fuzz/Corpus/$name" ]] && cp -R "Fuzz/Corpus/$name/." "$work/corpus/"
        [[ -f "Fuzz/Corpus/$name.dict" ]] && extra+=("-dict=Fuzz/Corpus/$name.dict")
        [[ -f "Fuzz/Corpus/$name.options" ]] && mapfile -t -O "${#extra[@]}" extra < <(grep -v '^\s*\(#\|$\)' "Fuzz/Corpus/$name.options")
    done
    pc_log "fuzzing $target for ${seconds}s ${extra[*]}"
    rc=0
    SWIFT_BACKTRACE=enable=no "$bin" -max_total_time="$seconds" -max_len="${FUZZ_MAX_LEN:-4096}" \
        -timeout="${FUZZ_TIMEOUT:-10}" -print_final_stats=1 "${extra[@]}" \
        -artifact_prefix="$work/artifacts/" "$work/corpus" >"$work/fuzz.log" 2>&1 || rc=$?
    crashes=$(find "$work/artifacts" -type f | wc -l)
    # The last status line ("#N DONE cov: C ft: F corp: K/S ...") and the final stats.
    "$(pc_python)" - "$work/fuzz.log" "$target" "$crashes" "$seconds" >>"$summary" <<'EOF'
import re, sys
log, target, crashes, seconds = open(sys.argv[1], errors="replace").read(), *sys.argv[2:]
status = [line for line in log.splitlines() if re.match(r"#\d+\s", line) and " cov: " in line]
last = status[-1] if status else ""
def field(pattern, text, default="?"):
    m = re.search(pattern, text)
    return m.group(1) if m else default
print("\t".join([target, field(r"stat::number_of_executed_units:\s*(\d+)", log, field(r"#(\d+)", last)),
                 field(r"stat::average_exec_per_sec:\s*(\d+)", log), field(r"cov: (\d+)", last),
                 field(r"ft: (\d+)", last), field(r"corp: (\d+)/", last), field(r"corp: \d+/(\S+)", last),
                 crashes, seconds]))
EOF
    if ! grep -qE 'Loaded [0-9]+ modules +\([1-9][0-9]* inline 8-bit counters\)' "$work/fuzz.log"; then
        failed+=("$target (not instrumented for coverage: delete $package/.build/fuzz and rebuild)")
        head -n 5 "$work/fuzz.log"
    elif ((rc != 0 || crashes != 0)); then
        failed+=("$target")
        tail -n 40 "$work/fuzz.log"
        ls -1 "$work/artifacts" || true
    fi
    tail -n 1 "$summary" | awk -F'\t' '{printf "%s: %s runs, %s exec/s, cov %s, ft %s, corpus %s files (%s), %s crashes\n", $1, $2, $3, $4, $5, $6, $7, $8}'
done
if ((${#failed[@]})); then
    printf 'fuzz: %d passed, %d failed: %s\n' "$((${#targets[@]} - ${#failed[@]}))" "${#failed[@]}" "${failed[*]}"
    exit 1
fi
printf 'fuzz: %d passed, 0 failed (%ss each; figures in %s)\n' "${#targets[@]}" "$seconds" "$summary"
