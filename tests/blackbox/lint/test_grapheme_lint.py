"""The grapheme lint (grapheme_lint.py): the sources test single ASCII characters on bytes or scalars, never on
Swift `Character`s (all of them but the startup configuration's parser and a build tool). docs/testing.md
describes the rule."""
from pathlib import Path

import pytest

import grapheme_lint
from grapheme_lint import ROOT, lint, lint_file


@pytest.mark.parametrize("path", grapheme_lint.PATHS)
def test_sources_test_characters_as_bytes(path: str) -> None:
    findings = lint([path])
    assert not findings, "a single character tested as a Swift Character (use utf8/unicodeScalars, bytesSplit, " \
                         "bytesCut, trimmingSpaces, or justify with `// grapheme-ok: <reason>`):\n" + \
                         "\n".join(map(str, findings))


PLANTED = {
    # rule 1: $0 against a one-character literal
    'guard !value.contains(where: { $0 == "\\r" || $0 == "\\n" }) else { throw .bad }': True,
    'let end = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex': True,
    'let lines = text.split(whereSeparator: { $0 == "\\n" })': True,
    'let label = block.prefix(while: { $0 != "-" })': True,
    # rule 2: a one-character literal as the argument
    'for part in header.split(separator: ",") { }': True,
    'guard let eq = text.firstIndex(of: "=") else { return nil }': True,
    'if let at = authority.lastIndex(of: "@") { }': True,
    'guard !text.contains("#") else { return nil }': True,
    'let t = s.trimmingCharacters(in: " ")': True,
    'let u = s.split(separator: "\\u{2C}", maxSplits: 1)': True,
    # rule 3: first/last, or a name bound from one
    'if digits.first == "-" { digits = digits.dropFirst() }': True,
    'while let f = s.first, f == " " || f == "\\t" { s.removeFirst() }': True,
    # bytes, scalars, whole strings: not findings
    'guard !value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A }) else { throw .bad }': False,
    'for part in header.bytesSplit(separator: UInt8(ascii: ",")) { }': False,
    'guard let (name, value) = text.bytesCut(at: UInt8(ascii: "=")) else { return nil }': False,
    'let clean = text.unicodeScalars.filter { $0 != "\\"" }': False,
    'let printable = scalars.allSatisfy { $0 != "\\\\" && $0.value >= 0x20 }': False,
    'if name == "." || name.contains("..") { return }': False,
    'let parts = text.split(separator: ", ")': False,
    'if s.first == "ab" { }': False,
    '// text.split(separator: ",") in a comment': False,
    'let doc = "split(separator: \\",\\")"': False,
    'for part in header.split(separator: ",") { }  // grapheme-ok: the header was checked to be ASCII': False,
}


def test_lint_catches_planted_violations(tmp_path: Path) -> None:
    source = tmp_path / "Planted.swift"
    lines = list(PLANTED)
    source.write_text("\n\n".join(lines) + "\n")
    flagged = {f.line for f in lint_file(source, root=tmp_path)}
    for number, line in enumerate(lines):
        assert (2 * number + 1 in flagged) == PLANTED[line], \
            f"{'missed' if PLANTED[line] else 'false finding'}: {line}"


def test_switch_over_characters_of_a_string_is_a_finding(tmp_path: Path) -> None:
    source = tmp_path / "Switch.swift"
    source.write_text('for character in text {\n    switch character {\n    case "<": out += "&lt;"\n'
                      '    default: out.append(character)\n    }\n}\n'
                      'for scalar in text.unicodeScalars {\n    switch scalar {\n    case "<": out += "&lt;"\n'
                      '    default: break\n    }\n}\n')
    assert [(f.line, f.rule) for f in lint_file(source, root=tmp_path)] == [(2, "switch over Characters")]


def test_a_marker_covers_its_paragraph_and_a_file_marker_its_file(tmp_path: Path) -> None:
    source = tmp_path / "Marked.swift"
    source.write_text('// grapheme-ok: Swift renders a Double in ASCII\nlet parts = text.split(separator: "e")\n'
                      'let dot = text.firstIndex(of: ".")\n\nlet comma = text.firstIndex(of: ",")\n')
    assert [f.line for f in lint_file(source, root=tmp_path)] == [5]
    source.write_text('// grapheme-ok(file): every input was checked to be ASCII\n' + source.read_text())
    assert lint_file(source, root=tmp_path) == []


def test_lint_catches_the_markup_escaping_undone(tmp_path: Path) -> None:
    """Put back the Character-wise escaping that let `\\u{600}<` through, and the lint reports it."""
    original = ROOT / "Sources/PortcullisCore/Text/MarkupEscaping.swift"
    assert not lint_file(original), "the real file must be clean"
    copy = tmp_path / "MarkupEscaping.swift"
    copy.write_text('enum MarkupEscaping {\n    static func escaped(_ text: String) -> String {\n'
                    '        var out = ""\n        for character in text {\n            switch character {\n'
                    '            case "&": out += "&amp;"\n            default: out.append(character)\n'
                    '            }\n        }\n        return out\n    }\n}\n')
    assert [f.rule for f in lint_file(copy, root=tmp_path)] == ["switch over Characters"]
