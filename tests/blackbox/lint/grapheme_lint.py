"""Markup, separators and whitespace are bytes: a static check that keeps `Character`-wise tests for single ASCII
characters out of the sources (docs/testing.md "Grapheme lint").

Swift's `Character` is a grapheme cluster: `"<\\u{301}"`, `"\\u{600}<"`, `" \\u{301}"` and `"\\r\\n"` are each one
`Character`, equal to none of `"<"`, `" "`, `"\\r"` or `"\\n"`. Escaping, splitting, trimming or validating text one
`Character` at a time therefore lets a markup character, a separator or a line break through whenever a mark sits
next to it: an object named `x\\u{600}</Key>\\u{301}` closed the element of an S3 listing, and an upstream header
value with CR LF passed the check meant to refuse line breaks. Test single characters on `utf8` (bytes) or
`unicodeScalars` instead; PortcullisCore/Text has `bytesSplit`, `trimmingSpaces`, `trimmingASCII(where:)`.

The check is lexical and reads every Swift file under Sources but those of EXCLUDED. A line of code is a finding
when it
  1. compares `$0` with a one-character string literal (`contains(where: { $0 == "\\n" })`, `allSatisfy`,
     `split(whereSeparator:)`, ...);
  2. passes a one-character string literal to `split(separator:)`, `firstIndex(of:)`, `lastIndex(of:)`,
     `contains(_:)` or `trimmingCharacters(in:)`;
  3. compares a `.first` / `.last`, or a name just bound from one, with a one-character string literal;
  4. switches, with a one-character `case "x"`, over the loop variable of a `for x in text` whose sequence is
     not `unicodeScalars` or `utf8`.
Lines that work on `unicodeScalars` are exempt (a `Unicode.Scalar` is one code point), and a
finding is accepted when the line says `// grapheme-ok: <reason>`, or a comment line above it does with no blank
line between them; a whole file, when a line of its own says `// grapheme-ok(file): <reason>` (text it has
checked is ASCII, say).
"""
from __future__ import annotations

import re
from pathlib import Path

from identity_lint import Finding  # path:line: rule: code

ROOT = Path(__file__).resolve().parents[3]
#: Everything but the startup configuration (the operator's own flags and files) and the console asset compiler
#: (a build tool reading the repository's own files). The command-line tools and the client library are in: they
#: handle object names a bucket's other writers chose.
EXCLUDED = ["Sources/Gateway/Config", "Sources/ConsoleAssetCompiler"]
PATHS = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "Sources").iterdir()
               if p.is_dir() and str(p.relative_to(ROOT)) not in EXCLUDED)

ONE = r'"(?:\\u\{[0-9A-Fa-f]+\}|\\.|[^"\\])"'
CLOSURE = re.compile(r"\$0\s*[!=]=\s*" + ONE)
ARGUMENT = re.compile(r"\.(?:split\(separator:|firstIndex\(of:|lastIndex\(of:|contains\(|"
                      r"trimmingCharacters\(in:)\s*" + ONE + r"\s*[,)]")
FIRST_LAST = re.compile(r"\.(?:first|last)\s*[!=]=\s*" + ONE)
BOUND = re.compile(r"let (\w+) = [\w.]+\.(?:first|last)\s*,\s*\1\s*[!=]=\s*" + ONE)
FOR_LOOP = re.compile(r"\bfor (\w+) in (.+?)\s*\{")
CASE_ONE = re.compile(r"\bcase " + ONE + r"\s*[:,]")
SCALAR_WORDS = re.compile(r"unicodeScalars|Unicode\.Scalar|\$0\.value\b")
MARKER = re.compile(r"//\s*grapheme-ok:\s*\S")
FILE_MARKER = re.compile(r"^\s*//\s*grapheme-ok\(file\):\s*\S", re.MULTILINE)



def code_lines(source: str) -> list[str]:
    """Per line: the code without its `//` comment; empty inside multi-line string literals and block comments."""
    out: list[str] = []
    in_multiline = in_block = False
    for raw in source.split("\n"):
        if in_multiline or in_block:
            out.append("")
            if in_multiline and '"""' in raw:
                in_multiline = False
            if in_block and "*/" in raw:
                in_block = False
            continue
        stripped = raw.strip()
        if stripped.startswith("/*") and "*/" not in stripped:
            in_block = True
            out.append("")
            continue
        if raw.count('"""') == 1:
            in_multiline = True
        code, in_string, i = [], False, 0
        while i < len(raw):
            c = raw[i]
            if not in_string and raw.startswith("//", i):
                break
            if c == "\\" and in_string:
                code.append(raw[i:i + 2])
                i += 2
                continue
            if c == '"':
                in_string = not in_string
            code.append(c)
            i += 1
        out.append("".join(code))
    return out


def lint_file(path: Path, root: Path = ROOT) -> list[Finding]:
    text = path.read_text()
    if FILE_MARKER.search(text):
        return []
    raw_lines = text.split("\n")
    lines = code_lines("\n".join(raw_lines))
    relative = str(path.relative_to(root))
    findings: list[Finding] = []
    loops: dict[str, int] = {}  # character loop variable -> line index it was bound on
    covered = False
    for index, code in enumerate(lines):
        if not raw_lines[index].strip():
            covered = False
        if not code.strip() and not MARKER.search(raw_lines[index]):
            continue
        if MARKER.search(raw_lines[index]) and raw_lines[index].strip().startswith("//"):
            covered = True  # a marker line covers the lines below it, up to the next blank line
        elif not raw_lines[index].strip():
            covered = False
        marked = covered or MARKER.search(raw_lines[index])
        rules: list[str] = []
        scalar = SCALAR_WORDS.search(code)
        if CLOSURE.search(code) and not scalar:
            rules.append("closure compares a Character")
        if ARGUMENT.search(code) and not scalar:
            rules.append("Character argument")
        if (FIRST_LAST.search(code) or BOUND.search(code)) and not scalar:
            rules.append("first/last compared as a Character")
        loop = FOR_LOOP.search(code)
        if loop and not re.search(r"\.(unicodeScalars|utf8)\b|[sS]calars|[bB]ytes", loop.group(2)):
            loops[loop.group(1)] = index
        switch = re.search(r"\bswitch (\w+) \{", code)
        if switch and switch.group(1) in loops and index - loops[switch.group(1)] <= 3:
            for later in lines[index + 1:index + 40]:
                if CASE_ONE.search(later):
                    rules.append("switch over Characters")
                    break
                if re.match(r"\s*}\s*$", later) and later.startswith(code[:len(code) - len(code.lstrip())]):
                    break
        if rules and not marked:
            findings.extend(Finding(relative, index + 1, rule, code.strip()) for rule in rules)
    return findings


def lint(paths: list[str] = PATHS, root: Path = ROOT) -> list[Finding]:
    findings: list[Finding] = []
    for path in paths:
        for file in sorted((root / path).rglob("*.swift")):
            if not any(str(file.relative_to(root)).startswith(excluded + "/") for excluded in EXCLUDED):
                findings += lint_file(file, root)
    return findings


if __name__ == "__main__":
    for finding in lint():
        print(finding)
