"""The import lint: every SwiftPM target imports only what docs/architecture.md's table allows it.

docs/architecture.md holds the one table of targets — what each does, where it builds and which modules it may
import. This module reads that table, Package.swift (and Fuzz/Package.swift) and every Swift file of every target,
and reports, each as one line:

  1. `path:line: Target may not import X` for an `import`, `@testable import`, `internal import`, `public import`
     or `import struct X.Y` of a module the target's row does not list;
  2. a target of Package.swift without a row, or a row without a target;
  3. a row whose project modules differ from the target's Package.swift dependencies (the table and the build
     agree on every arrow; a plugin's dependencies are tools it runs, not imports);
  4. a C module (a `.systemLibrary` target) that more than one Swift target imports or that more than one row
     allows, or that is imported `public`ly (no C type crosses a module boundary);
  5. in a target whose row says it builds on macOS, an import of or a qualified reference to a Linux-only module
     (`import Glibc`, `Glibc.write`) outside an `#if canImport(<that module>)` or `#if os(Linux)` branch, and a
     dependency on a target that does not build on macOS (unless the dependency is itself Linux-only).

Test targets (`.testTarget`) and the targets of Fuzz/Package.swift have one row each in the second table: they may
import their dependencies and, transitively, theirs (what the compiler makes visible) except C modules, and the
system modules that row lists.

Comments, string literals (multi-line and raw ones included) and their interpolations are read as Swift reads
them, so `import` inside a string (an embedded Python script) is not an import. Stdlib only.
"""
from __future__ import annotations

from collections.abc import Iterator

import re
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
DOC = "docs/architecture.md"
PACKAGE = "Package.swift"
FUZZ_PACKAGE = "Fuzz/Package.swift"

TARGETS_HEADER = re.compile(r"^\|\s*Target\s*\|\s*Builds on\s*\|\s*Job\s*\|\s*May import\s*\|\s*$")
DERIVED_HEADER = re.compile(r"^\|\s*Targets\s*\|\s*May import\s*\|\s*$")
LINUX_ONLY_LINE = re.compile(r"^\*\*Linux-only modules:\*\*(.*)$")
TICKED = re.compile(r"`([^`]+)`")
PLATFORMS = {"Linux", "macOS"}

IMPORT = re.compile(
    r"^\s*(?P<attributes>(?:@[A-Za-z_]\w*(?:\([^)]*\))?\s+)*)"
    r"(?:(?P<access>public|package|internal|fileprivate|private)\s+)?import\s+"
    r"(?:(?:typealias|struct|class|enum|protocol|let|var|func)\s+)?(?P<module>[A-Za-z_]\w*)")
STRING_OPENER = re.compile(r'(#*)("""|")')
DIRECTIVE = re.compile(r"^\s*#(?P<kind>if|elseif|else|endif)\b(?P<condition>.*)$")


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}" if self.line else f"{self.path}: {self.message}"


# MARK: the table


@dataclass
class Row:
    """One target's row: where it builds and what it may import."""
    target: str
    platforms: set[str]
    allowed: set[str]
    line: int


@dataclass
class Table:
    rows: dict[str, Row]
    tests_allowed: set[str]
    fuzz_allowed: set[str]
    linux_only: set[str]


def read_table(root: Path = ROOT) -> tuple[Table, list[Finding]]:
    """The targets table, the derived rows for tests and fuzz targets, and the Linux-only module list."""
    lines = (root / DOC).read_text(encoding="utf-8").split("\n")
    rows: dict[str, Row] = {}
    tests_allowed: set[str] | None = None
    fuzz_allowed: set[str] | None = None
    linux_only: set[str] | None = None
    findings: list[Finding] = []
    mode = None
    for number, line in enumerate(lines, start=1):
        if TARGETS_HEADER.match(line):
            mode = "targets"
            continue
        if DERIVED_HEADER.match(line):
            mode = "derived"
            continue
        if match := LINUX_ONLY_LINE.match(line):
            linux_only = set(TICKED.findall(match.group(1)))
        if not line.startswith("|"):
            mode = None
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if mode is None or set(line) <= set("|-: "):
            continue
        if mode == "targets":
            if len(cells) != 4:
                findings.append(Finding(DOC, number, "a target row has four cells: target, builds on, job, may import"))
                continue
            platforms = set(re.findall(r"\w+", cells[1]))
            if not platforms <= PLATFORMS:
                findings.append(Finding(DOC, number, f"'Builds on' lists {', '.join(sorted(PLATFORMS))} only"))
            allowed = set(TICKED.findall(cells[3]))
            for target in TICKED.findall(cells[0]):
                if target in rows:
                    findings.append(Finding(DOC, number, f"{target} has two rows"))
                rows[target] = Row(target, platforms, allowed, number)
        else:
            allowed = set(TICKED.findall(cells[-1]))
            if ".testTarget" in cells[0]:
                tests_allowed = allowed
            elif FUZZ_PACKAGE in cells[0]:
                fuzz_allowed = allowed
    if not rows:
        findings.append(Finding(DOC, 0, "no table with the header | Target | Builds on | Job | May import |"))
    if tests_allowed is None or fuzz_allowed is None:
        findings.append(Finding(DOC, 0, "no | Targets | May import | rows for every `.testTarget` and Fuzz/Package.swift"))
    if linux_only is None:
        findings.append(Finding(DOC, 0, "no **Linux-only modules:** line"))
    return Table(rows, tests_allowed or set(), fuzz_allowed or set(), linux_only or set()), findings


