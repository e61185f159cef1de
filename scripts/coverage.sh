#!/usr/bin/env bash
# make coverage — the Swift test suites with code coverage. Prints line coverage per target (Sources/<Target>),
# writes an HTML report to .build/coverage/html/index.html and the figures to .build/coverage/summary.tsv
# (per target) and .build/coverage/files.tsv (per file).
#
# It builds in a scratch directory of its own (.build/coverage/build), so alternating with `make test` never
# rebuilds either tree from scratch. The GCS/S3 backend suites need the emulators: they are started as `make
# test` starts them (with their own state directory) and stopped on exit. `portcullis` processes the tests
# start are instrumented too; their profiles are merged with the test process's. llvm-cov and llvm-profdata
# come from the Swift toolchain (next to `swift`).
# Usage: scripts/coverage.sh [swift test arguments, e.g. --filter CryptoTests]
# Exit status: non-zero when the build or any test failed (the report is still written when tests ran).
set -uo pipefail
source "$(dirname "$0")/lib.sh"
cd "$PC_ROOT"
out="$PC_ROOT/.build/coverage"
scratch="$out/build"
toolchain="$(dirname "$(readlink -f "$(command -v swift)")")"
llvm_cov="$toolchain/llvm-cov"
llvm_profdata="$toolchain/llvm-profdata"
[[ -x "$llvm_cov" && -x "$llvm_profdata" ]] || pc_die "llvm-cov/llvm-profdata not found next to swift ($toolchain)"

scripts/deps.sh build || pc_die "installing build dependencies failed"
export PORTCULLIS_EMULATOR_STATE="$out/emulators"
# Without them the GCS/S3 suites skip and the Storage figure means nothing: refuse rather than mislead.
emu_env="$(scripts/emulators.sh start)" || pc_die "the emulators did not start (scripts/emulators.sh start)"
eval "$emu_env"
# Ceph RGW when its packages are installed (`make test` installs them); without it the RGW suites skip.
export PC_RGW_STATE="$out/rgw"
trap 'scripts/emulators.sh stop >/dev/null 2>&1 || true; scripts/rgw.sh stop >/dev/null 2>&1 || true' EXIT
if rgw_env="$(scripts/rgw.sh start)"; then eval "$rgw_env"; else pc_log "Ceph RGW did not start: its suites skip"; fi

build=(swift build --scratch-path "$scratch" --enable-code-coverage)
pc_log "building with coverage in $scratch"
"${build[@]}" --build-tests || pc_die "build failed"
bin="$("${build[@]}" --show-bin-path)"
codecov="$bin/codecov"
rm -rf "$codecov" "$out/html"
find "$PC_ROOT" -maxdepth 1 -name 'default.profraw' -delete

pc_log "swift test --enable-code-coverage $*"
rc=0
# Sixteen tests at a time, as in scripts/test.sh (fully parallel runs hold ~1,800 descriptors; see there).
SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH="${SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH:-16}" \
    swift test --scratch-path "$scratch" --enable-code-coverage --skip-build "$@" || rc=$?

# SwiftPM merges the profiles written under $codecov; a `portcullis` child started with a scrubbed environment
# writes default.profraw into its working directory instead: merge those too.
mapfile -t profiles < <(find "$codecov" -name '*.profraw' 2>/dev/null; find "$PC_ROOT" -maxdepth 1 -name 'default.profraw')
((${#profiles[@]})) || pc_die "no coverage profiles were written (did the tests run?)"
profdata="$out/merged.profdata"
"$llvm_profdata" merge -sparse "${profiles[@]}" -o "$profdata" || pc_die "llvm-profdata merge failed"
find "$PC_ROOT" -maxdepth 1 -name 'default.profraw' -delete

objects=()
for candidate in "$bin"/*PackageTests.xctest "$bin/portcullis" "$bin/portcullis-cli"; do
    [[ -f "$candidate" ]] && objects+=(-object "$candidate")
done
((${#objects[@]})) || pc_die "no instrumented binaries under $bin"
ignore='(/Tests/|/\.build/|/Fuzz/)'

pc_log "writing the HTML report"
"$llvm_cov" show -format=html -output-dir="$out/html" -instr-profile="$profdata" -ignore-filename-regex="$ignore" \
    -project-title=Portcullis -show-line-counts-or-regions "${objects[@]:1}" >/dev/null || pc_die "llvm-cov show failed"

"$llvm_cov" export -summary-only -instr-profile="$profdata" -ignore-filename-regex="$ignore" "${objects[@]:1}" \
    >"$out/export.json" || pc_die "llvm-cov export failed"
"$(pc_python)" - "$out/export.json" "$PC_ROOT" "$out" <<'EOF'
import json, os, sys
export, root, out = sys.argv[1:]
per_target, files = {}, []
for entry in json.load(open(export))["data"][0]["files"]:
    path = os.path.relpath(entry["filename"], root)
    parts = path.split(os.sep)
    if len(parts) < 3 or parts[0] != "Sources":
        continue
    lines = entry["summary"]["lines"]
    total, covered = per_target.get(parts[1], (0, 0))
    per_target[parts[1]] = (total + lines["count"], covered + lines["covered"])
    files.append((path, lines["count"], lines["covered"]))

def pct(covered, total):
    return 100.0 * covered / total if total else 100.0

with open(os.path.join(out, "summary.tsv"), "w") as tsv:
    tsv.write("target\tlines\tcovered\tpercent\n")
    print(f"{'target':<16} {'lines':>7} {'covered':>8} {'line cov':>9}")
    for target, (total, covered) in sorted(per_target.items()):
        tsv.write(f"{target}\t{total}\t{covered}\t{pct(covered, total):.1f}\n")
        print(f"{target:<16} {total:>7} {covered:>8} {pct(covered, total):>8.1f}%")
    total = sum(t for t, _ in per_target.values())
    covered = sum(c for _, c in per_target.values())
    tsv.write(f"TOTAL\t{total}\t{covered}\t{pct(covered, total):.1f}\n")
    print(f"{'TOTAL':<16} {total:>7} {covered:>8} {pct(covered, total):>8.1f}%")
with open(os.path.join(out, "files.tsv"), "w") as tsv:
    tsv.write("file\tlines\tcovered\tpercent\n")
    for path, total, covered in sorted(files, key=lambda f: (pct(f[2], f[1]), -f[1])):
        tsv.write(f"{path}\t{total}\t{covered}\t{pct(covered, total):.1f}\n")
EOF
pc_log "HTML report: $out/html/index.html (per file: $out/files.tsv)"
exit "$rc"
