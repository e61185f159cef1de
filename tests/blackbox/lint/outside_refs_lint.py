"""The stand-alone docs lint: nothing in the repository cites a document that is not in it.

Comments, docs and tests must point at the repository's own documents (docs/*.md, openapi/, README.md) or state
the fact themselves; a citation such as "v0 §5.9" or "rules.md §2.1" names a text a reader of the repository
cannot open. Public standards stay citable by section: RFCs, XML 1.0 and the CloudEvents bindings. A `§` that
follows none of those names is a finding, as is any of FORBIDDEN. docs/testing.md describes the rule."""
from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

#: Names of documents outside the repository, and the section-citation forms that point at them.
FORBIDDEN: list[tuple[str, re.Pattern[str]]] = [
    ("outside path ../shared", re.compile(r"\.\./shared|\bshared/protocol\b")),
    ("design document", re.compile(r"\bDESIGN\b")),
    ("stack notes", re.compile(r"stack-notes")),
    ("protocol document", re.compile(r"\bprotocol/(?:v0|rules|gcs-json)\.md\b")),
    ("v0 section", re.compile(r"\bv0(?:\.md)?,?\s*§")),
    ("rules.md", re.compile(r"\brules\.md\b")),
    ("conventions", re.compile(r"\bconventions\.md\b|\bconventions\s*§|\(conventions\)")),
    ("requirement tag", re.compile(r"\[REC\]|\bDOC-(?:LANG|STRUCT|COND)\b")),
    # The project's issue tracker is not in the repository either; a public project's issue (owner/repo#N,
    # firebase-tools#3533) is a public document and stays citable.
    ("issue tracker", re.compile(r"\b[Ii]ssues? #?\d+\b")),
]

_SECTION = r"§\s*\d+(?:\.\d+)*(?:\s*\([a-z]\))?(?:\s*[–-]\s*\d+(?:\.\d+)*)?"
#: A section citation of a public standard, chains included ("RFC 7518 §3.3, §3.4", "RFC 3986 §3.2.2–3.2.3").
STANDARD = re.compile(
    r"(?:RFC\s*\d+|XML 1\.0|CloudEvents(?: HTTP)? binding|HTTP binding)[,:]?\s*\(?" + _SECTION
    + r"(?:(?:\s*,\s*|\s+and\s+|\s*/\s*)" + _SECTION + r")*")

#: Files this lint reads: tracked text files, less this lint and its test (which must spell the patterns).
SKIP = {"tests/blackbox/lint/outside_refs_lint.py", "tests/blackbox/lint/test_outside_refs_lint.py"}
TEXT_SUFFIXES = {".swift", ".md", ".py", ".sh", ".yaml", ".yml", ".json", ".txt", ".js", ".html", ".css", ".c",
                 ".h", ".toml", ".in", ".rules", ".conf", ".template", ".modulemap", ""}


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    what: str
    text: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.what}: {self.text.strip()[:160]}"


def lint_text(text: str, path: str = "<text>") -> list[Finding]:
    findings = []
    for number, line in enumerate(text.splitlines(), 1):
        for what, pattern in FORBIDDEN:
            if pattern.search(line):
                findings.append(Finding(path, number, what, line))
        if "§" in STANDARD.sub("", line):
            findings.append(Finding(path, number, "section of an outside document (§ without a standard)", line))
    return findings


def tracked_files() -> list[str]:
    out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    names = [n for n in out.decode().split("\0") if n]
    return sorted(n for n in names if n not in SKIP and Path(n).suffix in TEXT_SUFFIXES
                  and (ROOT / n).is_file())


def lint(paths: list[str] | None = None) -> list[Finding]:
    findings = []
    for path in paths if paths is not None else tracked_files():
        try:
            text = (ROOT / path).read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        findings.extend(lint_text(text, path))
    return findings


if __name__ == "__main__":
    import sys
    found = lint()
    print("\n".join(map(str, found)))
    sys.exit(1 if found else 0)