# MARK: Package.swift


@dataclass
class Target:
    name: str
    kind: str  # target, executableTarget, testTarget, systemLibrary, plugin
    path: str
    dependencies: list[str] = field(default_factory=list)
    #: Dependencies that apply on Linux only (`.target(name:, condition: .when(platforms: [.linux]))`).
    linux_only_dependencies: set[str] = field(default_factory=set)


def strip_line_comments(text: str) -> str:
    out = []
    for line in text.split("\n"):
        in_string = False
        for i, char in enumerate(line):
            if char == '"' and (i == 0 or line[i - 1] != "\\"):
                in_string = not in_string
            elif not in_string and line.startswith("//", i):
                line = line[:i]
                break
        out.append(line)
    return "\n".join(out)


def code_characters(text: str, start: int = 0) -> Iterator[tuple[int, str, int]]:
    """`(index, character, bracket depth before it)` for each character of `text` from `start` that is not
    inside a string literal (escapes in strings are skipped)."""
    depth, i, in_string = 0, start, False
    while i < len(text):
        char = text[i]
        if in_string:
            if char == "\\":
                i += 1
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        else:
            yield i, char, depth
            if char in "([{":
                depth += 1
            elif char in ")]}":
                depth -= 1
        i += 1


def balanced(text: str, start: int) -> int:
    """The index just past the bracket that closes the one at `start` (strings are skipped)."""
    for i, char, depth in code_characters(text, start):
        if char in ")]}" and depth == 1:
            return i + 1
    raise ValueError(f"unbalanced bracket at {start}")


def split_top(text: str) -> list[str]:
    """`text` split at the commas outside brackets and strings, pieces stripped, empty ones dropped."""
    pieces, start = [], 0
    for i, char, depth in code_characters(text):
        if char == "," and depth == 0:
            pieces.append(text[start:i])
            start = i + 1
    pieces.append(text[start:])
    return [piece.strip() for piece in pieces if piece.strip()]


def arguments(call: str) -> dict[str, str]:
    """The labelled arguments of `.name(label: value, ...)`."""
    inner = call[call.index("(") + 1:call.rindex(")")]
    labelled = {}
    for piece in split_top(inner):
        if match := re.match(r"^(\w+)\s*:\s*(.*)$", piece, re.S):
            labelled[match.group(1)] = match.group(2).strip()
    return labelled


def string_value(text: str) -> str:
    match = re.fullmatch(r'\s*"([^"]*)"\s*', text)
    if not match:
        raise ValueError(f"not a string literal: {text}")
    return match.group(1)


def array_items(text: str) -> list[str]:
    text = text.strip()
    if not (text.startswith("[") and text.endswith("]")):
        raise ValueError(f"not an array literal: {text[:40]}")
    return split_top(text[1:-1])


def read_package(path: Path, sources: str = "Sources") -> tuple[list[Target], dict[str, list[str]]]:
    """The targets of a Package.swift, in order, and its products (name → targets)."""
    text = strip_line_comments(path.read_text(encoding="utf-8"))
    start = text.index("Package(") + len("Package")
    package = arguments(text[start - len("Package"):balanced(text, start)])
    products = {}
    for product in array_items(package.get("products", "[]")):
        labelled = arguments(product)
        products[string_value(labelled["name"])] = [string_value(t) for t in array_items(labelled["targets"])]
    targets = []
    for declaration in array_items(package["targets"]):
        kind = re.match(r"^\.(\w+)\(", declaration).group(1)
        labelled = arguments(declaration)
        name = string_value(labelled["name"])
        folder = {"testTarget": "Tests", "plugin": "Plugins"}.get(kind, sources)
        target = Target(name, kind, string_value(labelled["path"]) if "path" in labelled else f"{folder}/{name}")
        for dependency in array_items(labelled.get("dependencies", "[]")):
            if dependency.startswith('"'):
                target.dependencies.append(string_value(dependency))
                continue
            dependency_name = string_value(arguments(dependency)["name"])
            target.dependencies.append(dependency_name)
            condition = arguments(dependency).get("condition", "")
            if condition and re.findall(r"\.(\w+)", condition.split("platforms:", 1)[-1]) == ["linux"]:
                target.linux_only_dependencies.add(dependency_name)
        targets.append(target)
    return targets, products


