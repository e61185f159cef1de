"""Prints what Google's system tests did against Portcullis: the tests deselected as out of scope and as not
yet served, each with its reason, then one line "gcs-system: N passed, N failed, N skipped, N deselected
(N out of scope, N not yet)". Exit status 1 when the JUnit report holds a failure or an error (or is missing)."""
from __future__ import annotations

import sys
import xml.etree.ElementTree as ET
from pathlib import Path


def listed(path: Path) -> list[tuple[str, str]]:
    """The `nodeid  # reason` lines of a list file."""
    entries = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        nodeid, _, reason = line.partition("#")
        entries.append((nodeid.strip(), reason.strip()))
    return entries


def main() -> int:
    junit, out_of_scope, not_yet = (Path(arg) for arg in sys.argv[1:4])
    skipped_out, skipped_not_yet = listed(out_of_scope), listed(not_yet)
    print(f"Out of scope ({len(skipped_out)}, deselected):")
    for nodeid, reason in skipped_out:
        print(f"  {nodeid}  — {reason}")
    print(f"Not yet served ({len(skipped_not_yet)}, deselected):")
    for nodeid, reason in skipped_not_yet:
        print(f"  {nodeid}  — {reason}")
    passed = failed = skipped = 0
    if junit.exists():
        for case in ET.parse(junit).getroot().iter("testcase"):
            if case.find("failure") is not None or case.find("error") is not None:
                failed += 1
            elif case.find("skipped") is not None:
                skipped += 1
            else:
                passed += 1
    else:
        failed = 1
    deselected = len(skipped_out) + len(skipped_not_yet)
    print(f"gcs-system: {passed} passed, {failed} failed, {skipped} skipped, {deselected} deselected "
          f"({len(skipped_out)} out of scope, {len(skipped_not_yet)} not yet)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
