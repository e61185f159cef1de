"""The identity lint (identity_lint.py): identity-bearing code compares names, uids, tokens, buckets and key ids by
bytes, never with Swift's canonical-equivalence `String` operations. docs/testing.md describes the rule."""
from pathlib import Path

import pytest

import identity_lint
from identity_lint import BASELINED_PATHS, ROOT, lint, lint_file

BASELINE = Path(__file__).with_name("identity_baseline.txt")


def keys(findings) -> set[tuple[str, str]]:
    return {(f.path, f.code) for f in findings}


@pytest.mark.parametrize("path", [p for p in identity_lint.IDENTITY_PATHS if p not in BASELINED_PATHS])
def test_identity_paths_compare_bytes(path: str) -> None:
    findings = lint([path])
    assert not findings, "identity compared as Swift String (use ExactString.swift's helpers, or justify with " \
                         "`// identity-ok: <reason>`):\n" + "\n".join(map(str, findings))


def test_baselined_findings_are_the_known_ones() -> None:
    """Sources/Service's and Sources/Gateway's findings must be exactly the baseline's: nothing new, and fixed
    ones deleted from it."""
    baseline = {tuple(line.split("\t", 1)) for line in BASELINE.read_text().splitlines()
                if line and not line.startswith("#")}
    found = keys(lint(BASELINED_PATHS))
    new = sorted(found - baseline)
    stale = sorted(baseline - found)
    assert not new, "new identity findings:\n" + "\n".join(f"{p}: {c}" for p, c in new)
    assert not stale, f"fixed findings still listed in {BASELINE.name} (delete these lines):\n" + \
        "\n".join(f"{p}: {c}" for p, c in stale)


PLANTED = {
    # rule 1: comparisons
    "guard object.bucket == bucket else { throw .bucketNotFound(object.bucket) }": True,
    "if request.auth?.uid != uid { return false }": True,
    "let first = names.min { $0.name < $1.name }": True,
    'if key == "\\u{212A}" { return }': True,
    'if token == "K" { return }': True,
    # rule 2: grapheme-cluster methods
    "guard name.hasPrefix(prefix) else { break }": True,
    "if tokens.contains(token) { return }": True,
    "let sorted = prefixes.sorted()": True,
    'let parts = path.split(separator: "/")': True,
    "let unique = Set(names)": True,
    # rule 3: String-keyed collections of identities
    "var byKeyID: [String: Int] = [:]": True,
    "let buckets: Set<String>": True,
    # rule 4: subscripts of String-keyed identity dictionaries
    "let value = claims[name]": True,
    "custom.customMetadata[key] = value": True,
    # exact or not about identities: not findings
    "guard object.bucket.bytesEqual(bucket) else { throw .notFound }": False,
    'if name == "." || name == ".." { return }': False,
    "if name.utf8.count == 0 || names.count > 3 || prefixes.isEmpty == false { return }": False,
    "if token == nil || kind == .token { return }": False,
    "guard name.bytesHasPrefix(prefix) else { break }": False,
    "let value = claims[exactly: name]": False,
    'let value = claims["sub"]': False,
    "var custom = [String: String]()": False,
    "let set = Set<ExactString>(names.map { ExactString($0) })": False,
    "if size <= maxNameBytes { return }": False,
    'if path[0] == UInt8(ascii: "/") { return }': False,
    "if bucket == other { return } // identity-ok: both are ASCII constants from the configuration": False,
    "guard let key = keys.first(where: { $0.id == ExactString(keyID) }) else { throw .unknownKey }": False,
    '// "a == b" in a comment: names == buckets': False,
    'let text = "name == bucket"': False,
}


def test_lint_catches_planted_violations(tmp_path: Path) -> None:
    source = tmp_path / "Planted.swift"
    lines = list(PLANTED)
    source.write_text("\n".join(lines) + "\n")
    flagged = {f.line for f in lint_file(source, root=tmp_path)}
    for number, line in enumerate(lines, start=1):
        assert (number in flagged) == PLANTED[line], f"{'missed' if PLANTED[line] else 'false finding'}: {line}"


def test_lint_catches_a_planted_violation_in_real_code(tmp_path: Path) -> None:
    """Undo one of the real fixes (the embedded backend's bucket check) and the lint reports it."""
    original = ROOT / "Sources/Storage/Embedded/EmbeddedBackend.swift"
    text = original.read_text()
    fixed = "guard object.bucket.bytesEqual(bucket) else"
    assert fixed in text
    copy = tmp_path / "Sources/Storage/Embedded/EmbeddedBackend.swift"
    copy.parent.mkdir(parents=True)
    copy.write_text(text.replace(fixed, "guard object.bucket == bucket else"))
    assert not lint_file(original), "the real file must be clean"
    findings = lint(["Sources/Storage"], root=tmp_path)
    assert [f.code for f in findings] == ["guard object.bucket == bucket else { throw .bucketNotFound(object.bucket) }"]


def test_multiline_strings_and_block_comments_are_ignored(tmp_path: Path) -> None:
    source = tmp_path / "Skip.swift"
    source.write_text('let sql = """\n    SELECT name FROM objects WHERE name == ?1\n    """\n/* name == bucket\n'
                      '   prefix == x */\nlet ok = 1\n')
    assert lint_file(source, root=tmp_path) == []
