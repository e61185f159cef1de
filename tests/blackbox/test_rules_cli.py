"""`portcullis rules test` and `rules check` on the conformance fixtures (Tests/RulesTests/Fixtures/conformance/),
as an operator would run them. Each CASES json is paired with the rules file of the same stem, or with the
only `.rules` file in its directory."""
from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from harness import ROOT, portcullis_bin

FIXTURES = ROOT / "Tests" / "RulesTests" / "Fixtures" / "conformance"
SUMMARY = re.compile(r"^(\d+) passed, (\d+) failed", re.MULTILINE)


def fixture_pairs() -> list[tuple[Path, Path]]:
    pairs = []
    for cases in sorted(FIXTURES.rglob("*.json")):
        stem = cases.name.split(".")[0]
        candidates = [cases.with_name(stem + ".rules")] + sorted(cases.parent.glob("*.rules"))
        rules = next((c for c in candidates if c.exists()), None)
        if rules is not None and (len(list(cases.parent.glob("*.rules"))) == 1 or rules.stem == stem):
            pairs.append((rules, cases))
    return pairs


def rules_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([portcullis_bin(), "rules", *args], capture_output=True, text=True, timeout=120)


def test_conformance_fixtures_exist() -> None:
    assert fixture_pairs(), f"no rules/cases pairs under {FIXTURES}"


@pytest.mark.parametrize("rules,cases", fixture_pairs(), ids=lambda p: p.parent.name)
def test_rules_test_passes_on_fixture(rules: Path, cases: Path) -> None:
    result = rules_cli("test", str(rules), str(cases))
    match = SUMMARY.search(result.stdout)
    assert match, result.stdout + result.stderr
    expected = len(json.loads(cases.read_text())["cases"])
    assert (int(match[1]), int(match[2])) == (expected, 0), result.stdout
    assert result.returncode == 0


@pytest.mark.parametrize("rules,cases", fixture_pairs()[:1], ids=lambda p: p.parent.name)
def test_rules_test_reports_a_flipped_expectation(rules: Path, cases: Path, tmp_path: Path) -> None:
    """The CLI can fail: flipping one expectation gives exit 1 and `N passed, 1 failed`."""
    document = json.loads(cases.read_text())
    first = document["cases"][0]
    first["expect"] = "deny" if first["expect"] == "allow" else "allow"
    flipped = tmp_path / "flipped.json"
    flipped.write_text(json.dumps(document))
    result = rules_cli("test", str(rules), str(flipped))
    assert result.returncode == 1
    match = SUMMARY.search(result.stdout)
    assert match and int(match[2]) == 1, result.stdout
    assert first["name"] in result.stdout


def test_rules_check_reports_line_and_column(tmp_path: Path) -> None:
    broken = tmp_path / "broken.rules"
    broken.write_text("rules_version = '2';\nservice firebase.storage {\n  match /b/{bucket}/o {\n"
                      "    allow read: if request.auth.uid ==;\n  }\n}\n")
    result = rules_cli("check", str(broken))
    assert result.returncode == 1
    assert re.search(re.escape(str(broken)) + r":4:\d+: ", result.stdout + result.stderr), result.stdout + result.stderr


def test_rules_check_accepts_valid_rules(tmp_path: Path) -> None:
    from harness import ALLOW_ALL_RULES
    valid = tmp_path / "valid.rules"
    valid.write_text(ALLOW_ALL_RULES)
    assert rules_cli("check", str(valid)).returncode == 0
