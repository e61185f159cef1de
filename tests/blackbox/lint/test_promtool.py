"""The Prometheus rules in deploy/prometheus/: `promtool check rules` accepts every rules file, and
`promtool test rules` passes every unit-test file (each alert fires on its series and stays silent on its
neighbours). promtool comes from Debian's `prometheus` package (PC_APT_TEST); without it the test fails."""
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[3]
RULES_DIR = ROOT / "deploy" / "prometheus"
RULE_FILES = sorted(RULES_DIR.glob("*.rules.yaml")) + sorted(RULES_DIR.glob("*.alerts.yaml"))
TEST_FILES = sorted((RULES_DIR / "tests").glob("*.test.yaml"))


def promtool() -> str:
    path = shutil.which("promtool")
    assert path, "promtool not found: install Debian's prometheus package (scripts/deps.sh test)"
    return path


def test_rules_files_exist() -> None:
    assert RULE_FILES, "no rules files in deploy/prometheus"
    assert TEST_FILES, "no promtool unit tests in deploy/prometheus/tests"


@pytest.mark.parametrize("path", RULE_FILES, ids=lambda p: p.name)
def test_promtool_check_rules(path: Path) -> None:
    result = subprocess.run([promtool(), "check", "rules", str(path)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("path", TEST_FILES, ids=lambda p: p.name)
def test_promtool_test_rules(path: Path) -> None:
    result = subprocess.run([promtool(), "test", "rules", path.name], cwd=path.parent, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_alert_has_fire_and_silence_cases_and_a_runbook() -> None:
    """Each alert is expected to fire in some test and to be silent (no alert at all) at some evaluation, and the
    runbook its annotation names is a heading of docs/operations.md."""
    alerts = {rule["alert"]: rule for path in RULE_FILES for group in yaml.safe_load(path.read_text())["groups"]
              for rule in group["rules"] if "alert" in rule}
    fired: set[str] = set()
    silent: set[str] = set()
    for path in TEST_FILES:
        for test in yaml.safe_load(path.read_text())["tests"]:
            for case in test.get("alert_rule_test", []):
                (fired if case.get("exp_alerts") else silent).add(case["alertname"])
    headings = {line.lstrip("#").strip().lower() for line in (ROOT / "docs" / "operations.md").read_text().splitlines()
                if line.startswith("#")}
    for name, rule in alerts.items():
        assert name in fired, f"{name}: no promtool test where it fires"
        assert name in silent, f"{name}: no promtool test where it stays silent"
        runbook = rule["annotations"]["runbook"]
        assert runbook == f"docs/operations.md#{name.lower()}", runbook
        assert name.lower() in headings, f"docs/operations.md has no '### {name}' runbook"
