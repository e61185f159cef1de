"""Swift code style: `swift format lint --strict` with the repository's `.swift-format` (docs/style.md).

The paths held to the style are listed in `.swift-format-paths`: Sources, Tests, Fuzz and Package.swift. The
tree-wide test fails if a tracked Swift file falls outside them (it skips, saying so, only in a checkout whose list
is narrower); the configuration itself is checked by linting a deliberately misformatted file.
"""
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
CONFIG = ROOT / ".swift-format"
PATHS = ROOT / ".swift-format-paths"
TREE = ["Sources", "Tests", "Fuzz"]


def swift_format(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    swift = shutil.which("swift")
    assert swift, "the Swift toolchain (swift format) is not on PATH"
    return subprocess.run([swift, "format", *args], cwd=cwd, capture_output=True, text=True, timeout=900)


def listed_paths() -> list[str]:
    lines = (line.strip() for line in PATHS.read_text().splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def tracked_swift_files(paths: list[str]) -> list[str]:
    """Tracked *.swift files under `paths` (never build products or scratch files)."""
    if not paths:
        return []
    result = subprocess.run(["git", "ls-files", "-z", "--", *paths], cwd=ROOT, capture_output=True, text=True)
    if result.returncode == 0:
        return sorted(f for f in result.stdout.split("\0") if f.endswith(".swift"))
    files: set[str] = set()  # not a git checkout (an exported tree)
    for path in paths:
        target = ROOT / path
        candidates = [target] if target.is_file() else target.rglob("*.swift")
        files.update(str(f.relative_to(ROOT)) for f in candidates if ".build" not in f.parts)
    return sorted(files)


def lint(files: list[str], cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return swift_format("lint", "--strict", "--parallel", "--configuration", str(CONFIG), *files, cwd=cwd)


def test_listed_paths_follow_the_style() -> None:
    paths = listed_paths()
    for path in paths:
        assert (ROOT / path).exists(), f".swift-format-paths lists {path}, which does not exist"
    files = tracked_swift_files(paths)
    if not files:
        pytest.skip(".swift-format-paths lists no Swift files yet")
    result = lint(files)
    assert result.returncode == 0, (
        f"swift format lint --strict found style breaks (fix with `swift format --in-place --configuration "
        f".swift-format FILE`; rules: docs/style.md):\n{result.stdout}{result.stderr}")


def test_whole_tree_is_held_to_the_style() -> None:
    paths = listed_paths()
    if not set(TREE) <= set(paths):
        covered = len(tracked_swift_files(paths))
        total = len(tracked_swift_files(TREE))
        pytest.skip(f"swift-format is enforced on {covered} of {total} Swift files: the tree-wide check starts in "
                    f"the reformat commit, which lists {', '.join(TREE)} in .swift-format-paths (docs/style.md)")
    assert set(tracked_swift_files(TREE)) <= set(tracked_swift_files(paths))


MISFORMATTED = """\
import Foundation
import Dispatch

struct Sample {
  var value: Int
  func describe(_ prefix: String, _ separator: String, _ suffix: String, _ other: Int, _ more: Int) -> String { return prefix + separator + String(value) + suffix + String(other) + String(more) }
}
"""


def test_lint_fails_on_a_file_that_breaks_the_style(tmp_path: Path) -> None:
    """Two-space indentation, a 180-column line and unordered imports are all reported; the formatter's own
    output of the same file passes (configuration and formatter agree)."""
    sample = tmp_path / "Sample.swift"
    sample.write_text(MISFORMATTED)
    result = lint([str(sample)], cwd=tmp_path)
    assert result.returncode != 0, result.stdout + result.stderr
    findings = result.stdout + result.stderr
    for rule in ("[Indentation]", "[LineLength]", "[OrderedImports]"):
        assert rule in findings, f"{rule} not reported:\n{findings}"

    fixed = swift_format("format", "--in-place", "--configuration", str(CONFIG), str(sample), cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stderr
    assert lint([str(sample)], cwd=tmp_path).returncode == 0, sample.read_text()


def test_configuration_states_the_project_style() -> None:
    """The style docs/style.md describes: the configuration is complete and parses as swift-format reads it."""
    import json

    config = json.loads(CONFIG.read_text())
    assert config["indentation"] == {"spaces": 4}
    assert config["lineLength"] == 120
    effective = swift_format("dump-configuration", "--effective", "--configuration", str(CONFIG))
    assert effective.returncode == 0, effective.stderr
    assert json.loads(effective.stdout) == config, "settings the toolchain does not know, or defaults left implicit"
    style = (ROOT / "docs" / "style.md").read_text()
    for rule in config["rules"]:
        assert f"`{rule}`" in style, f"docs/style.md does not say why {rule} is {'on' if config['rules'][rule] else 'off'}"