# MARK: Swift sources


def code_lines(source: str) -> list[str]:
    """The source's lines with comments and string literal contents removed (a literal becomes `""`), line
    numbers kept. String interpolations are code again, so a nested literal is handled too."""
    out: list[str] = []
    # Each context: ("code", interpolation paren depth or None at top level) or ("string", hashes, multiline).
    stack: list[tuple] = [("code", None)]
    i, n = 0, len(source)
    while i < n:
        context = stack[-1]
        char = source[i]
        if context[0] == "code":
            if source.startswith("//", i):
                end = source.find("\n", i)
                i = n if end < 0 else end
                continue
            if source.startswith("/*", i):
                depth, i = 1, i + 2
                while i < n and depth:
                    if source.startswith("/*", i):
                        depth, i = depth + 1, i + 2
                    elif source.startswith("*/", i):
                        depth, i = depth - 1, i + 2
                    else:
                        if source[i] == "\n":
                            out.append("\n")
                        i += 1
                continue
            if match := STRING_OPENER.match(source, i):
                stack.append(("string", len(match.group(1)), match.group(2) == '"""'))
                out.append('"')
                i = match.end()
                continue
            if context[1] is not None and char == "(":
                stack[-1] = ("code", context[1] + 1)
            elif context[1] is not None and char == ")":
                if context[1] == 0:
                    stack.pop()
                    i += 1
                    continue
                stack[-1] = ("code", context[1] - 1)
            out.append(char)
            i += 1
            continue
        _, hashes, multiline = context
        closing = ('"""' if multiline else '"') + "#" * hashes
        escape = "\\" + "#" * hashes
        if source.startswith(closing, i):
            stack.pop()
            out.append('"')
            i += len(closing)
        elif source.startswith(escape, i):
            i += len(escape)
            if i < n and source[i] == "(":
                stack.append(("code", 0))
                i += 1
            elif i < n and source[i] != "\n":
                i += 1
        else:
            if char == "\n":
                out.append("\n")
            i += 1
    return "".join(out).split("\n")


@dataclass(frozen=True)
class Import:
    line: int
    module: str
    access: str | None
    attributes: str
    #: The conditions of the enclosing `#if`/`#elseif` branches (an `#else` branch adds "else").
    conditions: tuple[str, ...]


@dataclass(frozen=True)
class Reference:
    line: int
    module: str
    #: The qualified name as written, `Glibc.write`.
    name: str
    conditions: tuple[str, ...]


def scan(source: str, modules: set[str]) -> tuple[list[Import], list[Reference]]:
    """The imports of a Swift file, and its qualified references (`Glibc.write`) to `modules`."""
    imports, references = [], []
    branches: list[str] = []
    qualified = re.compile(r"\b(" + "|".join(sorted(modules)) + r")\s*\.\s*(\w+)") if modules else None
    for number, code in enumerate(code_lines(source), start=1):
        if directive := DIRECTIVE.match(code):
            kind = directive.group("kind")
            if kind == "if":
                branches.append(directive.group("condition").strip())
            elif kind == "elseif" and branches:
                branches[-1] = directive.group("condition").strip()
            elif kind == "else" and branches:
                branches[-1] = "else"
            elif kind == "endif" and branches:
                branches.pop()
            continue
        if match := IMPORT.match(code):
            imports.append(Import(number, match.group("module"), match.group("access"),
                                  match.group("attributes").strip(), tuple(branches)))
            continue
        if qualified:
            for match in qualified.finditer(code):
                references.append(Reference(number, match.group(1), f"{match.group(1)}.{match.group(2)}",
                                            tuple(branches)))
    return imports, references


def guarded(module: str, conditions: tuple[str, ...]) -> bool:
    """Whether some enclosing branch is taken only where `module` exists: `#if canImport(module)` or
    `#if os(Linux)`, not negated and not one side of an `||`."""
    test = re.compile(r"(?<![!\w])(canImport\(\s*" + re.escape(module) + r"\s*\)|os\(\s*Linux\s*\))")
    return any("||" not in condition and test.search(condition) for condition in conditions)


def swift_files(root: Path, folder: str) -> list[Path]:
    return sorted(p for p in (root / folder).rglob("*.swift") if ".build" not in p.parts)


# MARK: the checks


