#!/usr/bin/env python3
"""Aggregate every test result of `make test` into one closing line.

Reads DIR/steps.tsv (name, exit status, seconds, junit file) written by scripts/test.sh and the junit XML files
the runners wrote (swift test writes NAME.xml for XCTest and NAME-swift-testing.xml for Swift Testing). Counts
test cases, not suites. A step that exited non-zero without any failing test case in its XML (build error,
crashed runner, pytest collecting nothing) adds one failure of its own. Prints a line per step, then
"N passed, N failed[, N skipped]" alone on the last line; exits 1 if anything failed or nothing passed.
"""
import sys
import xml.etree.ElementTree as ET
from pathlib import Path


def count_junit(path: Path) -> tuple[int, int, int, list[str]]:
    passed = failed = skipped = 0
    failures: list[str] = []
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError) as error:
        return 0, 1, 0, [f"{path.name}: unreadable junit file ({error})"]
    for case in root.iter("testcase"):
        name = f"{case.get('classname', '')}::{case.get('name', '')}"
        if case.find("failure") is not None or case.find("error") is not None:
            failed += 1
            failures.append(name)
        elif case.find("skipped") is not None:
            skipped += 1
        else:
            passed += 1
    return passed, failed, skipped, failures


def main() -> int:
    results = Path(sys.argv[1])
    total_passed = total_failed = total_skipped = 0
    print("\n==> summary")
    for line in (results / "steps.tsv").read_text().splitlines():
        name, status, seconds, xml = (line.split("\t") + ["", "", "", ""])[:4]
        passed = failed = skipped = 0
        failures: list[str] = []
        if xml:
            base = Path(xml)
            for candidate in (base, base.with_name(base.stem + "-swift-testing.xml")):
                if candidate.exists():
                    p, f, s, names = count_junit(candidate)
                    passed, failed, skipped = passed + p, failed + f, skipped + s
                    failures += names
        ok = status == "0"
        if not ok and failed == 0:
            failed = 1
            failures.append(f"{name}: exit status {status}")
        total_passed += passed
        total_failed += failed
        total_skipped += skipped
        verdict = "ok" if ok else "FAILED"
        print(f"  {name:<14} {verdict:<7} {passed:>4} passed {failed:>3} failed {skipped:>3} skipped  ({seconds}s)")
        for failure in failures[:20]:
            print(f"      - {failure}")
    summary = f"{total_passed} passed, {total_failed} failed"
    if total_skipped:
        summary += f", {total_skipped} skipped"
    print(summary)
    return 0 if total_failed == 0 and total_passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
