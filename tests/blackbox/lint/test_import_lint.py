"""The import lint (import_lint.py): every target imports only what docs/architecture.md's table allows, the table
and Package.swift agree, a C module has one importer, and targets that build on macOS guard Linux-only modules.
docs/testing.md describes the rules."""
import shutil
from pathlib import Path

import import_lint
from import_lint import ROOT, code_lines, lint, read_package, read_table


def test_the_tree_follows_the_table() -> None:
    findings = lint()
    assert not findings, f"imports against {import_lint.DOC} (fix the code, or the row with a reason):\n" + \
        "\n".join(map(str, findings))


def test_the_table_covers_every_target_of_both_packages() -> None:
    table, findings = read_table()
    assert not findings, "\n".join(map(str, findings))
    targets, _ = read_package(ROOT / "Package.swift")
    assert {t.name for t in targets if t.kind != "testTarget"} == set(table.rows)
    assert {"Glibc", "FoundationNetworking", "FoundationXML", "CEpoll"} <= table.linux_only
    assert "Testing" in table.tests_allowed and "Foundation" in table.fuzz_allowed


DOC = """\
# Targets

| Target | Builds on | Job | May import |
|---|---|---|---|
| `CFoo` | Linux | a C library | — |
| `Core` | Linux, macOS | shared values | `Glibc`, `Darwin` |
| `Rules` | Linux, macOS | pure | `Core`, `Lone` |
| `Store` | Linux | storage | `CFoo`, `Foundation` |
| `Lone` | Linux, macOS | depends on Store | `Store`, `CFoo` |
| `Ghost` | Linux | no such target | — |

| Targets | May import |
|---|---|
| every `.testTarget` of Package.swift | its dependencies and `Testing` |
| every target of `Fuzz/Package.swift` | its dependencies and `Foundation` |

**Linux-only modules:** `Glibc`, `CFoo`
"""

PACKAGE = """\
// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Mini",
    products: [.library(name: "Core", targets: ["Core"])],
    targets: [
        .systemLibrary(name: "CFoo", pkgConfig: "foo", providers: [.apt(["libfoo-dev"])]),  // a "comment", too
        .target(name: "Core"),
        .target(name: "Rules", dependencies: ["Core"]),
        .target(name: "Store", dependencies: ["Core", .target(name: "CFoo")]),
        .target(name: "Lone", dependencies: ["Store", .target(name: "CFoo", condition: .when(platforms: [.linux]))]),
        .target(name: "Other", path: "Sources/Elsewhere"),
        .testTarget(name: "CoreTests", dependencies: ["Rules"]),
    ]
)
"""

SOURCES = {
    "Sources/Rules/Imports.swift": '''\
import Core
@testable import Store
internal import struct Foundation.Date
// import Commented
/* import Blocked /* nested */ import StillBlocked */
let script = """
    import http.server
    """
let raw = #"import "Quoted" \\#(f("import Interpolated"))"#
public import Glibc
''',
    "Sources/Core/Platform.swift": '''\
import Glibc
#if canImport(Glibc)
import Glibc
let a = Glibc.write
#elseif canImport(Darwin)
import Darwin
let b = Glibc.read
#endif
#if os(Linux) || os(Android)
let c = Glibc.close
#endif
#if !canImport(Glibc)
let d = Glibc.open
#endif
''',
    "Sources/Store/C.swift": "public import CFoo\nimport Foundation\n",
    "Sources/Lone/L.swift": "internal import CFoo\nimport Store\n",
    "Tests/CoreTests/T.swift": "import Testing\n@testable import Rules\nimport Core\nimport Store\nimport CFoo\n",
}

EXPECTED = {
    "Package.swift: target Other has no row in docs/architecture.md",
    "docs/architecture.md:10: Ghost is not a target of Package.swift",
    "docs/architecture.md:7: Rules may import Lone, but Package.swift does not declare that dependency",
    "docs/architecture.md:8: Store depends on Core in Package.swift, but its row does not allow importing it",
    "docs/architecture.md: CFoo is allowed to Lone, Store: a C module has one Swift importer",
    "docs/architecture.md:9: Lone builds on macOS but depends on Store, which does not",
    "Sources/Rules/Imports.swift:2: Rules may not import Store",
    "Sources/Rules/Imports.swift:3: Rules may not import Foundation",
    "Sources/Rules/Imports.swift:10: Rules may not import Glibc",
    "Sources/Rules/Imports.swift:10: Rules builds on macOS: import Glibc outside #if canImport(Glibc)",
    "Sources/Core/Platform.swift:1: Core builds on macOS: import Glibc outside #if canImport(Glibc)",
    "Sources/Core/Platform.swift:7: Core builds on macOS: Glibc.read outside #if canImport(Glibc)",
    "Sources/Core/Platform.swift:10: Core builds on macOS: Glibc.close outside #if canImport(Glibc)",
    "Sources/Core/Platform.swift:13: Core builds on macOS: Glibc.open outside #if canImport(Glibc)",
    "Sources/Store/C.swift:1: CFoo is a C module: import it internal, never public",
    "Sources/Store/C.swift:1: CFoo is imported by 3 Swift targets (CoreTests, Lone, Store): a C module has one importer",
    "Sources/Lone/L.swift:1: CFoo is imported by 3 Swift targets (CoreTests, Lone, Store): a C module has one importer",
    "Sources/Lone/L.swift:1: Lone builds on macOS: import CFoo outside #if canImport(CFoo)",
    "Tests/CoreTests/T.swift:4: CoreTests may not import Store",
    "Tests/CoreTests/T.swift:5: CoreTests may not import CFoo",
    "Tests/CoreTests/T.swift:5: CFoo is imported by 3 Swift targets (CoreTests, Lone, Store): a C module has one importer",
}


def mini_repository(root: Path) -> None:
    for path, text in {"docs/architecture.md": DOC, "Package.swift": PACKAGE, **SOURCES}.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)


def test_lint_reports_each_kind_of_violation(tmp_path: Path) -> None:
    """One planted violation of each rule; comments, strings, raw strings and their interpolations hold no imports;
    a guard must be positive and not one side of `||`; a test target may import what its dependencies may."""
    mini_repository(tmp_path)
    found = {str(f) for f in lint(tmp_path)}
    assert found - EXPECTED == set(), "unexpected findings"
    assert EXPECTED - found == set(), "missed findings"


def test_a_new_arrow_against_the_table_fails_in_the_real_tree(tmp_path: Path) -> None:
    """`import Storage` planted in a Rules file is reported with its file and line; the real file is clean."""
    for entry in ("Package.swift", "docs", "Fuzz", "Plugins", "Tests"):
        (tmp_path / entry).symlink_to(ROOT / entry)
    (tmp_path / "Sources").mkdir()
    for target in (ROOT / "Sources").iterdir():
        if target.name != "Rules":
            (tmp_path / "Sources" / target.name).symlink_to(target)
    shutil.copytree(ROOT / "Sources/Rules", tmp_path / "Sources/Rules")
    planted = tmp_path / "Sources/Rules/Library/MathShim.swift"
    planted.write_text("import Storage\n" + planted.read_text())
    assert [str(f) for f in lint(tmp_path)] == ["Sources/Rules/Library/MathShim.swift:1: Rules may not import Storage"]


def test_code_lines_drop_comments_and_strings_but_keep_lines() -> None:
    source = 'a // x\n/* b\n c */ d\n"e \\(f("g")) h"\n"""\nimport i\n"""\n##"j "# k"##\n'
    assert code_lines(source) == ["a ", "", " d", '"f("")"', '"', "", '"', '""', ""]