def lint(root: Path = ROOT) -> list[Finding]:
    table, findings = read_table(root)
    targets, products = read_package(root / PACKAGE)
    by_name = {t.name: t for t in targets}
    c_modules = {t.name for t in targets if t.kind == "systemLibrary"}
    listed = [t for t in targets if t.kind != "testTarget"]

    # 2. rows and targets agree.
    for target in listed:
        if target.name not in table.rows:
            findings.append(Finding(PACKAGE, 0, f"target {target.name} has no row in {DOC}"))
    for name, row in table.rows.items():
        if name not in by_name or by_name[name].kind == "testTarget":
            findings.append(Finding(DOC, row.line, f"{name} is not a target of {PACKAGE}"))

    # 3. the table's arrows are Package.swift's.
    for target in listed:
        row = table.rows.get(target.name)
        if row is None or target.kind == "plugin":
            continue
        table_arrows = row.allowed & set(by_name)
        for missing in sorted(set(target.dependencies) - table_arrows):
            findings.append(Finding(DOC, row.line, f"{target.name} depends on {missing} in {PACKAGE}, but its row "
                                                   f"does not allow importing it"))
        for extra in sorted(table_arrows - set(target.dependencies)):
            findings.append(Finding(DOC, row.line, f"{target.name} may import {extra}, but {PACKAGE} does not "
                                                   f"declare that dependency"))

    # 4. a C module has one Swift importer in the table.
    for module in sorted(c_modules):
        allowing = sorted(name for name, row in table.rows.items() if module in row.allowed)
        if len(allowing) > 1:
            findings.append(Finding(DOC, 0, f"{module} is allowed to {', '.join(allowing)}: a C module has one "
                                            f"Swift importer"))

    # 5. what builds on macOS depends only on what builds there.
    for target in listed:
        row = table.rows.get(target.name)
        if row is None or "macOS" not in row.platforms or target.kind == "plugin":
            continue
        for dependency in target.dependencies:
            other = table.rows.get(dependency)
            if other and "macOS" not in other.platforms and dependency not in target.linux_only_dependencies:
                findings.append(Finding(DOC, row.line, f"{target.name} builds on macOS but depends on {dependency}, "
                                                       f"which does not"))

    # 1, 4, 5: the sources.
    importers: dict[str, dict[str, Finding]] = {}

    def check(target_name: str, folder: str, allowed: set[str], portable: bool) -> None:
        for path in swift_files(root, folder):
            relative = str(path.relative_to(root))
            imports, references = scan(path.read_text(encoding="utf-8"), table.linux_only if portable else set())
            for item in imports:
                if item.module not in allowed:
                    findings.append(Finding(relative, item.line, f"{target_name} may not import {item.module}"))
                if item.module in c_modules:
                    importers.setdefault(item.module, {}).setdefault(target_name, Finding(relative, item.line, ""))
                    if item.access in ("public", "package") or "@_exported" in item.attributes:
                        findings.append(Finding(relative, item.line, f"{item.module} is a C module: import it "
                                                                     f"internal, never {item.access or '@_exported'}"))
                if portable and item.module in table.linux_only and not guarded(item.module, item.conditions):
                    findings.append(Finding(relative, item.line, f"{target_name} builds on macOS: import "
                                                                 f"{item.module} outside #if canImport({item.module})"))
            for reference in references:
                if not guarded(reference.module, reference.conditions):
                    findings.append(Finding(relative, reference.line, f"{target_name} builds on macOS: "
                                                                      f"{reference.name} outside #if "
                                                                      f"canImport({reference.module})"))

    def derived(dependencies: list[str]) -> set[str]:
        """`dependencies` and theirs, transitively (what the compiler makes visible), C modules excepted."""
        allowed: set[str] = set()
        pending = list(dependencies)
        while pending:
            name = pending.pop()
            if name in allowed or name in c_modules:
                continue
            allowed.add(name)
            pending += by_name[name].dependencies if name in by_name else []
        return allowed

    for target in listed:
        row = table.rows.get(target.name)
        if row is not None and target.kind != "systemLibrary":
            check(target.name, target.path, row.allowed, "macOS" in row.platforms)
    for target in targets:
        if target.kind == "testTarget":
            check(target.name, target.path, derived(target.dependencies) | table.tests_allowed, False)
    fuzz_package = root / FUZZ_PACKAGE
    if fuzz_package.exists():
        fuzz_targets, _ = read_package(fuzz_package, sources="Fuzz/Sources")
        for target in fuzz_targets:
            modules = [m for product in target.dependencies for m in products.get(product, [product])]
            check(target.name, target.path, derived(modules) | table.fuzz_allowed, False)

    for module, by_target in sorted(importers.items()):
        if len(by_target) > 1:
            for target_name, where in sorted(by_target.items()):
                findings.append(Finding(where.path, where.line, f"{module} is imported by {len(by_target)} Swift "
                                                                f"targets ({', '.join(sorted(by_target))}): a C module "
                                                                f"has one importer"))
    return findings


if __name__ == "__main__":
    for finding in lint():
        print(finding)
